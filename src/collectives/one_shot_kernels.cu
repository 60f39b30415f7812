// The one-shot kernel's regular variant (pieces of any size up to a scratch slot): data in the
// peers' scratch slots, a flag per block, step and sender. The low-latency variant for small
// pieces is in one_shot_lines.cu.
#include <algorithm>
#include <cuda/atomic>
#include <initializer_list>
#include <type_traits>

#include "collectives/call_line.cuh"
#include "collectives/one_shot_device.cuh"
#include "collectives/reduce_math.cuh"

namespace gpupeer {
namespace {

using namespace oneshot;

// Default data per block and step.
constexpr std::size_t kDefaultStepBytes = 32u << 10;

// A slot's worth of every chunk: elements [offset, offset + len). The regular variant carries
// a message longer than a slot as several pieces in one kernel, each through the slots of its
// own epoch's parity (OneShotArgs::pieceLen).
struct Piece {
  std::size_t offset = 0, len = 0;
};

// U of chunk q's input and output from the piece's first element on. A piece begins a whole
// number of slots into the chunk, and slots are multiples of 256 bytes: whole units.
template <class T, class U>
__device__ __forceinline__ const U* pieceIn(const OneShotArgs& a, int q, const Piece& p) {
  return inChunk<T, U>(a, q) + p.offset * sizeof(T) / sizeof(U);
}
template <class T, class U>
__device__ __forceinline__ U* pieceOut(const OneShotArgs& a, int q, const Piece& p) {
  return outChunk<T, U>(a, q) + p.offset * sizeof(T) / sizeof(U);
}

// Units [b, e) of every chunk this rank sends, into each receiver's slot for this rank.
template <class T, class U>
__device__ void push(const OneShotArgs& a, const Piece& p, std::size_t b, std::size_t e, std::uint32_t parity, int t) {
  // Staggered (rank+1, rank+2, ...): every rank starting with rank 0 would crowd its inbound
  // port while the others idle.
  for (int k = 1; k < a.ranks; ++k) {
    const int d = (a.rank + k) % a.ranks;
    if (!dataFlows(a, a.rank, d)) continue;
    copyUnits(reinterpret_cast<U*>(slot<T>(a, d, parity, a.rank)), pieceIn<T, U>(a, chunkFor(a, d), p), b, e, t);
  }
}

// Units [b, e) of this rank's output, from its input and the slots filled by its peers.
template <class T, class U>
__device__ void finish(const OneShotArgs& a, const Piece& p, std::size_t b, std::size_t e, std::uint32_t parity,
                       int t) {
  const int me = a.rank, n = a.ranks;
  auto peer = [&](int r) { return reinterpret_cast<const U*>(slot<T>(a, me, parity, r)); };
  switch (a.op) {
    case CollOp::kAllReduce:
    case CollOp::kReduceScatter:
    case CollOp::kReduce: {
      if (a.op == CollOp::kReduce && me != a.root) return;
      const U* own = pieceIn<T, U>(a, a.op == CollOp::kReduceScatter ? me : 0, p);
      auto source = [&](int r) { return r == me ? own : peer(r); };
      reduceStrided<T, U, kRoleThreads, kRoleCopyDepth>(a.redop, n, source, pieceOut<T, U>(a, 0, p), b + t, e);
      return;
    }
    case CollOp::kAllGather:
    case CollOp::kAllToAll: {
      const U* own = pieceIn<T, U>(a, a.op == CollOp::kAllToAll ? me : 0, p);
      for (int r = 0; r < n; ++r) {
        U* out = pieceOut<T, U>(a, r, p);
        const U* src = r == me ? own : peer(r);
        if (src != out) copyUnits(out, src, b, e, t);  // in place: already there
      }
      return;
    }
    case CollOp::kBroadcast:
    case CollOp::kSendRecv: {
      const int from = a.op == CollOp::kBroadcast ? a.root : (me + n - 1) % n;
      const U* src = from == me ? pieceIn<T, U>(a, 0, p) : peer(from);
      U* out = pieceOut<T, U>(a, 0, p);
      if (src != out) copyUnits(out, src, b, e, t);
      return;
    }
  }
}

// Piece k of this kernel's message.
__device__ __forceinline__ Piece pieceAt(const OneShotArgs& a, std::uint32_t k) {
  if (a.pieceLen == 0) return {0, a.len};
  const std::size_t offset = k * a.pieceLen;
  return {offset, min(a.pieceLen, a.len - offset)};
}

__device__ __forceinline__ std::uint32_t piecesOf(const OneShotArgs& a) {
  return a.pieceLen == 0 ? 1 : static_cast<std::uint32_t>((a.len + a.pieceLen - 1) / a.pieceLen);
}

template <class T, bool kVectors>
__global__ void __launch_bounds__(kThreads) oneShot(OneShotArgs a) {
  static_assert(16 % sizeof(T) == 0, "a 16-byte unit holds whole elements");
  using U = std::conditional_t<kVectors, uint4, T>;
  constexpr std::size_t kScale = 16 / sizeof(U);  // U per 16-byte unit
  const std::uint32_t first = beginOperation(a);
  announceCall(a, first);
  const std::uint32_t pieces = piecesOf(a);
  const int me = a.rank, n = a.ranks;
  // Scratch alternates between two parities, one per epoch. A rank starts operation k+2 (same
  // parity as k) only after it received every step of k+1 from every peer, and a peer sends
  // k+1 only after finishing k: so nobody still reads the slots being overwritten. Piece k of
  // this kernel is operation first + k. Between kernels the kernel boundary makes a rank finish
  // k before it sends k+1; between the pieces of one kernel, a block's pushers wait until its
  // finishers are done with the previous piece (`finishedPieces`): block b of every rank covers
  // the same units of a piece, so block b's own order stands for that of the whole rank.
  //
  // Steps whose input this block's pushers have read, counted across pieces. The in-place
  // finisher overwrites that input, so it reads the count with acquire after the pushers' thread
  // 0 stored it with release (their reads ordered before the store by their role barrier): no
  // __syncthreads between roles. `finishedPieces` is the same in the other direction.
  __shared__ std::uint32_t pushed, finishedPieces;
  cuda::atomic_ref<std::uint32_t, cuda::thread_scope_block> pushedSteps(pushed), finished(finishedPieces);
  __shared__ bool failed;  // a peer timed out: stop waiting for it step after step
  if (threadIdx.x == 0) {
    pushed = 0;
    finishedPieces = 0;
    failed = false;
  }
  __syncthreads();
  if (threadIdx.x < kRoleThreads) {
    const int t = threadIdx.x;
    std::uint32_t before = 0;  // steps of the earlier pieces
    for (std::uint32_t k = 0; k < pieces; ++k) {
      const Piece p = pieceAt(a, k);
      const RegularCut cut = cutRegular<T>(a, p.len, pieceElements(a));
      const std::uint32_t epoch = first + k, parity = epoch & 1, mark = epoch * kFlagStride;  // + s + 1 after step s
      if (k > 0) {
        if (t == 0)
          while (finished.load(cuda::memory_order_acquire) < k) {
          }
        roleBarrier(1);
      }
      for (std::uint32_t s = 0; s < cut.steps; ++s) {
        push<T, U>(a, p, cut.stepBegin(s) * kScale, cut.stepEnd(s) * kScale, parity, t);
        if (cut.takesTail && s + 1 == cut.steps) push<T, T>(a, p, cut.tail, p.len, parity, t);
        roleBarrier(1);
        if (t == 0) pushedSteps.store(before + s + 1, cuda::memory_order_release);
        // Every peer hears every step, data or not (the parity argument above); the role's
        // stores into its slots, ordered before this thread by the role barrier, land first.
        if (t < n && t != me) releaseStore(flagOf(a, t, me), mark + s + 1);
      }
      before += cut.steps;
    }
  } else {
    const int t = threadIdx.x - kRoleThreads;
    if (t < n && t != me) checkCall(a, first, t);
    std::uint32_t before = 0;
    for (std::uint32_t k = 0; k < pieces; ++k) {
      const Piece p = pieceAt(a, k);
      const RegularCut cut = cutRegular<T>(a, p.len, pieceElements(a));
      const std::uint32_t epoch = first + k, parity = epoch & 1, mark = epoch * kFlagStride;
      for (std::uint32_t s = 0; s < cut.steps; ++s) {
        if (t == me) {
          // In place, this step's output overwrites the input the pushers read.
          while (pushedSteps.load(cuda::memory_order_acquire) <= before + s) {
          }
        } else if (t < n) {
          awaitUnlessFailed(a, flagOf(a, me, t), mark + s + 1, t, failed);
        }
        roleBarrier(2);
        finish<T, U>(a, p, cut.stepBegin(s) * kScale, cut.stepEnd(s) * kScale, parity, t);
        if (cut.takesTail && s + 1 == cut.steps) finish<T, T>(a, p, cut.tail, p.len, parity, t);
      }
      before += cut.steps;
      if (k + 1 < pieces) {
        roleBarrier(2);  // every finisher's reads of this piece's slots are done
        if (t == 0) finished.store(k + 1, cuda::memory_order_release);
      }
    }
  }
  endOperation(a, pieces);
}

bool aligned8(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 7) == 0; }

struct LaunchOneShot {
  const OneShotArgs& a;
  cudaStream_t stream;
  template <class T>
  cudaError_t operator()() const {
    return launchRegular<T>(oneShot<T, true>, oneShot<T, false>, a, kDefaultStepBytes, stream);
  }
};

struct LoadOneShot {
  template <class T>
  cudaError_t operator()() const {
    return loadKernels(oneShot<T, true>, oneShot<T, false>);
  }
};

}  // namespace

