#include "harness/collective_reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <system_error>
#include <thread>

namespace gpupeer {

float halfToFloat(std::uint16_t h) {
  std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t floatToHalf(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0));
  if (absx >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
  if (absx < 0x33000001u) return static_cast<std::uint16_t>(sign);             // below half of the smallest subnormal
  int exp = static_cast<int>(absx >> 23) - 127 + 15;
  std::uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
  int shift = exp <= 0 ? 14 - exp : 13;  // subnormals shift further
  std::uint32_t value = exp <= 0 ? 0 : static_cast<std::uint32_t>(exp) << 10;
  std::uint32_t kept = mant >> shift, rest = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
  std::uint32_t out = (exp <= 0 ? kept : (value | (kept & 0x3ffu)));
  if (rest > half || (rest == half && (out & 1))) ++out;  // nearest, ties to even (may carry into the exponent)
  return static_cast<std::uint16_t>(sign | out);
}

float bfloat16ToFloat(std::uint16_t b) {
  std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

std::uint16_t floatToBfloat16(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40);  // NaN stays NaN
  x += 0x7fffu + ((x >> 16) & 1);                                                            // nearest, ties to even
  return static_cast<std::uint16_t>(x >> 16);
}

namespace {

// The layout of an OCP 8-bit float: mantissa bits and exponent bias. E4M3 has no infinity and
// one NaN per sign (all ones); E5M2 follows IEEE (exponent all ones: infinity or NaN).
struct Fp8Layout {
  int mantissaBits, bias;
  double largest;  // largest finite value
};
Fp8Layout fp8Layout(DataType format) {
  if (format == DataType::kFloat8E5M2) return {2, 15, 57344.0};
  return {3, 7, 448.0};
}

}  // namespace

float fp8ToFloat(std::uint8_t v, DataType format) {
  const Fp8Layout l = fp8Layout(format);
  const int exp = (v & 0x7f) >> l.mantissaBits, mant = v & ((1 << l.mantissaBits) - 1);
  const int expAllOnes = (0x7f >> l.mantissaBits);
  const double sign = (v & 0x80) ? -1.0 : 1.0;
  if (format == DataType::kFloat8E5M2 && exp == expAllOnes)
    return mant == 0 ? static_cast<float>(sign * INFINITY) : NAN;
  if (format == DataType::kFloat8E4M3 && exp == expAllOnes && mant == (1 << l.mantissaBits) - 1) return NAN;
  if (exp == 0) return static_cast<float>(sign * std::ldexp(mant, 1 - l.bias - l.mantissaBits));
  return static_cast<float>(sign * std::ldexp(mant + (1 << l.mantissaBits), exp - l.bias - l.mantissaBits));
}

std::uint8_t floatToFp8(float f, DataType format) {
  const Fp8Layout l = fp8Layout(format);
  if (std::isnan(f)) return 0x7f;  // a NaN in both formats
  const std::uint8_t sign = std::signbit(f) ? 0x80 : 0;
  double a = std::fabs(static_cast<double>(f));
  // Quantum of a's binade, never finer than the subnormals'; nearbyint rounds ties to even.
  int e = 0;
  std::frexp(a, &e);  // a = m 2^e, m in [0.5, 1)
  const int minExp = 1 - l.bias;
  const int binade = a == 0 ? minExp : std::max(e - 1, minExp);
  double q = std::ldexp(1.0, binade - l.mantissaBits);
  double value = std::min(std::nearbyint(a / q) * q, l.largest);  // saturates, infinity included
  if (value < std::ldexp(1.0, minExp))                            // subnormal or zero: exponent field 0
    return static_cast<std::uint8_t>(sign | static_cast<int>(value / std::ldexp(1.0, minExp - l.mantissaBits)));
  std::frexp(value, &e);  // rounding may have carried into the next binade
  const int mant = static_cast<int>(std::ldexp(value, l.mantissaBits - (e - 1))) - (1 << l.mantissaBits);
  return static_cast<std::uint8_t>(sign | ((e - 1 + l.bias) << l.mantissaBits) | mant);
}

std::vector<std::uint8_t> knownAnswerInput(DataType type, int rank, std::size_t count, unsigned salt) {
  std::vector<std::uint8_t> out(count * dataTypeSize(type));
  // A salt shifts the index by a step that is no multiple of 17 (the pattern's period) for
  // salts 1-16, so that every element changes.
  const std::size_t shift = static_cast<std::size_t>(salt % 17) * 5;
  // v in -8..8 as `type`: quarters in the floating types, int8 scaled so that sums over two
  // ranks wrap, uint8 shifted positive and scaled alike, int64 shifted so that products wrap.
  auto valueOf = [type](int v) -> double {
    switch (type) {
      case DataType::kInt8: return v * 15;
      case DataType::kUInt8: return (v + 8) * 15;
      case DataType::kInt32: return v;
      case DataType::kInt64: return static_cast<double>(v) * static_cast<double>(std::int64_t{1} << 33);
      default: return v / 4.0;
    }
  };
  for (std::size_t i = 0; i < count; ++i) {
    const int v = static_cast<int>((i * 7 + shift + static_cast<std::size_t>(rank) * 13) % 17) - 8;
    storeElement(type, out.data(), i, valueOf(v));
  }
  return out;
}

void storeElement(DataType type, void* data, std::size_t i, double value) {
  auto* p = static_cast<unsigned char*>(data) + i * dataTypeSize(type);
  auto put = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  // Integers through int64, so that a negative value wraps into an unsigned type.
  const auto whole = static_cast<std::int64_t>(value);
  switch (type) {
    case DataType::kFloat32: put(static_cast<float>(value)); break;
    case DataType::kFloat64: put(value); break;
    case DataType::kFloat16: put(floatToHalf(static_cast<float>(value))); break;
    case DataType::kBFloat16: put(floatToBfloat16(static_cast<float>(value))); break;
    case DataType::kInt8: put(static_cast<std::int8_t>(whole)); break;
    case DataType::kUInt8: put(static_cast<std::uint8_t>(whole)); break;
    case DataType::kInt32: put(static_cast<std::int32_t>(whole)); break;
    case DataType::kInt64: put(whole); break;
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2: put(floatToFp8(static_cast<float>(value), type)); break;
  }
}

namespace {

template <class T>
T loadAs(const void* data, std::size_t i) {
  T v;
  std::memcpy(&v, static_cast<const unsigned char*>(data) + i * sizeof(T), sizeof(T));
  return v;
}

// f(load), where load(data, i) is element i of a buffer of `type` as double: the type's
// conversion chosen once, so that a loop over elements inside f makes no choice per element.
// What f returns for a type this does not know: its value-initialised result.
template <class F>
auto withElementLoader(DataType type, F&& f) {
  switch (type) {
    case DataType::kFloat32:
      return f([](const void* p, std::size_t i) { return static_cast<double>(loadAs<float>(p, i)); });
    case DataType::kFloat64: return f([](const void* p, std::size_t i) { return loadAs<double>(p, i); });
    case DataType::kFloat16:
      return f(
          [](const void* p, std::size_t i) { return static_cast<double>(halfToFloat(loadAs<std::uint16_t>(p, i))); });
    case DataType::kBFloat16:
      return f([](const void* p, std::size_t i) {
        return static_cast<double>(bfloat16ToFloat(loadAs<std::uint16_t>(p, i)));
      });
    case DataType::kInt8:
      return f([](const void* p, std::size_t i) { return static_cast<double>(loadAs<std::int8_t>(p, i)); });
    case DataType::kUInt8:
      return f([](const void* p, std::size_t i) { return static_cast<double>(loadAs<std::uint8_t>(p, i)); });
    case DataType::kInt32:
      return f([](const void* p, std::size_t i) { return static_cast<double>(loadAs<std::int32_t>(p, i)); });
    case DataType::kInt64:
      return f([](const void* p, std::size_t i) { return static_cast<double>(loadAs<std::int64_t>(p, i)); });
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2:
      return f([type](const void* p, std::size_t i) {
        return static_cast<double>(fp8ToFloat(loadAs<std::uint8_t>(p, i), type));
      });
  }
  return decltype(f([](const void*, std::size_t) { return 0.0; })){};
}

}  // namespace

double elementAsDouble(DataType type, const void* data, std::size_t i) {
  return withElementLoader(type, [&](auto load) { return load(data, i); });
}

namespace {

// Unit roundoff of the type's arithmetic (half of one ulp at 1.0).
double unitRoundoff(DataType type) {
  switch (type) {
    case DataType::kFloat16: return std::ldexp(1.0, -11);
    case DataType::kBFloat16: return std::ldexp(1.0, -8);
    case DataType::kFloat32: return std::ldexp(1.0, -24);
    case DataType::kFloat8E4M3: return std::ldexp(1.0, -4);
    case DataType::kFloat8E5M2: return std::ldexp(1.0, -3);
    default: return std::ldexp(1.0, -53);
  }
}

// Adds the check of a later range (or buffer) to `into`: its wrong ones counted, the first
// kept where `into` had none, the largest error.
void addCheck(ReductionCheck& into, const ReductionCheck& later) {
  if (later.wrong > 0 && into.wrong == 0) into.firstWrong = later.firstWrong;
  into.wrong += later.wrong;
  into.maxError = std::max(into.maxError, later.maxError);
}

// Elements a thread of the check takes at least. A check of one rank's 256 MiB of bf16 against
// four inputs took ~2 s on one core, and a sweep checks every rank and every baseline: the
// one-process sweep of 4 GPUs outran a minute at that size.
constexpr std::size_t kElementsPerThread = 1u << 20;

// check(b, e) over [0, count) in ranges of the machine's cores, merged as one check of the
// whole: the wrong ones counted, the first of them, the largest error. A range whose thread
// cannot be started is checked on the calling thread.
template <class CheckRange>
ReductionCheck checkInRanges(std::size_t count, CheckRange check) {
  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t ranges = std::clamp<std::size_t>(count / kElementsPerThread, 1, cores);
  if (ranges == 1) return check(std::size_t{0}, count);
  const std::size_t per = (count + ranges - 1) / ranges;
  std::vector<ReductionCheck> parts(ranges);
  std::vector<std::thread> threads;
  threads.reserve(ranges);
  for (std::size_t k = 0; k < ranges; ++k) {
    const std::size_t b = std::min(count, k * per), e = std::min(count, b + per);
    try {
      threads.emplace_back([&parts, &check, k, b, e] { parts[k] = check(b, e); });
    } catch (const std::system_error&) {
      parts[k] = check(b, e);
    }
  }
  for (std::thread& t : threads) t.join();
  ReductionCheck c;
  for (const ReductionCheck& part : parts) addCheck(c, part);
  return c;
}

// Integers: computed in the type with wrap-around, as the device does; must match exactly.
template <class T>
ReductionCheck checkIntegers(RedOp op, const std::vector<const void*>& inputs, const void* result, std::size_t b,
                             std::size_t e) {
  using U = std::make_unsigned_t<T>;
  ReductionCheck c;
  for (std::size_t i = b; i < e; ++i) {
    U acc = static_cast<U>(loadAs<T>(inputs[0], i));
    for (std::size_t r = 1; r < inputs.size(); ++r) {
      T v = loadAs<T>(inputs[r], i);
      switch (op) {
        case RedOp::kSum:
        case RedOp::kAvg: acc = static_cast<U>(acc + static_cast<U>(v)); break;
        case RedOp::kProd: acc = static_cast<U>(acc * static_cast<U>(v)); break;
        case RedOp::kMin: acc = static_cast<U>(std::min(static_cast<T>(acc), v)); break;
        case RedOp::kMax: acc = static_cast<U>(std::max(static_cast<T>(acc), v)); break;
      }
    }
    if (loadAs<T>(result, i) != static_cast<T>(acc) && c.wrong++ == 0) c.firstWrong = i;
  }
  return c;
}

// Floating types, each element read as double by `load(buffer, i)`: within the bound of any
// summation order (unit roundoff `u`).
template <class Load>
ReductionCheck checkFloats(RedOp op, double u, const std::vector<const void*>& inputs, const void* result,
                           std::size_t b, std::size_t e, Load load) {
  ReductionCheck c;
  const double n = static_cast<double>(inputs.size());
  for (std::size_t i = b; i < e; ++i) {
    double exact = load(inputs[0], i), magnitude = std::fabs(exact);
    for (std::size_t r = 1; r < inputs.size(); ++r) {
      double v = load(inputs[r], i);
      switch (op) {
        case RedOp::kSum:
        case RedOp::kAvg:
          exact += v;
          magnitude += std::fabs(v);
          break;
        case RedOp::kProd:
          exact *= v;
          magnitude = std::fabs(exact);
          break;
        case RedOp::kMin: exact = std::min(exact, v); break;
        case RedOp::kMax: exact = std::max(exact, v); break;
      }
    }
    if (op == RedOp::kAvg) {
      exact /= n;
      magnitude /= n;
    }
    double got = load(result, i);
    double bound = 0;  // min and max pick one of the inputs: exact
    // Any order of n-1 additions (or multiplications) errs by at most (n-1) u per step on the
    // magnitudes involved, plus the division of avg and the final rounding to the type.
    if (op == RedOp::kSum || op == RedOp::kAvg) bound = (n + 1) * u * magnitude;
    if (op == RedOp::kProd) bound = (n + 1) * u * magnitude;
    double error = std::fabs(got - exact);
    bool ok = std::isnan(exact) ? std::isnan(got) : error <= bound;
    c.maxError = std::max(c.maxError, std::isnan(error) ? 0.0 : error);
    if (!ok && c.wrong++ == 0) c.firstWrong = i;
  }
  return c;
}

// The check of [b, e) for `type`: integers exactly, the others within the bound, their elements
// loaded without a choice per element.
ReductionCheck checkRange(DataType type, RedOp op, const std::vector<const void*>& inputs, const void* result,
                          std::size_t b, std::size_t e) {
  switch (type) {
    case DataType::kInt8: return checkIntegers<std::int8_t>(op, inputs, result, b, e);
    case DataType::kUInt8: return checkIntegers<std::uint8_t>(op, inputs, result, b, e);
    case DataType::kInt32: return checkIntegers<std::int32_t>(op, inputs, result, b, e);
    case DataType::kInt64: return checkIntegers<std::int64_t>(op, inputs, result, b, e);
    default: break;
  }
  const double u = unitRoundoff(type);
  return withElementLoader(type, [&](auto load) { return checkFloats(op, u, inputs, result, b, e, load); });
}

}  // namespace

ReductionCheck checkReduction(DataType type, RedOp op, const std::vector<const void*>& inputs, const void* result,
                              std::size_t count) {
  if (inputs.empty()) return {};
  return checkInRanges(count, [&](std::size_t b, std::size_t e) { return checkRange(type, op, inputs, result, b, e); });
}

namespace {

// Elements of `expected` (count of them, es bytes each) that differ from `got`; their indices
// counted from `resultOffset`.
void compareMoved(const void* expected, const void* got, std::size_t count, std::size_t es, std::size_t resultOffset,
                  ReductionCheck& c) {
  const auto* x = static_cast<const std::uint8_t*>(expected);
  const auto* g = static_cast<const std::uint8_t*>(got);
  const ReductionCheck moved = checkInRanges(count, [&](std::size_t b, std::size_t e) {
    ReductionCheck part;
    for (std::size_t i = b; i < e; ++i)
      if (std::memcmp(x + i * es, g + i * es, es) != 0 && part.wrong++ == 0) part.firstWrong = resultOffset + i;
    return part;
  });
  addCheck(c, moved);
}

}  // namespace

ReductionCheck checkCollective(CollOp op, DataType type, RedOp redop, int root, const std::vector<const void*>& inputs,
                               int rank, const void* result, std::size_t count) {
  const int n = static_cast<int>(inputs.size());
  const std::size_t es = dataTypeSize(type);
  auto element = [&](const void* base, std::size_t index) {
    return static_cast<const std::uint8_t*>(base) + index * es;
  };
  ReductionCheck c;
  switch (op) {
    case CollOp::kAllReduce: return checkReduction(type, redop, inputs, result, count);
    case CollOp::kReduce:
      if (rank != root) return c;
      return checkReduction(type, redop, inputs, result, count);
    case CollOp::kReduceScatter: {
      std::vector<const void*> chunks;
      for (const void* in : inputs) chunks.push_back(element(in, rank * count));
      return checkReduction(type, redop, chunks, result, count);
    }
    case CollOp::kAllGather:
      for (int r = 0; r < n; ++r) compareMoved(inputs[r], element(result, r * count), count, es, r * count, c);
      return c;
    case CollOp::kAllToAll:
      for (int r = 0; r < n; ++r)
        compareMoved(element(inputs[r], rank * count), element(result, r * count), count, es, r * count, c);
      return c;
    case CollOp::kBroadcast: compareMoved(inputs[root], result, count, es, 0, c); return c;
    case CollOp::kSendRecv: compareMoved(inputs[(rank + n - 1) % n], result, count, es, 0, c); return c;
  }
  return c;
}

}  // namespace gpupeer
