// Timed bulk transfers: copy engine or SM kernel, one or several at once, with or without P2P.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>

#include "bench/bench_device.hpp"
#include "bench/gated_timer.hpp"
#include "core/nvtx_range.hpp"
#include "cuda/copy_kernels.cuh"
#include "cuda/cuda_status.hpp"
#include "cuda/device_memory.hpp"
#include "cuda/device_pattern.hpp"
#include "gpupeer/log.hpp"
#include "gpupeer/pattern.hpp"
#include "gpupeer/peer_access.hpp"
#include "gpupeer/topology.hpp"

namespace gpupeer::bench {
namespace {

struct Endpoint {
  DeviceBuffer device;
  PinnedBuffer host;
  void* ptr() const { return device.get() ? device.get() : host.get(); }
};

// Allocates an endpoint on a GPU or, for -1, in pinned host memory.
Status allocateEndpoint(Endpoint& e, int where, std::size_t bytes) {
  if (where >= 0) return e.device.allocate(where, bytes);
  return e.host.allocate(bytes, cudaHostAllocPortable);
}

Status verifyEndpoint(const Endpoint& e, int where, std::size_t bytes, std::uint64_t seed, std::string& failure) {
  if (where < 0) {
    auto m = findMismatch(e.host.bytes(), bytes, seed);
    if (m) failure = fmt::format("{} byte(s) wrong, first at {}", m->count, m->offset);
    return Status::ok();
  }
  Result<PatternMismatches> m = countPatternMismatches(where, e.ptr(), bytes, seed);
  if (!m.isOk()) return m.status();
  if (m.value().count) failure = fmt::format("{} byte(s) wrong, first at {}", m.value().count, m.value().first);
  return Status::ok();
}

Status fillEndpoint(Endpoint& e, int where, std::size_t bytes, std::uint64_t seed) {
  if (where < 0) {
    fillPattern(e.host.bytes(), bytes, seed);
    return Status::ok();
  }
  return fillPatternOnDevice(where, e.ptr(), bytes, seed);
}

Status poisonEndpoint(Endpoint& e, int where, std::size_t bytes) {
  if (where < 0) {
    std::memset(e.host.get(), 0, bytes);
    return Status::ok();
  }
  return setDeviceMemory(where, e.ptr(), 0, bytes);
}

// Disables peer access for the pairs while a "P2P off" measurement runs, re-enables after.
class PeerAccessOff {
 public:
  Status disable(int a, int b) {
    for (auto [x, y] : {std::pair{a, b}, std::pair{b, a}}) {
      cudaSetDevice(x);
      cudaError_t err = cudaDeviceDisablePeerAccess(y);
      if (err == cudaSuccess) disabled_.push_back({x, y});
      (void)cudaGetLastError();  // "not enabled" is fine: it is off either way
    }
    return Status::ok();
  }
  ~PeerAccessOff() {
    for (auto [x, y] : disabled_) {
      cudaSetDevice(x);
      cudaDeviceEnablePeerAccess(y, 0);
      (void)cudaGetLastError();
    }
  }

