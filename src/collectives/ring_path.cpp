// The ring on the GPUs: the schedule of ring_plan.cpp enqueued on each rank's own stream and
// side stream, with RankSignals between ranks and the copies between ranks by copy engine (or,
// without P2P, host staging). All ordering is on the streams, so it runs eagerly and inside a
// CUDA graph.
#include <vector>

#include "collectives/communicator_impl.hpp"
#include "collectives/one_shot_kernels.cuh"
#include "collectives/ring_plan.hpp"
#include "cuda/cuda_status.hpp"

namespace gpupeer {
namespace {

void* resolve(Communicator::Impl& c, const CollRequest& q, const RingPlace& p) {
  switch (p.buffer) {
    case RingBuffer::kSend: return at(const_cast<void*>(q.send[p.rank]), p.byte);
    case RingBuffer::kRecv: return at(q.recv[p.rank], p.byte);
    case RingBuffer::kScratch: return at(c.ranks[p.rank].ceScratch.get(), p.byte);
  }
  return nullptr;
}

Status enqueue(Communicator::Impl& c, const CollRequest& q, const RingStep& s) {
  const int dev = c.devices[s.rank];
  GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
  cudaStream_t stream = s.side ? c.ranks[s.rank].copyStream.get() : q.streams[s.rank];
  const std::size_t es = dataTypeSize(q.type);
  switch (s.action) {
    case RingAction::kWait: return c.signals.wait(s.rank, stream, s.peer, s.flag);
    case RingAction::kPost: return c.signals.post(s.rank, stream, s.peer, s.flag);
    case RingAction::kCopy:
      return copyBetween(c, s.rank, s.dst.rank, resolve(c, q, s.dst), resolve(c, q, s.src), s.elements * es, stream);
    case RingAction::kReduce: {
      ReduceSources sources;
      sources.n = 2;
      sources.src[0] = resolve(c, q, s.src);
      sources.src[1] = resolve(c, q, s.mine);
      // Partial results are plain sums; the last rank of a leg divides an average by n.
      RedOp op = q.redop;
      if (s.last)
        sources.avgOver = c.n();
      else if (op == RedOp::kAvg)
        op = RedOp::kSum;
      GPUPEER_CUDA_CHECK(dev, launchLocalReduce(sources, resolve(c, q, s.dst), s.elements, q.type, op, stream));
      return Status::ok();
    }
    case RingAction::kHandOff:
      GPUPEER_CUDA_CHECK(dev, cudaEventRecord(c.ranks[s.rank].copied[s.flag].get(), stream));
      return Status::ok();
    case RingAction::kTakeOver:
      GPUPEER_CUDA_CHECK(dev, cudaStreamWaitEvent(stream, c.ranks[s.rank].copied[s.flag].get(), 0));
      return Status::ok();
  }
  return GPUPEER_ERROR(ErrorCode::kInternal, "unknown ring step");
}

}  // namespace

Status runRing(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  const std::size_t es = dataTypeSize(q.type);
  Result<std::vector<RingPhase>> phases = ringPhases(q.op, n, q.count, q.root);
  if (!phases.isOk()) return phases.status();
  for (const RingPhase& phase : phases.value()) {
    if (phase.legs.empty()) continue;
    // One leg fills the chain chunk by chunk: smaller chunks start its far end sooner. With a
    // leg from every rank each link is busy from the start and every chunk only adds
    // signalling (4x H200, graphs, 512 MiB: reduce-scatter 1425 us in 32 MiB chunks, 1719 in
    // 8 MiB; 128 MiB in one chunk per leg 392 us, in four 454).
    const std::size_t target = phase.legs.size() == 1 ? c.options.ringChunkBytes : c.options.ringSpreadChunkBytes;
    Result<RingPlan> plan = planRing(n, phase, es, target, c.ranks[0].ceScratch.size());
    if (!plan.isOk()) return plan.status();
    // Side streams start after every rank has arrived; every rank's stream ends after every
    // peer's side stream (the last hop's receivers wait for nothing else).
    GPUPEER_RETURN_IF_ERROR(beginSideStreams(c, q));
    // The own parts beside the side streams: enqueued before them, the root's copy held a
    // broadcast back (4x H200, 512 MiB: 1944 us out of place against 1702 in place).
    if (!phase.readsOutput)
      for (const RingStep& own : ringOwnCopies(q.op, n, q.count, q.root, es))
        GPUPEER_RETURN_IF_ERROR(enqueue(c, q, own));
    for (const RingStep& s : plan.value().steps) GPUPEER_RETURN_IF_ERROR(enqueue(c, q, s));
    GPUPEER_RETURN_IF_ERROR(endSideStreams(c, q, true));
  }
  return Status::ok();
}

}  // namespace gpupeer
