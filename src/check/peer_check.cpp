// The device part of the P2P check: buffers, the three transfer methods, verification.
#include "gpupeer/peer_check.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "cuda/copy_kernels.cuh"
#include "cuda/cuda_status.hpp"
#include "cuda/device_memory.hpp"
#include "cuda/stream_wait.hpp"
#include "gpupeer/log.hpp"
#include "gpupeer/pattern.hpp"
#include "gpupeer/peer_access.hpp"

namespace gpupeer {
namespace {

// Bytes after each destination range that must stay untouched (catches overruns).
constexpr std::size_t kGuard = 64;
constexpr std::uint8_t kPoison = 0;  // the pattern never contains 0, so every unwritten byte shows

struct DeviceState {
  DeviceBuffer src, dst;
  Stream stream;
};

class Checker {
 public:
  Checker(const CheckOptions& o, std::vector<CheckCase> cases) : options_(o), cases_(std::move(cases)) {
    for (const CheckCase& c : cases_) {
      region_ = std::max(region_, c.dstOffset + c.bytes + kGuard);
      srcRegion_ = std::max(srcRegion_, c.srcOffset + c.bytes);
    }
  }

  Status prepare(const std::vector<int>& devices) {
    GPUPEER_RETURN_IF_ERROR(expected_.allocate(region_));
    GPUPEER_RETURN_IF_ERROR(readback_.allocate(region_));
    for (int d : devices) {
      DeviceState& st = state_[d];
      GPUPEER_RETURN_IF_ERROR(st.src.allocate(d, srcRegion_));
      GPUPEER_RETURN_IF_ERROR(st.dst.allocate(d, region_));
      GPUPEER_RETURN_IF_ERROR(st.stream.create(d));
    }
    return Status::ok();
  }

  MethodResult run(int src, int dst, CheckMethod method) {
    MethodResult r;
    r.method = method;
    // Which device needs to reach which: the reader maps the source, the writer the destination.
    int accessor = method == CheckMethod::kKernelRead ? dst : src;
    int owner = method == CheckMethod::kKernelRead ? src : dst;
    Status access = PeerAccess::process().enable(accessor, owner);
    if (!access.isOk()) {
      if (method != CheckMethod::kCopyEngine || access.code() != ErrorCode::kUnsupported) {
        r.outcome = access.code() == ErrorCode::kUnsupported ? CheckOutcome::kSkip : CheckOutcome::kFail;
        r.detail = access.toString();
        return r;
      }
      // Without peer access the driver stages the copy through host memory: it still must
      // deliver the right bytes, but it proves nothing about P2P.
      r.stagedThroughHost = true;
    }
    for (std::size_t i = 0; i < cases_.size(); ++i) {
      std::string failure;
      Status st = runCase(src, dst, method, i, failure);
      if (!st.isOk()) failure = st.toString();
      if (!failure.empty()) {
        r.outcome = CheckOutcome::kFail;
        r.detail = fmt::format("case {} ({} B, offsets +{}/+{}): {}", i, cases_[i].bytes, cases_[i].srcOffset,
                               cases_[i].dstOffset, failure);
        return r;
      }
      ++r.casesPassed;
    }
    r.outcome = CheckOutcome::kPass;
    if (r.stagedThroughHost) r.detail = "no peer access: the driver staged the copy through host memory";
    return r;
  }