 private:
  std::vector<std::pair<int, int>> disabled_;
};

}  // namespace

std::vector<int> selectedDevices(const Snapshot& s, const BenchOptions& o) {
  if (!o.devices.empty()) return o.devices;
  std::vector<int> out;
  for (const Gpu& g : s.gpus) out.push_back(g.index);
  return out;
}

Result<std::vector<BenchCell>> measureTransfers(const Snapshot& s, const BenchOptions& o, const TransferSetup& setup,
                                                const std::vector<Transfer>& transfers, std::size_t bytes,
                                                std::vector<double>* together) {
  if (bytes == 0) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "transfer size is 0 bytes");
  // A lane is one transfer; it has one part per GPU that drives a piece of it.
  struct Part {
    int device;
    Stream stream;
    std::function<cudaError_t(cudaStream_t)> op;
  };
  struct Lane {
    Transfer t;
    Endpoint src, dst;
    std::vector<std::unique_ptr<Part>> parts;
    std::uint64_t seed;
  };
  std::vector<std::unique_ptr<Lane>> lanes;
  PeerAccessOff off;
  SmCopyKernel kernel = o.smBulk ? SmCopyKernel::kBulk : SmCopyKernel::kVector;
  std::unique_ptr<TransferEngine> engine;
  if (setup.engine == Engine::kTransfer) {
    TransferOptions to;
    to.stagingChunkBytes = o.stagingChunkBytes;
    to.checkPointers = false;  // checked once below; the timed loop measures the copies only
    auto created = TransferEngine::create(s, to);
    if (!created.isOk()) return created.status();
    engine = std::move(created).value();
  }
  auto smBlocks = [&](int device) {
    const Gpu* g = s.findGpu(device);
    return g ? g->smCount * o.smBlocksPerSm : 0;
  };
  for (const Transfer& t : transfers) {
    auto lane = std::make_unique<Lane>();
    lane->t = t;
    lane->seed = transferSeed(t.src, t.dst, 0xb3);
    GPUPEER_RETURN_IF_ERROR(allocateEndpoint(lane->src, t.src, bytes));
    GPUPEER_RETURN_IF_ERROR(allocateEndpoint(lane->dst, t.dst, bytes));
    GPUPEER_RETURN_IF_ERROR(fillEndpoint(lane->src, t.src, bytes, lane->seed));
    GPUPEER_RETURN_IF_ERROR(poisonEndpoint(lane->dst, t.dst, bytes));
    int driver = setup.driver == Driver::kSource ? (t.src >= 0 ? t.src : t.dst) : (t.dst >= 0 ? t.dst : t.src);
    bool peerPair = t.src >= 0 && t.dst >= 0 && t.src != t.dst;
    if (peerPair && !setup.peerAccess) GPUPEER_RETURN_IF_ERROR(off.disable(t.src, t.dst));
    std::vector<int> drivers = {driver};
    if (setup.engine == Engine::kSmPushPull && peerPair) drivers = {t.src, t.dst};
    if (peerPair && setup.peerAccess)
      for (int d : drivers) GPUPEER_RETURN_IF_ERROR(PeerAccess::process().enable(d, d == t.src ? t.dst : t.src));
    // Push-pull splits at a 4 KiB boundary: the source writes [0, split), the destination reads the rest.
    std::size_t split = drivers.size() == 2 ? (bytes / 2) & ~std::size_t{4095} : bytes;
    for (size_t k = 0; k < drivers.size(); ++k) {
      auto part = std::make_unique<Part>();
      part->device = drivers[k];
      GPUPEER_RETURN_IF_ERROR(part->stream.create(part->device));
      std::size_t offset = k == 0 ? 0 : split;
      std::size_t length = k == 0 ? split : bytes - split;
      auto* dst = static_cast<std::uint8_t*>(lane->dst.ptr()) + offset;
      const auto* src = static_cast<const std::uint8_t*>(lane->src.ptr()) + offset;
      if (setup.engine == Engine::kTransfer) {
        TransferEngine* e = engine.get();
        CopyRequest request{dst, t.dst, src, t.src, length};
        Path path = setup.path;
        auto possible = choosePath(s, t.src, t.dst, path);
        if (!possible.isOk()) return possible.status();
        part->op = [=](cudaStream_t st) {
          Status status = e->copy(request, st, path);
          if (status.isOk()) return cudaSuccess;
          GPUPEER_WARN("transfer engine copy failed: {}", status.toString());
          return cudaErrorUnknown;
        };
      } else if (setup.engine != Engine::kCopyEngine) {
        int blocks = smBlocks(part->device);
        part->op = [=](cudaStream_t st) { return launchSmCopy(dst, src, length, st, blocks, kernel); };
      } else if (t.src < 0 || t.dst < 0) {
        cudaMemcpyKind kind = t.src < 0 ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
        part->op = [=](cudaStream_t st) { return cudaMemcpyAsync(dst, src, length, kind, st); };
      } else {
        int sd = t.src, dd = t.dst;
        part->op = [=](cudaStream_t st) { return cudaMemcpyPeerAsync(dst, dd, src, sd, length, st); };
      }
      lane->parts.push_back(std::move(part));
    }
    lanes.push_back(std::move(lane));
  }
  std::vector<TimedLane> timed;
  std::vector<size_t> laneOfPart;
  for (size_t i = 0; i < lanes.size(); ++i)
    for (auto& part : lanes[i]->parts) {
      timed.push_back({part->device, part->stream.get(), part->op});
      laneOfPart.push_back(i);
    }
  GatedTimer timer;
  GPUPEER_RETURN_IF_ERROR(timer.init());
  for (int w = 0; w < o.warmups; ++w) {
    auto r = timer.time(timed, 1);
    if (!r.isOk()) return r.status();
  }
  std::vector<std::vector<double>> gbps(lanes.size());
  for (int sample = 0; sample < o.samples; ++sample) {
    NvtxRange range("bench sample {} of {}: {} x {} B on {} lane(s)", sample + 1, o.samples, o.copiesPerSample, bytes,
                    lanes.size());
    auto r = timer.time(timed, o.copiesPerSample);
    if (!r.isOk()) return r.status();
    // A transfer takes as long as its slowest part.
    std::vector<double> seconds(lanes.size(), 0);
    for (size_t p = 0; p < timed.size(); ++p) seconds[laneOfPart[p]] = std::max(seconds[laneOfPart[p]], r.value()[p]);
    for (size_t i = 0; i < lanes.size(); ++i) gbps[i].push_back(bytes / seconds[i] / 1e9);
    // Every lane starts when the gate opens, so the last to end bounds them all.
    if (together) together->push_back(togetherGbps(bytes, seconds));
  }
  std::vector<BenchCell> cells;
  for (size_t i = 0; i < lanes.size(); ++i) {
    const Lane& lane = *lanes[i];
    BenchCell cell;
    cell.row = lane.t.src;
    cell.col = lane.t.dst;
    auto name = [](int d) { return d < 0 ? std::string("host") : fmt::format("GPU{}", d); };
    cell.label = name(lane.t.src) + "->" + name(lane.t.dst);
    cell.value = summarize(gbps[i]);
    cell.bytes = bytes;
    if (lane.t.src >= 0 && lane.t.dst >= 0) {
      LinkLimit lim = theoreticalLinkLimit(s, lane.t.src, lane.t.dst);
      if (lim.known() && setup.peerAccess) cell.theoreticalGBps = lim.gbps;
    } else if (const Gpu* g = s.findGpu(lane.t.src >= 0 ? lane.t.src : lane.t.dst)) {
      cell.theoreticalGBps = pcieLinkGBps(*g).value_or(0);
    }
    if (o.verify) {
      std::string failure;
      GPUPEER_RETURN_IF_ERROR(verifyEndpoint(lane.dst, lane.t.dst, bytes, lane.seed, failure));
      cell.verified = failure.empty();
      if (!failure.empty()) cell.note = "FAIL: data check after timing: " + failure;
    }
    cells.push_back(std::move(cell));
  }
  return cells;
}

}  // namespace gpupeer::bench

