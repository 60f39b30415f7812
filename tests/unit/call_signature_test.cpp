// The call words that RankCommunicator's kernels compare between ranks: every field that makes
// two calls different makes their words different, fields an op does not use do not, and the
// words read back as the call for checkError's message.
#include "ranks/call_signature.hpp"

#include <gtest/gtest.h>

#include <cstddef>

namespace gpupeer {
namespace {

TEST(CallSignature, EveryFieldThatMattersMakesTheWordsDiffer) {
  const CallSignature base = callSignatureOf(CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 0, 1000);
  EXPECT_EQ(base, callSignatureOf(CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 0, 1000));
  EXPECT_NE(base, callSignatureOf(CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 0, 999));
  EXPECT_NE(base, callSignatureOf(CollOp::kAllGather, DataType::kFloat32, RedOp::kSum, 0, 1000));
  EXPECT_NE(base, callSignatureOf(CollOp::kAllReduce, DataType::kInt32, RedOp::kSum, 0, 1000));
  EXPECT_NE(base, callSignatureOf(CollOp::kAllReduce, DataType::kFloat32, RedOp::kMax, 0, 1000));
  EXPECT_NE(base, callSignatureOf(CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 0, 1000, true));
  // Counts that differ only above bit 31, and roots of rooted ops.
  EXPECT_NE(callSignatureOf(CollOp::kAllGather, DataType::kInt8, RedOp::kSum, 0, std::size_t{1} << 32),
            callSignatureOf(CollOp::kAllGather, DataType::kInt8, RedOp::kSum, 0, std::size_t{2} << 32));
  EXPECT_NE(callSignatureOf(CollOp::kBroadcast, DataType::kInt8, RedOp::kSum, 0, 5),
            callSignatureOf(CollOp::kBroadcast, DataType::kInt8, RedOp::kSum, 7, 5));
  EXPECT_NE(callSignatureOf(CollOp::kReduce, DataType::kInt8, RedOp::kSum, 1, 5),
            callSignatureOf(CollOp::kReduce, DataType::kInt8, RedOp::kSum, 2, 5));
}

TEST(CallSignature, FieldsAnOpDoesNotUseAreLeftOut) {
  EXPECT_EQ(callSignatureOf(CollOp::kAllGather, DataType::kFloat32, RedOp::kSum, 0, 10),
            callSignatureOf(CollOp::kAllGather, DataType::kFloat32, RedOp::kMax, 3, 10));
  EXPECT_EQ(callSignatureOf(CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 0, 10),
            callSignatureOf(CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 2, 10));
  EXPECT_EQ(callSignatureOf(CollOp::kBroadcast, DataType::kFloat32, RedOp::kSum, 1, 10),
            callSignatureOf(CollOp::kBroadcast, DataType::kFloat32, RedOp::kProd, 1, 10));
}

TEST(CallSignature, NoCallIsAllZeroSoAGivenUpWaitIsTellable) {
  for (DataType t : kAllDataTypes) {
    const CallSignature s = callSignatureOf(CollOp::kAllReduce, t, RedOp::kSum, 0, std::size_t{1} << 32);
    EXPECT_NE(s.word0, 0u) << dataTypeName(t);
  }
}

TEST(CallSignature, WordsReadBackAsTheCall) {
  EXPECT_EQ(describeCall(callSignatureOf(CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 0, 1000)),
            "all_reduce of 1000 float (sum)");
  EXPECT_EQ(describeCall(callSignatureOf(CollOp::kBroadcast, DataType::kInt8, RedOp::kMax, 1, 12)),
            "broadcast of 12 int8 (root 1)");
  EXPECT_EQ(describeCall(callSignatureOf(CollOp::kReduce, DataType::kFloat16, RedOp::kMax, 0, 5)),
            "reduce of 5 half (max, root 0)");
  EXPECT_EQ(
      describeCall(callSignatureOf(CollOp::kAllToAll, DataType::kInt64, RedOp::kSum, 0, (std::size_t{3} << 32) + 7)),
      "alltoall of 12884901895 int64");
  EXPECT_EQ(describeCall(callSignatureOf(CollOp::kAllGather, DataType::kInt32, RedOp::kSum, 0, 8, true)),
            "all_gather of 8 int32 on registered buffers");
  EXPECT_EQ(describeCall({0x12u, 5u}), "an unknown call (00000012 00000005)");
}

}  // namespace
}  // namespace gpupeer
