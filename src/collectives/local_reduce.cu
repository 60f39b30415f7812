// The copy-engine algorithms' local step: out = sources reduced in rank order, on one GPU.
#include <algorithm>
#include <type_traits>

#include "collectives/one_shot_kernels.cuh"
#include "collectives/reduce_math.cuh"

namespace gpupeer {
namespace {

constexpr int kThreads = 512;

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; }

template <class T, bool kVectors>
__global__ void __launch_bounds__(kThreads) localReduceKernel(ReduceSources s, void* out, std::size_t count, RedOp op) {
  using U = std::conditional_t<kVectors, uint4, T>;
  constexpr std::size_t kLanes = sizeof(U) / sizeof(T);
  const std::size_t units = count / kLanes;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::size_t u = first; u < units; u += stride) {
    U v[kMaxCommRanks];
#pragma unroll
    for (int r = 0; r < kMaxCommRanks; ++r)
      if (r < s.n) v[r] = static_cast<const U*>(s.src[r])[u];
    static_cast<U*>(out)[u] = reduceUnits<T, U>(op, v, s.n, s.avgOver);
  }
  if (kVectors)
    for (std::size_t i = units * kLanes + first; i < count; i += stride) {
      T v[kMaxCommRanks];  // registers: reduceUnits unrolls over every index
#pragma unroll
      for (int r = 0; r < kMaxCommRanks; ++r)
        if (r < s.n) v[r] = static_cast<const T*>(s.src[r])[i];
      static_cast<T*>(out)[i] = reduceUnits<T, T>(op, v, s.n, s.avgOver);
    }
}

struct LaunchLocalReduce {
  const ReduceSources& s;
  void* out;
  std::size_t count;
  RedOp op;
  cudaStream_t stream;
  template <class T>
  cudaError_t operator()() const {
    bool vectors = aligned16(out);
    for (int r = 0; r < s.n; ++r) vectors = vectors && aligned16(s.src[r]);
    std::size_t units = vectors ? count / (16 / sizeof(T)) : count;
    // Enough blocks to keep every SM busy streaming (4 per SM on a 132-SM GPU), fewer when
    // there is little to do.
    int blocks = static_cast<int>(std::clamp<std::size_t>((units + kThreads - 1) / kThreads, 1, 528));
    if (vectors)
      localReduceKernel<T, true><<<blocks, kThreads, 0, stream>>>(s, out, count, op);
    else
      localReduceKernel<T, false><<<blocks, kThreads, 0, stream>>>(s, out, count, op);
    return cudaGetLastError();
  }
};

}  // namespace

cudaError_t launchLocalReduce(const ReduceSources& sources, void* out, std::size_t count, DataType type, RedOp op,
                              cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (sources.n < 1 || sources.n > kMaxCommRanks) return cudaErrorInvalidValue;
  return dispatchType(type, LaunchLocalReduce{sources, out, count, op, stream});
}

}  // namespace gpupeer
