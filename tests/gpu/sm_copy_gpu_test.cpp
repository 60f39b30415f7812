// Both SM copy kernels deliver every byte, at sizes around their chunk and vector edges,
// to peer memory and within one GPU.
#include <cuda_runtime_api.h>

#include <vector>

#include "cuda/copy_kernels.cuh"
#include "cuda/device_memory.hpp"
#include "cuda/device_pattern.hpp"
#include "gpu_memory_support.hpp"
#include "gpu_test_support.hpp"
#include "gpupeer/pattern.hpp"
#include "gpupeer/peer_access.hpp"

namespace gpupeer {
namespace {

struct Shape {
  std::size_t bytes, srcOffset, dstOffset;
};

void copyAndVerify(int src, int dst, SmCopyKernel kernel, const Shape& shape) {
  SCOPED_TRACE(::testing::Message() << "GPU" << src << "->GPU" << dst << " " << shape.bytes << " B +" << shape.srcOffset
                                    << "/+" << shape.dstOffset
                                    << (kernel == SmCopyKernel::kBulk ? " bulk" : " vector"));
  DeviceBuffer from, to;
  ASSERT_TRUE(from.allocate(src, shape.bytes + shape.srcOffset).isOk());
  ASSERT_TRUE(to.allocate(dst, shape.bytes + shape.dstOffset + 64).isOk());
  std::uint64_t seed = transferSeed(src, dst, shape.bytes);
  std::vector<std::uint8_t> host(shape.bytes);
  fillPattern(host.data(), host.size(), seed);
  ASSERT_EQ(cudaMemcpy(from.bytes() + shape.srcOffset, host.data(), shape.bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(testing::clearOnDevice(dst, to.get(), to.size()), cudaSuccess);
  cudaSetDevice(src);  // the writer runs on the source
  ASSERT_EQ(launchSmCopy(to.bytes() + shape.dstOffset, from.bytes() + shape.srcOffset, shape.bytes, nullptr, 0, kernel),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Result<PatternMismatches> m = countPatternMismatches(dst, to.bytes() + shape.dstOffset, shape.bytes, seed);
  ASSERT_TRUE(m.isOk()) << m.status().toString();
  EXPECT_EQ(m.value().count, 0u) << "first wrong byte at " << m.value().first;
  std::vector<std::uint8_t> guard(64);
  ASSERT_EQ(cudaMemcpy(guard.data(), to.bytes() + shape.dstOffset + shape.bytes, 64, cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (std::uint8_t b : guard) ASSERT_EQ(b, 0) << "written past the end";
}

const std::vector<Shape> kShapes = {
    {100, 0, 0},                   // under one vector chunk
    {32 * 1024, 0, 0},             // exactly one bulk chunk
    {32 * 1024 * 300 + 77, 5, 5},  // many chunks, an unaligned head and an odd tail
    {(64u << 20) + 16, 0, 0},      // large, ends on a vector
    {4099, 3, 8},                  // mutually misaligned: byte path
};

TEST(SmCopyGpu, VectorAndBulkKernelsDeliverEveryByteToPeer) {
  GPUPEER_REQUIRE_GPUS(2);
  if (!testing::machine().findPair(0, 1)->canAccessPeer.valueOr(false)) GTEST_SKIP() << "no P2P between GPU0 and GPU1";
  ASSERT_TRUE(PeerAccess::process().enable(0, 1).isOk());
  for (SmCopyKernel k : {SmCopyKernel::kVector, SmCopyKernel::kBulk})
    for (const Shape& s : kShapes) copyAndVerify(0, 1, k, s);
}

TEST(SmCopyGpu, BulkKernelWithinOneGpu) {
  GPUPEER_REQUIRE_GPUS(1);
  for (const Shape& s : kShapes) copyAndVerify(0, 0, SmCopyKernel::kBulk, s);
}

}  // namespace
}  // namespace gpupeer
