// The one-shot kernel's line variants (16-byte lines and 128-byte lines) driven directly, two
// ranks on one GPU, each on its own stream: the kernels' indexing, tails, operators and reuse
// of their slots across operations, where no second GPU is at hand. (Across NVLink the same
// kernels run in collectives_gpu_test.cpp.)
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "collectives/one_shot_kernels.cuh"
#include "cuda/device_memory.hpp"
#include "gpu_memory_support.hpp"
#include "gpu_test_support.hpp"
#include "gpupeer/collective_types.hpp"
#include "harness/collective_reference.hpp"

namespace gpupeer {
namespace {

constexpr int kRanks = 2;
constexpr std::size_t kLineSlot = 1u << 20, kLine128Slot = 4u << 20, kMostBytes = 2u << 20;

enum class Variant { kLines, kLines128 };

// Per rank: input, output, both variants' scratch and the counter words.
struct OneGpuRanks {
  std::array<DeviceBuffer, kRanks> in, out, lines, lines128, counters;
  std::array<cudaStream_t, kRanks> streams{};
  OneGpuRanks() {
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_TRUE(in[r].allocate(0, kRanks * kMostBytes).isOk());
      EXPECT_TRUE(out[r].allocate(0, kRanks * kMostBytes).isOk());
      EXPECT_TRUE(lines[r].allocate(0, oneShotLineScratchBytes(kRanks, kLineSlot)).isOk());
      EXPECT_TRUE(lines128[r].allocate(0, 2 * kRanks * kLine128Slot).isOk());
      EXPECT_TRUE(counters[r].allocate(0, 4 * sizeof(std::uint32_t)).isOk());
      for (DeviceBuffer* b : {&lines[r], &lines128[r], &counters[r]})
        EXPECT_EQ(testing::clearOnDevice(0, b->get(), b->size()), cudaSuccess);
      EXPECT_EQ(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking), cudaSuccess);
    }
  }
  ~OneGpuRanks() {
    for (cudaStream_t s : streams) cudaStreamDestroy(s);
  }
};

