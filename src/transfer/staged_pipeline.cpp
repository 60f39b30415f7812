#include "transfer/staged_pipeline.hpp"

#include <algorithm>

#include "cuda/cuda_status.hpp"

namespace gpupeer {
namespace {

Status createEvent(int device, cudaEvent_t* e) {
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  // Timing off: these events only order streams, and untimed events are cheaper to wait on.
  GPUPEER_CUDA_CHECK(device, cudaEventCreateWithFlags(e, cudaEventDisableTiming));
  return Status::ok();
}

}  // namespace

Status StagedPipeline::init(int src, int dst, std::size_t chunkBytes, int buffers, int numaNode) {
  src_ = src;
  dst_ = dst;
  chunk_ = chunkBytes;
  for (int i = 0; i < buffers; ++i) {
    auto b = std::make_unique<NumaPinnedBuffer>();
    GPUPEER_RETURN_IF_ERROR(b->allocate(chunkBytes, numaNode));
    host_.push_back(std::move(b));
  }
  GPUPEER_RETURN_IF_ERROR(toHost_.create(src));
  GPUPEER_RETURN_IF_ERROR(fromHost_.create(dst));
  staged_.assign(buffers, nullptr);
  delivered_.assign(buffers, nullptr);
  for (int i = 0; i < buffers; ++i) {
    GPUPEER_RETURN_IF_ERROR(createEvent(src, &staged_[i]));
    GPUPEER_RETURN_IF_ERROR(createEvent(dst, &delivered_[i]));
  }
  GPUPEER_RETURN_IF_ERROR(createEvent(src, &doneToHost_));
  GPUPEER_RETURN_IF_ERROR(createEvent(dst, &doneFromHost_));
  return Status::ok();
}

StagedPipeline::~StagedPipeline() {
  for (cudaEvent_t e : staged_)
    if (e) cudaEventDestroy(e);
  for (cudaEvent_t e : delivered_)
    if (e) cudaEventDestroy(e);
  for (auto& [device, e] : start_) cudaEventDestroy(e);
  for (cudaEvent_t e : {doneToHost_, doneFromHost_})
    if (e) cudaEventDestroy(e);
}

Status StagedPipeline::enqueue(void* dst, const void* src, std::size_t bytes, cudaStream_t caller, int callerDevice) {
  if (bytes == 0) return Status::ok();
  const std::size_t n = host_.size();
  // Fork: both pipeline streams start after the caller's earlier work. A previous copy on
  // the same caller stream has joined back into it, so its buffers are free by then.
  cudaEvent_t& start = start_[callerDevice];
  if (!start) GPUPEER_RETURN_IF_ERROR(createEvent(callerDevice, &start));
  GPUPEER_CUDA_CHECK(callerDevice, cudaSetDevice(callerDevice));
  GPUPEER_CUDA_CHECK(callerDevice, cudaEventRecord(start, caller));
  GPUPEER_CUDA_CHECK(src_, cudaStreamWaitEvent(toHost_.get(), start, 0));
  GPUPEER_CUDA_CHECK(dst_, cudaStreamWaitEvent(fromHost_.get(), start, 0));
  auto* out = static_cast<unsigned char*>(dst);
  const auto* in = static_cast<const unsigned char*>(src);
  std::size_t chunks = (bytes + chunk_ - 1) / chunk_;
  for (std::size_t k = 0; k < chunks; ++k) {
    std::size_t b = k % n, offset = k * chunk_, len = std::min(chunk_, bytes - offset);
    void* buffer = host_[b]->get();
    // Buffer b still holds chunk k - n until the host-to-device copy of that chunk is done.
    if (k >= n) GPUPEER_CUDA_CHECK(src_, cudaStreamWaitEvent(toHost_.get(), delivered_[b], 0));
    GPUPEER_CUDA_CHECK(src_, cudaSetDevice(src_));
    GPUPEER_CUDA_CHECK(src_, cudaMemcpyAsync(buffer, in + offset, len, cudaMemcpyDeviceToHost, toHost_.get()));
    GPUPEER_CUDA_CHECK(src_, cudaEventRecord(staged_[b], toHost_.get()));
    GPUPEER_CUDA_CHECK(dst_, cudaStreamWaitEvent(fromHost_.get(), staged_[b], 0));
    GPUPEER_CUDA_CHECK(dst_, cudaSetDevice(dst_));
    GPUPEER_CUDA_CHECK(dst_, cudaMemcpyAsync(out + offset, buffer, len, cudaMemcpyHostToDevice, fromHost_.get()));
    GPUPEER_CUDA_CHECK(dst_, cudaEventRecord(delivered_[b], fromHost_.get()));
  }
  // Join both streams back into the caller (a graph capture needs every fork joined).
  GPUPEER_CUDA_CHECK(src_, cudaSetDevice(src_));
  GPUPEER_CUDA_CHECK(src_, cudaEventRecord(doneToHost_, toHost_.get()));
  GPUPEER_CUDA_CHECK(dst_, cudaSetDevice(dst_));
  GPUPEER_CUDA_CHECK(dst_, cudaEventRecord(doneFromHost_, fromHost_.get()));
  GPUPEER_CUDA_CHECK(callerDevice, cudaSetDevice(callerDevice));
  GPUPEER_CUDA_CHECK(src_, cudaStreamWaitEvent(caller, doneToHost_, 0));
  GPUPEER_CUDA_CHECK(dst_, cudaStreamWaitEvent(caller, doneFromHost_, 0));
  return Status::ok();
}

}  // namespace gpupeer
