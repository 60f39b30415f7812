#include <fmt/format.h>

#include <map>
#include <mutex>

#include "core/nvtx_range.hpp"
#include "cuda/batch_copy_kernel.cuh"
#include "cuda/copy_kernels.cuh"
#include "cuda/cuda_status.hpp"
#include "cuda/device_memory.hpp"
#include "gpupeer/log.hpp"
#include "gpupeer/peer_access.hpp"
#include "gpupeer/transfer.hpp"
#include "transfer/staged_pipeline.hpp"

namespace gpupeer {
/// A copy's endpoint in an NVTX range name ("GPU1", "host"), formatted only when a tool records it.
struct Endpoint {
  int device;
};
}  // namespace gpupeer

template <>
struct fmt::formatter<gpupeer::Endpoint> : fmt::formatter<std::string_view> {
  auto format(gpupeer::Endpoint e, format_context& ctx) const {
    return e.device == gpupeer::kHost ? fmt::format_to(ctx.out(), "host")
                                      : fmt::format_to(ctx.out(), "GPU{}", e.device);
  }
};

namespace gpupeer {

struct TransferEngine::Impl {
  Snapshot snapshot;
  TransferOptions options;
  std::mutex mutex;
  std::map<std::pair<int, int>, std::unique_ptr<StagedPipeline>> pipelines;
  // Per device: a stream and two events to run work there on behalf of a caller stream of
  // another device (fork from the caller, join back).
  struct Lane {
    Stream stream;
    cudaEvent_t done = nullptr;
  };
  std::map<int, std::unique_ptr<Lane>> lanes;
  std::map<int, cudaEvent_t> forkEvents;

  ~Impl() {
    for (auto& [d, lane] : lanes)
      if (lane->done) cudaEventDestroy(lane->done);
    for (auto& [d, e] : forkEvents) cudaEventDestroy(e);
  }

  Result<StagedPipeline*> pipeline(int src, int dst) {
    auto& p = pipelines[{src, dst}];
    if (!p) {
      auto fresh = std::make_unique<StagedPipeline>();
      const Gpu* g = snapshot.findGpu(src);
      int node = g && g->numaNode.known() ? g->numaNode.value() : -1;
      GPUPEER_RETURN_IF_ERROR(fresh->init(src, dst, options.stagingChunkBytes, options.stagingBuffers, node));
      p = std::move(fresh);
    }
    return p.get();
  }

