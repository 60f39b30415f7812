// The copy-engine algorithm: copy engines carry every byte between GPUs (the fastest mover
// on NVLink: ~394 GB/s per direction against ~376 for SM stores), each rank's copies on a side
// stream so they overlap the local reduction of the previous chunk on the rank's own stream.
// All ordering is enqueued on the streams (RankSignals, events), so the same code runs eagerly
// and inside a CUDA graph.
#include <fmt/format.h>

#include <algorithm>

#include "comm/ce_plan.hpp"
#include "comm/communicator_impl.hpp"
#include "cuda/cuda_status.hpp"
#include "cuda/one_shot_kernels.cuh"

namespace gpupeer {
namespace {

// Without P2P (or with GPUPEER_CE_SYNC=streams), all-reduce, reduce-scatter, reduce: chunk j
// of every sender's contribution is copied into the receiver's scratch (the sender's slot, position j mod positions);
// once it has landed the receiver reduces it into its output while the next chunks are on the wire. A sender reuses a
// position only after the receiver has reduced what it held (signal "freed"): a crossing between GPUs costs ~20 us, so
// positions are many enough that messages up to a slot never wait for one, and larger ones use chunks long enough to
// hide the wait.
Status reducing(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  const std::size_t es = dataTypeSize(q.type);
  const std::size_t slotBytes = c.options.ceSlotBytes;
  // Whole chunks only: each extra chunk costs crossings here (ce_plan.hpp).
  const CePlan plan = planCeChunks(q.count, es, slotBytes, c.ceChunks, false);
  const std::size_t chunks = plan.chunks.size();
  const std::size_t positions = plan.positions;
  auto receives = [&](int d) { return q.op != CollOp::kReduce || d == q.root; };
  auto sourceOffset = [&](int d) { return q.op == CollOp::kReduceScatter ? d * q.count : 0; };
  auto slotOf = [&](int d, int sender, std::size_t j) {
    return at(c.ranks[d].ceScratch.get(), sender * slotBytes + plan.chunks[j].position * plan.chunkElements * es);
  };
  GPUPEER_RETURN_IF_ERROR(beginSideStreams(c, q));
  for (std::size_t j = 0; j < chunks; ++j) {
    const std::size_t first = plan.chunks[j].first, len = plan.chunks[j].len;
    const int slot = plan.chunks[j].position;
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
      if (j + positions < chunks)
        for (int r = 0; r < n; ++r)
          if (r != d) GPUPEER_RETURN_IF_ERROR(c.signals.post(d, q.streams[d], r, freedFlag(slot)));
    }
  }
  // Peers wrote only into scratch, and every chunk was awaited before its reduction. A reduce
  // still ends with every rank hearing from every peer's side stream: a rank that is not the
  // root waits for no peer above, so without it it could post the next operation's arrival
  // before a peer's side stream consumed this one's (a flag written twice is read once: with
  // GPUPEER_CE_SIGNALS=flags the next operation would wait forever).
  return endSideStreams(c, q, q.op == CollOp::kReduce);
}

// Without P2P (or with GPUPEER_CE_SYNC=streams), all-gather, broadcast, alltoall, send/recv:
// plain copies, straight into the receivers' outputs; a rank's copy to itself runs on its own
// stream, beside the side stream's.
Status copying(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  const std::size_t es = dataTypeSize(q.type), bytes = q.count * es;
  GPUPEER_RETURN_IF_ERROR(beginSideStreams(c, q));
  for (int r = 0; r < n; ++r) {
    const int dev = c.devices[r];
    GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
    auto send = [&](int d, const void* src, void* dst) {
      return copyBetween(c, r, d, dst, src, bytes, d == r ? q.streams[r] : c.ranks[r].copyStream.get());
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

// With P2P, all-reduce, reduce-scatter, reduce: every receiver pulls chunk j of each peer's
// contribution into its own scratch with its own copy engine (side stream) and reduces it on
// its stream while the next chunks are copied. Landing and freeing a position are then events
// on one GPU, and the only waits between GPUs are the meetings at the start (inputs written)
// and the end (nobody still reads them): on 2x H200 an event awaited across GPUs cost ~10-20 us
// each, at the start, at the end and wherever a position was refilled.
Status reducingPulled(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  const std::size_t es = dataTypeSize(q.type);
  const std::size_t slotBytes = c.options.ceSlotBytes;
  const CePlan plan = planCeChunks(q.count, es, slotBytes, c.ceChunks, c.ceShrinkTail);
  const std::size_t positions = plan.positions;
  auto receives = [&](int d) { return q.op != CollOp::kReduce || d == q.root; };
  auto sourceOffset = [&](int d) { return q.op == CollOp::kReduceScatter ? d * q.count : 0; };
  auto slotOf = [&](int d, int sender, int position) {
    return at(c.ranks[d].ceScratch.get(), sender * slotBytes + position * plan.chunkElements * es);
  };
  // In place, an all-reduce's output is the input its peers copy: a rank reduces chunk j only
  // after every peer's copy of it (the one signal between GPUs per chunk, there only).
  // Reduce-scatter writes the one share no peer reads; reduce's root is read by nobody.
  bool readBack = false;
  for (int r = 0; r < n; ++r) readBack = readBack || (q.op == CollOp::kAllReduce && isInPlace(q, r));
  GPUPEER_RETURN_IF_ERROR(runMeet(c, q));
  for (int d = 0; d < n; ++d) {
    if (!receives(d)) continue;
    GPUPEER_CUDA_CHECK(c.devices[d], cudaSetDevice(c.devices[d]));
    GPUPEER_CUDA_CHECK(c.devices[d], cudaEventRecord(c.ranks[d].start.get(), q.streams[d]));
    GPUPEER_CUDA_CHECK(c.devices[d], cudaStreamWaitEvent(c.ranks[d].copyStream.get(), c.ranks[d].start.get(), 0));
  }
  for (std::size_t j = 0; j < plan.chunks.size(); ++j) {
    const CeChunk& chunk = plan.chunks[j];
    for (int d = 0; d < n; ++d) {
      if (!receives(d)) continue;
      const int dev = c.devices[d];
      Communicator::Impl::Rank& rank = c.ranks[d];
      cudaStream_t side = rank.copyStream.get();
      GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
      if (j >= positions) GPUPEER_CUDA_CHECK(dev, cudaStreamWaitEvent(side, rank.reduced[chunk.position].get(), 0));
      // Receiver d reads d+1, d+2, ... in turn: at each turn every GPU is read by one peer.
      for (int k = 1; k < n; ++k) {
        const int r = (d + k) % n;
        GPUPEER_CUDA_CHECK(
            dev, cudaMemcpyAsync(slotOf(d, r, chunk.position), at(q.send[r], (sourceOffset(d) + chunk.first) * es),
                                 chunk.len * es, cudaMemcpyDefault, side));
      }
      GPUPEER_CUDA_CHECK(dev, cudaEventRecord(rank.copied[chunk.position].get(), side));
      if (readBack)
        for (int r = 0; r < n; ++r)
          if (r != d) GPUPEER_RETURN_IF_ERROR(c.signals.post(d, side, r, kLanded + chunk.position));
    }
    for (int d = 0; d < n; ++d) {
      if (!receives(d)) continue;
      const int dev = c.devices[d];
      Communicator::Impl::Rank& rank = c.ranks[d];
      GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
      GPUPEER_CUDA_CHECK(dev, cudaStreamWaitEvent(q.streams[d], rank.copied[chunk.position].get(), 0));
      ReduceSources sources;
      sources.n = n;
      for (int r = 0; r < n; ++r) {
        if (readBack && r != d) GPUPEER_RETURN_IF_ERROR(c.signals.wait(d, q.streams[d], r, kLanded + chunk.position));
        sources.src[r] = r == d ? at(q.send[d], (sourceOffset(d) + chunk.first) * es) : slotOf(d, r, chunk.position);
      }
      GPUPEER_CUDA_CHECK(
          dev, launchLocalReduce(sources, at(q.recv[d], chunk.first * es), chunk.len, q.type, q.redop, q.streams[d]));
      if (j + positions < plan.chunks.size())
        GPUPEER_CUDA_CHECK(dev, cudaEventRecord(rank.reduced[chunk.position].get(), q.streams[d]));
    }
  }
  for (int d = 0; d < n; ++d) {
    if (!receives(d)) continue;
    GPUPEER_CUDA_CHECK(c.devices[d], cudaSetDevice(c.devices[d]));
    GPUPEER_CUDA_CHECK(c.devices[d], cudaEventRecord(c.ranks[d].copiesDone.get(), c.ranks[d].copyStream.get()));
    GPUPEER_CUDA_CHECK(c.devices[d], cudaStreamWaitEvent(q.streams[d], c.ranks[d].copiesDone.get(), 0));
  }
  return runMeet(c, q);
}

// With P2P, all-gather, broadcast, alltoall, send/recv: every receiver pulls what it needs
// from each peer with its own copy engine on its own stream, between two meetings; a rank's
// copy of its own share runs beside them on its side stream.
Status copyingPulled(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  const std::size_t es = dataTypeSize(q.type), bytes = q.count * es;
  // Where rank d's output takes rank r's data from (null: nothing).
  auto source = [&](int d, int r) -> const void* {
    switch (q.op) {
      case CollOp::kAllGather: return q.send[r];
      case CollOp::kAllToAll: return at(q.send[r], d * bytes);
      case CollOp::kBroadcast: return r == q.root ? q.send[r] : nullptr;
      case CollOp::kSendRecv: return d == (r + 1) % n ? q.send[r] : nullptr;
      default: return nullptr;
    }
  };
  auto destination = [&](int d, int r) {
    return q.op == CollOp::kAllGather || q.op == CollOp::kAllToAll ? at(q.recv[d], r * bytes) : q.recv[d];
  };
  if (q.op != CollOp::kAllGather && q.op != CollOp::kAllToAll && q.op != CollOp::kBroadcast &&
      q.op != CollOp::kSendRecv)
    return GPUPEER_ERROR(ErrorCode::kInternal, "not a copying collective");
  GPUPEER_RETURN_IF_ERROR(runMeet(c, q));
  std::vector<bool> joined(n, false);
  for (int d = 0; d < n; ++d) {
    const int dev = c.devices[d];
    Communicator::Impl::Rank& rank = c.ranks[d];
    GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
    if (const void* own = source(d, d); own && own != destination(d, d)) {
      cudaStream_t side = rank.copyStream.get();
      GPUPEER_CUDA_CHECK(dev, cudaEventRecord(rank.start.get(), q.streams[d]));
      GPUPEER_CUDA_CHECK(dev, cudaStreamWaitEvent(side, rank.start.get(), 0));
      GPUPEER_CUDA_CHECK(dev, cudaMemcpyAsync(destination(d, d), own, bytes, cudaMemcpyDefault, side));
      GPUPEER_CUDA_CHECK(dev, cudaEventRecord(rank.copiesDone.get(), side));
      joined[d] = true;
    }
    for (int k = 1; k < n; ++k) {
      const int r = (d + k) % n;  // staggered, as in reducingPulled
      if (const void* from = source(d, r))
        GPUPEER_CUDA_CHECK(dev, cudaMemcpyAsync(destination(d, r), from, bytes, cudaMemcpyDefault, q.streams[d]));
    }
    if (joined[d]) GPUPEER_CUDA_CHECK(dev, cudaStreamWaitEvent(q.streams[d], rank.copiesDone.get(), 0));
  }
  return runMeet(c, q);
}

}  // namespace

Status copyBetween(Communicator::Impl& c, int from, int to, void* dst, const void* src, std::size_t bytes,
                   cudaStream_t stream) {
  if (bytes == 0 || dst == src) return Status::ok();
  const int device = c.devices[from];
  // The pipeline wins from 8 MiB a copy; below, CUDA's own staging does (2x H200, 4 MiB
  // copies: all-reduce of 16 MiB 719 against 630 us; 8 MiB copies: all-gather of 16 MiB 267
  // against 288 us; bench/results/2026-11-22-h200x4-s5-ring).
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
  // The meetings need P2P (flags in peer memory); without it the streams order themselves.
  const bool pulled = c.p2p && c.ceMeetings;
  switch (q.op) {
    case CollOp::kAllReduce:
    case CollOp::kReduceScatter:
    case CollOp::kReduce: return pulled ? reducingPulled(c, q) : reducing(c, q);
    default: return pulled ? copyingPulled(c, q) : copying(c, q);
  }
}

}  // namespace gpupeer
