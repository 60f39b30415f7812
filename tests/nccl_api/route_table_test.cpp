// The route table: gpupeer only where the measurements say it is faster, read at the nearest
// measured sizes on both sides.

#include "nccl_api/route_table.hpp"

#include <gtest/gtest.h>

namespace gpupeer::nccl_api {
namespace {

// Faster at 1 KiB and 1 MiB, slower at 16 MiB, on four ranks of their own processes; one
// process driving four ranks: faster at 16 MiB only; four ranks on two hosts: from 1 MiB.
const std::vector<MeasuredCurve> kCurves = {
    {CollOp::kAllReduce, 4, CallShape::kProcessPerRank, {{1024, true}, {1u << 20, true}, {16u << 20, false}}},
    {CollOp::kBroadcast, 4, CallShape::kProcessPerRank, {{1024, false}, {1u << 20, true}}},
    {CollOp::kAllReduce, 4, CallShape::kOneProcess, {{1024, false}, {16u << 20, true}}},
    {CollOp::kAllReduce, 4, CallShape::kAcrossHosts, {{1024, false}, {1u << 20, true}, {16u << 20, true}}},
};

TEST(NcclRouteTable, BelowTheSmallestSizeTakesItsAnswer) {
  EXPECT_TRUE(measuredFasterIn(kCurves, CollOp::kAllReduce, 8, 4, CallShape::kProcessPerRank));
  EXPECT_FALSE(measuredFasterIn(kCurves, CollOp::kBroadcast, 8, 4, CallShape::kProcessPerRank));
}

TEST(NcclRouteTable, MeasuredSizesTakeTheirOwnAnswer) {
  EXPECT_TRUE(measuredFasterIn(kCurves, CollOp::kAllReduce, 1u << 20, 4, CallShape::kProcessPerRank));
  EXPECT_FALSE(measuredFasterIn(kCurves, CollOp::kAllReduce, 16u << 20, 4, CallShape::kProcessPerRank));
  EXPECT_TRUE(measuredFasterIn(kCurves, CollOp::kBroadcast, 1u << 20, 4, CallShape::kProcessPerRank));
}

TEST(NcclRouteTable, ASizeBetweenNeedsBothNeighboursFaster) {
  EXPECT_TRUE(measuredFasterIn(kCurves, CollOp::kAllReduce, 4096, 4, CallShape::kProcessPerRank));
  EXPECT_FALSE(measuredFasterIn(kCurves, CollOp::kAllReduce, 2u << 20, 4, CallShape::kProcessPerRank));
  EXPECT_FALSE(measuredFasterIn(kCurves, CollOp::kBroadcast, 4096, 4, CallShape::kProcessPerRank));
}

TEST(NcclRouteTable, BeyondTheLargestSizeAndUnmeasuredShapesGoToNccl) {
  EXPECT_FALSE(measuredFasterIn(kCurves, CollOp::kBroadcast, 64u << 20, 4, CallShape::kProcessPerRank));
  EXPECT_FALSE(measuredFasterIn(kCurves, CollOp::kAllReduce, 8, 3, CallShape::kProcessPerRank));
  EXPECT_FALSE(measuredFasterIn(kCurves, CollOp::kReduce, 8, 4, CallShape::kProcessPerRank));
}

TEST(NcclRouteTable, EachShapeReadsItsOwnCurve) {
  EXPECT_FALSE(measuredFasterIn(kCurves, CollOp::kAllReduce, 1024, 4, CallShape::kOneProcess));
  EXPECT_TRUE(measuredFasterIn(kCurves, CollOp::kAllReduce, 16u << 20, 4, CallShape::kOneProcess));
  EXPECT_TRUE(measuredFasterIn(kCurves, CollOp::kAllReduce, 1024, 4, CallShape::kProcessPerRank));
  EXPECT_FALSE(measuredFasterIn(kCurves, CollOp::kBroadcast, 1u << 20, 4, CallShape::kOneProcess));
  EXPECT_FALSE(measuredFasterIn(kCurves, CollOp::kAllReduce, 1024, 4, CallShape::kAcrossHosts));
  EXPECT_TRUE(measuredFasterIn(kCurves, CollOp::kAllReduce, 16u << 20, 4, CallShape::kAcrossHosts));
  EXPECT_FALSE(measuredFasterIn(kCurves, CollOp::kBroadcast, 16u << 20, 4, CallShape::kAcrossHosts));
}

TEST(NcclRouteTable, KeptMeasurementsCoverAllReduceOnTwoAndFourRanksBySize) {
  for (int ranks : {2, 4}) {
    bool found = false;
    for (const MeasuredCurve& c : keptMeasurements()) {
      if (c.op != CollOp::kAllReduce || c.ranks != ranks || c.shape != CallShape::kProcessPerRank) continue;
      found = true;
      ASSERT_FALSE(c.points.empty());
      for (std::size_t i = 1; i < c.points.size(); ++i) EXPECT_LT(c.points[i - 1].bytes, c.points[i].bytes);
    }
    EXPECT_TRUE(found) << "no all-reduce measurements on " << ranks << " ranks";
  }
}

}  // namespace
}  // namespace gpupeer::nccl_api