 private:
  Status runCase(int src, int dst, CheckMethod method, std::size_t index, std::string& failure) {
    const CheckCase& c = cases_[index];
    std::uint64_t seed = transferSeed(src, dst, static_cast<std::uint64_t>(method) * 64 + index);
    DeviceState& s = state_[src];
    DeviceState& d = state_[dst];
    std::uint8_t* expected = expected_.bytes();
    fillPattern(expected, c.bytes, seed);
    GPUPEER_CUDA_CHECK(src, cudaSetDevice(src));
    GPUPEER_CUDA_CHECK(src, cudaMemcpy(s.src.bytes() + c.srcOffset, expected, c.bytes, cudaMemcpyHostToDevice));
    GPUPEER_RETURN_IF_ERROR(setDeviceMemory(dst, d.dst.get(), kPoison, region_));

    void* to = d.dst.bytes() + c.dstOffset;
    const void* from = s.src.bytes() + c.srcOffset;
    int runner = method == CheckMethod::kKernelRead ? dst : src;
    cudaStream_t stream = method == CheckMethod::kKernelRead ? d.stream.get() : s.stream.get();
    GPUPEER_CUDA_CHECK(runner, cudaSetDevice(runner));
    if (method == CheckMethod::kCopyEngine) {
      GPUPEER_CUDA_CHECK(src, cudaMemcpyPeerAsync(to, dst, from, src, c.bytes, stream));
    } else {
      GPUPEER_CUDA_CHECK(runner, launchSmCopy(to, from, c.bytes, stream));
    }
    GPUPEER_RETURN_IF_ERROR(waitForStream(stream, runner, options_.timeoutSeconds, checkMethodName(method)));

    std::size_t span = c.dstOffset + c.bytes + kGuard;
    GPUPEER_CUDA_CHECK(dst, cudaSetDevice(dst));
    GPUPEER_CUDA_CHECK(dst, cudaMemcpy(readback_.bytes(), d.dst.get(), span, cudaMemcpyDeviceToHost));
    const std::uint8_t* got = readback_.bytes();
    if (auto m = findNotEqual(got, c.dstOffset, kPoison)) {
      failure =
          fmt::format("{} byte(s) written before the destination, first at -{}", m->count, c.dstOffset - m->offset);
    } else if (std::memcmp(got + c.dstOffset, expected, c.bytes) != 0) {
      auto mm = findMismatch(got + c.dstOffset, c.bytes, seed);
      failure =
          fmt::format("{} of {} byte(s) wrong; first at offset {}: expected 0x{:02x}, got 0x{:02x}{}", mm->count,
                      c.bytes, mm->offset, mm->expected, mm->actual, mm->actual == kPoison ? " (never written)" : "");
    } else if (auto g = findNotEqual(got + c.dstOffset + c.bytes, kGuard, kPoison)) {
      failure = fmt::format("{} byte(s) written past the end of the destination, first at +{}", g->count, g->offset);
    }
    return Status::ok();
  }

  CheckOptions options_;
  std::vector<CheckCase> cases_;
  std::size_t region_ = 0, srcRegion_ = 0;
  PinnedBuffer expected_, readback_;
  std::map<int, DeviceState> state_;
};

}  // namespace

Result<CheckReport> runPeerCheck(const Snapshot& snapshot, const CheckOptions& options) {
  CheckReport report;
  report.devices = options.devices;
  if (report.devices.empty())
    for (const Gpu& g : snapshot.gpus) report.devices.push_back(g.index);
  if (report.devices.size() < 2) {
    return GPUPEER_ERROR(ErrorCode::kUnsupported, fmt::format("P2P needs two GPUs; {} visible", report.devices.size()));
  }
  report.cases = defaultCheckCases(options.largeBytes);
  Checker checker(options, report.cases);
  GPUPEER_RETURN_IF_ERROR(checker.prepare(report.devices));
  for (int src : report.devices) {
    for (int dst : report.devices) {
      if (src == dst) continue;
      PairCheck pair{src, dst, {}};
      for (CheckMethod m : {CheckMethod::kCopyEngine, CheckMethod::kKernelRead, CheckMethod::kKernelWrite}) {
        pair.methods.push_back(checker.run(src, dst, m));
        GPUPEER_INFO("check GPU{}->GPU{} {}: {}", src, dst, checkMethodName(m),
                     checkOutcomeName(pair.methods.back().outcome));
      }
      report.pairs.push_back(std::move(pair));
    }
  }
  return report;
}

}  // namespace gpupeer