cudaError_t loadCollectiveKernels() {
  for (cudaError_t (*load)() : {loadOneShotLinesKernels, loadOneShotLines128Kernels, loadPullKernels, loadChainKernels,
                                loadRelayKernels, loadRelayLines128Kernels})
    if (cudaError_t e = load(); e != cudaSuccess) return e;
  return forEveryType(LoadOneShot{});
}

cudaError_t launchOneShotKernel(void (*kernel)(OneShotArgs), const OneShotArgs& a, int blocks, cudaStream_t stream,
                                int threads) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(threads);
  config.stream = stream;
  cudaLaunchAttribute early{};
  early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &early;
  config.numAttrs = a.earlyLaunch ? 1 : 0;
  return cudaLaunchKernelEx(&config, kernel, a);
}

std::size_t oneShotLineScratchBytes(int ranks, std::size_t slotBytes) {
  return 2 * ranks * slotBytes + 2 * ranks * sizeof(uint4);
}

namespace {

// Every chunk of this rank's input and output starts on an 8-byte boundary (elements of `es`).
bool chunksAligned8(const OneShotArgs& a, std::size_t es) {
  return aligned8(a.in) && aligned8(a.out) && (a.inStride * es) % 8 == 0 && (a.outStride * es) % 8 == 0;
}

}  // namespace

