// The collectives on more than two GPUs: every operation by every algorithm on all visible GPUs
// and on three of them (an odd count, where reduce-scatter's chunks, send/recv's ring and the
// two-shot remainder take shapes two ranks never show), back-to-back operations, one CUDA graph
// over all GPUs, and the copies staged through host memory. Skipped below three GPUs.
#include <algorithm>
#include <vector>

#include "collective_gpu_support.hpp"
#include "gpu_test_support.hpp"

namespace gpupeer {
namespace {

using testing::Ranks;

using testing::kAllOps;

using testing::firstGpus;

// Every visible GPU, and three of them where more are visible.
std::vector<std::vector<int>> gpuSets() {
  std::vector<std::vector<int>> sets = {firstGpus(testing::machine().gpus.size())};
  if (sets[0].size() > 3) sets.push_back(firstGpus(3));
  return sets;
}

using testing::options;

using testing::serves;

TEST(CollectivesManyGpus, EveryOperationByEveryAlgorithm) {
  GPUPEER_REQUIRE_GPUS(3);
  for (const std::vector<int>& devices : gpuSets()) {
    const int n = static_cast<int>(devices.size());
    SCOPED_TRACE(::testing::Message() << n << " GPUs");
    Ranks ranks(8u << 20, devices);
    // "" is the table's choice.
    for (const char* algo : {"oneshot", "ce", "pull", "split", "chain", "relay", "twoshot", "ring", ""}) {
      SCOPED_TRACE(algo);
      auto comm = Communicator::create(devices, options(algo));
      ASSERT_TRUE(comm.isOk()) << comm.status().toString();
      ASSERT_EQ(comm.value()->ranks(), n);
      for (CollOp op : kAllOps) {
        if (!serves(algo, op)) continue;
        for (DataType t : {DataType::kFloat32, DataType::kBFloat16, DataType::kInt8})
          // 1 and 4097 are not a multiple of 8 bytes; 16 goes in 16-byte lines, 32768 floats
          // (pieces of 128 KiB) in 128-byte lines; 100003 floats exceed a one-shot slot and,
          // times the ranks, a copy-engine chunk.
          for (std::size_t count :
               {std::size_t{1}, std::size_t{16}, std::size_t{4097}, std::size_t{32768}, std::size_t{100003}})
            for (int root : {0, n - 1}) {
              if (root && op != CollOp::kBroadcast && op != CollOp::kReduce) continue;
              testing::runAndCheckArrangements(*comm.value(), ranks, op, t, root, count);
            }
      }
    }
  }
}

TEST(CollectivesManyGpus, AllReducesGoTwoShotOrSplitByTheTable) {
  GPUPEER_REQUIRE_GPUS(3);
  const std::vector<int> devices = firstGpus(testing::machine().gpus.size());
  const int n = static_cast<int>(devices.size());
  Ranks ranks(96u << 20, devices);
  auto comm = Communicator::create(devices, options(""));
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  // ~800 KB: two-shot, both halves by the one-shot kernel; ~8 MB: split; ~80 MB: two-shot
  // again, both halves by split (reduce-scatter above 64 MiB, all-gather up to 128 MiB). On
  // 4 GPUs the odd counts leave one element to a one-shot all-reduce (on 3, none or two).
  for (std::size_t count : {std::size_t{200003}, std::size_t{2000001}, std::size_t{20000001}}) {
    const std::size_t bytes = count * sizeof(float);
    EXPECT_EQ(comm.value()->algorithmFor(CollOp::kAllReduce, bytes).value(),
              count == 2000001 ? CollAlgo::kSplit : CollAlgo::kTwoShot)
        << bytes;
    testing::runAndCheck(*comm.value(), ranks, CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 0, count, 0, false);
    testing::runAndCheck(*comm.value(), ranks, CollOp::kAllReduce, DataType::kBFloat16, RedOp::kMax, 0, count, 0, true);
    testing::runAndCheck(*comm.value(), ranks, CollOp::kAllReduce, DataType::kInt32, RedOp::kSum, 0, count, 4, true);
  }
  EXPECT_EQ(n, comm.value()->ranks());
}

TEST(CollectivesManyGpus, EveryTypeAndOpOfAllReduce) {
  GPUPEER_REQUIRE_GPUS(3);
  const std::vector<int> devices = firstGpus(testing::machine().gpus.size());
  Ranks ranks(4u << 20, devices);
  for (const char* algo : {"oneshot", "ce", "pull", "split", "ring"}) {
    SCOPED_TRACE(algo);
    auto comm = Communicator::create(devices, options(algo));
    ASSERT_TRUE(comm.isOk()) << comm.status().toString();
    for (DataType t : kAllDataTypes)
      for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax, RedOp::kAvg}) {
        if (!checkRedOpForType(op, t).isOk()) continue;
        testing::runAndCheck(*comm.value(), ranks, CollOp::kAllReduce, t, op, 0, 4099, 0, false);
        testing::runAndCheck(*comm.value(), ranks, CollOp::kAllReduce, t, op, 0, 70001, dataTypeSize(t), false);
      }
  }
}

TEST(CollectivesManyGpus, BackToBackInPlaceSumsNeedNoHostSync) {
  GPUPEER_REQUIRE_GPUS(3);
  const std::vector<int> devices = firstGpus(testing::machine().gpus.size());
  // In-place sums starting from ones multiply every element by n: all end at n^k only if no
  // operation overtook another. As many as int32 holds.
  for (const char* algo : {"oneshot", "ce", "twoshot", "ring", "split", ""}) {
    SCOPED_TRACE(algo);
    auto comm = Communicator::create(devices, options(algo));
    ASSERT_TRUE(comm.isOk());
    for (std::size_t count : {std::size_t{512}, std::size_t{1u << 20}}) {
      SCOPED_TRACE(count);
      Ranks ranks(count * 4, devices);
      testing::checkBackToBackInPlaceSums(*comm.value(), ranks, count, 31);
    }
  }
}

TEST(CollectivesManyGpus, OneGraphOverAllGpusReplays) {
  GPUPEER_REQUIRE_GPUS(3);
  testing::checkAllReduceGraphs(firstGpus(testing::machine().gpus.size()));
  testing::checkSplitChainAndRelayGraphs(firstGpus(testing::machine().gpus.size()));
}

TEST(CollectivesManyGpus, WithoutP2pTheCopiesGoThroughHostMemory) {
  GPUPEER_REQUIRE_GPUS(3);
  const std::vector<int> devices = firstGpus(testing::machine().gpus.size());
  CommunicatorOptions staged;
  staged.disableP2p = true;
  auto comm = Communicator::create(devices, staged);
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  EXPECT_FALSE(comm.value()->p2p());
  Ranks ranks(1u << 20, devices);
  for (CollOp op : kAllOps)
    testing::runAndCheck(*comm.value(), ranks, op, DataType::kFloat32, RedOp::kSum, 1, 4099, 4, false);
}

}  // namespace
}  // namespace gpupeer
