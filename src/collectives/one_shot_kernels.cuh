#pragma once
// One-shot collectives: one kernel per rank. Every rank pushes the part of its input each peer
// needs into that peer's scratch (remote stores over P2P), raises a flag in every peer's
// memory, waits for every peer's flag in its own memory, then builds its output from its own
// input and the scratch, reading local memory only. One P2P crossing per operation. Half of
// each block's warps push and the other half finish, step by step, so the local finishing of
// one step overlaps the pushing of the next.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "collectives/kernel_limits.hpp"
#include "cuda/error_word.hpp"
#include "gpupeer/collective_types.hpp"

namespace gpupeer {

/// A registered buffer as one rank's kernels reach it (RankCommunicator::registerBuffer): its
/// first byte (for a peer's, mapped into this process) and its size; null where that
/// registration does not exist (any more). A rank's table holds [kMaxRegistrations][ranks].
struct RegisteredBuffer {
  char* base = nullptr;
  std::uint64_t bytes = 0;
};
/// Registrations in a communicator's life (indices are not reused, so that a graph captured
/// with one never reaches another).
inline constexpr int kMaxRegistrations = 1024;

/// What one rank's kernel needs. Pointers are valid on the rank's device (peer access on).
struct OneShotArgs {
  CollOp op = CollOp::kAllReduce;
  RedOp redop = RedOp::kSum;
  int root = 0;
  int rank = 0;
  int ranks = 0;
  /// This piece of the input and output: element 0 of chunk 0 (chunk q starts q x stride
  /// elements further). Chunks: all-gather/alltoall output and reduce-scatter/alltoall input.
  const void* in = nullptr;
  void* out = nullptr;
  std::size_t inStride = 0, outStride = 0;
  std::size_t len = 0;  ///< elements per chunk in this piece
  /// The pull kernel's part (collectives/pull_plan.hpp): `len` elements reduced in rank order over
  /// peerIn[0..sources) (copied where sources == 1), the result written to
  /// targets[0..targetCount); any of them may be a peer's memory. The one-shot kernels do not
  /// use these.
  const void* peerIn[kMaxCommRanks] = {};
  void* targets[kMaxCommRanks] = {};
  int sources = 0, targetCount = 0;
  /// The pull and chain kernels' grid, the same on every rank (their barriers pair block b with
  /// block b).
  int pullBlocks = 1;
  /// The pull kernel's tiles (bytes), dealt to its blocks in turn (0: one range per block).
  std::size_t pullTileBytes = 0;
  /// The chain kernel (launchChain): `len` bytes in steps of chainStepBytes per block, each
  /// step after rank chainPrev raised its flag for it (-1: the chain's first rank), and a flag
  /// raised for rank chainNext after it (-1: the last). Broadcast: from peerIn[0] to
  /// targets[0..targetCount). Reduce: peerIn[0] (this rank's input) combined with what the
  /// previous rank left in this rank's scratch goes into the next rank's scratch, or on the
  /// last rank (the root) into targets[0]; each block cycles through chainPositions steps of
  /// scratch, and reuses one after the next rank says it has read it. A broadcast with
  /// chainPositions > 0 passes through the scratch the same way (ranks in other processes):
  /// the root's steps from peerIn[0], the others' from their scratch, into the next rank's
  /// scratch and targets[0] (none where in place).
  int chainPrev = -1, chainNext = -1;
  std::size_t chainStepBytes = 0, chainPositions = 0;
  /// Across processes (RankCommunicator with registered buffers) no rank knows its peers'
  /// buffers on the host: `registered` (this rank's table, device) is set, every rank shows its
  /// send and receive buffers on its call line as references {index + 1 | offset bits 32-51
  /// << 12, offset bits 0-31} into the table (sendRef, recvRef; sendBytes and recvBytes from
  /// there), and the pull kernel's peerIn[k] / targets[k] hold byte offsets into the send
  /// buffer of rank sourceRank[k] / the receive buffer of rank targetRank[k].
  const RegisteredBuffer* registered = nullptr;
  std::uint32_t sendRef[2] = {}, recvRef[2] = {};
  std::uint64_t sendBytes = 0, recvBytes = 0;
  std::int8_t sourceRank[kMaxCommRanks] = {}, targetRank[kMaxCommRanks] = {};
  /// scratch[r]: rank r's scratch, two parities of `ranks` slots of slotBytes (slot s of rank r
  /// receives from sender s). flags[r]: rank r's words [block][sender].
  void* scratch[kMaxCommRanks] = {};
  std::uint32_t* flags[kMaxCommRanks] = {};
  std::size_t slotBytes = 0;
  /// The low-latency variant's buffers (see launchOneShot): llScratch[r] holds 2 parities x
  /// ranks slots of llSlotBytes of 16-byte lines, then 2 x ranks token lines.
  void* llScratch[kMaxCommRanks] = {};
  std::size_t llSlotBytes = 0;
  bool lines = false;  ///< take the low-latency variant (decided for all ranks at once)
  /// The 128-byte variant's buffers (see launchOneShot): ll128Scratch[r] holds 2 parities x
  /// ranks slots of ll128SlotBytes of 128-byte lines; its tokens are the low-latency variant's.
  void* ll128Scratch[kMaxCommRanks] = {};
  std::size_t ll128SlotBytes = 0;
  bool lines128 = false;  ///< take the 128-byte variant (decided for all ranks at once)
  /// The 128-byte variant's lag: in its k-th round of lines a warp sends round k and finishes
  /// round k - lines128Lag (one_shot_lines128.cu).
  int lines128Lag = 2;
  /// The 128-byte variant's most blocks (collectives/line128_rules.hpp; maxBlocks overrides).
  int lines128Blocks = 132;
  /// The low-latency variant's lines per block (a multiple of 32 up to kMaxLineBlockLines; 0:
  /// lineGridFor's rule, collectives/line_grid.hpp).
  int lineBlockLines = 0;
  /// The regular variant's grid (at most this many blocks; 0: one per 4 KiB up to 132) and
  /// the data each block pushes per step (0: the default). Same on every rank.
  int maxBlocks = 0;
  std::size_t stepBytes = 0;
  /// The regular one-shot variant's pieces: `len` is then the whole message per chunk, carried
  /// in pieces of pieceLen elements (a slot), each an operation (epoch) of its own through the
  /// scratch parity of that epoch, all in one kernel; set only where it is below `len`. 0: one
  /// piece of `len` (at most a slot).
  std::size_t pieceLen = 0;
  /// Launch with programmatic dependent launch (Hopper and later): the kernel becomes resident
  /// while the previous one on the stream finishes, and waits for it on the GPU.
  bool earlyLaunch = false;
  /// This rank's operation counter (device): kEpochStride per operation (one_shot_device.cuh).
  unsigned long long* opCounter = nullptr;
  /// This rank's error word (kCounterWords): 1 + the rank that did not arrive, kAbortedError,
  /// or kMismatchError | the rank whose call differed (then error[2..3] hold that rank's call
  /// and error[4..5] this rank's).
  std::uint32_t* error = nullptr;
  /// The call this piece belongs to (ranks/call_signature.hpp), shown to every peer on a call
  /// line and compared with theirs (collectives/call_line.cuh); {0, 0}: no call lines (the
  /// one-process communicator issues every rank's kernel itself, so its ranks cannot differ).
  std::uint32_t call[2] = {};
  /// How long a wait for a peer lasts before it is given up and reported.
  unsigned long long timeoutNs = 10'000'000'000ULL;
  /// Where set (mapped host memory), a non-zero word makes every wait give up at once and
  /// record kAbortedError: RankCommunicator::abort() from another thread.
  const volatile std::uint32_t* abortWord = nullptr;
};

/// A rank's counters, in 32-bit words: the operation counter (0-1), the error word (2), and
/// after a mismatched call the peer's call (4-5) and this rank's (6-7).
inline constexpr std::size_t kCounterWords = 8;

/// A rank's flags: the one-shot words [block][sender], then the call lines (16 bytes each:
/// the call, and with registered buffers the send and receive references) of 2 parities x
/// kMaxCommRanks senders (collectives/call_line.cuh).
inline constexpr std::size_t kOneShotFlagWords = kMaxOneShotBlocks * kMaxCommRanks;
inline constexpr int kCallLines = 3;
inline constexpr std::size_t kOneShotFlagBytes = 4 * kOneShotFlagWords + 2 * kMaxCommRanks * kCallLines * 16;

/// Launches rank `a.rank`'s kernel on the current device. Every rank launches the same
/// operation with the same arguments apart from its own buffers. Small pieces whose buffers
/// are 8-byte aligned take the low-latency variant: data travels in 16-byte lines that carry
/// the operation's epoch beside every 4 bytes (NCCL's LL idea), so a receiver polls its own
/// memory for the data itself and no fence or separate flag crosses the link. With a.lines128
/// (collectives/line128_rules.hpp: on 2 GPUs joined by NVLink every piece of whole 8-byte words) it
/// takes the 128-byte variant: 120 data bytes and a flag per 128-byte line.
cudaError_t launchOneShot(const OneShotArgs& a, DataType type, cudaStream_t stream);

/// Loads every variant of every collective kernel (one-shot, pull, chain, relay) for every
/// element type into the current device's context (see loadKernels in one_shot_device.cuh).
/// One process and one process per GPU both call it before any rank's kernel can wait for
/// this device's, so neither can miss a kernel the other loads.
cudaError_t loadCollectiveKernels();
cudaError_t loadPullKernels();
cudaError_t loadChainKernels();
cudaError_t loadRelayKernels();

/// Launches rank `a.rank`'s pull kernel: after a barrier with every peer (inputs ready, outputs
/// free), it reads its part from its sources and writes it to its targets (see peerIn); a
/// second barrier keeps it running until no peer still reads its input or writes its output.
/// No scratch, one piece of any length.
cudaError_t launchPull(const OneShotArgs& a, DataType type, cudaStream_t stream);

/// Launches rank `a.rank`'s chain kernel (broadcast from the root along root + 1, root + 2, ...;
/// reduce along root + 1, ... ending at the root): after a barrier with every peer, each block
/// passes every step of its share to the next rank and raises a flag there; a rank forwards a
/// step as soon as its predecessor's flag for it arrives. Stores go over one link each, in one
/// direction, as in NCCL's rings, and a step costs a flag rather than a copy-engine launch.
cudaError_t launchChain(const OneShotArgs& a, DataType type, cudaStream_t stream);

/// Launches rank `a.rank`'s relay kernel (CollAlgo::kRelay): broadcast or reduce of `len`
/// elements per part, a part per rank other than the root, in the one-shot kernel's slots and
/// steps, or with a.lines128 in its 128-byte lines (relay_lines128.cu). The root's input (broadcast) or output (reduce)
/// and every rank's reduce input and broadcast output hold the parts `inStride` / `outStride` apart, in rank order
/// after the root.
cudaError_t launchRelay(const OneShotArgs& a, DataType type, cudaStream_t stream);

/// The chain kernel's threads per block: two blocks share an SM, so that one copies while the
/// other waits for its stores to land before raising a step's flag.
inline constexpr int kChainThreads = 256;

/// The 128-byte variant's lines: 120 data bytes and an 8-byte flag each.
inline constexpr std::size_t kLine128Bytes = 128;
inline constexpr std::size_t kLine128Data = 120;

/// The slot bytes the 128-byte variant needs for a piece of `bytes` (a multiple of 8).
constexpr std::size_t line128Bytes(std::size_t bytes) {
  return (bytes + kLine128Data - 1) / kLine128Data * kLine128Bytes;
}

/// The data a 128-byte slot of `slotBytes` carries: its whole lines' 120 bytes each.
constexpr std::size_t line128DataBytes(std::size_t slotBytes) { return slotBytes / kLine128Bytes * kLine128Data; }

/// Whether this rank's arguments allow the 128-byte variant: 8-byte aligned buffers and
/// chunks, whole 8-byte words, a piece whose lines fit ll128SlotBytes. The host sets
/// `lines128` only when every rank's do.
bool oneShotAllowsLines128(const OneShotArgs& a, DataType type);

/// Whether this rank's arguments allow the low-latency variant: 8-byte aligned buffers and
/// chunks, a piece that fits llSlotBytes. The host sets `lines` only when every rank's do.
bool oneShotAllowsLines(const OneShotArgs& a, DataType type);

/// The bytes of low-latency scratch a rank needs for slots of `slotBytes` (tokens included).
std::size_t oneShotLineScratchBytes(int ranks, std::size_t slotBytes);

/// out[i] = sources[0][i] op ... op sources[n-1][i] (rank order), on the current device; the
/// copy-engine algorithms' local step. Sources and out are local memory.
struct ReduceSources {
  const void* src[kMaxCommRanks] = {};
  int n = 0;
  /// avg divides by this many ranks; 0: by n. The ring adds one peer's partial sum to the
  /// rank's own input (two sources) and the last of them divides by every rank.
  int avgOver = 0;
};
cudaError_t launchLocalReduce(const ReduceSources& sources, void* out, std::size_t count, DataType type, RedOp op,
                              cudaStream_t stream);

}  // namespace gpupeer
