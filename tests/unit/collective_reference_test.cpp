// The host reference the collectives will be checked against: conversions, exact integers,
// and float bounds that accept every summation order but not a wrong result.
#include "harness/collective_reference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

namespace gpupeer {
namespace {

TEST(HalfAndBfloat16, KnownValuesAndRoundTrips) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(1e6f), 0x7c00);                          // overflow to inf
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie rounds to even
  EXPECT_FLOAT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_FLOAT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(NAN))));
  EXPECT_EQ(floatToBfloat16(1.0f), 0x3f80);
  EXPECT_FLOAT_EQ(bfloat16ToFloat(0x4049), 3.140625f);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(floatToBfloat16(NAN))));
  for (std::uint32_t h = 0; h < 0x7c00; h += 7) EXPECT_EQ(floatToHalf(halfToFloat(h)), h) << h;
}

TEST(Fp8, KnownValuesSaturationAndRoundTrips) {
  constexpr DataType e4 = DataType::kFloat8E4M3, e5 = DataType::kFloat8E5M2;
  EXPECT_EQ(floatToFp8(1.0f, e4), 0x38);
  EXPECT_EQ(floatToFp8(-2.0f, e4), 0xc0);
  EXPECT_EQ(floatToFp8(448.0f, e4), 0x7e);                 // largest finite
  EXPECT_EQ(floatToFp8(1000.0f, e4), 0x7e);                // saturates
  EXPECT_EQ(floatToFp8(-INFINITY, e4), 0xfe);              // no infinity in E4M3: saturates too
  EXPECT_EQ(floatToFp8(std::ldexp(1.0f, -9), e4), 0x01);   // smallest subnormal
  EXPECT_EQ(floatToFp8(std::ldexp(1.0f, -11), e4), 0x00);  // below half of it
  EXPECT_EQ(floatToFp8(1.0f + 1.0f / 16, e4), 0x38);       // tie rounds to even (down)
  EXPECT_EQ(floatToFp8(1.0f + 3.0f / 16, e4), 0x3a);       // tie rounds to even (up)
  EXPECT_EQ(floatToFp8(1.97f, e4), 0x40);                  // carries into the next binade: 2.0
  EXPECT_TRUE(std::isnan(fp8ToFloat(floatToFp8(NAN, e4), e4)));
  EXPECT_TRUE(std::isnan(fp8ToFloat(0x7f, e4)));
  EXPECT_FLOAT_EQ(fp8ToFloat(0x7e, e4), 448.0f);
  EXPECT_FLOAT_EQ(fp8ToFloat(0x01, e4), std::ldexp(1.0f, -9));
  EXPECT_FLOAT_EQ(fp8ToFloat(0xb4, e4), -0.75f);
  EXPECT_EQ(floatToFp8(1.0f, e5), 0x3c);
  EXPECT_EQ(floatToFp8(57344.0f, e5), 0x7b);
  EXPECT_EQ(floatToFp8(1e6f, e5), 0x7b);
  EXPECT_EQ(floatToFp8(std::ldexp(1.0f, -16), e5), 0x01);
  EXPECT_EQ(floatToFp8(1.125f, e5), 0x3c);  // tie rounds to even (down)
  EXPECT_TRUE(std::isinf(fp8ToFloat(0x7c, e5)));
  EXPECT_TRUE(std::isnan(fp8ToFloat(0x7d, e5)));
  EXPECT_FLOAT_EQ(fp8ToFloat(0x3d, e5), 1.25f);
  // Every finite code survives the round trip (-0 and +0 are both zero).
  for (int v = 0; v < 256; ++v) {
    float f4 = fp8ToFloat(static_cast<std::uint8_t>(v), e4), f5 = fp8ToFloat(static_cast<std::uint8_t>(v), e5);
    if (std::isfinite(f4)) {
      EXPECT_EQ(floatToFp8(f4, e4), v) << v;
    }
    if (std::isfinite(f5)) {
      EXPECT_EQ(floatToFp8(f5, e5), v) << v;
    }
  }
}

