// Names, sizes and the nccl-tests bandwidth definitions the collectives will be reported in.
#include "gpupeer/collective_types.hpp"

#include <gtest/gtest.h>

namespace gpupeer {
namespace {

TEST(CollectiveTypes, NamesRoundTripAndAliasesParse) {
  for (CollOp op : {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kBroadcast, CollOp::kReduce,
                    CollOp::kAllToAll, CollOp::kSendRecv})
    EXPECT_EQ(parseCollOp(collOpName(op)).value(), op) << collOpName(op);
  for (DataType t : kAllDataTypes) EXPECT_EQ(parseDataType(dataTypeName(t)).value(), t) << dataTypeName(t);
  for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax, RedOp::kAvg})
    EXPECT_EQ(parseRedOp(redOpName(op)).value(), op);
  EXPECT_EQ(parseCollOp("AllReduce").value(), CollOp::kAllReduce);
  EXPECT_EQ(parseDataType("bf16").value(), DataType::kBFloat16);
  EXPECT_EQ(parseDataType("fp32").value(), DataType::kFloat32);
  EXPECT_EQ(parseDataType("fp8_e4m3").value(), DataType::kFloat8E4M3);
  EXPECT_EQ(parseDataType("f8e5m2").value(), DataType::kFloat8E5M2);
  Result<DataType> bad = parseDataType("float128");
  ASSERT_FALSE(bad.isOk());
  EXPECT_NE(bad.status().message().find("float128"), std::string::npos);
  EXPECT_FALSE(parseCollOp("gather").isOk());
  EXPECT_FALSE(parseRedOp("mean").isOk());
}

TEST(CollectiveTypes, SizesAndAverageOfIntegersRefused) {
  EXPECT_EQ(dataTypeSize(DataType::kBFloat16), 2u);
  EXPECT_EQ(dataTypeSize(DataType::kInt64), 8u);
  EXPECT_EQ(dataTypeSize(DataType::kUInt8), 1u);
  EXPECT_EQ(dataTypeSize(DataType::kFloat8E5M2), 1u);
  EXPECT_TRUE(isFloatingPoint(DataType::kFloat8E4M3));
  EXPECT_TRUE(checkRedOpForType(RedOp::kAvg, DataType::kFloat8E4M3).isOk());
  EXPECT_TRUE(checkRedOpForType(RedOp::kAvg, DataType::kFloat16).isOk());
  EXPECT_TRUE(checkRedOpForType(RedOp::kSum, DataType::kInt8).isOk());
  Status avg = checkRedOpForType(RedOp::kAvg, DataType::kInt8);
  EXPECT_EQ(avg.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(avg.message().find("int8"), std::string::npos);
}

TEST(CollectiveTypes, BusBandwidthFollowsNcclTests) {
  // nccl-tests' 2-GPU all-reduce at 512 MiB on the test machine: 1.69 ms, 317 GB/s busbw
  // (ANCHORS.md). algbw = 536870912 / 1.69e-3 = 317.7 GB/s; busbw = algbw x 2(2-1)/2.
  Bandwidth ar = collectiveBandwidth(CollOp::kAllReduce, 512u << 20, 1.69e-3, 2);
  EXPECT_NEAR(ar.algbw, 317.7, 0.1);
  EXPECT_NEAR(ar.busbw, 317.7, 0.1);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollOp::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollOp::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollOp::kReduceScatter, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollOp::kAllToAll, 2), 0.5);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollOp::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(busBandwidthFactor(CollOp::kSendRecv, 2), 1.0);
  EXPECT_EQ(collectiveBandwidth(CollOp::kReduce, 100, 0, 2).algbw, 0);
  // The size column: all-gather of 1M floats per rank on 8 ranks shows 32 MiB.
  EXPECT_EQ(collectiveBytes(CollOp::kAllGather, 1u << 20, DataType::kFloat32, 8), 32u << 20);
  EXPECT_EQ(collectiveBytes(CollOp::kAllReduce, 1u << 20, DataType::kFloat32, 8), 4u << 20);
}

TEST(CollectiveTypes, BufferElementsAndInPlaceArrangement) {
  EXPECT_EQ(collectiveInputElements(CollOp::kReduceScatter, 5, 4), 20u);
  EXPECT_EQ(collectiveOutputElements(CollOp::kReduceScatter, 5, 4), 5u);
  EXPECT_EQ(collectiveInputElements(CollOp::kAllGather, 5, 4), 5u);
  EXPECT_EQ(collectiveOutputElements(CollOp::kAllGather, 5, 4), 20u);
  EXPECT_EQ(collectiveInputElements(CollOp::kAllToAll, 5, 4), 20u);
  EXPECT_EQ(collectiveOutputElements(CollOp::kAllToAll, 5, 4), 20u);
  EXPECT_EQ(collectiveOutputElements(CollOp::kBroadcast, 5, 4), 5u);
  char send[256], recv[256];
  // rank 2, 5 floats each: all-gather sends from recv + 40 bytes, reduce-scatter receives at
  // send + 40, everything else works in the send buffer.
  InPlacePointers ag = inPlacePointers(CollOp::kAllGather, send, recv, 5, DataType::kFloat32, 2);
  EXPECT_EQ(ag.send, recv + 40);
  EXPECT_EQ(ag.recv, recv);
  InPlacePointers rs = inPlacePointers(CollOp::kReduceScatter, send, recv, 5, DataType::kFloat32, 2);
  EXPECT_EQ(rs.send, send);
  EXPECT_EQ(rs.recv, send + 40);
  InPlacePointers ar = inPlacePointers(CollOp::kAllReduce, send, recv, 5, DataType::kFloat32, 2);
  EXPECT_EQ(ar.send, send);
  EXPECT_EQ(ar.recv, send);
}

}  // namespace
}  // namespace gpupeer