bool oneShotAllowsLines(const OneShotArgs& a, DataType type) {
  // Whole units are 8-byte accesses: every chunk must start on an 8-byte boundary, unless a
  // chunk is less than one unit (then every access is one element).
  const std::size_t es = dataTypeSize(type), bytes = a.len * es, lines = (bytes + 7) / 8;
  return a.llScratch[a.rank] && (chunksAligned8(a, es) || bytes < 8) && lines * 16 <= a.llSlotBytes;
}

bool oneShotAllowsLines128(const OneShotArgs& a, DataType type) {
  // Whole 8-byte words in every chunk, every chunk on an 8-byte boundary; its tokens are the
  // 16-byte lines'.
  const std::size_t es = dataTypeSize(type), bytes = a.len * es;
  return a.ll128Scratch[a.rank] && a.llScratch[a.rank] && chunksAligned8(a, es) && bytes % 8 == 0 &&
         line128Bytes(bytes) <= a.ll128SlotBytes;
}

cudaError_t launchOneShot(const OneShotArgs& a, DataType type, cudaStream_t stream) {
  if (a.len == 0) return cudaSuccess;
  if (a.ranks < 2 || a.ranks > kMaxCommRanks) return cudaErrorInvalidValue;
  if (a.lines128) return launchOneShotLines128(a, type, stream);
  if (a.lines) return launchOneShotLines(a, type, stream);
  return dispatchType(type, LaunchOneShot{a, stream});
}

}  // namespace gpupeer
