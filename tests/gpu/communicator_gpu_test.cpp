// The all-reduce against the host reference (every type and op, odd and unaligned counts,
// pieces larger than the scratch, in place), back-to-back operations, and refused bad input.
#include <algorithm>
#include <vector>

#include "collective_gpu_support.hpp"
#include "gpu_test_support.hpp"

namespace gpupeer {
namespace {

using testing::Ranks;

CommunicatorOptions smallScratch(const char* algorithm) {
  CommunicatorOptions o;
  o.oneShotSlotBytes = 1u << 20;  // 300001 floats (1.2 MB) go in two one-shot pieces
  o.ceSlotBytes = 1u << 20;       // and copy-engine chunks of 256 KiB rotating through four positions
  // ring: ~150 chunks per link for 300001 floats, past its 64 positions
  o.ringChunkBytes = o.ringSpreadChunkBytes = 4096;
  o.algorithm = algorithm;
  return o;
}

TEST(CommunicatorGpu, EveryTypeAndOpMatchesTheReference) {
  GPUPEER_REQUIRE_GPUS(2);
  Ranks ranks(8u << 20);
  for (const char* algo : {"oneshot", "ce", "twoshot", "ring", "split"}) {
    SCOPED_TRACE(algo);
    auto comm = Communicator::create({0, 1}, smallScratch(algo));
    ASSERT_TRUE(comm.isOk()) << comm.status().toString();
    for (DataType t : kAllDataTypes)
      for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax, RedOp::kAvg}) {
        if (!checkRedOpForType(op, t).isOk()) continue;
        for (std::size_t count : {std::size_t{1}, std::size_t{1024}, std::size_t{4099}, std::size_t{300001}}) {
          testing::runAndCheck(*comm.value(), ranks, CollOp::kAllReduce, t, op, 0, count, 0, false);
          // unaligned to 16 bytes, in place
          testing::runAndCheck(*comm.value(), ranks, CollOp::kAllReduce, t, op, 0, count, dataTypeSize(t), true);
        }
      }
  }
}

TEST(CommunicatorGpu, BackToBackOperationsNeedNoHostSync) {
  GPUPEER_REQUIRE_GPUS(2);
  for (const char* algo : {"oneshot", "ce", "twoshot", "ring", "split"}) {
    SCOPED_TRACE(algo);
    auto comm = Communicator::create({0, 1}, smallScratch(algo));
    ASSERT_TRUE(comm.isOk());
    for (std::size_t count : {std::size_t{512}, std::size_t{1u << 20}}) {
      SCOPED_TRACE(count);
      Ranks ranks(count * 4);
      // 30 in-place sums starting from ones, with no synchronisation in between: each doubles
      // every element, so all end at 2^30 only if no operation overtook another.
      std::vector<std::int32_t> ones(count, 1);
      for (int r = 0; r < 2; ++r) {
        cudaSetDevice(r);
        cudaMemcpy(ranks.send[r].get(), ones.data(), count * 4, cudaMemcpyHostToDevice);
        cudaDeviceSynchronize();  // the DMA of a pageable cudaMemcpy may outlive the call
      }
      std::vector<const void*> send = {ranks.send[0].get(), ranks.send[1].get()};
      std::vector<void*> same = {ranks.send[0].get(), ranks.send[1].get()};
      for (int i = 0; i < 30; ++i)
        ASSERT_TRUE(comm.value()->allReduce(send, same, count, DataType::kInt32, RedOp::kSum, ranks.raw).isOk());
      ranks.sync();
      ASSERT_TRUE(comm.value()->checkBarriers().isOk());
      std::vector<std::int32_t> got(count);
      for (int r = 0; r < 2; ++r) {
        cudaSetDevice(r);
        cudaMemcpy(got.data(), ranks.send[r].get(), count * 4, cudaMemcpyDeviceToHost);
        EXPECT_EQ(std::count(got.begin(), got.end(), 1 << 30), static_cast<long>(count)) << "rank " << r;
      }
    }
  }
}

TEST(CommunicatorGpu, BadInputIsRefusedBeforeLaunch) {
  GPUPEER_REQUIRE_GPUS(2);
  auto comm = Communicator::create({0, 1});
  ASSERT_TRUE(comm.isOk());
  Ranks ranks(4096);
  std::vector<const void*> send = {ranks.send[0].get(), ranks.send[1].get()};
  std::vector<void*> recv = {ranks.recv[0].get(), ranks.recv[1].get()};
  auto code = [&](CollOp op, std::vector<const void*> s, std::vector<void*> r, std::size_t count, DataType t,
                  RedOp redop,
                  int root = 0) { return comm.value()->run(op, s, r, count, t, redop, root, ranks.raw).code(); };
  const auto kF = DataType::kFloat32;
  const auto kSum = RedOp::kSum;
  EXPECT_EQ(code(CollOp::kAllReduce, {send[0]}, recv, 16, kF, kSum), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(CollOp::kAllReduce, {send[0], nullptr}, recv, 16, kF, kSum), ErrorCode::kInvalidArgument);
  // rank 0's buffer on GPU1: a device not the rank's
  EXPECT_EQ(code(CollOp::kAllReduce, {send[1], send[0]}, recv, 16, kF, kSum), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(CollOp::kAllReduce, send, recv, 2048, kF, kSum), ErrorCode::kInvalidArgument);  // 8 KiB > 4 KiB
  // all-gather of 600 floats per rank needs 4800 bytes of receive buffer
  EXPECT_EQ(code(CollOp::kAllGather, send, recv, 600, kF, kSum), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(CollOp::kAllReduce, send, recv, 16, DataType::kInt8, RedOp::kAvg), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(CollOp::kBroadcast, send, recv, 16, kF, kSum, 2), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(CollOp::kReduce, send, recv, 16, kF, kSum, -1), ErrorCode::kInvalidArgument);
  // overlapping, but not the in-place arrangement
  std::vector<void*> shifted = {ranks.send[0].bytes() + 4, ranks.send[1].bytes() + 4};
  EXPECT_EQ(code(CollOp::kAllReduce, send, shifted, 16, kF, kSum), ErrorCode::kInvalidArgument);
  // nothing was enqueued
  for (int r = 0; r < 2; ++r) {
    cudaSetDevice(r);
    EXPECT_EQ(cudaStreamQuery(ranks.raw[r]), cudaSuccess);
  }
  EXPECT_EQ(Communicator::create({0, 0}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Communicator::create({0}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Communicator::create({0, 99}).status().code(), ErrorCode::kInvalidArgument);
  CommunicatorOptions ring;
  ring.algorithm = "ring";
  auto withRing = Communicator::create({0, 1}, ring);
  ASSERT_TRUE(withRing.isOk());
  EXPECT_EQ(withRing.value()->run(CollOp::kAllToAll, send, recv, 8, kF, kSum, 0, ranks.raw).code(),
            ErrorCode::kInvalidArgument);
  CommunicatorOptions bogus;
  bogus.algorithm = "fastest";
  EXPECT_EQ(Communicator::create({0, 1}, bogus).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpupeer
