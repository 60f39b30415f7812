// The copy-engine algorithm: copy engines carry every byte between GPUs (the fastest mover
// on NVLink: ~394 GB/s per direction against ~376 for SM stores), each rank's copies on a side
// stream so they overlap the local reduction of the previous chunk on the rank's own stream.
// All ordering is enqueued on the streams (RankSignals, events), so the same code runs eagerly
// and inside a CUDA graph.
#include <fmt/format.h>

#include <algorithm>

#include "collectives/ce_chunks.hpp"
#include "collectives/communicator_impl.hpp"
#include "collectives/one_shot_kernels.cuh"
#include "cuda/cuda_status.hpp"

namespace gpupeer {
namespace {

// all-reduce, reduce-scatter, reduce: chunk j of every sender's contribution is copied into
// the receiver's scratch (the sender's slot, position j mod positions); once it has landed the
// receiver reduces it into its output while the next chunks are on the wire. A sender reuses
// a position only after the receiver has reduced what it held (signal "freed"): a crossing
// between GPUs costs ~20 us, so positions are many enough that messages up to a slot never
// wait for one, and larger ones use chunks long enough to hide the wait.
Status reducing(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  const std::size_t es = dataTypeSize(q.type);
  const std::size_t slotBytes = c.options.ceSlotBytes;
  const CeChunkPlan plan = planCeChunks(q.count, es, slotBytes);
  const std::size_t chunkBytes = plan.positionBytes, positions = plan.positions, chunk = plan.chunkElements;
  auto receives = [&](int d) { return q.op != CollOp::kReduce || d == q.root; };
  auto sourceOffset = [&](int d) { return q.op == CollOp::kReduceScatter ? d * q.count : 0; };
  auto slotOf = [&](int d, int sender, std::size_t j) {
    return at(c.ranks[d].ceScratch.get(), sender * slotBytes + (j % positions) * chunkBytes);
  };
  GPUPEER_RETURN_IF_ERROR(beginSideStreams(c, q));
  for (std::size_t j = 0; j < plan.chunks; ++j) {
    const std::size_t first = j * chunk, len = std::min(chunk, q.count - first);
    const int slot = static_cast<int>(j % positions);
    for (int r = 0; r < n; ++r) {
      const int dev = c.devices[r];
      cudaStream_t side = c.ranks[r].copyStream.get();
      GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
      // Rank r serves r+1, r+2, ... in turn: each GPU then receives from one peer at a time.
      // In rank order every sender started with GPU0, whose one inbound port (~400 GB/s
      // through an NVSwitch) they shared while the other GPUs' ports idled.
      for (int k = 1; k < n; ++k) {
        const int d = (r + k) % n;
        if (!receives(d)) continue;
        if (j >= positions) GPUPEER_RETURN_IF_ERROR(c.signals.wait(r, side, d, freedFlag(slot)));
        GPUPEER_RETURN_IF_ERROR(
            copyBetween(c, r, d, slotOf(d, r, j), at(q.send[r], (sourceOffset(d) + first) * es), len * es, side));
        GPUPEER_RETURN_IF_ERROR(c.signals.post(r, side, d, kLanded + slot));
      }
      GPUPEER_CUDA_CHECK(dev, cudaEventRecord(c.ranks[r].copied[slot].get(), side));
    }
    for (int d = 0; d < n; ++d) {
      if (!receives(d)) continue;
      const int dev = c.devices[d];
      GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
      // Its own copies too: in place, its output overwrites what they read.
      GPUPEER_CUDA_CHECK(dev, cudaStreamWaitEvent(q.streams[d], c.ranks[d].copied[slot].get(), 0));
      ReduceSources sources;
      sources.n = n;
      for (int r = 0; r < n; ++r) {
        if (r != d) GPUPEER_RETURN_IF_ERROR(c.signals.wait(d, q.streams[d], r, kLanded + slot));
        sources.src[r] = r == d ? at(q.send[d], (sourceOffset(d) + first) * es) : slotOf(d, r, j);
      }
      GPUPEER_CUDA_CHECK(dev,
                         launchLocalReduce(sources, at(q.recv[d], first * es), len, q.type, q.redop, q.streams[d]));
      // The senders wait for this before refilling the slot, so only for chunks that will.
      if (j + positions < plan.chunks)
        for (int r = 0; r < n; ++r)
          if (r != d) GPUPEER_RETURN_IF_ERROR(c.signals.post(d, q.streams[d], r, freedFlag(slot)));
    }
  }
  // Peers wrote only into scratch, and every chunk was awaited before its reduction. A reduce
  // still ends with every rank hearing from every peer's side stream: a rank that is not the
  // root waits for no peer above, so without it it could post the next operation's arrival
  // before a peer's side stream consumed this one's.
  return endSideStreams(c, q, q.op == CollOp::kReduce);
}

// all-gather, broadcast, alltoall, send/recv: plain copies, straight into the receivers'
// outputs; a rank's copy to itself runs on its own stream, beside the side stream's.
Status copying(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  const std::size_t es = dataTypeSize(q.type), bytes = q.count * es;
  GPUPEER_RETURN_IF_ERROR(beginSideStreams(c, q));
  for (int r = 0; r < n; ++r) {
    const int dev = c.devices[r];
    GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
    // A copy to a peer goes on the side stream of the rank whose engines carry it
    // (collectives/ce_issuer.hpp): rank r's own, or the receiver's, briefly current.
    const bool pulls = c.ceIssuer == CeIssuer::kReceiver && c.p2p;
    auto send = [&](int d, const void* src, void* dst) -> Status {
      if (d == r) return copyBetween(c, r, d, dst, src, bytes, q.streams[r]);
      if (!pulls) return copyBetween(c, r, d, dst, src, bytes, c.ranks[r].copyStream.get());
      GPUPEER_CUDA_CHECK(c.devices[d], cudaSetDevice(c.devices[d]));
      GPUPEER_RETURN_IF_ERROR(copyBetween(c, r, d, dst, src, bytes, c.ranks[d].copyStream.get()));
      GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
      return Status::ok();
    };
    for (int k = 0; k < n; ++k) {
      const int d = (r + k) % n;  // staggered: see reducing()
      switch (q.op) {
        case CollOp::kAllGather: GPUPEER_RETURN_IF_ERROR(send(d, q.send[r], at(q.recv[d], r * bytes))); break;
        case CollOp::kAllToAll:
          GPUPEER_RETURN_IF_ERROR(send(d, at(q.send[r], d * bytes), at(q.recv[d], r * bytes)));
          break;
        case CollOp::kBroadcast:
          if (r == q.root) GPUPEER_RETURN_IF_ERROR(send(d, q.send[r], q.recv[d]));
          break;
        case CollOp::kSendRecv:
          if (d == (r + 1) % n) GPUPEER_RETURN_IF_ERROR(send(d, q.send[r], q.recv[d]));
          break;
        default: return GPUPEER_ERROR(ErrorCode::kInternal, "not a copying collective");
      }
    }
  }
  return endSideStreams(c, q, true);
}

}  // namespace

Status copyBetween(Communicator::Impl& c, int from, int to, void* dst, const void* src, std::size_t bytes,
                   cudaStream_t stream) {
  if (bytes == 0 || dst == src) return Status::ok();
  const int device = c.devices[from];
  // The pipeline wins from 8 MiB a copy; below, CUDA's own staging does (docs/collectives.md,
  // without P2P).
  if (auto pipeline = c.staged.find({from, to}); pipeline != c.staged.end() && bytes >= kStagingMinBytes)
    return pipeline->second->enqueue(dst, src, bytes, stream, device);
  GPUPEER_CUDA_CHECK(device, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream));
  return Status::ok();
}

// Each rank's side stream starts after the rank's own stream reaches this operation and after
// every peer has arrived at it: no copy lands in a buffer (user or scratch) that the previous
// operation may still be using.
Status beginSideStreams(Communicator::Impl& c, const CollRequest& q) {
  for (int r = 0; r < c.n(); ++r) {
    const int d = c.devices[r];
    GPUPEER_CUDA_CHECK(d, cudaSetDevice(d));
    GPUPEER_CUDA_CHECK(d, cudaEventRecord(c.ranks[r].start.get(), q.streams[r]));
    GPUPEER_CUDA_CHECK(d, cudaStreamWaitEvent(c.ranks[r].copyStream.get(), c.ranks[r].start.get(), 0));
    for (int k = 0; k < c.n(); ++k)
      if (k != r) GPUPEER_RETURN_IF_ERROR(c.signals.post(r, q.streams[r], k, kArrive));
  }
  for (int r = 0; r < c.n(); ++r) {
    GPUPEER_CUDA_CHECK(c.devices[r], cudaSetDevice(c.devices[r]));
    for (int k = 0; k < c.n(); ++k)
      if (k != r) GPUPEER_RETURN_IF_ERROR(c.signals.wait(r, c.ranks[r].copyStream.get(), k, kArrive));
  }
  return Status::ok();
}

// Each rank's stream continues after its own side stream's copies (which read its buffers)
// and, when `awaitPeers`, after every peer's side stream (its copies into this rank's
// buffers). The side streams rejoin the rank's streams here, as a graph capture requires.
Status endSideStreams(Communicator::Impl& c, const CollRequest& q, bool awaitPeers) {
  for (int r = 0; r < c.n(); ++r) {
    const int d = c.devices[r];
    GPUPEER_CUDA_CHECK(d, cudaSetDevice(d));
    if (awaitPeers)
      for (int k = 0; k < c.n(); ++k)
        if (k != r) GPUPEER_RETURN_IF_ERROR(c.signals.post(r, c.ranks[r].copyStream.get(), k, kDone));
    GPUPEER_CUDA_CHECK(d, cudaEventRecord(c.ranks[r].copiesDone.get(), c.ranks[r].copyStream.get()));
    GPUPEER_CUDA_CHECK(d, cudaStreamWaitEvent(q.streams[r], c.ranks[r].copiesDone.get(), 0));
  }
  if (awaitPeers)
    for (int r = 0; r < c.n(); ++r) {
      GPUPEER_CUDA_CHECK(c.devices[r], cudaSetDevice(c.devices[r]));
      for (int k = 0; k < c.n(); ++k)
        if (k != r) GPUPEER_RETURN_IF_ERROR(c.signals.wait(r, q.streams[r], k, kDone));
    }
  return Status::ok();
}

Status runCopyEngine(Communicator::Impl& c, const CollRequest& q) {
  switch (q.op) {
    case CollOp::kAllReduce:
    case CollOp::kReduceScatter:
    case CollOp::kReduce: return reducing(c, q);
    default: return copying(c, q);
  }
}

}  // namespace gpupeer
