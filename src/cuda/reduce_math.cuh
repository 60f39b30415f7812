#pragma once
// Element arithmetic shared by the collective kernels: reductions in a wider type where the
// element is narrow, and "units" (one element, or 16 bytes of elements) so one kernel body
// serves the vector path and the unaligned tail.

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

// half and bfloat16 reduce in float; integers in their own type, so that sums wrap exactly as
// the host reference does.
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
__device__ __forceinline__ A combine(RedOp op, A a, A b) {
  switch (op) {
    case RedOp::kSum:
    case RedOp::kAvg: return static_cast<A>(a + b);
    case RedOp::kProd: return static_cast<A>(a * b);
    case RedOp::kMin: return b < a ? b : a;
    case RedOp::kMax: return a < b ? b : a;
  }
  return a;
}

// A unit is what one thread moves at a time: U = T (one element) or uint4 (16 bytes).
template <class T, class U>
struct Unit {
  static constexpr int kLanes = sizeof(U) / sizeof(T);
  static __device__ __forceinline__ T& lane(U& u, int l) { return reinterpret_cast<T*>(&u)[l]; }
};

// sources[0..n-1] reduced lane by lane in rank order 0..n-1 (so every GPU that reduces the
// same values gets the same bits); avg divides by n at the end.
template <class T, class U>
__device__ __forceinline__ U reduceUnits(RedOp op, U* sources, int n) {
  using A = typename Acc<T>::type;
  U result;
  for (int l = 0; l < Unit<T, U>::kLanes; ++l) {
    A acc = Acc<T>::load(Unit<T, U>::lane(sources[0], l));
    for (int r = 1; r < n; ++r) acc = combine<A>(op, acc, Acc<T>::load(Unit<T, U>::lane(sources[r], l)));
    if (op == RedOp::kAvg) acc = static_cast<A>(acc / static_cast<A>(n));
    Unit<T, U>::lane(result, l) = Acc<T>::store(acc);
  }
  return result;
}

template <class T>
constexpr DataType dataTypeOf();
template <>
constexpr DataType dataTypeOf<float>() {
  return DataType::kFloat32;
}
template <>
constexpr DataType dataTypeOf<__half>() {
  return DataType::kFloat16;
}
template <>
constexpr DataType dataTypeOf<__nv_bfloat16>() {
  return DataType::kBFloat16;
}
template <>
constexpr DataType dataTypeOf<double>() {
  return DataType::kFloat64;
}
template <>
constexpr DataType dataTypeOf<std::int8_t>() {
  return DataType::kInt8;
}
template <>
constexpr DataType dataTypeOf<std::uint8_t>() {
  return DataType::kUInt8;
}
template <>
constexpr DataType dataTypeOf<std::int32_t>() {
  return DataType::kInt32;
}
template <>
constexpr DataType dataTypeOf<std::int64_t>() {
  return DataType::kInt64;
}

// Calls f.template operator()<T>() with the element type of `type`.
template <class F>
__host__ cudaError_t dispatchType(DataType type, F&& f) {
  switch (type) {
    case DataType::kFloat32: return f.template operator()<float>();
    case DataType::kFloat16: return f.template operator()<__half>();
    case DataType::kBFloat16: return f.template operator()<__nv_bfloat16>();
    case DataType::kFloat64: return f.template operator()<double>();
    case DataType::kInt8: return f.template operator()<std::int8_t>();
    case DataType::kUInt8: return f.template operator()<std::uint8_t>();
    case DataType::kInt32: return f.template operator()<std::int32_t>();
    case DataType::kInt64: return f.template operator()<std::int64_t>();
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpupeer
