// The ring: every byte moves from rank r to rank r+1 (mod n) by copy engine, so it needs P2P
// (or anything faster than host staging) only between neighbours, and each GPU's one outbound
// and one inbound port carry the message once. The message goes in legs: a leg is a piece that
// starts at one rank and passes through the n-1 ranks after it, cut into chunks that follow
// each other down the ring, so that every hop works on a different chunk at once.
//
// * Copy legs (broadcast, all-gather): each rank forwards a chunk as soon as it has landed in
//   its own output. A broadcast is one leg from the root; an all-gather is one leg per rank.
// * Reduce legs (reduce, reduce-scatter): a chunk lands in the next rank's scratch, which adds
//   its own input to it and forwards the sum; the leg's last rank (the owner) writes the total
//   into its output. A reduce is one leg ending at the root; a reduce-scatter one per rank.
// * All-reduce: reduce legs for n segments, then copy legs that spread each owner's total.
//
// The order of the work is enqueued on the streams (RankSignals, events), as in the copy-engine
// algorithm, so it runs eagerly and inside a CUDA graph.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "comm/communicator_impl.hpp"
#include "cuda/cuda_status.hpp"
#include "cuda/one_shot_kernels.cuh"

namespace gpupeer {
namespace {

struct Leg {
  int first = 0;          ///< the rank it starts at; it ends at first + n - 1 (mod n)
  std::size_t from = 0;   ///< element offset of its data in the send buffers
  std::size_t to = 0;     ///< element offset in the receive buffers (copy legs: every rank's)
  std::size_t count = 0;  ///< elements
};

struct Ring {
  Communicator::Impl& c;
  const CollRequest& q;
  std::vector<Leg> legs;
  std::size_t chunks = 1;  ///< every leg is cut into this many chunks
  int n() const { return c.n(); }
  int next(int r) const { return (r + 1) % n(); }
  int prev(int r) const { return (r + n() - 1) % n(); }
  std::size_t es() const { return dataTypeSize(q.type); }
  /// Chunk j of `leg`: first element (within the leg) and length (0 where the leg is shorter).
  std::size_t chunkElements(const Leg& leg) const { return (leg.count + chunks - 1) / chunks; }
  std::size_t chunkStart(const Leg& leg, std::size_t j) const { return std::min(leg.count, j * chunkElements(leg)); }
  std::size_t chunkLength(const Leg& leg, std::size_t j) const {
    return std::min(leg.count, (j + 1) * chunkElements(leg)) - chunkStart(leg, j);
  }
};

// Chunks per leg: about `target` bytes each, at most `most` (copy legs: every chunk on a link
// has its own flag within one operation) and at most the shortest leg's elements.
std::size_t chooseChunks(const std::vector<Leg>& legs, std::size_t es, std::size_t target, std::size_t most) {
  std::size_t longest = 0, shortest = SIZE_MAX;
  for (const Leg& l : legs) {
    longest = std::max(longest, l.count);
    shortest = std::min(shortest, l.count);
  }
  const std::size_t wanted = (longest * es + target - 1) / target;
  return std::max<std::size_t>(1, std::min({wanted, most, shortest}));
}

// Copy legs: the leg's first rank copies chunk j of its send buffer into the next rank's output;
// each rank after it, once that chunk has landed, copies it on from its own output. Rank r's
// copies run on its side stream in the order (chunk, step), so a chunk follows the one before
// it down the ring and every link carries one copy at a time.
Status runCopyLegs(Ring& g) {
  Communicator::Impl& c = g.c;
  const CollRequest& q = g.q;
  const int n = g.n();
  const std::size_t es = g.es();
  // Chunks a link has carried to a rank that forwards them, counted by the sender and the
  // receiver in the same order: the k-th signals flag kLanded + k. The last hop's receiver
  // forwards nothing; its stream waits for every peer's side stream at the end instead.
  std::vector<int> sent(n, 0), received(n, 0);
  for (std::size_t j = 0; j < g.chunks; ++j)
    for (int s = 0; s < n - 1; ++s)
      for (const Leg& leg : g.legs) {
        const std::size_t first = g.chunkStart(leg, j), len = g.chunkLength(leg, j);
        if (!len) continue;
        const int r = (leg.first + s) % n, to = g.next(r), dev = c.devices[r];
        cudaStream_t side = c.ranks[r].copyStream.get();
        GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
        const void* src = at(q.recv[r], (leg.to + first) * es);
        if (s == 0) {
          src = at(q.send[r], (leg.from + first) * es);
        } else {
          GPUPEER_RETURN_IF_ERROR(c.signals.wait(r, side, g.prev(r), kLanded + received[r]++));
        }
        GPUPEER_RETURN_IF_ERROR(copyBetween(c, r, to, at(q.recv[to], (leg.to + first) * es), src, len * es, side));
        if (s + 1 < n - 1) GPUPEER_RETURN_IF_ERROR(c.signals.post(r, side, to, kLanded + sent[r]++));
      }
  return Status::ok();
}

// Reduce legs: chunk j of the leg's first rank's input goes into the next rank's scratch at the
// link's next pipeline position; that rank adds its own input to it in place (on its stream)
// and forwards the sum from there (on its side stream), until the leg's last rank writes the
// total into its output. A position is reused once its receiver has forwarded (or written out)
// what it held: signal "freed", posted only where the sender will wait for it.
Status runReduceLegs(Ring& g) {
  Communicator::Impl& c = g.c;
  const CollRequest& q = g.q;
  const int n = g.n();
  const std::size_t es = g.es();
  std::size_t chunkBytes = 0;
  for (const Leg& leg : g.legs) chunkBytes = std::max(chunkBytes, g.chunkElements(leg) * es);
  chunkBytes = (chunkBytes + 255) / 256 * 256;  // positions 256-byte aligned: vector loads
  const int positions = static_cast<int>(
      std::min<std::size_t>(kMaxCePositions, c.ranks[0].ceScratch.size() / std::max<std::size_t>(chunkBytes, 1)));
  if (positions < 2)
    return GPUPEER_ERROR(ErrorCode::kInternal, fmt::format("ring: chunks of {} bytes leave fewer than two positions "
                                                           "in {} bytes of scratch",
                                                           chunkBytes, c.ranks[0].ceScratch.size()));
  // Items per link, to know which positions a sender will come back to.
  std::vector<int> total(n, 0);
  for (const Leg& leg : g.legs)
    for (std::size_t j = 0; j < g.chunks; ++j)
      if (g.chunkLength(leg, j))
        for (int s = 0; s < n - 1; ++s) ++total[(leg.first + s) % n];
  auto position = [&](int r, int item) { return at(c.ranks[r].ceScratch.get(), (item % positions) * chunkBytes); };
  const RedOp partial = q.redop == RedOp::kAvg ? RedOp::kSum : q.redop;
  std::vector<int> sent(n, 0), received(n, 0);
  for (std::size_t j = 0; j < g.chunks; ++j)
    for (int s = 0; s < n; ++s)
      for (const Leg& leg : g.legs) {
        const std::size_t first = g.chunkStart(leg, j), len = g.chunkLength(leg, j);
        if (!len) continue;
        const int r = (leg.first + s) % n, dev = c.devices[r];
        cudaStream_t own = q.streams[r], side = c.ranks[r].copyStream.get();
        GPUPEER_CUDA_CHECK(dev, cudaSetDevice(dev));
        const void* mine = at(q.send[r], (leg.from + first) * es);
        const void* outgoing = mine;
        int in = -1;  // the item this rank received for this chunk (none at the leg's start)
        if (s > 0) {
          in = received[r]++;
          const int slot = in % positions;
          void* partialSum = position(r, in);
          GPUPEER_RETURN_IF_ERROR(c.signals.wait(r, own, g.prev(r), kLanded + slot));
          ReduceSources sources;
          sources.n = 2;
          sources.src[0] = partialSum;
          sources.src[1] = mine;
          const bool last = s == n - 1;
          if (last) sources.avgOver = n;
          void* out = last ? at(q.recv[r], (leg.to + first) * es) : partialSum;
          GPUPEER_CUDA_CHECK(dev, launchLocalReduce(sources, out, len, q.type, last ? q.redop : partial, own));
          if (last) {
            if (in + positions < total[g.prev(r)])
              GPUPEER_RETURN_IF_ERROR(c.signals.post(r, own, g.prev(r), freedFlag(slot)));
            continue;
          }
          // The side stream forwards the sum once the reduction has written it.
          GPUPEER_CUDA_CHECK(dev, cudaEventRecord(c.ranks[r].copied[slot].get(), own));
          GPUPEER_CUDA_CHECK(dev, cudaStreamWaitEvent(side, c.ranks[r].copied[slot].get(), 0));
          outgoing = partialSum;
        }
        const int to = g.next(r), item = sent[r]++, slot = item % positions;
        if (item >= positions) GPUPEER_RETURN_IF_ERROR(c.signals.wait(r, side, to, freedFlag(slot)));
        GPUPEER_RETURN_IF_ERROR(copyBetween(c, r, to, position(to, item), outgoing, len * es, side));
        GPUPEER_RETURN_IF_ERROR(c.signals.post(r, side, to, kLanded + slot));
        if (in >= 0 && in + positions < total[g.prev(r)])
          GPUPEER_RETURN_IF_ERROR(c.signals.post(r, side, g.prev(r), freedFlag(in % positions)));
      }
  return Status::ok();
}

// Every rank's own part of an all-gather, the root's of a broadcast: a copy within the rank.
Status copyOwnParts(Communicator::Impl& c, const CollRequest& q) {
  const std::size_t es = dataTypeSize(q.type), bytes = q.count * es;
  for (int r = 0; r < c.n(); ++r) {
    if (q.op == CollOp::kBroadcast && r != q.root) continue;
    const std::size_t offset = q.op == CollOp::kAllGather ? r * bytes : 0;
    GPUPEER_CUDA_CHECK(c.devices[r], cudaSetDevice(c.devices[r]));
    GPUPEER_RETURN_IF_ERROR(copyBetween(c, r, r, at(q.recv[r], offset), q.send[r], bytes, q.streams[r]));
  }
  return Status::ok();
}

enum class LegKind { kCopy, kReduce };

// One pass over the ring: side streams start after every rank has arrived, and every rank's
// stream ends after every peer's side stream (the last hop's receivers wait for nothing else).
Status runLegs(Communicator::Impl& c, const CollRequest& q, std::vector<Leg> legs, LegKind kind) {
  legs.erase(std::remove_if(legs.begin(), legs.end(), [](const Leg& l) { return l.count == 0; }), legs.end());
  if (legs.empty()) return Status::ok();
  Ring g{c, q, std::move(legs)};
  const std::size_t es = dataTypeSize(q.type);
  // Copy legs give each item on a link its own flag (kMaxCePositions per link and operation);
  // reduce legs reuse positions and may have any number of chunks.
  // Reduce legs keep chunks to a quarter of the scratch: at least two positions.
  const std::size_t most = kind == LegKind::kCopy ? kMaxCePositions / g.legs.size() : SIZE_MAX;
  // One leg fills the chain chunk by chunk: smaller chunks start its far end sooner. With a
  // leg from every rank each link is busy from the start and every chunk only adds signalling
  // (4x H200, graphs, 512 MiB: reduce-scatter 1425 us in 32 MiB chunks, 1719 in 8 MiB; 128 MiB
  // in one chunk per leg 392 us, in four 454).
  std::size_t target = g.legs.size() == 1 ? c.options.ringChunkBytes : c.options.ringSpreadChunkBytes;
  if (kind == LegKind::kReduce) target = std::min(target, c.ranks[0].ceScratch.size() / 4);
  g.chunks = chooseChunks(g.legs, es, target, std::max<std::size_t>(most, 1));
  GPUPEER_RETURN_IF_ERROR(beginSideStreams(c, q));
  // A rank's own part of an all-gather or an out-of-place broadcast's root: a local copy on
  // its stream, beside the side streams (enqueued before them, it held them back: 4x H200,
  // broadcast of 512 MiB 1944 us out of place against 1702 in place).
  if (kind == LegKind::kCopy && q.op != CollOp::kAllReduce) GPUPEER_RETURN_IF_ERROR(copyOwnParts(c, q));
  GPUPEER_RETURN_IF_ERROR(kind == LegKind::kCopy ? runCopyLegs(g) : runReduceLegs(g));
  return endSideStreams(c, q, true);
}

}  // namespace

Status runRing(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  std::vector<Leg> legs;
  switch (q.op) {
    case CollOp::kBroadcast: return runLegs(c, q, {Leg{q.root, 0, 0, q.count}}, LegKind::kCopy);
    case CollOp::kAllGather:
      for (int r = 0; r < n; ++r) legs.push_back(Leg{r, 0, r * q.count, q.count});
      return runLegs(c, q, legs, LegKind::kCopy);
    case CollOp::kReduce: return runLegs(c, q, {Leg{(q.root + 1) % n, 0, 0, q.count}}, LegKind::kReduce);
    case CollOp::kReduceScatter:
      for (int r = 0; r < n; ++r) legs.push_back(Leg{(r + 1) % n, r * q.count, 0, q.count});
      return runLegs(c, q, legs, LegKind::kReduce);
    case CollOp::kAllReduce: {
      // Segment r (the first count % n segments one element longer) is reduced along the ring
      // into rank r's output, then copied from there to every other rank's output.
      const std::size_t share = q.count / n, rest = q.count % n;
      std::size_t offset = 0;
      std::vector<Leg> spread;
      for (int r = 0; r < n; ++r) {
        const std::size_t len = share + (static_cast<std::size_t>(r) < rest ? 1 : 0);
        legs.push_back(Leg{(r + 1) % n, offset, offset, len});
        spread.push_back(Leg{r, offset, offset, len});
        offset += len;
      }
      GPUPEER_RETURN_IF_ERROR(runLegs(c, q, legs, LegKind::kReduce));
      CollRequest gather = q;
      for (int r = 0; r < n; ++r) gather.send[r] = q.recv[r];
      return runLegs(c, gather, spread, LegKind::kCopy);
    }
    case CollOp::kSendRecv:  // chooseAlgorithm gives send/recv to the copy engines
    case CollOp::kAllToAll: break;
  }
  return GPUPEER_ERROR(ErrorCode::kUnsupported, fmt::format("the ring does not do {}", collOpName(q.op)));
}

}  // namespace gpupeer
