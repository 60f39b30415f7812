#include "coll_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "gpupeer/log.hpp"
#include "harness/collective_reference.hpp"

namespace gpupeer::cli {
namespace {

Status cudaStep(cudaError_t err, int device, const char* what) {
  if (err == cudaSuccess) return Status::ok();
  (void)cudaGetLastError();
  return GPUPEER_ERROR(ErrorCode::kCuda, fmt::format("GPU{}: {}: {}", device, what, cudaGetErrorString(err)));
}

// Captures `iters` operations into one graph: rank 0's stream starts the capture and the
// others join it through an event, and rejoin it at the end.
Result<cudaGraphExec_t> capture(std::vector<CollRank>& ranks, const CollLaunch& launch, const CollBuffers& b,
                                int iters) {
  CollRank& lead = ranks[0];
  cudaSetDevice(lead.device);
  GPUPEER_RETURN_IF_ERROR(
      cudaStep(cudaStreamBeginCapture(lead.stream, cudaStreamCaptureModeRelaxed), lead.device, "begin capture"));
  Status st = cudaStep(cudaEventRecord(lead.fork, lead.stream), lead.device, "fork");
  for (std::size_t r = 1; r < ranks.size() && st.isOk(); ++r) {
    cudaSetDevice(ranks[r].device);
    st = cudaStep(cudaStreamWaitEvent(ranks[r].stream, lead.fork, 0), ranks[r].device, "join capture");
  }
  for (int i = 0; i < iters && st.isOk(); ++i) st = launch(b.send, b.recv);
  for (std::size_t r = 1; r < ranks.size() && st.isOk(); ++r) {
    cudaSetDevice(ranks[r].device);
    st = cudaStep(cudaEventRecord(ranks[r].fork, ranks[r].stream), ranks[r].device, "rejoin");
    cudaSetDevice(lead.device);
    if (st.isOk()) st = cudaStep(cudaStreamWaitEvent(lead.stream, ranks[r].fork, 0), lead.device, "rejoin");
  }
  cudaSetDevice(lead.device);
  cudaGraph_t graph = nullptr;
  cudaError_t end = cudaStreamEndCapture(lead.stream, &graph);
  if (!st.isOk()) {
    if (graph) cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    return st;
  }
  GPUPEER_RETURN_IF_ERROR(cudaStep(end, lead.device, "end capture"));
  cudaGraphExec_t exec = nullptr;
  cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
  cudaGraphDestroy(graph);
  GPUPEER_RETURN_IF_ERROR(cudaStep(inst, lead.device, "instantiate graph"));
  return exec;
}

}  // namespace

CollBuffers collBuffers(const std::vector<CollRank>& ranks, CollOp op, std::size_t count, DataType type, bool inPlace) {
  CollBuffers b;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    InPlacePointers p = {ranks[r].sendBase, ranks[r].recvBase};
    if (inPlace) p = inPlacePointers(op, ranks[r].sendBase, ranks[r].recvBase, count, type, static_cast<int>(r));
    b.send.push_back(p.send);
    b.recv.push_back(p.recv);
  }
  return b;
}

Result<std::vector<CollRank>> makeRanks(const std::vector<int>& devices, std::size_t sendBytes, std::size_t recvBytes) {
  std::vector<CollRank> ranks;
  for (int d : devices) {
    CollRank r;
    r.device = d;
    cudaSetDevice(d);
    Status st = cudaStep(cudaMalloc(&r.sendBase, sendBytes), d, fmt::format("allocating {} bytes", sendBytes).c_str());
    if (st.isOk())
      st = cudaStep(cudaMalloc(&r.recvBase, recvBytes), d, fmt::format("allocating {} bytes", recvBytes).c_str());
    if (st.isOk()) st = cudaStep(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), d, "stream");
    if (st.isOk()) st = cudaStep(cudaEventCreate(&r.start), d, "event");
    if (st.isOk()) st = cudaStep(cudaEventCreate(&r.stop), d, "event");
    if (st.isOk()) st = cudaStep(cudaEventCreateWithFlags(&r.fork, cudaEventDisableTiming), d, "event");
    ranks.push_back(r);
    if (!st.isOk()) {
      freeRanks(ranks);
      return st;
    }
  }
  return ranks;
}

void freeRanks(std::vector<CollRank>& ranks) {
  for (CollRank& r : ranks) {
    cudaSetDevice(r.device);
    if (r.owned) {
      cudaFree(r.sendBase);
      cudaFree(r.recvBase);
    }
    if (r.stream) cudaStreamDestroy(r.stream);
    for (cudaEvent_t e : {r.start, r.stop, r.fork})
      if (e) cudaEventDestroy(e);
  }
  ranks.clear();
}

Status syncRanks(std::vector<CollRank>& ranks) {
  for (CollRank& r : ranks) {
    cudaSetDevice(r.device);
    GPUPEER_RETURN_IF_ERROR(cudaStep(cudaStreamSynchronize(r.stream), r.device, "synchronize"));
  }
  return Status::ok();
}