namespace gpupeer::bench {

Result<std::vector<BenchCell>> measureBatch(const Snapshot& s, const BenchOptions& o, int src, int dst, int copies,
                                            std::size_t piece) {
  auto created = TransferEngine::create(s);
  if (!created.isOk()) return created.status();
  TransferEngine& engine = *created.value();
  // Source pieces are contiguous; destinations are scattered over a region twice as large.
  DeviceBuffer from, to;
  GPUPEER_RETURN_IF_ERROR(from.allocate(src, copies * piece));
  GPUPEER_RETURN_IF_ERROR(to.allocate(dst, 2 * copies * piece));
  std::uint64_t seed = transferSeed(src, dst, 0xba7c);
  GPUPEER_RETURN_IF_ERROR(fillPatternOnDevice(src, from.get(), copies * piece, seed));
  std::vector<CopyRequest> requests;
  for (int i = 0; i < copies; ++i) {
    std::size_t slot = (7 * static_cast<std::size_t>(i)) % copies;
    requests.push_back({to.bytes() + 2 * slot * piece, dst, from.bytes() + i * piece, src, piece});
  }
  Stream stream;
  GPUPEER_RETURN_IF_ERROR(stream.create(src));
  GatedTimer timer;
  GPUPEER_RETURN_IF_ERROR(timer.init());
  std::vector<TimedLane> loop = {{src, stream.get(), [&](cudaStream_t st) {
                                    for (const CopyRequest& r : requests) {
                                      cudaError_t e =
                                          cudaMemcpyPeerAsync(r.dst, r.dstDevice, r.src, r.srcDevice, r.bytes, st);
                                      if (e != cudaSuccess) return e;
                                    }
                                    return cudaSuccess;
                                  }}};
  std::vector<TimedLane> batch = {{src, stream.get(), [&](cudaStream_t st) {
                                     Status status = engine.copyBatch(requests, st);
                                     return status.isOk() ? cudaSuccess : cudaErrorUnknown;
                                   }}};
  std::vector<BenchCell> cells;
  for (auto* lanes : {&loop, &batch}) {
    // One operation per gated batch: a loop of 1000 copies already fills the launch queue.
    auto warm = timer.time(*lanes, 1);
    if (!warm.isOk()) return warm.status();
    std::vector<double> us;
    for (int i = 0; i < std::max(o.samples, 5); ++i) {
      auto r = timer.time(*lanes, 1);
      if (!r.isOk()) return r.status();
      us.push_back(r.value()[0] * 1e6);
    }
    BenchCell c;
    c.row = src;
    c.col = dst;
    c.bytes = copies * piece;
    c.value = summarize(us);
    cells.push_back(c);
  }
  cells[0].label = fmt::format("GPU{}->GPU{} loop", src, dst);
  cells[1].label = fmt::format("GPU{}->GPU{} batch", src, dst);
  cells[1].note = fmt::format("{} x {}: batch {:.1f}x faster than the loop", copies, formatBytes(piece),
                              cells[0].value.median / cells[1].value.median);
  // The batch ran last: its result must be in place.
  std::vector<std::uint8_t> got(2 * copies * piece), want(piece);
  GPUPEER_CUDA_CHECK(dst, cudaSetDevice(dst));
  GPUPEER_CUDA_CHECK(dst, cudaMemcpy(got.data(), to.get(), got.size(), cudaMemcpyDeviceToHost));
  bool ok = true;
  for (int i = 0; i < copies && ok; ++i) {
    fillPattern(want.data(), piece, seed, i * piece);
    ok = std::memcmp(got.data() + 2 * ((7 * static_cast<std::size_t>(i)) % copies) * piece, want.data(), piece) == 0;
  }
  for (BenchCell& c : cells) c.verified = ok;
  if (!ok) cells[1].note = "FAIL: batch result differs from the source";
  return cells;
}

}  // namespace gpupeer::bench
