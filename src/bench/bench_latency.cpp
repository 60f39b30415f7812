// Latency: dependent loads through peer memory, a flag ping-pong, and small copies.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "bench/bench_device.hpp"
#include "bench/gated_timer.hpp"
#include "cuda/cuda_status.hpp"
#include "cuda/device_memory.hpp"
#include "cuda/latency_kernels.cuh"
#include "cuda/stream_wait.hpp"
#include "gpupeer/peer_access.hpp"

namespace gpupeer::bench {
namespace {

// Chain nodes sit 4 KiB apart over 256 MiB in a random cycle, so neither caches nor
// prefetchers help and every hop is a full trip to the owner's memory.
constexpr std::size_t kNodeStride = 4096;
constexpr std::size_t kNodes = 65536;
constexpr unsigned long long kWaitTimeoutNs = 2'000'000'000ULL;

Result<double> timeKernel(int device, cudaStream_t stream, const std::function<cudaError_t()>& launch) {
  cudaEvent_t start, stop;
  GPUPEER_CUDA_CHECK(device, cudaEventCreate(&start));
  GPUPEER_CUDA_CHECK(device, cudaEventCreate(&stop));
  GPUPEER_CUDA_CHECK(device, cudaEventRecord(start, stream));
  GPUPEER_CUDA_CHECK(device, launch());
  GPUPEER_CUDA_CHECK(device, cudaEventRecord(stop, stream));
  Status st = waitForStream(stream, device, 30, "latency kernel");
  float ms = 0;
  if (st.isOk()) cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!st.isOk()) return st;
  return ms * 1000.0;  // microseconds
}

}  // namespace

Result<Stats> measurePointerChase(const BenchOptions& o, int reader, int owner) {
  if (reader != owner) GPUPEER_RETURN_IF_ERROR(PeerAccess::process().enable(reader, owner));
  DeviceBuffer chain, sink;
  GPUPEER_RETURN_IF_ERROR(chain.allocate(owner, kNodes * kNodeStride));
  GPUPEER_RETURN_IF_ERROR(sink.allocate(reader, sizeof(std::uint64_t)));
  std::vector<std::size_t> order(kNodes);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937_64(42));
  auto base = reinterpret_cast<std::uint64_t>(chain.get());
  std::vector<std::uint64_t> image(kNodes * kNodeStride / sizeof(std::uint64_t), 0);
  for (std::size_t i = 0; i < kNodes; ++i)
    image[order[i] * kNodeStride / sizeof(std::uint64_t)] = base + order[(i + 1) % kNodes] * kNodeStride;
  GPUPEER_CUDA_CHECK(owner, cudaSetDevice(owner));
  GPUPEER_CUDA_CHECK(owner, cudaMemcpy(chain.get(), image.data(), chain.size(), cudaMemcpyHostToDevice));
  Stream stream;
  GPUPEER_RETURN_IF_ERROR(stream.create(reader));
  auto* start = reinterpret_cast<const std::uint64_t*>(chain.get());
  auto* out = reinterpret_cast<std::uint64_t*>(sink.get());
  int hops = std::max(100, o.latencyHops);
  // Warm-up: module load and the first TLB walks stay out of the samples.
  auto warm = timeKernel(reader, stream.get(), [&] { return launchPointerChase(start, 1000, out, stream.get()); });
  if (!warm.isOk()) return warm.status();
  std::vector<double> us;
  for (int i = 0; i < o.samples; ++i) {
    auto t = timeKernel(reader, stream.get(), [&] { return launchPointerChase(start, hops, out, stream.get()); });
    if (!t.isOk()) return t.status();
    us.push_back(t.value() / hops);
  }
  return summarize(us);
}

