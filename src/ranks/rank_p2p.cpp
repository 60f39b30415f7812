// Point-to-point calls of a RankCommunicator: send and recv, alone or collected between
// groupStart and groupEnd, run by the point-to-point kernel (ranks/p2p_kernels.cuh).

#include <fmt/format.h>

#include "cuda/cuda_status.hpp"
#include "ranks/rank_communicator_impl.hpp"

namespace gpupeer {
namespace {

Status addTask(RankCommunicator::Impl& c, bool send, void* buffer, std::size_t count, DataType type, int peer,
               cudaStream_t stream) {
  if (c.aborted.load()) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "the communicator was aborted");
  GPUPEER_RETURN_IF_ERROR(c.failure);
  const char* what = send ? "send" : "recv";
  if (peer < 0 || peer >= c.n())
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("rank {}: {} with peer {}, not a rank (0 to {})", c.rank, what, peer, c.n() - 1));
  const std::size_t bytes = count * dataTypeSize(type);
  if (bytes > 0) GPUPEER_RETURN_IF_ERROR(checkBuffer(buffer, bytes, c.device, c.rank, what));
  if (c.groupDepth > 0) {
    if (!c.group.empty() && stream != c.groupStream)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("rank {}: the sends and receives of one group must use one stream", c.rank));
    c.groupStream = stream;
    if (bytes > 0) c.group.push_back({send, peer, buffer, bytes});
    return Status::ok();
  }
  if (bytes == 0) return Status::ok();
  return launchP2pTasks(c, {{send, peer, buffer, bytes}}, stream);
}

}  // namespace

Status launchP2pTasks(RankCommunicator::Impl& c, const std::vector<P2pTask>& tasks, cudaStream_t stream) {
  if (c.n() == 1) {
    // One rank: a send to itself meets the receive from itself in order.
    std::vector<const P2pTask*> sends, recvs;
    for (const P2pTask& t : tasks) (t.send ? sends : recvs).push_back(&t);
    if (sends.size() != recvs.size())
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           "rank 0 of 1: a send to itself needs a receive from itself in the same group");
    for (std::size_t i = 0; i < sends.size(); ++i) {
      if (sends[i]->bytes != recvs[i]->bytes)
        return GPUPEER_ERROR(
            ErrorCode::kInvalidArgument,
            fmt::format("rank 0 of 1: sends {} bytes to itself and receives {}", sends[i]->bytes, recvs[i]->bytes));
      GPUPEER_CUDA_CHECK(c.device, cudaMemcpyAsync(recvs[i]->buffer, sends[i]->buffer, sends[i]->bytes,
                                                   cudaMemcpyDeviceToDevice, stream));
    }
    return Status::ok();
  }
  // Each kernel takes at most one send to and one receive from each peer (their counts are
  // per pair); further ones go in later kernels, in call order, as the peer issues them.
  std::vector<bool> done(tasks.size(), false);
  for (std::size_t left = tasks.size(); left > 0;) {
    P2pArgs a = c.p2p;
    std::vector<bool> sending(c.n(), false), receiving(c.n(), false);
    for (std::size_t i = 0; i < tasks.size() && a.taskCount < kMaxP2pTasks; ++i) {
      const P2pTask& t = tasks[i];
      std::vector<bool>& busy = t.send ? sending : receiving;
      if (done[i] || busy[t.peer]) continue;
      busy[t.peer] = true;
      a.tasks[a.taskCount++] = t;
      done[i] = true;
      --left;
    }
    GPUPEER_CUDA_CHECK(c.device, cudaSetDevice(c.device));
    GPUPEER_CUDA_CHECK(c.device, launchP2p(a, stream));
  }
  return Status::ok();
}

Status RankCommunicator::send(const void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream) {
  return addTask(*impl_, true, const_cast<void*>(buffer), count, type, peer, stream);
}

Status RankCommunicator::recv(void* buffer, std::size_t count, DataType type, int peer, cudaStream_t stream) {
  return addTask(*impl_, false, buffer, count, type, peer, stream);
}

Status RankCommunicator::groupStart() {
  ++impl_->groupDepth;
  return Status::ok();
}

Status RankCommunicator::groupEnd() {
  Impl& c = *impl_;
  if (c.groupDepth == 0)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("rank {}: groupEnd without groupStart", c.rank));
  if (--c.groupDepth > 0) return Status::ok();
  std::vector<P2pTask> tasks = std::move(c.group);
  c.group.clear();
  if (tasks.empty()) return Status::ok();
  int previous = 0;
  cudaGetDevice(&previous);
  Status st = launchP2pTasks(c, tasks, c.groupStream);
  cudaSetDevice(previous);
  return st;
}

}  // namespace gpupeer