  Status checkPointer(const void* p, int device, const char* what) {
    cudaPointerAttributes attr{};
    cudaError_t err = cudaPointerGetAttributes(&attr, p);
    (void)cudaGetLastError();
    if (err != cudaSuccess) return Status::ok();  // not known to CUDA: plain host memory
    if (attr.type == cudaMemoryTypeDevice && attr.device != device)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("{} pointer {} belongs to device {}, not to the stated {}", what, p, attr.device,
                                       device == kHost ? std::string("host") : fmt::format("device {}", device)));
    if ((attr.type == cudaMemoryTypeHost || attr.type == cudaMemoryTypeUnregistered) && device != kHost)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("{} pointer {} is host memory, but device {} was stated", what, p, device));
    return Status::ok();
  }

  Status forkEvent(int callerDevice, cudaEvent_t* out) {
    cudaEvent_t& e = forkEvents[callerDevice];
    if (!e) {
      GPUPEER_CUDA_CHECK(callerDevice, cudaSetDevice(callerDevice));
      GPUPEER_CUDA_CHECK(callerDevice, cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
    *out = e;
    return Status::ok();
  }

  /// A stream on `device` that starts after the caller's work; call join() when done.
  Result<cudaStream_t> fork(cudaStream_t caller, int callerDevice, int device) {
    auto& lane = lanes[device];
    if (!lane) {
      lane = std::make_unique<Lane>();
      GPUPEER_RETURN_IF_ERROR(lane->stream.create(device));
      GPUPEER_CUDA_CHECK(device, cudaEventCreateWithFlags(&lane->done, cudaEventDisableTiming));
    }
    cudaEvent_t start = nullptr;
    GPUPEER_RETURN_IF_ERROR(forkEvent(callerDevice, &start));
    GPUPEER_CUDA_CHECK(callerDevice, cudaSetDevice(callerDevice));
    GPUPEER_CUDA_CHECK(callerDevice, cudaEventRecord(start, caller));
    GPUPEER_CUDA_CHECK(device, cudaStreamWaitEvent(lane->stream.get(), start, 0));
    return lane->stream.get();
  }

  Status join(cudaStream_t caller, int device) {
    Lane& lane = *lanes[device];
    GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
    GPUPEER_CUDA_CHECK(device, cudaEventRecord(lane.done, lane.stream.get()));
    GPUPEER_CUDA_CHECK(device, cudaStreamWaitEvent(caller, lane.done, 0));
    return Status::ok();
  }

  Status copyOne(const CopyRequest& r, cudaStream_t stream, const PathChoice& choice, int callerDevice) {
    switch (choice.path) {
      case Path::kStaged: {
        auto p = pipeline(r.srcDevice, r.dstDevice);
        if (!p.isOk()) return p.status();
        return p.value()->enqueue(r.dst, r.src, r.bytes, stream, callerDevice);
      }
      case Path::kCopyEngine:
        GPUPEER_CUDA_CHECK(callerDevice, cudaSetDevice(callerDevice));
        // cudaMemcpyAsync with unified addressing: a direct copy-engine transfer between peers
        // with access enabled, and (unlike cudaMemcpyPeerAsync) capturable in a graph.
        GPUPEER_CUDA_CHECK(callerDevice, cudaMemcpyAsync(r.dst, r.src, r.bytes, cudaMemcpyDefault, stream));
        return Status::ok();
      case Path::kKernel: {
        // The source's SMs write into the destination (peer access enabled at creation).
        int runner = r.srcDevice;
        cudaStream_t s = stream;
        bool forked = callerDevice != runner;
        if (forked) {
          auto f = fork(stream, callerDevice, runner);
          if (!f.isOk()) return f.status();
          s = f.value();
        }
        GPUPEER_CUDA_CHECK(runner, cudaSetDevice(runner));
        GPUPEER_CUDA_CHECK(runner, launchSmCopy(r.dst, r.src, r.bytes, s));
        if (forked) GPUPEER_RETURN_IF_ERROR(join(stream, runner));
        GPUPEER_CUDA_CHECK(callerDevice, cudaSetDevice(callerDevice));
        return Status::ok();
      }
      case Path::kAuto: break;
    }
    return GPUPEER_ERROR(ErrorCode::kInternal, "copy dispatched without a path");
  }
};

TransferEngine::TransferEngine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TransferEngine::~TransferEngine() = default;

const Snapshot& TransferEngine::snapshot() const { return impl_->snapshot; }

Result<std::unique_ptr<TransferEngine>> TransferEngine::create(const Snapshot& s, TransferOptions options) {
  if (options.stagingChunkBytes < 4096 || options.stagingBuffers < 2)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "staging needs chunks of at least 4 KiB and at least 2 buffers");
  auto impl = std::make_unique<Impl>();
  impl->snapshot = s;
  impl->options = options;
  // Peer access is enabled here, once, so that no copy calls the (non-capturable) enable API.
  for (const PeerPair& p : s.pairs) {
    auto choice = choosePath(s, p.src, p.dst, Path::kAuto);
    if (choice.isOk() && choice.value().path != Path::kStaged) {
      Status st = PeerAccess::process().enable(p.src, p.dst);
      if (!st.isOk()) GPUPEER_WARN("peer access GPU{} -> GPU{}: {}", p.src, p.dst, st.toString());
    }
  }
  return std::unique_ptr<TransferEngine>(new TransferEngine(std::move(impl)));
}

namespace {

// The caller's stream belongs to the device current at the call, as for a kernel launch (CUDA
// cannot say which device a stream has while it is captured). Internal steps switch devices;
// this puts the caller's device back on every return.
class CallerDevice {
 public:
  CallerDevice() { cudaGetDevice(&device_); }
  ~CallerDevice() { cudaSetDevice(device_); }
  int get() const { return device_; }

 private:
  int device_ = 0;
};

}  // namespace

Status TransferEngine::copy(const CopyRequest& r, cudaStream_t stream, Path path, PathChoice* taken) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  CallerDevice caller;
  GPUPEER_RETURN_IF_ERROR(validateCopyRequest(r, static_cast<int>(impl_->snapshot.gpus.size())));
  Result<PathChoice> choice = choosePath(impl_->snapshot, r.srcDevice, r.dstDevice, path);
  if (!choice.isOk()) return choice.status();
  if (taken) *taken = choice.value();
  if (r.bytes == 0) return Status::ok();
  if (impl_->options.checkPointers) {
    GPUPEER_RETURN_IF_ERROR(impl_->checkPointer(r.src, r.srcDevice, "source"));
    GPUPEER_RETURN_IF_ERROR(impl_->checkPointer(r.dst, r.dstDevice, "destination"));
  }
  GPUPEER_TRACE("copy {} B GPU{} -> GPU{} by {}: {}", r.bytes, r.srcDevice, r.dstDevice, pathName(choice.value().path),
                choice.value().reason);
  NvtxRange range("copy {} B {} -> {} by {}", r.bytes, Endpoint{r.srcDevice}, Endpoint{r.dstDevice},
                  pathName(choice.value().path));
  return impl_->copyOne(r, stream, choice.value(), caller.get());
}

Status TransferEngine::copyBatch(const std::vector<CopyRequest>& requests, cudaStream_t stream, PathChoice* taken) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  CallerDevice caller;
  int count = static_cast<int>(impl_->snapshot.gpus.size());
  // Everything is checked before anything is enqueued.
  std::map<int, std::vector<BatchCopy>> bySource;  // P2P or same-device copies, by launching GPU
  std::vector<std::pair<const CopyRequest*, PathChoice>> others;
  for (const CopyRequest& r : requests) {
    GPUPEER_RETURN_IF_ERROR(validateCopyRequest(r, count));
    if (r.bytes == 0) continue;
    Result<PathChoice> choice = choosePath(impl_->snapshot, r.srcDevice, r.dstDevice, Path::kAuto);
    if (!choice.isOk()) return choice.status();
    if (impl_->options.checkPointers) {
      GPUPEER_RETURN_IF_ERROR(impl_->checkPointer(r.src, r.srcDevice, "source"));
      GPUPEER_RETURN_IF_ERROR(impl_->checkPointer(r.dst, r.dstDevice, "destination"));
    }
    bool kernelCapable = r.srcDevice != kHost && r.dstDevice != kHost && choice.value().path != Path::kStaged;
    if (kernelCapable)
      bySource[r.srcDevice].push_back({r.dst, r.src, r.bytes});
    else
      others.push_back({&r, choice.value()});
  }
  const int callerDevice = caller.get();
  NvtxRange range("copy batch of {} requests", requests.size());
  int launches = 0;
  for (auto& [device, copies] : bySource) {
    cudaStream_t s = stream;
    bool forked = device != callerDevice;
    if (forked) {
      auto f = impl_->fork(stream, callerDevice, device);
      if (!f.isOk()) return f.status();
      s = f.value();
    }
    GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
    for (size_t i = 0; i < copies.size(); i += kBatchCopiesPerLaunch) {
      int n = static_cast<int>(std::min<size_t>(kBatchCopiesPerLaunch, copies.size() - i));
      GPUPEER_CUDA_CHECK(device, launchBatchCopy(copies.data() + i, n, s));
      ++launches;
    }
    if (forked) GPUPEER_RETURN_IF_ERROR(impl_->join(stream, device));
  }
  for (auto& [r, choice] : others) GPUPEER_RETURN_IF_ERROR(impl_->copyOne(*r, stream, choice, callerDevice));
  GPUPEER_CUDA_CHECK(callerDevice, cudaSetDevice(callerDevice));
  if (taken) {
    taken->path = launches > 0 ? Path::kKernel : others.empty() ? Path::kCopyEngine : others[0].second.path;
    taken->reason = fmt::format("{} copies: {} kernel launch(es) over P2P or within a GPU, {} by single-copy paths",
                                requests.size(), launches, others.size());
  }
  return Status::ok();
}

}  // namespace gpupeer
