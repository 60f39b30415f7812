// The relay kernel: broadcast and reduce through the scratch, the message cut into parts, one
// per rank other than the root, each part carried by its own rank. Broadcast: the root sends
// part p to its rank only, which passes it on to the others. Reduce: every rank sends part p
// of its input to p's rank, which reduces it and sends the result to the root. Every port
// carries about the message once, where the one-shot kernel puts it n - 1 times on the root's
// (docs/collectives.md, the relay row). Same slots, flags, roles and steps as the one-shot
// kernel's regular variant (one_shot_kernels.cu); up to 64 MiB the relay goes in 128-byte
// lines instead (relay_lines128.cu).
#include <algorithm>
#include <type_traits>

#include "collectives/call_line.cuh"
#include "collectives/one_shot_device.cuh"
#include "collectives/reduce_math.cuh"

namespace gpupeer {
namespace {

using namespace oneshot;

// Default data per block and step: 16 KiB measured faster than the one-shot kernel's 32 KiB
// and than 8 or 64 KiB at every size from 4 MiB (4x H200, 4 processes: 256 MiB broadcast
// 968 us against 1037, reduce 1270 against 1350; docs/collectives.md, the relay row).
constexpr std::size_t kDefaultRelayStepBytes = 16u << 10;

// Units [b, e) of this step as a sender, into every rank but the root (a reduce's results reach
// the root from the receiving role). A broadcast's root sends each rank its part; the other
// ranks pass their part on, once it is in their slot for the root. In a reduce every rank sends
// each other non-root rank that rank's part of its input. `relaying`: a broadcast's non-root.
template <class T, class U>
__device__ void send(const OneShotArgs& a, std::size_t b, std::size_t e, std::uint32_t parity, int t, bool relaying) {
  const int me = a.rank;
  for (int k = 1; k < a.ranks; ++k) {
    const int d = (me + k) % a.ranks;  // staggered, as the one-shot kernel's pushes
    if (d == a.root) continue;
    U* to = reinterpret_cast<U*>(slot<T>(a, d, parity, me));
    const U* from =
        relaying ? reinterpret_cast<const U*>(slot<T>(a, me, parity, a.root)) : inChunk<T, U>(a, relayPartOf(a, d));
    copyUnits(to, from, b, e, t);
  }
}

// Units [b, e) of this step as a receiver, once every peer's flag for it arrived. Broadcast: the
// root copies its input to its output (unless in place); the others copy their own part from
// their slot for the root and every other part from its rank's slot. Reduce: a non-root rank
// reduces its part (its input and every peer's slot) into its slot in the root's scratch; the
// root copies each rank's reduced part to its output.
template <class T, class U>
__device__ void receive(const OneShotArgs& a, std::size_t b, std::size_t e, std::uint32_t parity, int t) {
  const int me = a.rank, n = a.ranks;
  auto slotOf = [&](int owner, int sender) { return reinterpret_cast<U*>(slot<T>(a, owner, parity, sender)); };
  if (a.op == CollOp::kReduce && me != a.root) {
    const U* own = inChunk<T, U>(a, relayPartOf(a, me));
    auto source = [&](int r) -> const U* { return r == me ? own : slotOf(me, r); };
    reduceStrided<T, U, kRoleThreads, kRoleCopyDepth>(a.redop, n, source, slotOf(a.root, me), b + t, e);
    return;
  }
  for (int r = 0; r < n; ++r) {
    if (r == a.root) continue;
    U* out = outChunk<T, U>(a, relayPartOf(a, r));
    const U* src = me == a.root ? (a.op == CollOp::kReduce ? slotOf(me, r) : inChunk<T, U>(a, relayPartOf(a, r)))
                                : slotOf(me, r == me ? a.root : r);
    if (src != out) copyUnits(out, src, b, e, t);  // the root's broadcast in place: already there
  }
}

template <class T, bool kVectors>
__global__ void __launch_bounds__(kThreads) relay(OneShotArgs a) {
  static_assert(16 % sizeof(T) == 0, "a 16-byte unit holds whole elements");
  using U = std::conditional_t<kVectors, uint4, T>;
  constexpr std::size_t kScale = 16 / sizeof(U);  // U per 16-byte unit
  const std::uint32_t epoch = beginOperation(a);
  announceCall(a, epoch);
  // The one-shot kernel's parities, cut and flags (one_shot_kernels.cu): every rank hears every
  // step from every peer, so a slot is overwritten two operations later only after its reader
  // finished with it.
  const std::uint32_t parity = epoch & 1;
  const RegularCut cut = cutRegular<T>(a, a.len, a.len);
  const std::uint32_t mark = epoch * kFlagStride;  // + s + 1 after step s
  const int me = a.rank, n = a.ranks, root = a.root;
  const bool relaying = a.op == CollOp::kBroadcast && me != root;
  // A reduce's non-root rank raises its word at the root after its reduced part landed there,
  // from the receiving role; its sending role raises every other peer's.
  const bool reducesForRoot = a.op == CollOp::kReduce && me != root;
  __shared__ bool failed;  // a peer timed out: stop waiting for it step after step
  if (threadIdx.x == 0) failed = false;
  __syncthreads();
  if (threadIdx.x < kRoleThreads) {
    const int t = threadIdx.x;
    for (std::uint32_t s = 0; s < cut.steps; ++s) {
      if (relaying) {
        // This rank's part of the step reached its slot for the root.
        if (t == 0) awaitUnlessFailed(a, flagOf(a, me, root), mark + s + 1, root, failed);
        roleBarrier(1);
      }
      send<T, U>(a, cut.stepBegin(s) * kScale, cut.stepEnd(s) * kScale, parity, t, relaying);
      if (cut.takesTail && s + 1 == cut.steps) send<T, T>(a, cut.tail, a.len, parity, t, relaying);
      roleBarrier(1);
      if (t < n && t != me && !(reducesForRoot && t == root)) releaseStore(flagOf(a, t, me), mark + s + 1);
    }
  } else {
    const int t = threadIdx.x - kRoleThreads;
    if (t < n && t != me) checkCall(a, epoch, t);
    for (std::uint32_t s = 0; s < cut.steps; ++s) {
      if (t < n && t != me) awaitUnlessFailed(a, flagOf(a, me, t), mark + s + 1, t, failed);
      roleBarrier(2);
      receive<T, U>(a, cut.stepBegin(s) * kScale, cut.stepEnd(s) * kScale, parity, t);
      if (cut.takesTail && s + 1 == cut.steps) receive<T, T>(a, cut.tail, a.len, parity, t);
      if (reducesForRoot) {
        roleBarrier(2);
        if (t == 0) releaseStore(flagOf(a, root, me), mark + s + 1);
      }
    }
  }
  endOperation(a);
}

struct LaunchRelay {
  const OneShotArgs& a;
  cudaStream_t stream;
  template <class T>
  cudaError_t operator()() const {
    return launchRegular<T>(relay<T, true>, relay<T, false>, a, kDefaultRelayStepBytes, stream);
  }
};

struct LoadRelay {
  template <class T>
  cudaError_t operator()() const {
    return loadKernels(relay<T, true>, relay<T, false>);
  }
};

}  // namespace

cudaError_t loadRelayKernels() { return forEveryType(LoadRelay{}); }

cudaError_t launchRelay(const OneShotArgs& a, DataType type, cudaStream_t stream) {
  if (a.len == 0) return cudaSuccess;
  if (a.ranks < 2 || a.ranks > kMaxCommRanks || (a.op != CollOp::kBroadcast && a.op != CollOp::kReduce))
    return cudaErrorInvalidValue;
  if (a.lines128) return launchRelayLines128(a, type, stream);
  return dispatchType(type, LaunchRelay{a, stream});
}

}  // namespace gpupeer
