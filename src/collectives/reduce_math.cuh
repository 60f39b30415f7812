#pragma once
// Element arithmetic shared by the collective kernels: reductions in a wider type where the
// element is narrow, and "units" (one element, or 16 bytes of elements) so one kernel body
// serves the vector path and the unaligned tail.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

// half, bfloat16 and the 8-bit floats reduce in float; integers in their own type, so that sums
// wrap exactly as the host reference does.
template <class T>
struct Acc {
  using type = T;
  static constexpr bool kPairs = false;  // see the 8-bit floats below
  static __device__ type load(T v) { return v; }
  static __device__ T store(type v) { return v; }
};
template <>
struct Acc<__half> {
  using type = float;
  static constexpr bool kPairs = false;
  static __device__ float load(__half v) { return __half2float(v); }
  static __device__ __half store(float v) { return __float2half_rn(v); }
};
template <>
struct Acc<__nv_bfloat16> {
  using type = float;
  static constexpr bool kPairs = false;
  static __device__ float load(__nv_bfloat16 v) { return __bfloat162float(v); }
  static __device__ __nv_bfloat16 store(float v) { return __float2bfloat16_rn(v); }
};

// 8-bit floats: the constructor from float rounds to nearest even and saturates to the
// largest finite value (__NV_SATFINITE), as the host reference's floatToFp8 does. Whole units
// convert two lanes per instruction (loadPair, storePair: the same conversions, two at a time),
// which measured faster for small all-reduces (docs/collectives.md, tuned constants).
template <__nv_fp8_interpretation_t kKind>
struct Fp8Acc {
  using type = float;
  static constexpr bool kPairs = true;
  static __device__ float2 loadPair(__nv_fp8x2_storage_t v) {
    const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(v, kKind);
    return __half22float2(__half2(h));
  }
  static __device__ __nv_fp8x2_storage_t storePair(float2 v) {
    return __nv_cvt_float2_to_fp8x2(v, __NV_SATFINITE, kKind);
  }
};
template <>
struct Acc<__nv_fp8_e4m3> : Fp8Acc<__NV_E4M3> {
  static __device__ float load(__nv_fp8_e4m3 v) { return static_cast<float>(v); }
  static __device__ __nv_fp8_e4m3 store(float v) { return __nv_fp8_e4m3(v); }
};
template <>
struct Acc<__nv_fp8_e5m2> : Fp8Acc<__NV_E5M2> {
  static __device__ float load(__nv_fp8_e5m2 v) { return static_cast<float>(v); }
  static __device__ __nv_fp8_e5m2 store(float v) { return __nv_fp8_e5m2(v); }
};

// One step of a reduction, the operator fixed at compile time: kernels choose it once
// (withRedOp) and run one straight block of lane arithmetic. Chosen per lane, in a switch,
// every lane's arithmetic sat in its own arm, and small all-reduces grew slower with the
// lanes per unit (docs/collectives.md, tuned constants).
template <RedOp kOp, class A>
__device__ __forceinline__ A combineAs(A a, A b) {
  if constexpr (kOp == RedOp::kProd)
    return static_cast<A>(a * b);
  else if constexpr (kOp == RedOp::kMin)
    return b < a ? b : a;
  else if constexpr (kOp == RedOp::kMax)
    return a < b ? b : a;
  else
    return static_cast<A>(a + b);  // sum, and avg before its division
}

// A unit is what one thread moves at a time: U = T (one element) or uint4 (16 bytes).
template <class T, class U>
struct Unit {
  static constexpr int kLanes = sizeof(U) / sizeof(T);
  static __device__ __forceinline__ T& lane(U& u, int l) { return reinterpret_cast<T*>(&u)[l]; }
};