TEST(Fp8, KnownAnswerInputsAreExactAndReductionsChecked) {
  for (DataType t : {DataType::kFloat8E4M3, DataType::kFloat8E5M2}) {
    SCOPED_TRACE(dataTypeName(t));
    std::vector<std::uint8_t> a = knownAnswerInput(t, 0, 64), b = knownAnswerInput(t, 1, 64);
    std::vector<std::uint8_t> sum(64), avg(64);
    for (std::size_t i = 0; i < 64; ++i) {
      int va = static_cast<int>((i * 7) % 17) - 8;  // the quarters knownAnswerInput promises
      EXPECT_FLOAT_EQ(static_cast<float>(elementAsDouble(t, a.data(), i)), va / 4.0f) << i;
      double s = elementAsDouble(t, a.data(), i) + elementAsDouble(t, b.data(), i);
      sum[i] = floatToFp8(static_cast<float>(s), t);
      avg[i] = floatToFp8(static_cast<float>(s / 2), t);
    }
    EXPECT_EQ(checkReduction(t, RedOp::kSum, {a.data(), b.data()}, sum.data(), 64).wrong, 0u);
    EXPECT_EQ(checkReduction(t, RedOp::kAvg, {a.data(), b.data()}, avg.data(), 64).wrong, 0u);
    // Returning one input as the sum is caught wherever the missing one is at least as large
    // (the bound, 3u(|a| + |b|), is then at most 6u|b| < |b|) and never where it is zero.
    std::size_t mustCatch = 0, nonZero = 0;
    for (std::size_t i = 0; i < 64; ++i) {
      double va = elementAsDouble(t, a.data(), i), vb = elementAsDouble(t, b.data(), i);
      nonZero += vb != 0;
      mustCatch += vb != 0 && std::fabs(vb) >= std::fabs(va);
    }
    ReductionCheck c = checkReduction(t, RedOp::kSum, {a.data(), b.data()}, a.data(), 64);
    EXPECT_GT(mustCatch, 10u);
    EXPECT_GE(c.wrong, mustCatch);
    EXPECT_LE(c.wrong, nonZero);
  }
}

TEST(CheckReduction, IntegersAreExactWithWrapAround) {
  std::vector<std::int8_t> a = {100, -128, 5, 7}, b = {100, -1, -5, 9}, sum = {-56, 127, 0, 16};
  EXPECT_EQ(checkReduction(DataType::kInt8, RedOp::kSum, {a.data(), b.data()}, sum.data(), 4).wrong, 0u);
  sum[2] = 1;
  ReductionCheck c = checkReduction(DataType::kInt8, RedOp::kSum, {a.data(), b.data()}, sum.data(), 4);
  EXPECT_EQ(c.wrong, 1u);
  EXPECT_EQ(c.firstWrong, 2u);
  std::vector<std::int8_t> mx = {100, -1, 5, 9};
  EXPECT_EQ(checkReduction(DataType::kInt8, RedOp::kMax, {a.data(), b.data()}, mx.data(), 4).wrong, 0u);
  std::vector<std::int64_t> x = {1LL << 40, 3}, y = {5, 1LL << 41}, prod = {5LL << 40, 3LL << 41};
  EXPECT_EQ(checkReduction(DataType::kInt64, RedOp::kProd, {x.data(), y.data()}, prod.data(), 2).wrong, 0u);
}