Result<double> timeCollective(std::vector<CollRank>& ranks, const CollLaunch& launch, const CollBuffers& b, int warmup,
                              int iters, int graphLaunches) {
  if (graphLaunches > 0) {
    Result<cudaGraphExec_t> exec = capture(ranks, launch, b, iters);
    if (!exec.isOk()) return exec.status();
    CollRank& lead = ranks[0];
    cudaSetDevice(lead.device);
    Status st = cudaStep(cudaGraphLaunch(exec.value(), lead.stream), lead.device, "graph launch");  // warm-up
    if (st.isOk()) st = cudaStep(cudaEventRecord(lead.start, lead.stream), lead.device, "event");
    for (int i = 0; i < graphLaunches && st.isOk(); ++i)
      st = cudaStep(cudaGraphLaunch(exec.value(), lead.stream), lead.device, "graph launch");
    if (st.isOk()) st = cudaStep(cudaEventRecord(lead.stop, lead.stream), lead.device, "event");
    if (st.isOk()) st = cudaStep(cudaStreamSynchronize(lead.stream), lead.device, "graph replay");
    float ms = 0;
    if (st.isOk()) st = cudaStep(cudaEventElapsedTime(&ms, lead.start, lead.stop), lead.device, "elapsed time");
    cudaGraphExecDestroy(exec.value());
    if (!st.isOk()) return st;
    return ms / 1000.0 / (static_cast<double>(graphLaunches) * iters);
  }
  for (int i = 0; i < warmup; ++i) GPUPEER_RETURN_IF_ERROR(launch(b.send, b.recv));
  // The warm-up drains before the timed window starts. Left queued, a backlog of warm-up work
  // hid the host's time to enqueue: small all-reduces on 2x H200 took 3.2-3.6 us per operation
  // in windows that started behind a backlog and 6-9 us in the others, while the host enqueued
  // one every 6-9 us in both (176d235:bench/results/2026-11-22-h200x2-s8/8-eager).
  GPUPEER_RETURN_IF_ERROR(syncRanks(ranks));
  for (CollRank& r : ranks) {
    cudaSetDevice(r.device);
    GPUPEER_RETURN_IF_ERROR(cudaStep(cudaEventRecord(r.start, r.stream), r.device, "event"));
  }
  // The host's time to enqueue the window: where it is longer than the GPUs' time per
  // operation, the window measures the host, not the collective (GPUPEER_DEBUG=info says).
  const auto enqueueStart = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) GPUPEER_RETURN_IF_ERROR(launch(b.send, b.recv));
  const double enqueued = std::chrono::duration<double>(std::chrono::steady_clock::now() - enqueueStart).count();
  for (CollRank& r : ranks) {
    cudaSetDevice(r.device);
    GPUPEER_RETURN_IF_ERROR(cudaStep(cudaEventRecord(r.stop, r.stream), r.device, "event"));
  }
  double worst = 0;
  for (CollRank& r : ranks) {
    cudaSetDevice(r.device);
    GPUPEER_RETURN_IF_ERROR(cudaStep(cudaStreamSynchronize(r.stream), r.device, "synchronize"));
    float ms = 0;
    GPUPEER_RETURN_IF_ERROR(cudaStep(cudaEventElapsedTime(&ms, r.start, r.stop), r.device, "elapsed time"));
    worst = std::max(worst, ms / 1000.0 / iters);
  }
  GPUPEER_INFO(
      "eager window of {} operations: the host enqueued one every {:.2f} us, the slowest GPU took {:.2f} us "
      "per operation",
      iters, enqueued * 1e6 / iters, worst * 1e6);
  return worst;
}

Status uploadInputs(std::vector<CollRank>& ranks, const CollBuffers& b,
                    const std::vector<std::vector<std::uint8_t>>& in) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    cudaSetDevice(ranks[r].device);
    GPUPEER_RETURN_IF_ERROR(
        cudaStep(cudaMemcpy(const_cast<void*>(b.send[r]), in[r].data(), in[r].size(), cudaMemcpyHostToDevice),
                 ranks[r].device, "upload input"));
    // cudaMemcpy from pageable memory may return before its DMA ends, and the operations run on
    // non-blocking streams: wait for the upload.
    GPUPEER_RETURN_IF_ERROR(cudaStep(cudaDeviceSynchronize(), ranks[r].device, "upload input"));
  }
  return Status::ok();
}

Result<std::size_t> countWrong(std::vector<CollRank>& ranks, const CollBuffers& b, CollOp op, DataType type,
                               RedOp redop, int root, std::size_t count,
                               const std::vector<std::vector<std::uint8_t>>& inputs) {
  const int n = static_cast<int>(ranks.size());
  std::vector<const void*> in;
  for (const auto& v : inputs) in.push_back(v.data());
  const std::size_t bytes = collectiveOutputElements(op, count, n) * dataTypeSize(type);
  const bool reduction = op == CollOp::kAllReduce;  // the others' outputs differ by rank
  std::size_t wrong = 0;
  std::vector<std::uint8_t> first, got(bytes);
  for (int r = 0; r < n; ++r) {
    if (op == CollOp::kReduce && r != root) continue;
    cudaSetDevice(ranks[r].device);
    GPUPEER_RETURN_IF_ERROR(
        cudaStep(cudaMemcpy(got.data(), b.recv[r], bytes, cudaMemcpyDeviceToHost), ranks[r].device, "download result"));
    wrong += checkCollective(op, type, redop, root, in, r, got.data(), count).wrong;
    if (reduction) {
      if (first.empty())
        first = got;
      else if (first != got)
        ++wrong;
    }
  }
  return wrong;
}

}  // namespace gpupeer::cli