// A running reduction of units, lane by lane in the wider type. Sources are added in rank
// order 0..n-1, so every GPU that reduces the same values gets the same bits; avg divides by n
// at the end. The lanes are a fixed-size array indexed only by unrolled constants, so it lives
// in registers: collecting the sources in an array indexed by rank put them on the stack, and
// every reduced unit waited for its own input's load before it polled a peer's.
template <class T, class U>
struct UnitAcc {
  using A = typename Acc<T>::type;
  static constexpr int kLanes = Unit<T, U>::kLanes;
  static constexpr bool kPairs = Acc<T>::kPairs && kLanes % 2 == 0;
  A lane[kLanes];

  /// The lanes of `u` in the wider type, and back.
  static __device__ __forceinline__ void widen(U u, A (&x)[kLanes]) {
    if constexpr (kPairs) {
#pragma unroll
      for (int l = 0; l < kLanes; l += 2) {
        const float2 f = Acc<T>::loadPair(reinterpret_cast<const __nv_fp8x2_storage_t*>(&u)[l / 2]);
        x[l] = f.x;
        x[l + 1] = f.y;
      }
    } else {
#pragma unroll
      for (int l = 0; l < kLanes; ++l) x[l] = Acc<T>::load(Unit<T, U>::lane(u, l));
    }
  }
  static __device__ __forceinline__ U narrow(const A (&x)[kLanes]) {
    U out;
    if constexpr (kPairs) {
#pragma unroll
      for (int l = 0; l < kLanes; l += 2)
        reinterpret_cast<__nv_fp8x2_storage_t*>(&out)[l / 2] = Acc<T>::storePair(make_float2(x[l], x[l + 1]));
    } else {
#pragma unroll
      for (int l = 0; l < kLanes; ++l) Unit<T, U>::lane(out, l) = Acc<T>::store(x[l]);
    }
    return out;
  }

  __device__ __forceinline__ void set(U u) { widen(u, lane); }
  template <RedOp kOp>
  __device__ __forceinline__ void addAs(U u) {
    A x[kLanes];
    widen(u, x);
#pragma unroll
    for (int l = 0; l < kLanes; ++l) lane[l] = combineAs<kOp, A>(lane[l], x[l]);
  }
  /// Rank r's unit: the first one sets, the others combine.
  template <RedOp kOp>
  __device__ __forceinline__ void takeAs(int r, U u) {
    if (r == 0)
      set(u);
    else
      addAs<kOp>(u);
  }
  template <RedOp kOp>
  __device__ __forceinline__ U resultAs(int n) const {
    A v[kLanes];
#pragma unroll
    for (int l = 0; l < kLanes; ++l) {
      v[l] = lane[l];
      if constexpr (kOp == RedOp::kAvg) v[l] = static_cast<A>(v[l] / static_cast<A>(n));
    }
    return narrow(v);
  }
};

// Calls f(std::integral_constant<RedOp, op>{}): the operator as a compile-time constant.
template <class F>
__device__ __forceinline__ void withRedOp(RedOp op, F&& f) {
  switch (op) {
    case RedOp::kProd: f(std::integral_constant<RedOp, RedOp::kProd>{}); break;
    case RedOp::kMin: f(std::integral_constant<RedOp, RedOp::kMin>{}); break;
    case RedOp::kMax: f(std::integral_constant<RedOp, RedOp::kMax>{}); break;
    case RedOp::kAvg: f(std::integral_constant<RedOp, RedOp::kAvg>{}); break;
    default: f(std::integral_constant<RedOp, RedOp::kSum>{}); break;
  }
}

// Units a thread reduces at once: `lanes` lanes at most (narrow types widen to float in
// registers), `most` at most. The default, 32: with 16, a thread of bf16 or half (8 lanes a
// unit) kept two units of each source in flight where float keeps four, and the one-shot
// finisher's loads waited on memory: on 4x H200, 4 processes, graphs, a bf16 all-reduce of
// 256 MiB took 1,429 us against float's 1,303 and a bf16 reduce-scatter 773 against NCCL's 666;
// with 32, 1,305 and 658. Loading two sources before adding them gained less (1,330).
inline constexpr int kMostReduceLanes = 32;
template <class T, class U>
constexpr int reduceDepth(int most, int lanes = kMostReduceLanes) {
  const int byLanes = lanes / Unit<T, U>::kLanes < 1 ? 1 : lanes / Unit<T, U>::kLanes;
  return byLanes > most ? most : byLanes;
}

