#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cuda/all_reduce_kernels.cuh"

namespace gpupeer {
namespace {

constexpr int kThreads = 512;
// A peer that has not arrived after this long is reported instead of waited for forever.
constexpr unsigned long long kBarrierTimeoutNs = 10'000'000'000ULL;

// Arithmetic in a wider type where the element type is narrow: half and bfloat16 reduce in
// float, integers in their own type (so that sums wrap exactly as the host reference does).
template <class T>
struct Acc {
  using type = T;
  static __device__ type load(T v) { return v; }
  static __device__ T store(type v) { return v; }
};
template <>
struct Acc<__half> {
  using type = float;
  static __device__ float load(__half v) { return __half2float(v); }
  static __device__ __half store(float v) { return __float2half_rn(v); }
};
template <>
struct Acc<__nv_bfloat16> {
  using type = float;
  static __device__ float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
};

template <class A>
__device__ A combine(RedOp op, A a, A b) {
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg: return static_cast<A>(a + b);
    case RedOp::kProd: return static_cast<A>(a * b);
    case RedOp::kMin: return b < a ? b : a;
    case RedOp::kMax: return a < b ? b : a;
  }
  return a;
}

__device__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <class T>
__global__ void __launch_bounds__(kThreads)
    oneShotAllReduce(const T* in, T* out, std::size_t count, RedOp op, AllReducePeers peers, bool vectors) {
  using A = typename Acc<T>::type;
  __shared__ std::uint32_t epochShared;
  if (threadIdx.x == 0) epochShared = peers.epochs[blockIdx.x] + 1;
  __syncthreads();
  const std::uint32_t epoch = epochShared;
  const std::size_t half = (epoch & 1) * peers.scratchElements;  // the two halves alternate
  // Work is split in 16-byte vectors when the buffers allow it (`vectors` > 0): each block
  // owns the same range on every rank, so its barrier covers exactly the data it reads. The
  // last block also takes the elements after the last whole vector.
  constexpr std::size_t kLanes = 16 / sizeof(T);
  const std::size_t units = vectors ? count / kLanes : count;
  const std::size_t per = (units + gridDim.x - 1) / gridDim.x;
  const std::size_t begin = blockIdx.x * per, end = begin + per < units ? begin + per : units;
  const std::size_t tailBegin = vectors ? units * kLanes : count;
  const bool lastBlock = blockIdx.x == gridDim.x - 1;

  // 1. This block's share of the input into this rank's scratch.
  T* mine = static_cast<T*>(peers.scratch[peers.rank]) + half;
  if (vectors) {
    for (std::size_t v = begin + threadIdx.x; v < end; v += blockDim.x)
      reinterpret_cast<uint4*>(mine)[v] = reinterpret_cast<const uint4*>(in)[v];
  } else {
    for (std::size_t i = begin + threadIdx.x; i < end; i += blockDim.x) mine[i] = in[i];
  }
  if (lastBlock)
    for (std::size_t i = tailBegin + threadIdx.x; i < count; i += blockDim.x) mine[i] = in[i];
  __syncthreads();
  // 2. Barrier with the same block of every rank. Thread r tells rank r "block b of me has
  // written epoch's data": the system-scope fence and release store make the block's scratch
  // writes (ordered before by __syncthreads) visible before the flag; the acquire load of the
  // peer's flag makes its writes visible to this block after the next __syncthreads.
  const int t = threadIdx.x;
  if (t < peers.ranks) {
    std::uint32_t* slot = peers.flags[t] + blockIdx.x * kMaxCommRanks + peers.rank;
    __threadfence_system();
    asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(slot), "r"(epoch) : "memory");
    const std::uint32_t* wait = peers.flags[peers.rank] + blockIdx.x * kMaxCommRanks + t;
    unsigned long long start = now();
    for (;;) {
      std::uint32_t seen;
      asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(seen) : "l"(wait) : "memory");
      if (static_cast<int>(seen - epoch) >= 0) break;
      if (now() - start > kBarrierTimeoutNs) {
        atomicCAS(peers.error, 0u, static_cast<std::uint32_t>(t + 1));
        break;
      }
    }
  }
  __syncthreads();
  // 3. Reduce every rank's share in rank order 0..n-1, so every GPU gets the same bits.
  auto reduceAt = [&](std::size_t i) {
    A acc = Acc<T>::load(static_cast<const T*>(peers.scratch[0])[half + i]);
    for (int r = 1; r < peers.ranks; ++r)
      acc = combine<A>(op, acc, Acc<T>::load(static_cast<const T*>(peers.scratch[r])[half + i]));
    if (op == RedOp::kAvg) acc = static_cast<A>(acc / static_cast<A>(peers.ranks));
    return Acc<T>::store(acc);
  };
  if (vectors) {
    for (std::size_t v = begin + threadIdx.x; v < end; v += blockDim.x) {
      uint4 loaded[kMaxCommRanks];
      for (int r = 0; r < peers.ranks; ++r)
        loaded[r] = reinterpret_cast<const uint4*>(static_cast<const T*>(peers.scratch[r]) + half)[v];
      uint4 result;
      T* lanes = reinterpret_cast<T*>(&result);
      for (std::size_t l = 0; l < kLanes; ++l) {
        A acc = Acc<T>::load(reinterpret_cast<const T*>(&loaded[0])[l]);
        for (int r = 1; r < peers.ranks; ++r)
          acc = combine<A>(op, acc, Acc<T>::load(reinterpret_cast<const T*>(&loaded[r])[l]));
        if (op == RedOp::kAvg) acc = static_cast<A>(acc / static_cast<A>(peers.ranks));
        lanes[l] = Acc<T>::store(acc);
      }
      reinterpret_cast<uint4*>(out)[v] = result;
    }
  } else {
    for (std::size_t i = begin + threadIdx.x; i < end; i += blockDim.x) out[i] = reduceAt(i);
  }
  if (lastBlock)
    for (std::size_t i = tailBegin + threadIdx.x; i < count; i += blockDim.x) out[i] = reduceAt(i);
  if (threadIdx.x == 0) peers.epochs[blockIdx.x] = epoch;
}