Result<Stats> measurePingPong(const BenchOptions& o, int a, int b) {
  GPUPEER_RETURN_IF_ERROR(PeerAccess::process().enable(a, b));
  GPUPEER_RETURN_IF_ERROR(PeerAccess::process().enable(b, a));
  DeviceBuffer flagA, flagB, stallA, stallB;
  GPUPEER_RETURN_IF_ERROR(flagA.allocate(a, 256));
  GPUPEER_RETURN_IF_ERROR(flagB.allocate(b, 256));
  GPUPEER_RETURN_IF_ERROR(stallA.allocate(a, sizeof(std::uint32_t)));
  GPUPEER_RETURN_IF_ERROR(stallB.allocate(b, sizeof(std::uint32_t)));
  Stream sa, sb;
  GPUPEER_RETURN_IF_ERROR(sa.create(a));
  GPUPEER_RETURN_IF_ERROR(sb.create(b));
  int rounds = std::max(10, o.latencyHops / 10);
  auto* fa = reinterpret_cast<volatile std::uint32_t*>(flagA.get());
  auto* fb = reinterpret_cast<volatile std::uint32_t*>(flagB.get());
  std::vector<double> us;
  for (int i = 0; i < o.samples + 1; ++i) {  // the first run is the warm-up
    GPUPEER_RETURN_IF_ERROR(setDeviceMemory(a, flagA.get(), 0, 256));
    GPUPEER_RETURN_IF_ERROR(setDeviceMemory(b, flagB.get(), 0, 256));
    // The responder starts first and waits; the initiator's kernel time covers all rounds.
    GPUPEER_CUDA_CHECK(
        b, launchPingPong(fb, fa, rounds, false, kWaitTimeoutNs, static_cast<std::uint32_t*>(stallB.get()), sb.get()));
    GPUPEER_CUDA_CHECK(a, cudaSetDevice(a));
    auto t = timeKernel(a, sa.get(), [&] {
      return launchPingPong(fa, fb, rounds, true, kWaitTimeoutNs, static_cast<std::uint32_t*>(stallA.get()), sa.get());
    });
    GPUPEER_RETURN_IF_ERROR(waitForStream(sb.get(), b, 30, "ping-pong responder"));
    if (!t.isOk()) return t.status();
    std::uint32_t stalled[2] = {0, 0};
    GPUPEER_CUDA_CHECK(a, cudaMemcpy(&stalled[0], stallA.get(), 4, cudaMemcpyDeviceToHost));
    GPUPEER_CUDA_CHECK(b, cudaMemcpy(&stalled[1], stallB.get(), 4, cudaMemcpyDeviceToHost));
    if (stalled[0] || stalled[1]) {
      return GPUPEER_ERROR(ErrorCode::kTimeout,
                           fmt::format("ping-pong stalled: GPU{} waited for round {} that GPU{} never delivered",
                                       stalled[0] ? a : b, stalled[0] ? stalled[0] : stalled[1], stalled[0] ? b : a))
          .withKbId("platform/p2p-advertised-but-broken");
    }
    if (i > 0) us.push_back(t.value() / (2.0 * rounds));
  }
  return summarize(us);
}

Result<Stats> measureSmallCopy(const BenchOptions& o, int src, int dst) {
  GPUPEER_RETURN_IF_ERROR(PeerAccess::process().enable(src, dst));
  DeviceBuffer from, to;
  GPUPEER_RETURN_IF_ERROR(from.allocate(src, 256));
  GPUPEER_RETURN_IF_ERROR(to.allocate(dst, 256));
  Stream stream;
  GPUPEER_RETURN_IF_ERROR(stream.create(src));
  GatedTimer timer;
  GPUPEER_RETURN_IF_ERROR(timer.init());
  void* d = to.get();
  const void* s = from.get();
  std::vector<TimedLane> lanes = {
      {src, stream.get(), [=](cudaStream_t st) { return cudaMemcpyPeerAsync(d, dst, s, src, 4, st); }}};
  // Up to 64 queued copies: more could fill the launch queue while the gate holds it.
  auto warm = timer.time(lanes, 8);
  if (!warm.isOk()) return warm.status();
  std::vector<double> us;
  for (int i = 0; i < o.samples; ++i) {
    auto r = timer.time(lanes, 64);
    if (!r.isOk()) return r.status();
    us.push_back(r.value()[0] * 1e6);
  }
  return summarize(us);
}

}  // namespace gpupeer::bench