// out[v] = reduction over ranks r < n, in rank order, of source(r)[v] for the units of
// [first, end) that one thread takes when `threads` threads share the range: up to `depth`
// units of every source in flight at once (reduceDepth), accumulated in registers.
template <class T, class U, int kThreads, int kDepth, class Source>
__device__ __forceinline__ void reduceStrided(RedOp op, int n, Source source, U* out, std::size_t first,
                                              std::size_t end) {
  constexpr int k = reduceDepth<T, U>(kDepth);
  withRedOp(op, [&](auto opTag) {
    constexpr RedOp kOp = decltype(opTag)::value;
    for (std::size_t u = first; u < end; u += k * kThreads) {
      UnitAcc<T, U> acc[k];
      for (int r = 0; r < n; ++r) {
        const U* src = source(r);
        U x[k];
#pragma unroll
        for (int i = 0; i < k; ++i)
          if (u + i * kThreads < end) x[i] = src[u + i * kThreads];
#pragma unroll
        for (int i = 0; i < k; ++i)
          if (u + i * kThreads < end) acc[i].template takeAs<kOp>(r, x[i]);
      }
#pragma unroll
      for (int i = 0; i < k; ++i)
        if (u + i * kThreads < end) out[u + i * kThreads] = acc[i].template resultAs<kOp>(n);
    }
  });
}

// Units of every rank, gathered first (so that all loads and polls are in flight together),
// then reduced. Both loops unroll over kMaxCommRanks, so `sources` stays in registers.
template <class T, class U, RedOp kOp>
__device__ __forceinline__ U reduceUnitsAs(const U (&sources)[kMaxCommRanks], int n, int avgOver) {
  UnitAcc<T, U> acc;
  acc.set(sources[0]);
#pragma unroll
  for (int r = 1; r < kMaxCommRanks; ++r)
    if (r < n) acc.template addAs<kOp>(sources[r]);
  return acc.template resultAs<kOp>(avgOver ? avgOver : n);
}
// Its own switch rather than withRedOp: this is the form measured (docs/collectives.md, tuned
// constants, withRedOp); routed through withRedOp the kernels compile to other code.
template <class T, class U>
__device__ __forceinline__ U reduceUnits(RedOp op, const U (&sources)[kMaxCommRanks], int n, int avgOver = 0) {
  switch (op) {
    case RedOp::kProd: return reduceUnitsAs<T, U, RedOp::kProd>(sources, n, avgOver);
    case RedOp::kMin: return reduceUnitsAs<T, U, RedOp::kMin>(sources, n, avgOver);
    case RedOp::kMax: return reduceUnitsAs<T, U, RedOp::kMax>(sources, n, avgOver);
    case RedOp::kAvg: return reduceUnitsAs<T, U, RedOp::kAvg>(sources, n, avgOver);
    default: return reduceUnitsAs<T, U, RedOp::kSum>(sources, n, avgOver);
  }
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
    case DataType::kFloat8E4M3: return f.template operator()<__nv_fp8_e4m3>();
    case DataType::kFloat8E5M2: return f.template operator()<__nv_fp8_e5m2>();
  }
  return cudaErrorInvalidValue;
}

// Calls f.template operator()<T>() for every element type, up to the first error.
template <class F>
__host__ cudaError_t forEveryType(F&& f) {
  for (DataType type : kAllDataTypes)
    if (cudaError_t e = dispatchType(type, f); e != cudaSuccess) return e;
  return cudaSuccess;
}

}  // namespace gpupeer