template <class T>
cudaError_t launchTyped(const void* in, void* out, std::size_t count, RedOp op, const AllReducePeers& peers, int blocks,
                        cudaStream_t stream) {
  // 16-byte vectors need 16-byte aligned input, output and scratch halves (the scratch itself
  // comes from cudaMalloc, 256-byte aligned).
  bool vectors = ((reinterpret_cast<std::uintptr_t>(in) | reinterpret_cast<std::uintptr_t>(out)) & 15) == 0 &&
                 (peers.scratchElements * sizeof(T)) % 16 == 0;
  oneShotAllReduce<T>
      <<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(in), static_cast<T*>(out), count, op, peers, vectors);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launchOneShotAllReduce(const void* in, void* out, std::size_t count, DataType type, RedOp op,
                                   const AllReducePeers& peers, int blocks, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (blocks < 1 || blocks > kMaxAllReduceBlocks) return cudaErrorInvalidValue;
  switch (type) {
    case DataType::kFloat32: return launchTyped<float>(in, out, count, op, peers, blocks, stream);
    case DataType::kFloat16: return launchTyped<__half>(in, out, count, op, peers, blocks, stream);
    case DataType::kBFloat16: return launchTyped<__nv_bfloat16>(in, out, count, op, peers, blocks, stream);
    case DataType::kFloat64: return launchTyped<double>(in, out, count, op, peers, blocks, stream);
    case DataType::kInt8: return launchTyped<std::int8_t>(in, out, count, op, peers, blocks, stream);
    case DataType::kUInt8: return launchTyped<std::uint8_t>(in, out, count, op, peers, blocks, stream);
    case DataType::kInt32: return launchTyped<std::int32_t>(in, out, count, op, peers, blocks, stream);
    case DataType::kInt64: return launchTyped<std::int64_t>(in, out, count, op, peers, blocks, stream);
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpupeer
