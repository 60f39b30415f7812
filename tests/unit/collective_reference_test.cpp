// The host reference the collectives will be checked against: conversions, exact integers,
// and float bounds that accept every summation order but not a wrong result.
#include "gpupeer/collective_reference.hpp"

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
