// The copy-engine algorithm: copy engines carry every byte between GPUs (the fastest mover
// on NVLink: ~394 GB/s per direction against ~376 for SM stores), each rank's copies on a side
// stream so they overlap the local reduction of the previous chunk on the rank's own stream.
// All ordering is enqueued on the streams (RankSignals, events), so the same code runs eagerly
// and inside a CUDA graph.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "collectives/ce_chunks.hpp"
#include "collectives/communicator_impl.hpp"
#include "collectives/one_shot_kernels.cuh"
#include "cuda/cuda_status.hpp"
#include "ranks/call_signature.hpp"

namespace gpupeer {
namespace {

// The room each sender has in a receiver's scratch. In one process, the copy-engine scratch
// (ceSlotBytes per sender). Across processes, where that scratch is not allocated, the sender's
// two one-shot slots (2 x oneShotSlotBytes, two slots apart), which no other operation uses
// while a copy-engine one runs: it begins when every rank has arrived and ends with a barrier.
std::size_t ceRoomBytes(const Communicator::Impl& c) {
  return c.allRanksLocal() ? c.options.ceSlotBytes : 2 * c.options.oneShotSlotBytes;
}

// How many chunk positions of `positionBytes` the room holds (across processes the positions
// alternate between the two slots, so each slot holds half of them whole).
std::size_t cePositionsFitting(const Communicator::Impl& c, std::size_t positionBytes) {
  if (c.allRanksLocal()) return ceRoomBytes(c) / positionBytes;
  return 2 * (c.options.oneShotSlotBytes / positionBytes);
}

// Position p of sender s in receiver d's scratch.
char* cePosition(const Communicator::Impl& c, int d, int s, std::size_t p, std::size_t positionBytes) {
  if (c.allRanksLocal()) return at(c.ranks[d].ceScratch.get(), s * c.options.ceSlotBytes + p * positionBytes);
  const std::size_t parity = p % 2;
  return at(c.views[d].scratch, (parity * c.n() + s) * c.options.oneShotSlotBytes + (p / 2) * positionBytes);
}

// Every other rank's `flag`, to be awaited by `self`.
std::vector<RankSignals::Awaited> fromPeers(const Communicator::Impl& c, int self, int flag) {
  std::vector<RankSignals::Awaited> awaited;
  for (int r = 0; r < c.n(); ++r)
    if (r != self) awaited.push_back({r, flag});
  return awaited;
}

// `flag` to every other rank.
std::vector<RankSignals::Posted> toPeers(const Communicator::Impl& c, int self, int flag) {
  std::vector<RankSignals::Posted> posted;
  for (int r = 0; r < c.n(); ++r)
    if (r != self) posted.push_back({r, flag});
  return posted;
}

// all-reduce, reduce-scatter, reduce: chunk j of every sender's contribution is copied into
// the receiver's scratch (the sender's room, position j mod positions); once it has landed the
// receiver reduces it into its output while the next chunks are on the wire. A sender reuses
// a position only after the receiver has reduced what it held (signal "freed", posted as the
// next chunk begins): a crossing between GPUs costs ~20 us, so positions are many enough that
// messages up to a slot never wait for one, and larger ones use chunks long enough to hide the
// wait. Only the ranks this process drives are enqueued; across processes the peers' scratch
// is their mapped one, and a side stream never waits for a peer (RankSignals): the rank's own
// stream takes, at chunk j, also the "freed" signals that the side stream's copy of chunk
// j + positions - 1 needs, and hands them on with an event.
Status reducing(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  const bool acrossProcesses = c.signals.inMemory();
  const std::size_t es = dataTypeSize(q.type);
  const CeChunkPlan plan = planCeChunks(q.count, es, ceRoomBytes(c));
  const std::size_t chunkBytes = plan.positionBytes, chunk = plan.chunkElements;
  const std::size_t positions = std::min(plan.positions, cePositionsFitting(c, chunkBytes));
  // A chunk's "freed" signals are posted and handed on at a later chunk than the one whose
  // copies wait for them were enqueued at: a wait enqueued first would take an older record.
  if (positions < 2) return GPUPEER_ERROR(ErrorCode::kInternal, fmt::format("{} copy-engine positions", positions));
  auto receives = [&](int d) { return q.op != CollOp::kReduce || d == q.root; };
  auto sourceOffset = [&](int d) { return q.op == CollOp::kReduceScatter ? d * q.count : 0; };
  auto slotOf = [&](int d, int sender, std::size_t j) { return cePosition(c, d, sender, j % positions, chunkBytes); };
  GPUPEER_RETURN_IF_ERROR(beginSideStreams(c, q));
  for (std::size_t j = 0; j < plan.chunks; ++j) {
    const std::size_t first = j * chunk, len = std::min(chunk, q.count - first);
    const int slot = static_cast<int>(j % positions);
    for (int r : c.local) {
      const int dev = c.devices[r];
      cudaStream_t side = c.ranks[r].copyStream.get();
      GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
      if (acrossProcesses && j >= positions)
        GPUPEER_CUDA_CHECK(dev, cudaStreamWaitEvent(side, c.ranks[r].freed[slot].get(), 0));
      // Rank r serves r+1, r+2, ... in turn: each GPU then receives from one peer at a time.
      // In rank order every sender started with GPU0, whose one inbound port (~400 GB/s
      // through an NVSwitch) they shared while the other GPUs' ports idled.
      for (int k = 1; k < n; ++k) {
        const int d = (r + k) % n;
        if (!receives(d)) continue;
        if (!acrossProcesses && j >= positions) GPUPEER_RETURN_IF_ERROR(c.signals.wait(r, side, d, freedFlag(slot)));
        GPUPEER_RETURN_IF_ERROR(
            copyBetween(c, r, d, slotOf(d, r, j), at(q.send[r], (sourceOffset(d) + first) * es), len * es, side));
        if (!acrossProcesses) GPUPEER_RETURN_IF_ERROR(c.signals.post(r, side, d, kLanded + slot));
      }
      GPUPEER_CUDA_CHECK(dev, cudaEventRecord(c.ranks[r].copied[slot].get(), side));
      if (acrossProcesses) {
        cudaStream_t posting = c.ranks[r].postStream.get();
        GPUPEER_CUDA_CHECK(dev, cudaStreamWaitEvent(posting, c.ranks[r].copied[slot].get(), 0));
        for (int k = 1; k < n; ++k)
          if (const int d = (r + k) % n; receives(d))
            GPUPEER_RETURN_IF_ERROR(c.signals.post(r, posting, d, kLanded + slot));
      }
    }
    for (int d : c.local) {
      const int dev = c.devices[d];
      GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
      // The previous chunk's position is free again where a later chunk will refill it.
      std::vector<RankSignals::Posted> posts;
      if (j >= 1 && receives(d) && j - 1 + positions < plan.chunks)
        posts = toPeers(c, d, freedFlag(static_cast<int>((j - 1) % positions)));
      // The peers' chunks first, then its own copies: in place, its output overwrites what
      // they read.
      std::vector<RankSignals::Awaited> waits;
      if (receives(d)) waits = fromPeers(c, d, kLanded + slot);
      const std::size_t ahead = j + positions - 1;
      const bool freesAhead = acrossProcesses && j >= 1 && ahead < plan.chunks;
      if (freesAhead)
        for (int e = 0; e < n; ++e)
          if (e != d && receives(e)) waits.push_back({e, freedFlag(static_cast<int>(ahead % positions))});
      GPUPEER_RETURN_IF_ERROR(c.signals.exchange(d, q.streams[d], posts, waits));
      if (freesAhead) GPUPEER_CUDA_CHECK(dev, cudaEventRecord(c.ranks[d].freed[ahead % positions].get(), q.streams[d]));
      if (!receives(d)) continue;
      GPUPEER_CUDA_CHECK(dev, cudaStreamWaitEvent(q.streams[d], c.ranks[d].copied[slot].get(), 0));
      ReduceSources sources;
      sources.n = n;
      for (int r = 0; r < n; ++r)
        sources.src[r] = r == d ? at(q.send[d], (sourceOffset(d) + first) * es) : slotOf(d, r, j);
      GPUPEER_CUDA_CHECK(dev,
                         launchLocalReduce(sources, at(q.recv[d], first * es), len, q.type, q.redop, q.streams[d]));
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
// operation may still be using. Across processes the rank's own stream waits for the peers
// (bounded) and the side stream for it: every later signal of a rank to a peer is then posted
// after the peer took the same signal of the previous operation, so no signal overwrites one
// not yet taken.
Status beginSideStreams(Communicator::Impl& c, const CollRequest& q) {
  const bool acrossProcesses = c.signals.inMemory();
  for (int r : c.local) {
    const int d = c.devices[r];
    GPUPEER_CUDA_CHECK(d, cudaSetDevice(d));
    if (acrossProcesses) {
      // The arrival carries the call, so that a peer with another call is reported rather
      // than copied into shaped for this one.
      const CallSignature call = callSignatureOf(q.op, q.type, q.redop, q.root, q.count);
      std::vector<RankSignals::Posted> posts;
      for (int k = 0; k < c.n(); ++k)
        if (k != r) {
          posts.push_back({k, kArriveCall, call.word1});
          posts.push_back({k, kArrive, call.word0});
        }
      const RankSignals::ExpectedCall expected{call.word0, call.word1, kArriveCall};
      GPUPEER_RETURN_IF_ERROR(c.signals.exchange(r, q.streams[r], posts, fromPeers(c, r, kArrive), &expected));
    } else {
      for (int k = 0; k < c.n(); ++k)
        if (k != r) GPUPEER_RETURN_IF_ERROR(c.signals.post(r, q.streams[r], k, kArrive));
    }
    GPUPEER_CUDA_CHECK(d, cudaEventRecord(c.ranks[r].start.get(), q.streams[r]));
    GPUPEER_CUDA_CHECK(d, cudaStreamWaitEvent(c.ranks[r].copyStream.get(), c.ranks[r].start.get(), 0));
    if (acrossProcesses)
      GPUPEER_CUDA_CHECK(d, cudaStreamWaitEvent(c.ranks[r].postStream.get(), c.ranks[r].start.get(), 0));
  }
  if (acrossProcesses) return Status::ok();
  for (int r : c.local) {
    GPUPEER_CUDA_CHECK(c.devices[r], cudaSetDevice(c.devices[r]));
    for (int k = 0; k < c.n(); ++k)
      if (k != r) GPUPEER_RETURN_IF_ERROR(c.signals.wait(r, c.ranks[r].copyStream.get(), k, kArrive));
  }
  return Status::ok();
}

// Each rank's stream continues after its own side stream's copies (which read its buffers)
// and, when `awaitPeers`, after every peer's side stream (its copies into this rank's
// buffers). The side streams rejoin the rank's streams here, as a graph capture requires.
// Across processes every rank's stream meets every peer's first (bounded): the peers have then
// reduced everything this rank copied into their scratch, which the one-shot kernels use next.
Status endSideStreams(Communicator::Impl& c, const CollRequest& q, bool awaitPeers) {
  if (c.signals.inMemory()) {
    for (int r : c.local) {
      GPUPEER_CUDA_CHECK(c.devices[r], cudaSetDevice(c.devices[r]));
      GPUPEER_RETURN_IF_ERROR(c.signals.exchange(r, q.streams[r], toPeers(c, r, kDone), fromPeers(c, r, kDone)));
      GPUPEER_CUDA_CHECK(c.devices[r], cudaEventRecord(c.ranks[r].copiesDone.get(), c.ranks[r].copyStream.get()));
      GPUPEER_CUDA_CHECK(c.devices[r], cudaStreamWaitEvent(q.streams[r], c.ranks[r].copiesDone.get(), 0));
      GPUPEER_CUDA_CHECK(c.devices[r], cudaEventRecord(c.ranks[r].postsDone.get(), c.ranks[r].postStream.get()));
      GPUPEER_CUDA_CHECK(c.devices[r], cudaStreamWaitEvent(q.streams[r], c.ranks[r].postsDone.get(), 0));
    }
    return Status::ok();
  }
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
