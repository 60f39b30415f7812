// Every transfer path delivers every byte: sizes 1, odd, unaligned, past 4 GiB; same device,
// host, batches, graph capture; and requests that must be refused are refused.
#include <cuda_runtime_api.h>

#include <cstring>
#include <vector>

#include "cuda/device_memory.hpp"
#include "cuda/device_pattern.hpp"
#include "gpu_memory_support.hpp"
#include "gpu_test_support.hpp"
#include "gpupeer/pattern.hpp"
#include "gpupeer/transfer.hpp"

namespace gpupeer {
namespace {

// Fills [0, bytes) of `p` on `device` with the pattern for `seed`.
void fill(int device, void* p, std::size_t bytes, std::uint64_t seed) {
  Status st = fillPatternOnDevice(device, p, bytes, seed);
  ASSERT_TRUE(st.isOk()) << st.toString();
}

// Number of bytes of [p, p + bytes) on `device` that differ from the pattern.
unsigned long long wrongBytes(int device, const void* p, std::size_t bytes, std::uint64_t seed) {
  Result<PatternMismatches> m = countPatternMismatches(device, p, bytes, seed);
  EXPECT_TRUE(m.isOk()) << m.status().toString();
  return m.isOk() ? m.value().count : ~0ULL;
}

std::unique_ptr<TransferEngine> engineFor(const Snapshot& s) {
  auto e = TransferEngine::create(s);
  EXPECT_TRUE(e.isOk()) << e.status().toString();
  return e.isOk() ? std::move(e).value() : nullptr;
}

struct Case {
  std::size_t bytes, srcOffset, dstOffset;
};

TEST(TransferGpu, EveryPathDeliversEveryByte) {
  GPUPEER_REQUIRE_GPUS(2);
  auto engine = engineFor(testing::machine());
  ASSERT_TRUE(engine);
  const std::vector<Case> cases = {{1, 0, 0}, {4093, 3, 5}, {(8u << 20) + 13, 7, 9}, {(64u << 20) + 5, 0, 0}};
  std::vector<Path> paths = {Path::kAuto, Path::kCopyEngine, Path::kKernel, Path::kStaged};
  if (!testing::machine().findPair(0, 1)->canAccessPeer.valueOr(false)) paths = {Path::kAuto, Path::kStaged};
  for (auto [src, dst] : {std::pair{0, 1}, std::pair{1, 0}}) {
    for (Path path : paths) {
      for (const Case& c : cases) {
        SCOPED_TRACE(::testing::Message() << "GPU" << src << "->GPU" << dst << " " << pathName(path) << " " << c.bytes
                                          << " B +" << c.srcOffset << "/+" << c.dstOffset);
        DeviceBuffer from, to;
        ASSERT_TRUE(from.allocate(src, c.bytes + c.srcOffset).isOk());
        ASSERT_TRUE(to.allocate(dst, c.bytes + c.dstOffset).isOk());
        std::uint64_t seed = transferSeed(src, dst, c.bytes + static_cast<int>(path));
        fill(src, from.bytes() + c.srcOffset, c.bytes, seed);
        ASSERT_EQ(testing::clearOnDevice(dst, to.get(), to.size()), cudaSuccess);
        Stream stream;
        ASSERT_TRUE(stream.create(dst).isOk());
        PathChoice taken;
        Status st = engine->copy({to.bytes() + c.dstOffset, dst, from.bytes() + c.srcOffset, src, c.bytes},
                                 stream.get(), path, &taken);
        ASSERT_TRUE(st.isOk()) << st.toString();
        EXPECT_FALSE(taken.reason.empty());
        if (path != Path::kAuto) {
          EXPECT_EQ(taken.path, path);
        }
        ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
        EXPECT_EQ(wrongBytes(dst, to.bytes() + c.dstOffset, c.bytes, seed), 0u);
      }
    }
  }
}

TEST(TransferGpu, PastFourGigabytes) {
  GPUPEER_REQUIRE_GPUS(2);
  auto engine = engineFor(testing::machine());
  const std::size_t bytes = (std::size_t{9} << 29) + 3;  // 4.5 GiB + 3: no 32-bit size survives this
  DeviceBuffer from, to;
  ASSERT_TRUE(from.allocate(0, bytes).isOk());
  ASSERT_TRUE(to.allocate(1, bytes).isOk());
  fill(0, from.get(), bytes, 77);
  for (Path path : {Path::kCopyEngine, Path::kStaged}) {
    SCOPED_TRACE(pathName(path));
    ASSERT_EQ(testing::clearOnDevice(1, to.get(), bytes), cudaSuccess);
    ASSERT_TRUE(engine->copy({to.get(), 1, from.get(), 0, bytes}, nullptr, path).isOk());
    cudaSetDevice(1);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(wrongBytes(1, to.get(), bytes, 77), 0u);
  }
}

TEST(TransferGpu, SameDeviceHostAndZeroBytes) {
  GPUPEER_REQUIRE_GPUS(1);
  auto engine = engineFor(testing::machine());
  const std::size_t bytes = (3u << 20) + 1;
  DeviceBuffer buf;
  ASSERT_TRUE(buf.allocate(0, 2 * bytes).isOk());
  fill(0, buf.get(), bytes, 5);
  ASSERT_TRUE(engine->copy({buf.bytes() + bytes, 0, buf.get(), 0, bytes}, nullptr).isOk());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(wrongBytes(0, buf.bytes() + bytes, bytes, 5), 0u);
  std::vector<std::uint8_t> host(bytes);
  ASSERT_TRUE(engine->copy({host.data(), kHost, buf.get(), 0, bytes}, nullptr).isOk());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_FALSE(findMismatch(host.data(), bytes, 5).has_value());
  EXPECT_TRUE(engine->copy({nullptr, 0, nullptr, 0, 0}, nullptr).isOk());
}

TEST(TransferGpu, RefusesBadRequestsBeforeEnqueueing) {
  GPUPEER_REQUIRE_GPUS(2);
  auto engine = engineFor(testing::machine());
  DeviceBuffer a, b;
  ASSERT_TRUE(a.allocate(0, 1 << 20).isOk());
  ASSERT_TRUE(b.allocate(1, 1 << 20).isOk());
  Status overlap = engine->copy({a.bytes() + 100, 0, a.get(), 0, 4096}, nullptr);
  EXPECT_EQ(overlap.code(), ErrorCode::kInvalidArgument) << overlap.toString();
  Status wrongOwner = engine->copy({b.get(), 0, a.get(), 1, 4096}, nullptr);  // devices swapped
  EXPECT_EQ(wrongOwner.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(wrongOwner.message().find("belongs to device"), std::string::npos) << wrongOwner.toString();
  Status outOfRange = engine->copy({b.get(), 9, a.get(), 0, 4096}, nullptr);
  EXPECT_EQ(outOfRange.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(TransferGpu, DisabledP2pStagesAndStillDelivers) {
  GPUPEER_REQUIRE_GPUS(2);
  Snapshot s = testing::machine();
  s.environment["GPUPEER_P2P_DISABLE"] = "1";
  auto engine = engineFor(s);
  const std::size_t bytes = (40u << 20) + 9;
  DeviceBuffer from, to;
  ASSERT_TRUE(from.allocate(1, bytes).isOk());
  ASSERT_TRUE(to.allocate(0, bytes).isOk());
  fill(1, from.get(), bytes, 9);
  PathChoice taken;
  ASSERT_TRUE(engine->copy({to.get(), 0, from.get(), 1, bytes}, nullptr, Path::kAuto, &taken).isOk());
  EXPECT_EQ(taken.path, Path::kStaged);
  cudaSetDevice(0);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(wrongBytes(0, to.get(), bytes, 9), 0u);
}

TEST(TransferGpu, BatchOfSmallScatteredCopies) {
  GPUPEER_REQUIRE_GPUS(2);
  auto engine = engineFor(testing::machine());
  const int n = 1000;
  const std::size_t piece = 4096;
  DeviceBuffer from0, to1, from1, to0;
  for (auto* b : {&from0, &to0}) ASSERT_TRUE(b->allocate(0, n * piece * 2).isOk());
  for (auto* b : {&from1, &to1}) ASSERT_TRUE(b->allocate(1, n * piece * 2).isOk());
  fill(0, from0.get(), n * piece * 2, 11);
  fill(1, from1.get(), n * piece * 2, 12);
  ASSERT_EQ(testing::clearOnDevice(0, to0.get(), to0.size()), cudaSuccess);
  ASSERT_EQ(testing::clearOnDevice(1, to1.get(), to1.size()), cudaSuccess);
  // Scattered: copy i takes source piece i and lands in slot (7i mod n) of the destination,
  // every other piece left untouched; some pieces are 1 to 15 bytes shorter.
  std::vector<CopyRequest> requests;
  for (int i = 0; i < n; ++i) {
    std::size_t len = piece - (i % 16);
    std::size_t slot = (7 * static_cast<std::size_t>(i)) % n;
    requests.push_back({to1.bytes() + 2 * slot * piece, 1, from0.bytes() + 2 * i * piece, 0, len});
    requests.push_back({to0.bytes() + 2 * slot * piece, 0, from1.bytes() + 2 * i * piece, 1, len});
  }
  PathChoice taken;
  Stream stream;
  ASSERT_TRUE(stream.create(0).isOk());
  ASSERT_TRUE(engine->copyBatch(requests, stream.get(), &taken).isOk());
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  EXPECT_NE(taken.reason.find("2000 copies"), std::string::npos) << taken.reason;
  std::vector<std::uint8_t> got(to1.size());
  std::vector<std::uint8_t> expected(from0.size());
  fillPattern(expected.data(), expected.size(), 11);
  cudaSetDevice(1);
  ASSERT_EQ(cudaMemcpy(got.data(), to1.get(), got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  int wrong = 0;
  for (int i = 0; i < n; ++i) {
    std::size_t len = piece - (i % 16), slot = (7 * static_cast<std::size_t>(i)) % n;
    wrong += std::memcmp(got.data() + 2 * slot * piece, expected.data() + 2 * i * piece, len) != 0;
    wrong += got[2 * slot * piece + len] != 0;  // the byte after a short piece stays untouched
  }
  EXPECT_EQ(wrong, 0);
}

TEST(TransferGpu, CapturedInAGraph) {
  GPUPEER_REQUIRE_GPUS(2);
  auto engine = engineFor(testing::machine());
  const std::size_t bytes = (24u << 20) + 3;
  DeviceBuffer from, to;
  ASSERT_TRUE(from.allocate(0, bytes).isOk());
  ASSERT_TRUE(to.allocate(1, 3 * bytes).isOk());
  fill(0, from.get(), bytes, 21);
  ASSERT_EQ(testing::clearOnDevice(1, to.get(), to.size()), cudaSuccess);
  Stream stream;
  ASSERT_TRUE(stream.create(0).isOk());
  // Warm up each path once outside the capture: staging buffers and streams are made then.
  for (Path p : {Path::kCopyEngine, Path::kKernel, Path::kStaged})
    ASSERT_TRUE(engine->copy({to.get(), 1, from.get(), 0, 16}, stream.get(), p).isOk());
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  ASSERT_EQ(testing::clearOnDevice(1, to.get(), to.size()), cudaSuccess);
  cudaSetDevice(0);
  ASSERT_EQ(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal), cudaSuccess);
  int slot = 0;
  for (Path p : {Path::kCopyEngine, Path::kKernel, Path::kStaged}) {
    Status st = engine->copy({to.bytes() + slot++ * bytes, 1, from.get(), 0, bytes}, stream.get(), p);
    EXPECT_TRUE(st.isOk()) << pathName(p) << ": " << st.toString();
  }
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(stream.get(), &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, stream.get()), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(wrongBytes(1, to.bytes() + i * bytes, bytes, 21), 0u) << "copy " << i;
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
}

}  // namespace
}  // namespace gpupeer
