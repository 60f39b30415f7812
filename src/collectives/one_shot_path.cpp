// Host side of the one-kernel algorithms: the one-shot kernel (a piece per scratch slot, all of
// a message's pieces in one kernel per rank) and the pull kernel (the whole message in one kernel
// per rank, reading and writing the peers' buffers as collectives/pull_plan.hpp lays out), the
// chain kernel (broadcast and reduce passed from rank to rank as collectives/chain_plan.hpp shapes)
// and the relay kernel (broadcast and reduce in a part per non-root rank, through the scratch).

#include <algorithm>
#include <array>

#include "collectives/chain_plan.hpp"
#include "collectives/communicator_impl.hpp"
#include "collectives/line128_rules.hpp"
#include "collectives/one_shot_kernels.cuh"
#include "collectives/one_shot_step_rules.hpp"
#include "collectives/pull_plan.hpp"
#include "cuda/cuda_status.hpp"
#include "ranks/call_signature.hpp"

namespace gpupeer {
namespace {

using LaunchFn = cudaError_t (*)(const OneShotArgs&, DataType, cudaStream_t);

struct LaunchContext {
  const Communicator::Impl* c;
  const CollRequest* q;
  const OneShotArgs* args;
  LaunchFn launch;
};

Status launchRank(const void* context, int r) {
  const auto& x = *static_cast<const LaunchContext*>(context);
  const int d = x.c->devices[r];
  GPUPEER_CUDA_CHECK(d, cudaSetDevice(d));
  GPUPEER_CUDA_CHECK(d, x.launch(x.args[r], x.q->type, x.q->streams[r]));
  return Status::ok();
}

// Every rank's kernel: from the launch threads in eager use; inside a capture the calling
// thread launches everything (the capture is then recorded in the order of the calls).
Status launchAll(Communicator::Impl& c, const CollRequest& q, const OneShotArgs* args, LaunchFn launch) {
  LaunchContext context{&c, &q, args, launch};
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  if (c.pool && cudaStreamIsCapturing(q.streams[0], &capturing) == cudaSuccess &&
      capturing == cudaStreamCaptureStatusNone)
    return c.pool->runAll(launchRank, &context);
  (void)cudaGetLastError();
  for (int r : c.local) GPUPEER_RETURN_IF_ERROR(launchRank(&context, r));
  return Status::ok();
}

// Rank r's arguments for elements [done, done + len) of every chunk.
OneShotArgs argsFor(const Communicator::Impl& c, const CollRequest& q, int r, std::size_t done, std::size_t len) {
  const int n = c.n();
  const std::size_t es = dataTypeSize(q.type);
  OneShotArgs a;
  a.op = q.op;
  a.redop = q.redop;
  a.root = q.root;
  a.rank = r;
  a.ranks = n;
  a.in = static_cast<const char*>(q.send[r]) + done * es;
  a.out = static_cast<char*>(q.recv[r]) + done * es;
  a.inStride = collectiveInputElements(q.op, q.count, n) > q.count ? q.count : 0;
  a.outStride = collectiveOutputElements(q.op, q.count, n) > q.count ? q.count : 0;
  a.len = len;
  for (int k = 0; k < n; ++k) {
    const Communicator::Impl::ScratchView& v = c.views[k];
    a.scratch[k] = v.scratch;
    a.flags[k] = v.flags;
    a.llScratch[k] = v.lineScratch;
    a.ll128Scratch[k] = v.line128Scratch;
    if (q.send[k]) a.peerIn[k] = static_cast<const char*>(q.send[k]) + done * es;
  }
  a.slotBytes = c.options.oneShotSlotBytes;
  a.llSlotBytes = c.options.lineSlotBytes;
  a.ll128SlotBytes = c.line128SlotBytes;
  a.lines128Lag = line128LagFor(len * es);
  a.lines128Blocks = line128BlocksFor(n, c.fewestSms);
  a.lineBlockLines = c.options.lineBlockLines;
  a.opCounter = reinterpret_cast<unsigned long long*>(c.counters(r));  // words 0-1
  a.error = c.counters(r) + 2;
  a.earlyLaunch = c.ranks[r].hopperOrLater;
  a.timeoutNs = c.timeoutNs;
  a.abortWord = c.abortWord;
  a.maxBlocks = c.options.oneShotBlocks;
  a.stepBytes = c.options.oneShotStepBytes ? c.options.oneShotStepBytes : oneShotStepBytesFor(n, !c.allRanksLocal());
  if (c.callLines) {
    const CallSignature call = callSignatureOf(q.op, q.type, q.redop, q.root, q.count);
    a.call[0] = call.word0;
    a.call[1] = call.word1;
  }
  return a;
}

}  // namespace

// Where the ranks live in several processes, each rank decides the variant alone, so the
// decision must not depend on its own buffers' alignment: it is made as if they were aligned
// (on the staging scratch), and a rank whose buffers are not copies through that scratch.
// Rows of chunks: `rows` chunks of `bytes`, `pitch` bytes apart.
struct StagedPiece {
  bool in = false, out = false;
  std::size_t inRows = 1, outRows = 1, bytes = 0, inPitch = 0, outPitch = 0;
};

bool misaligned8(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 8 != 0; }

// Only what the rank reads is staged in and what it writes staged out: a reduce's other ranks
// write no output (their receive buffer is their send buffer: a copy back would overwrite
// their input with the staging area), a broadcast's read no input. `chunks`: the chunks a
// strided buffer holds (the relay's parts are one fewer than the ranks).
StagedPiece stagingFor(const Communicator::Impl& c, const CollRequest& q, const OneShotArgs& a, int chunks) {
  StagedPiece s;
  if (c.alignStaging.size() == 0) return s;
  const std::size_t es = dataTypeSize(q.type);
  s.bytes = a.len * es;
  s.inRows = a.inStride ? chunks : 1;
  s.outRows = a.outStride ? chunks : 1;
  s.inPitch = a.inStride * es;
  s.outPitch = a.outStride * es;
  s.in = misaligned8(a.in) && !(q.op == CollOp::kBroadcast && a.rank != q.root);
  s.out = misaligned8(a.out) && !(q.op == CollOp::kReduce && a.rank != q.root);
  return s;
}

// Rank r's arguments as the variant is decided on them: a rank that can stage its piece is
// judged as if its buffers were aligned (the real strides stay: the same on every rank; a
// staged piece's rows, len elements apart, are then aligned too, as slots are multiples of 256).
OneShotArgs asDecided(const Communicator::Impl& c, OneShotArgs decide) {
  if (c.alignStaging.size() && (misaligned8(decide.in) || misaligned8(decide.out))) {
    char* base = static_cast<char*>(c.alignStaging.get());
    decide.in = base;
    decide.out = base + c.alignStaging.size() / 2;
  }
  return decide;
}

// Launches rank r's kernel for piece `a` through the staging area where `s` says so: the rows
// it reads copied in before, the rows it writes copied out after; a.len is then 0 (launched),
// so that launchAll passes it by.
Status launchStaged(Communicator::Impl& c, const CollRequest& q, int r, OneShotArgs& a, const StagedPiece& s,
                    LaunchFn launch) {
  if (!s.in && !s.out) return Status::ok();
  const int d = c.devices[r];
  char* base = static_cast<char*>(c.alignStaging.get());
  char* out = static_cast<char*>(a.out);
  GPUPEER_CUDA_CHECK(d, cudaSetDevice(d));
  if (s.in) {
    GPUPEER_CUDA_CHECK(d, cudaMemcpy2DAsync(base, s.bytes, a.in, s.inPitch ? s.inPitch : s.bytes, s.bytes, s.inRows,
                                            cudaMemcpyDeviceToDevice, q.streams[r]));
    a.in = base;
    a.inStride = a.inStride ? a.len : 0;
  }
  if (s.out) {
    a.out = base + c.alignStaging.size() / 2;
    a.outStride = a.outStride ? a.len : 0;
  }
  GPUPEER_CUDA_CHECK(d, launch(a, q.type, q.streams[r]));
  if (s.out)
    GPUPEER_CUDA_CHECK(d, cudaMemcpy2DAsync(out, s.outPitch ? s.outPitch : s.bytes, a.out, s.bytes, s.bytes, s.outRows,
                                            cudaMemcpyDeviceToDevice, q.streams[r]));
  a.len = 0;
  return Status::ok();
}

Status runOneShot(Communicator::Impl& c, const CollRequest& q) {
  const std::size_t slotElements = c.options.oneShotSlotBytes / dataTypeSize(q.type);
  std::array<OneShotArgs, kMaxCommRanks> args;  // no allocation per operation
  // A message longer than a slot: the regular variant, every slot's piece in one kernel. A
  // kernel per piece paid its start and its last step's wait each time (2 processes on 2x
  // H200, all-reduce of 256 MiB in 32 MiB pieces: 819.6 us against 788.6 in 64 MiB ones), and
  // the 128-byte lines, which 2 GPUs took for each 16 MiB piece, carry 120 bytes of 128 (855.4).
  if (q.count > slotElements) {
    for (int r : c.local) {
      args[r] = argsFor(c, q, r, 0, q.count);
      args[r].pieceLen = slotElements;
    }
    return launchAll(c, q, args.data(), launchOneShot);
  }
  std::array<StagedPiece, kMaxCommRanks> staged;
  // The 16-byte lines below line128FromBytes, the 128-byte ones from there to what the
  // one-shot kernel fills of their slot, where every rank's buffers allow them.
  const std::size_t bytes = q.count * dataTypeSize(q.type);
  const bool large = bytes >= c.line128FromBytes && line128Bytes(bytes) <= c.line128OneShotSlotBytes;
  bool lines = true, lines128 = large;
  for (int r : c.local) {
    args[r] = argsFor(c, q, r, 0, q.count);
    staged[r] = stagingFor(c, q, args[r], c.n());
    // Decided also for a buffer the rank does not touch, so that every rank decides alike.
    const OneShotArgs decide = asDecided(c, args[r]);
    const bool allows = oneShotAllowsLines(decide, q.type), allows128 = oneShotAllowsLines128(decide, q.type);
    lines = lines && allows;
    lines128 = lines128 && allows128;
    if (!allows && !allows128) staged[r] = {};
  }
  for (int r : c.local) {
    args[r].lines128 = lines128;
    args[r].lines = lines && !lines128;
    GPUPEER_RETURN_IF_ERROR(launchStaged(c, q, r, args[r], staged[r], launchOneShot));
  }
  return launchAll(c, q, args.data(), launchOneShot);
}

Status runPull(Communicator::Impl& c, const CollRequest& q, bool split, const RegisteredCall* registered) {
  const int n = c.n();
  const std::size_t es = dataTypeSize(q.type);
  const std::vector<PullPart> parts = planPull(q.op, n, q.root, q.count, es, split);
  const std::size_t longest = longestPart(parts);
  const int blocks = pullBlocksFor(
      longest * es, std::min(c.options.oneShotBlocks > 0 ? c.options.oneShotBlocks : c.fewestSms, kMaxOneShotBlocks),
      c.options.pullBlockBytes ? c.options.pullBlockBytes : pullBlockBytesFor(q.op, n, longest * es));
  const std::size_t tile = c.options.pullTileBytes == CommunicatorOptions::kByRule
                               ? pullTileBytesFor(longest * es, blocks)
                               : c.options.pullTileBytes;
  std::array<OneShotArgs, kMaxCommRanks> args;
  for (int r : c.local) {
    OneShotArgs& a = args[r];
    a = argsFor(c, q, r, 0, q.count);
    const PullPart& p = parts[r];
    a.len = p.len;
    a.pullBlocks = blocks;
    a.pullTileBytes = tile;
    a.sources = p.sourceCount;
    // Pointers; with registered buffers byte offsets into the named rank's buffers (the kernel
    // resolves them), as only this rank's pointers are known here.
    auto source = [&](const PullRef& s) -> const void* {
      return registered ? reinterpret_cast<const void*>(s.offset * es) : at(q.send[s.rank], s.offset * es);
    };
    for (int k = 0; k < p.sourceCount; ++k) {
      a.peerIn[k] = source(p.sources[k]);
      a.sourceRank[k] = static_cast<std::int8_t>(p.sources[k].rank);
    }
    a.targetCount = 0;
    for (int k = 0; k < p.targetCount; ++k) {
      const PullRef& t = p.targets[k];
      // In place (a copy whose target is its source): already there. Known for this rank's own
      // buffers always, for every rank's in one process.
      const bool known = !registered || (t.rank == r && p.sources[0].rank == r);
      if (p.sourceCount == 1 && known &&
          at(q.recv[t.rank], t.offset * es) == at(q.send[p.sources[0].rank], p.sources[0].offset * es))
        continue;
      a.targets[a.targetCount] =
          registered ? reinterpret_cast<void*>(t.offset * es) : at(q.recv[t.rank], t.offset * es);
      a.targetRank[a.targetCount++] = static_cast<std::int8_t>(t.rank);
    }
    if (a.targetCount == 0) a.len = 0;
    if (registered) {
      const CallSignature call = callSignatureOf(q.op, q.type, q.redop, q.root, q.count, true);
      a.call[0] = call.word0;
      a.call[1] = call.word1;
      a.registered = registered->table;
      std::copy(std::begin(registered->sendRef), std::end(registered->sendRef), a.sendRef);
      std::copy(std::begin(registered->recvRef), std::end(registered->recvRef), a.recvRef);
      a.sendBytes = collectiveInputElements(q.op, q.count, n) * es;
      a.recvBytes = collectiveOutputElements(q.op, q.count, n) * es;
    }
  }
  return launchAll(c, q, args.data(), launchPull);
}

Status runChain(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  const bool reduce = q.op == CollOp::kReduce;
  // Ranks in other processes: no rank reaches the next one's output, and a broadcast's steps
  // pass through the next rank's scratch as a reduce's partials do.
  const bool staged = !reduce && !c.allRanksLocal();
  const std::size_t bytes = q.count * dataTypeSize(q.type);
  // Two blocks per SM at most (kChainThreads: both fit); steps through scratch in the one-shot
  // scratch.
  Result<ChainPlan> plan =
      planChain(q.op, n, q.root, bytes, reduce ? c.options.chainReduceStepBytes : c.options.chainStepBytes,
                std::min(c.options.oneShotBlocks > 0 ? c.options.oneShotBlocks : 2 * c.fewestSms, kMaxOneShotBlocks),
                2 * n * c.options.oneShotSlotBytes, staged);
  if (!plan.isOk()) return plan.status();
  const ChainPlan& p = plan.value();
  std::array<OneShotArgs, kMaxCommRanks> args;
  for (int r : c.local) {
    OneShotArgs& a = args[r];
    a = argsFor(c, q, r, 0, q.count);
    a.chainPrev = p.prev[r];
    a.chainNext = p.next[r];
    a.len = bytes;
    a.pullBlocks = p.blocks;
    a.chainStepBytes = p.stepBytes;
    a.chainPositions = reduce || staged ? p.positions : 0;
    a.targetCount = 0;
    if (reduce) {
      a.peerIn[0] = q.send[r];
      a.targets[a.targetCount++] = q.recv[r];  // only the root's is written
      continue;
    }
    if (staged) {
      a.peerIn[0] = r == q.root ? q.send[r] : nullptr;  // the others take each step from their scratch
      if (r != q.root || q.recv[r] != q.send[r]) a.targets[a.targetCount++] = q.recv[r];
      continue;
    }
    a.peerIn[0] = r == q.root ? q.send[r] : q.recv[r];
    if (a.chainNext >= 0) a.targets[a.targetCount++] = q.recv[a.chainNext];
    if (r == q.root && q.recv[r] != q.send[r]) a.targets[a.targetCount++] = q.recv[r];
  }
  return launchAll(c, q, args.data(), launchChain);
}

Status runRelay(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  const std::size_t es = dataTypeSize(q.type);
  const auto [part, rest] = wholeUnitParts(q.count, q.type, n - 1);
  // The 128-byte variant where every rank has their scratch (NVLink between every pair), in
  // pieces of whole 16-byte units that fill a slot's lines; else the regular one in pieces of
  // the one-shot slot.
  const bool lines = c.line128SlotBytes > 0 && relayTakesLines128(n, part * es * (n - 1));
  const std::size_t pieceElements =
      lines ? line128DataBytes(c.line128SlotBytes) / 16 * 16 / es : c.options.oneShotSlotBytes / es;
  const bool broadcast = q.op == CollOp::kBroadcast;
  for (std::size_t done = 0; done < part; done += pieceElements) {
    std::array<OneShotArgs, kMaxCommRanks> args;
    std::array<StagedPiece, kMaxCommRanks> staged;
    bool lines128 = lines;
    for (int r : c.local) {
      OneShotArgs& a = args[r];
      a = argsFor(c, q, r, done, std::min(pieceElements, part - done));
      // The buffers the rank reads or writes in parts: a broadcast's outputs and its root's
      // input, a reduce's inputs and its root's output.
      a.inStride = !broadcast || r == q.root ? part : 0;
      a.outStride = broadcast || r == q.root ? part : 0;
      // Lag 0: lines finished as soon as sent measured as fast at 2 and 4 MiB and faster from
      // 8 MiB (docs/collectives.md, the relay row).
      a.lines128Lag = 0;
      if (!lines) continue;  // the regular variant stages nothing
      staged[r] = stagingFor(c, q, a, n - 1);
      lines128 = lines128 && oneShotAllowsLines128(asDecided(c, a), q.type);
    }
    for (int r : c.local) {
      args[r].lines128 = lines128;
      // The regular variant moves misaligned buffers itself, element by element.
      if (lines128) GPUPEER_RETURN_IF_ERROR(launchStaged(c, q, r, args[r], staged[r], launchRelay));
    }
    GPUPEER_RETURN_IF_ERROR(launchAll(c, q, args.data(), launchRelay));
  }
  return rest ? runOneShot(c, elementsFrom(c, q, (n - 1) * part, rest)) : Status::ok();
}

}  // namespace gpupeer