// Runs `op` over both ranks in `variant` and checks every rank's output against the host
// reference; the output buffers start filled with a byte pattern that no result has. `seed`
// varies the inputs (knownAnswerInput's pattern of rank seed x ranks + r).
void runAndCheck(OneGpuRanks& g, Variant variant, CollOp op, DataType type, RedOp redop, int root, std::size_t count,
                 int seed = 0) {
  SCOPED_TRACE(std::string(collOpName(op)) + " " + dataTypeName(type) + " " + redOpName(redop) + " root " +
               std::to_string(root) + " count " + std::to_string(count));
  const std::size_t es = dataTypeSize(type);
  const std::size_t inElems = collectiveInputElements(op, count, kRanks);
  const std::size_t outElems = collectiveOutputElements(op, count, kRanks);
  ASSERT_LE(std::max(inElems, outElems) * es, kRanks * kMostBytes);
  std::vector<std::vector<std::uint8_t>> inputs;
  std::vector<const void*> inputPointers;
  std::array<OneShotArgs, kRanks> args;
  for (int r = 0; r < kRanks; ++r) {
    inputs.push_back(knownAnswerInput(type, seed * kRanks + r, inElems));
    ASSERT_EQ(cudaMemcpy(g.in[r].get(), inputs[r].data(), inElems * es, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(testing::clearOnDevice(0, g.out[r].get(), outElems * es, 0xA5), cudaSuccess);
  }
  for (const auto& v : inputs) inputPointers.push_back(v.data());
  for (int r = 0; r < kRanks; ++r) {
    OneShotArgs& a = args[r];
    a.op = op;
    a.redop = redop;
    a.root = root;
    a.rank = r;
    a.ranks = kRanks;
    a.in = g.in[r].get();
    a.out = g.out[r].get();
    a.inStride = inElems > count ? count : 0;
    a.outStride = outElems > count ? count : 0;
    a.len = count;
    for (int k = 0; k < kRanks; ++k) {
      a.llScratch[k] = g.lines[k].get();
      a.ll128Scratch[k] = g.lines128[k].get();
    }
    a.llSlotBytes = kLineSlot;
    a.ll128SlotBytes = kLine128Slot;
    a.lines = variant == Variant::kLines;
    a.lines128 = variant == Variant::kLines128;
    a.maxBlocks = 4;  // both ranks' grids resident on one GPU at once
    a.lineBlockLines = 512;
    a.opCounter = reinterpret_cast<unsigned long long*>(g.counters[r].get());
    a.error = static_cast<std::uint32_t*>(g.counters[r].get()) + 2;
    ASSERT_TRUE(variant == Variant::kLines ? oneShotAllowsLines(a, type) : oneShotAllowsLines128(a, type));
  }
  for (int r = 0; r < kRanks; ++r) ASSERT_EQ(launchOneShot(args[r], type, g.streams[r]), cudaSuccess);
  for (int r = 0; r < kRanks; ++r) ASSERT_EQ(cudaStreamSynchronize(g.streams[r]), cudaSuccess);
  for (int r = 0; r < kRanks; ++r) {
    std::uint32_t error = 0;
    ASSERT_EQ(cudaMemcpy(&error, args[r].error, sizeof error, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(error, 0u) << "rank " << r << " timed out waiting for rank " << error - 1;
    std::vector<std::uint8_t> result(outElems * es);
    ASSERT_EQ(cudaMemcpy(result.data(), g.out[r].get(), result.size(), cudaMemcpyDeviceToHost), cudaSuccess);
    if (op == CollOp::kReduce && r != root) continue;  // only the root's output is written
    const ReductionCheck c = checkCollective(op, type, redop, root, inputPointers, r, result.data(), count);
    EXPECT_EQ(c.wrong, 0u) << "rank " << r << ": first wrong element " << c.firstWrong;
  }
}

TEST(OneShotLinesGpu, EveryOperationInBothLineVariantsOnOneGpu) {
  GPUPEER_REQUIRE_GPUS(1);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  OneGpuRanks g;
  for (Variant v : {Variant::kLines, Variant::kLines128}) {
    SCOPED_TRACE(v == Variant::kLines ? "16-byte lines" : "128-byte lines");
    for (CollOp op : {CollOp::kAllReduce, CollOp::kReduceScatter, CollOp::kReduce, CollOp::kAllGather,
                      CollOp::kAllToAll, CollOp::kBroadcast, CollOp::kSendRecv})
      for (DataType t :
           {DataType::kFloat32, DataType::kFloat16, DataType::kInt8, DataType::kFloat64, DataType::kFloat8E4M3})
        // In 8-byte words: 1, 15 (one whole 128-byte line), 16 (a second line with one word),
        // 961 (16 warps' lines and one more), and ~128 KiB (lines for every warp, several each).
        for (std::size_t words : {1, 15, 16, 961, 16411}) {
          const std::size_t count = words * 8 / dataTypeSize(t);
          const bool rooted = op == CollOp::kBroadcast || op == CollOp::kReduce;
          for (int root : {0, 1}) {
            if (root && !rooted) continue;
            for (RedOp redop : {RedOp::kSum, RedOp::kMax}) {
              if (redop == RedOp::kMax && op != CollOp::kAllReduce) continue;
              runAndCheck(g, v, op, t, redop, root, count);
            }
          }
        }
  }
}

TEST(OneShotLinesGpu, ShorterOperationsAfterLongerOnesReadNoStaleLines) {
  GPUPEER_REQUIRE_GPUS(1);
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  OneGpuRanks g;
  // Each slot parity serves every other operation: a short operation after a long one finds
  // the long one's lines past its own end, and the lines of two operations back (other
  // inputs, flags two epochs older) in its own.
  int seed = 0;
  for (Variant v : {Variant::kLines, Variant::kLines128})
    for (int round = 0; round < 3; ++round)
      for (std::size_t words : {std::size_t{32768}, std::size_t{15}, std::size_t{20000}, std::size_t{1}})
        runAndCheck(g, v, CollOp::kAllReduce, DataType::kInt32, RedOp::kSum, 0, words * 2, ++seed);
}

}  // namespace
}  // namespace gpupeer