TEST(CheckReduction, FloatSumsInAnyOrderPassAndWrongOnesFail) {
  const int ranks = 8;
  const std::size_t count = 4096;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  std::vector<std::vector<std::uint16_t>> inputs(ranks, std::vector<std::uint16_t>(count));
  for (auto& in : inputs)
    for (auto& v : in) v = floatToBfloat16(dist(rng));
  std::vector<const void*> ptrs;
  for (auto& in : inputs) ptrs.push_back(in.data());
  // Two device-like orders, accumulating in bf16 after every step: forwards and as a tree.
  std::vector<std::uint16_t> forward(count), tree(count);
  for (std::size_t i = 0; i < count; ++i) {
    float acc = bfloat16ToFloat(inputs[0][i]);
    for (int r = 1; r < ranks; ++r) acc = bfloat16ToFloat(floatToBfloat16(acc + bfloat16ToFloat(inputs[r][i])));
    forward[i] = floatToBfloat16(acc);
    std::vector<float> level;
    for (int r = 0; r < ranks; ++r) level.push_back(bfloat16ToFloat(inputs[r][i]));
    while (level.size() > 1) {
      std::vector<float> next;
      for (std::size_t k = 0; k < level.size(); k += 2)
        next.push_back(bfloat16ToFloat(floatToBfloat16(level[k] + level[k + 1])));
      level = next;
    }
    tree[i] = floatToBfloat16(level[0]);
  }
  EXPECT_EQ(checkReduction(DataType::kBFloat16, RedOp::kSum, ptrs, forward.data(), count).wrong, 0u);
  EXPECT_EQ(checkReduction(DataType::kBFloat16, RedOp::kSum, ptrs, tree.data(), count).wrong, 0u);
  // Dropping one rank's contribution is caught.
  std::vector<std::uint16_t> missing(count);
  for (std::size_t i = 0; i < count; ++i) {
    float acc = 0;
    for (int r = 0; r < ranks - 1; ++r) acc += bfloat16ToFloat(inputs[r][i]);
    missing[i] = floatToBfloat16(acc);
  }
  EXPECT_GT(checkReduction(DataType::kBFloat16, RedOp::kSum, ptrs, missing.data(), count).wrong, count / 2);
}

// Long checks run in ranges on several threads (from 1 Mi elements a thread): their wrong
// elements, first wrong index and largest error must be those of one pass over the whole.
TEST(CheckReduction, LongChecksCountEveryWrongElementAndTheFirst) {
  const std::size_t count = (5u << 20) + 3;  // several ranges, the last one short
  const std::vector<std::size_t> wrongAt = {(1u << 20) + 5, (3u << 20) + 1, count - 1};
  for (DataType type : {DataType::kBFloat16, DataType::kFloat32, DataType::kInt32, DataType::kFloat8E4M3}) {
    SCOPED_TRACE(dataTypeName(type));
    std::vector<std::vector<std::uint8_t>> in;
    std::vector<const void*> inputs;
    for (int r = 0; r < 3; ++r) in.push_back(knownAnswerInput(type, r, count, 5));
    for (auto& v : in) inputs.push_back(v.data());
    std::vector<std::uint8_t> out(count * dataTypeSize(type));
    for (std::size_t i = 0; i < count; ++i)
      storeElement(type, out.data(), i,
                   elementAsDouble(type, inputs[0], i) + elementAsDouble(type, inputs[1], i) +
                       elementAsDouble(type, inputs[2], i));
    ReductionCheck right = checkReduction(type, RedOp::kSum, inputs, out.data(), count);
    EXPECT_EQ(right.wrong, 0u);
    // Off by 64 at each place and by 256 at the last (in the last range), as far as the type
    // rounds: the largest error is the last one's.
    auto exact = [&](std::size_t i) {
      return elementAsDouble(type, inputs[0], i) + elementAsDouble(type, inputs[1], i) +
             elementAsDouble(type, inputs[2], i);
    };
    for (std::size_t i : wrongAt) storeElement(type, out.data(), i, exact(i) + (i == count - 1 ? 256 : 64));
    ReductionCheck bad = checkReduction(type, RedOp::kSum, inputs, out.data(), count);
    EXPECT_EQ(bad.wrong, wrongAt.size());
    EXPECT_EQ(bad.firstWrong, wrongAt[0]);
    if (type != DataType::kInt32) {
      EXPECT_EQ(bad.maxError, std::fabs(elementAsDouble(type, out.data(), count - 1) - exact(count - 1)));
      EXPECT_GT(bad.maxError, 128.0);
    }
  }
  // Moves too: one wrong byte in the second rank's block of an all-gather, far into it.
  std::vector<std::uint8_t> a(count, 1), b(count, 2), gathered(2 * count);
  std::copy(a.begin(), a.end(), gathered.begin());
  std::copy(b.begin(), b.end(), gathered.begin() + count);
  gathered[count + wrongAt[1]] = 9;
  ReductionCheck moved = checkCollective(CollOp::kAllGather, DataType::kUInt8, RedOp::kSum, 0, {a.data(), b.data()}, 0,
                                         gathered.data(), count);
  EXPECT_EQ(moved.wrong, 1u);
  EXPECT_EQ(moved.firstWrong, count + wrongAt[1]);
}

TEST(CheckReduction, FloatAverageMinAndNan) {
  std::vector<float> a = {1, 4, NAN}, b = {3, -2, 1}, avg = {2, 1, NAN}, mn = {1, -2, NAN};
  EXPECT_EQ(checkReduction(DataType::kFloat32, RedOp::kAvg, {a.data(), b.data()}, avg.data(), 3).wrong, 0u);
  EXPECT_EQ(checkReduction(DataType::kFloat32, RedOp::kMin, {a.data(), b.data()}, mn.data(), 2).wrong, 0u);
  avg[2] = 0;  // a NaN input must give NaN
  EXPECT_EQ(checkReduction(DataType::kFloat32, RedOp::kAvg, {a.data(), b.data()}, avg.data(), 3).wrong, 1u);
  mn[0] = std::nextafter(1.0f, 2.0f);  // min is exact
  EXPECT_EQ(checkReduction(DataType::kFloat32, RedOp::kMin, {a.data(), b.data()}, mn.data(), 2).wrong, 1u);
}

}  // namespace
}  // namespace gpupeer

namespace gpupeer {
namespace {

TEST(KnownAnswerInput, ExactInEveryTypeAndWrapsWhereMeant) {
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kFloat64}) {
    auto a = knownAnswerInput(t, 0, 100);
    for (std::size_t i = 0; i < 100; ++i) {
      double v = elementAsDouble(t, a.data(), i);
      EXPECT_EQ(v * 4, std::round(v * 4)) << dataTypeName(t);  // quarters, exactly
      EXPECT_LE(std::fabs(v), 2.0);
    }
  }
  auto r0 = knownAnswerInput(DataType::kInt8, 0, 17), r1 = knownAnswerInput(DataType::kInt8, 1, 17);
  bool wraps = false;
  for (std::size_t i = 0; i < 17; ++i) {
    int sum = static_cast<std::int8_t>(r0[i]) + static_cast<std::int8_t>(r1[i]);
    wraps = wraps || sum > 127 || sum < -128;
  }
  EXPECT_TRUE(wraps);
  EXPECT_NE(knownAnswerInput(DataType::kInt32, 0, 8), knownAnswerInput(DataType::kInt32, 1, 8));
}

// storeElement is elementAsDouble's inverse, with the types' own conversions: -1 wraps in
// uint8, fractions truncate in the integers, floating types round.
TEST(StoreElement, WritesWhatElementAsDoubleReads) {
  for (DataType t : {DataType::kFloat32, DataType::kFloat64, DataType::kFloat16, DataType::kBFloat16, DataType::kInt8,
                     DataType::kInt32, DataType::kInt64, DataType::kFloat8E4M3, DataType::kFloat8E5M2}) {
    std::vector<std::uint8_t> b(3 * dataTypeSize(t));
    for (std::size_t i = 0; i < 3; ++i) storeElement(t, b.data(), i, static_cast<double>(i) - 1);
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_EQ(elementAsDouble(t, b.data(), i), static_cast<double>(i) - 1) << dataTypeName(t);
  }
  std::vector<std::uint8_t> u(1);
  storeElement(DataType::kUInt8, u.data(), 0, -1);
  EXPECT_EQ(u[0], 255);
  std::vector<std::uint8_t> w(4);
  storeElement(DataType::kInt32, w.data(), 0, 2.75);
  EXPECT_EQ(elementAsDouble(DataType::kInt32, w.data(), 0), 2);
}

// A check on salted inputs must see data left over from calls on other salts: every element
// changes, for every salt that the pattern's period does not cancel.
TEST(KnownAnswerInput, EverySaltChangesEveryElement) {
  const auto plain = knownAnswerInput(DataType::kInt32, 1, 1000);
  EXPECT_EQ(knownAnswerInput(DataType::kInt32, 1, 1000, 0), plain);
  EXPECT_EQ(knownAnswerInput(DataType::kInt32, 1, 1000, 17), plain);
  for (unsigned salt = 1; salt < 17; ++salt) {
    const auto salted = knownAnswerInput(DataType::kInt32, 1, 1000, salt);
    for (std::size_t i = 0; i < 1000; ++i)
      ASSERT_NE(elementAsDouble(DataType::kInt32, salted.data(), i), elementAsDouble(DataType::kInt32, plain.data(), i))
          << "salt " << salt << ", element " << i;
  }
}

// Builds what each collective must produce from int32 inputs (rank r: r*100 + i) and checks
// that the correct output passes and a single changed element is counted.
TEST(CheckCollective, EveryOperationPassesItsOutputAndCatchesOneWrongElement) {
  const int n = 3;
  const std::size_t count = 5;
  std::vector<std::vector<std::int32_t>> in(n, std::vector<std::int32_t>(count * n));
  for (int r = 0; r < n; ++r)
    for (std::size_t i = 0; i < count * n; ++i) in[r][i] = r * 100 + static_cast<int>(i);
  std::vector<const void*> inputs;
  for (auto& v : in) inputs.push_back(v.data());
  auto sumAt = [&](std::size_t i) { return in[0][i] + in[1][i] + in[2][i]; };
  for (int rank = 0; rank < n; ++rank) {
    std::map<CollOp, std::vector<std::int32_t>> expected;
    for (std::size_t i = 0; i < count; ++i) {
      expected[CollOp::kAllReduce].push_back(sumAt(i));
      expected[CollOp::kReduce].push_back(sumAt(i));
      expected[CollOp::kReduceScatter].push_back(sumAt(rank * count + i));
      expected[CollOp::kBroadcast].push_back(in[1][i]);  // root 1
      expected[CollOp::kSendRecv].push_back(in[(rank + n - 1) % n][i]);
    }
    for (int r = 0; r < n; ++r)
      for (std::size_t i = 0; i < count; ++i) {
        expected[CollOp::kAllGather].push_back(in[r][i]);
        expected[CollOp::kAllToAll].push_back(in[r][rank * count + i]);
      }
    for (auto& [op, out] : expected) {
      SCOPED_TRACE(::testing::Message() << collOpName(op) << " rank " << rank);
      const int root = 1;
      EXPECT_EQ(checkCollective(op, DataType::kInt32, RedOp::kSum, root, inputs, rank, out.data(), count).wrong, 0u);
      out[count - 1] += 1;
      ReductionCheck bad = checkCollective(op, DataType::kInt32, RedOp::kSum, root, inputs, rank, out.data(), count);
      if (op == CollOp::kReduce && rank != root) {
        EXPECT_EQ(bad.wrong, 0u);  // non-root ranks have no output to be wrong
      } else {
        EXPECT_EQ(bad.wrong, 1u);
        EXPECT_EQ(bad.firstWrong, count - 1);
      }
    }
  }
}

}  // namespace
}  // namespace gpupeer
