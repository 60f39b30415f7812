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

// Units [b, e) of every chunk this rank sends, into each receiver's slot for this rank.
template <class T, class U>
__device__ void push(const OneShotArgs& a, std::size_t b, std::size_t e, std::uint32_t parity, int t) {
  // Staggered (rank+1, rank+2, ...): every rank starting with rank 0 would crowd its inbound
  // port while the others idle.
  for (int k = 1; k < a.ranks; ++k) {
    const int d = (a.rank + k) % a.ranks;
    if (!dataFlows(a, a.rank, d)) continue;
    copyUnits(reinterpret_cast<U*>(slot<T>(a, d, parity, a.rank)), inChunk<T, U>(a, chunkFor(a, d)), b, e, t);
  }
}

// Units [b, e) of this rank's output, from its input and the slots filled by its peers.
template <class T, class U>
__device__ void finish(const OneShotArgs& a, std::size_t b, std::size_t e, std::uint32_t parity, int t) {
  const int me = a.rank, n = a.ranks;
  auto peer = [&](int r) { return reinterpret_cast<const U*>(slot<T>(a, me, parity, r)); };
  switch (a.op) {
    case CollOp::kAllReduce:
    case CollOp::kReduceScatter:
    case CollOp::kReduce: {
      if (a.op == CollOp::kReduce && me != a.root) return;
      const U* own = inChunk<T, U>(a, a.op == CollOp::kReduceScatter ? me : 0);
      auto source = [&](int r) { return r == me ? own : peer(r); };
      reduceStrided<T, U, kRoleThreads, kRoleCopyDepth>(a.redop, n, source, outChunk<T, U>(a, 0), b + t, e);
      return;
    }
    case CollOp::kAllGather:
    case CollOp::kAllToAll: {
      const U* own = inChunk<T, U>(a, a.op == CollOp::kAllToAll ? me : 0);
      for (int r = 0; r < n; ++r) {
        U* out = outChunk<T, U>(a, r);
        const U* src = r == me ? own : peer(r);
        if (src != out) copyUnits(out, src, b, e, t);  // in place: already there
      }
      return;
    }
    case CollOp::kBroadcast:
    case CollOp::kSendRecv: {
      const int from = a.op == CollOp::kBroadcast ? a.root : (me + n - 1) % n;
      const U* src = from == me ? inChunk<T, U>(a, 0) : peer(from);
      U* out = outChunk<T, U>(a, 0);
      if (src != out) copyUnits(out, src, b, e, t);
      return;
    }
  }
}

template <class T, bool kVectors>
__global__ void __launch_bounds__(kThreads) oneShot(OneShotArgs a) {
  static_assert(16 % sizeof(T) == 0, "a 16-byte unit holds whole elements");
  using U = std::conditional_t<kVectors, uint4, T>;
  constexpr std::size_t kScale = 16 / sizeof(U);  // U per 16-byte unit
  const std::uint32_t epoch = beginOperation(a);
  announceCall(a, epoch);
  // Scratch alternates between two parities. A rank starts operation k+2 (same parity as k)
  // only after it received every step of k+1 from every peer, and a peer sends k+1 only after
  // finishing k: so nobody still reads the slots being overwritten.
  const std::uint32_t parity = epoch & 1;
  const RegularCut cut = cutRegular<T>(a);
  const std::uint32_t mark = epoch * kFlagStride;  // + s + 1 after step s
  const int me = a.rank, n = a.ranks;
  // Steps whose input this block's pushers have read. The in-place finisher overwrites that
  // input, so it reads the count with acquire after the pushers' thread 0 stored it with release
  // (their reads ordered before the store by their role barrier): no __syncthreads between roles.
  __shared__ std::uint32_t pushed;
  cuda::atomic_ref<std::uint32_t, cuda::thread_scope_block> pushedSteps(pushed);
  __shared__ bool failed;  // a peer timed out: stop waiting for it step after step
  if (threadIdx.x == 0) {
    pushed = 0;
    failed = false;
  }
  __syncthreads();
  if (threadIdx.x < kRoleThreads) {
    const int t = threadIdx.x;
    for (std::uint32_t s = 0; s < cut.steps; ++s) {
      push<T, U>(a, cut.stepBegin(s) * kScale, cut.stepEnd(s) * kScale, parity, t);
      if (cut.last && s + 1 == cut.steps) push<T, T>(a, cut.tail, a.len, parity, t);
      roleBarrier(1);
      if (t == 0) pushedSteps.store(s + 1, cuda::memory_order_release);
      // Every peer hears every step, data or not (the parity argument above); the role's
      // stores into its slots, ordered before this thread by the role barrier, land first.
      if (t < n && t != me) releaseStore(flagOf(a, t, me), mark + s + 1);
    }
  } else {
    const int t = threadIdx.x - kRoleThreads;
    if (t < n && t != me) checkCall(a, epoch, t);
    for (std::uint32_t s = 0; s < cut.steps; ++s) {
      if (t == me) {
        // In place, this step's output overwrites the input the pushers read.
        while (pushedSteps.load(cuda::memory_order_acquire) <= s) {
        }
      } else if (t < n) {
        awaitUnlessFailed(a, flagOf(a, me, t), mark + s + 1, t, failed);
      }
      roleBarrier(2);
      finish<T, U>(a, cut.stepBegin(s) * kScale, cut.stepEnd(s) * kScale, parity, t);
      if (cut.last && s + 1 == cut.steps) finish<T, T>(a, cut.tail, a.len, parity, t);
    }
  }
  endOperation(a);
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
