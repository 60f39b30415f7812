#include "gpupeer/communicator.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "collectives/communicator_impl.hpp"
#include "core/nvtx_range.hpp"
#include "cuda/cuda_status.hpp"
#include "cuda/device_read_now.hpp"
#include "cuda/driver_entry.hpp"
#include "gpupeer/bench.hpp"

namespace gpupeer {
namespace {

// cuPointerGetAttributes: in one call, where a pointer lives and the allocation it lies in
// (operations check every buffer, and the host time of an operation is part of its latency).
// Null when the driver does not offer it.
using PointerAttributesFn = int (*)(unsigned, const int*, void**, unsigned long long);
PointerAttributesFn pointerAttributes() {
  static PointerAttributesFn fn = driverEntryPoint<PointerAttributesFn>("cuPointerGetAttributes");
  return fn;
}

}  // namespace

Status checkBuffer(const void* p, std::size_t bytes, int device, int rank, const char* which, bool* fromCudaMalloc,
                   const char** allocation) {
  if (!p) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("rank {}: {} buffer is null", rank, which));
  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE, _DEVICE_ORDINAL, _RANGE_START_ADDR, _RANGE_SIZE,
  // _IS_LEGACY_CUDA_IPC_CAPABLE (cuda.h)
  const int kAttributes[] = {2, 9, 11, 12, 10};
  unsigned memoryType = 0;
  int ordinal = -1;
  unsigned long long start = 0;
  std::size_t size = 0;
  int legacy = 0;
  void* values[] = {&memoryType, &ordinal, &start, &size, &legacy};
  PointerAttributesFn fn = pointerAttributes();
  bool known = fn && fn(5, kAttributes, values, reinterpret_cast<unsigned long long>(p)) == 0;
  if (fromCudaMalloc) *fromCudaMalloc = known && legacy;
  if (allocation) *allocation = known ? reinterpret_cast<const char*>(start) : nullptr;
  if (!fn) {  // older driver: the runtime's query, without the allocation's size
    cudaPointerAttributes attr{};
    known = cudaPointerGetAttributes(&attr, p) == cudaSuccess;
    (void)cudaGetLastError();
    memoryType = attr.type == cudaMemoryTypeDevice ? 2 : 0;
    ordinal = attr.device;
  }
  if (!known || memoryType != 2 /* CU_MEMORYTYPE_DEVICE */ || ordinal != device)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("rank {}: {} buffer {} is not memory of GPU{}", rank, which, p, device));
  const char* end = reinterpret_cast<const char*>(start) + size;
  if (size && static_cast<const char*>(p) + bytes > end)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("rank {}: {} buffer {} holds {} bytes from there, the operation needs {}", rank,
                                     which, p, end - static_cast<const char*>(p), bytes));
  return Status::ok();
}

namespace {

// Pull reads the peers' inputs while each rank writes its output: not for an in-place
// all-reduce (a rank's output is the input its peers read), and only on buffers that peer
// access maps (`mapped`: from cudaMalloc).
bool pullCanServe(CollOp op, bool inPlace, bool mapped) { return mapped && !(inPlace && op == CollOp::kAllReduce); }

}  // namespace

bool isInPlace(const CollRequest& q, int rank) {
  InPlacePointers p = inPlacePointers(q.op, const_cast<void*>(q.send[rank]), q.recv[rank], q.count, q.type, rank);
  return p.send == q.send[rank] && p.recv == q.recv[rank];
}

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Communicator::~Communicator() = default;
int Communicator::ranks() const { return impl_->n(); }
int Communicator::device(int rank) const { return impl_->devices.at(rank); }
bool Communicator::p2p() const { return impl_->p2p; }
const std::string& Communicator::transport() const { return impl_->transport; }

Result<CollAlgo> Communicator::algorithmFor(CollOp op, std::size_t bytes, bool inPlace) const {
  return chooseAlgorithm(op, bytes, impl_->n(), impl_->p2p, impl_->algorithmOverride, algorithmTable(),
                         pullCanServe(op, inPlace, true), impl_->ringP2p, true);
}

Status validateRequest(const Communicator::Impl& c, CollRequest& q) {
  const int n = c.n();
  if (static_cast<int>(q.send.size()) != n || static_cast<int>(q.recv.size()) != n ||
      static_cast<int>(q.streams.size()) != n)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("{} needs one send buffer, receive buffer and stream per rank ({}); got {}, {} "
                                     "and {}",
                                     collOpName(q.op), n, q.send.size(), q.recv.size(), q.streams.size()));
  const bool rooted = collOpRooted(q.op);
  if (rooted && (q.root < 0 || q.root >= n))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("{}: root {} is not a rank (0 to {})", collOpName(q.op), q.root, n - 1));
  if (q.op == CollOp::kAllReduce || q.op == CollOp::kReduceScatter || q.op == CollOp::kReduce)
    GPUPEER_RETURN_IF_ERROR(checkRedOpForType(q.redop, q.type));
  const std::size_t es = dataTypeSize(q.type);
  const std::size_t inBytes = collectiveInputElements(q.op, q.count, n) * es,
                    outBytes = collectiveOutputElements(q.op, q.count, n) * es;
  for (int r : c.local) {
    const bool readsSend = !(q.op == CollOp::kBroadcast && r != q.root);
    const bool writesRecv = !(q.op == CollOp::kReduce && r != q.root);
    bool mapped = true;
    if (readsSend) GPUPEER_RETURN_IF_ERROR(checkBuffer(q.send[r], inBytes, c.devices[r], r, "send", &mapped));
    q.peersCanRead = q.peersCanRead && mapped;
    if (writesRecv && !(readsSend && q.recv[r] == q.send[r] && outBytes <= inBytes)) {
      bool recvMapped = true;
      GPUPEER_RETURN_IF_ERROR(checkBuffer(q.recv[r], outBytes, c.devices[r], r, "receive", &recvMapped));
      q.peersCanWrite = q.peersCanWrite && recvMapped;
    } else if (writesRecv) {
      q.peersCanWrite = q.peersCanWrite && mapped;  // the send buffer, checked above
    }
    if (!readsSend) q.send[r] = q.recv[r];
    if (!writesRecv) q.recv[r] = const_cast<void*>(q.send[r]);
    if (readsSend && writesRecv && !isInPlace(q, r)) {
      const char* s = static_cast<const char*>(q.send[r]);
      const char* o = static_cast<const char*>(q.recv[r]);
      if (s < o + outBytes && o < s + inBytes)
        return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                             fmt::format("rank {}: send and receive buffers overlap without being {}'s in-place "
                                         "arrangement",
                                         r, collOpName(q.op)));
    }
  }
  return Status::ok();
}

WholeUnitParts wholeUnitParts(std::size_t count, DataType type, int parts) {
  const std::size_t es = dataTypeSize(type), unit = es < 16 ? 16 / es : 1;
  const std::size_t part = count / parts / unit * unit;
  return {part, count - part * parts};
}

CollRequest elementsFrom(const Communicator::Impl& c, const CollRequest& q, std::size_t first, std::size_t count) {
  const std::size_t at = first * dataTypeSize(q.type);
  CollRequest from = q;
  from.count = count;
  for (int r : c.local) {
    from.send[r] = q.send[r] ? static_cast<const char*>(q.send[r]) + at : nullptr;
    from.recv[r] = q.recv[r] ? static_cast<char*>(q.recv[r]) + at : nullptr;
  }
  return from;
}

Status runTwoShot(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  // Shares of whole 16-byte units: each rank's share then starts as aligned as the buffers,
  // so the halves move 16-byte vectors and lines. A share of any count put every share but
  // the first off that alignment, element by element (4x H200, bf16 all-reduce of 3 MiB +
  // 24 B across processes: 39 us, NCCL 32). The few elements left go to the tail.
  const std::size_t es = dataTypeSize(q.type);
  const auto [share, rest] = wholeUnitParts(q.count, q.type, n);
  CollRequest scatter = q, gather = q;
  scatter.op = CollOp::kReduceScatter;
  gather.op = CollOp::kAllGather;
  scatter.count = gather.count = share;
  for (int r : c.local) {
    void* mine = static_cast<char*>(q.recv[r]) + r * share * es;
    scatter.recv[r] = mine;
    gather.send[r] = mine;
  }
  for (const CollRequest* part : {&scatter, &gather}) {
    if (!share) break;
    Result<CollAlgo> algo =
        chooseAlgorithm(part->op, collectiveBytes(part->op, share, q.type, n), n, c.p2p, "", algorithmTable(),
                        q.peersCanRead, false, q.peersCanRead && q.peersCanWrite, c.allRanksLocal());
    if (!algo.isOk()) return algo.status();
    GPUPEER_RETURN_IF_ERROR(runAlgorithm(c, *part, algo.value()));
  }
  return rest ? runOneShot(c, elementsFrom(c, q, n * share, rest)) : Status::ok();
}

Status runAlgorithm(Communicator::Impl& c, const CollRequest& q, CollAlgo algo) {
  switch (algo) {
    case CollAlgo::kOneShot: return runOneShot(c, q);
    case CollAlgo::kCopyEngine: return runCopyEngine(c, q);
    case CollAlgo::kTwoShot: return runTwoShot(c, q);
    case CollAlgo::kPull: return runPull(c, q, false);
    case CollAlgo::kSplit: return runPull(c, q, true);
    case CollAlgo::kChain: return runChain(c, q);
    case CollAlgo::kRelay: return runRelay(c, q);
    case CollAlgo::kRing: return runRing(c, q);
  }
  return GPUPEER_ERROR(ErrorCode::kInternal, "unknown algorithm");
}

Status Communicator::run(CollOp op, const std::vector<const void*>& send, const std::vector<void*>& recv,
                         std::size_t count, DataType type, RedOp redop, int root,
                         const std::vector<cudaStream_t>& streams) {
  CollRequest q{.op = op,
                .type = type,
                .redop = redop,
                .root = root,
                .count = count,
                .send = send,
                .recv = recv,
                .streams = streams};
  GPUPEER_RETURN_IF_ERROR(validateRequest(*impl_, q));
  if (count == 0) return Status::ok();
  bool inPlace = false;
  for (int r : impl_->local) inPlace = inPlace || isInPlace(q, r);
  Result<CollAlgo> algo = chooseAlgorithm(
      op, collectiveBytes(op, count, type, impl_->n()), impl_->n(), impl_->p2p, impl_->algorithmOverride,
      algorithmTable(), pullCanServe(op, inPlace, q.peersCanRead), impl_->ringP2p, q.peersCanRead && q.peersCanWrite);
  if (!algo.isOk()) return algo.status();
  CollAlgo chosen = algo.value();
  // In place, alltoall and send/recv would have copy engines overwrite inputs that other
  // copies still read; the one-shot kernel pushes everything before anyone writes.
  if (chosen == CollAlgo::kCopyEngine && inPlace && (op == CollOp::kAllToAll || op == CollOp::kSendRecv)) {
    if (!impl_->p2p)
      return GPUPEER_ERROR(ErrorCode::kUnsupported,
                           fmt::format("in-place {} without P2P is not supported: use separate send and receive "
                                       "buffers",
                                       collOpName(op)));
    chosen = CollAlgo::kOneShot;
  }
  // Covers the enqueueing on every rank; Nsight projects it onto the GPU work it launched.
  NvtxRange range("{} {} {} by {}", collOpName(op), formatBytes(collectiveBytes(op, count, type, impl_->n())),
                  dataTypeName(type), collAlgoName(chosen));
  int previous = 0;
  cudaGetDevice(&previous);
  Status st = runAlgorithm(*impl_, q, chosen);
  cudaSetDevice(previous);
  return st;
}

Status Communicator::allReduce(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                               DataType type, RedOp op, const std::vector<cudaStream_t>& streams) {
  return run(CollOp::kAllReduce, send, recv, count, type, op, 0, streams);
}
Status Communicator::allGather(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                               DataType type, const std::vector<cudaStream_t>& streams) {
  return run(CollOp::kAllGather, send, recv, count, type, RedOp::kSum, 0, streams);
}
Status Communicator::reduceScatter(const std::vector<const void*>& send, const std::vector<void*>& recv,
                                   std::size_t count, DataType type, RedOp op,
                                   const std::vector<cudaStream_t>& streams) {
  return run(CollOp::kReduceScatter, send, recv, count, type, op, 0, streams);
}
Status Communicator::broadcast(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                               DataType type, int root, const std::vector<cudaStream_t>& streams) {
  return run(CollOp::kBroadcast, send, recv, count, type, RedOp::kSum, root, streams);
}
Status Communicator::reduce(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                            DataType type, RedOp op, int root, const std::vector<cudaStream_t>& streams) {
  return run(CollOp::kReduce, send, recv, count, type, op, root, streams);
}
Status Communicator::allToAll(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                              DataType type, const std::vector<cudaStream_t>& streams) {
  return run(CollOp::kAllToAll, send, recv, count, type, RedOp::kSum, 0, streams);
}
Status Communicator::sendRecv(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                              DataType type, const std::vector<cudaStream_t>& streams) {
  return run(CollOp::kSendRecv, send, recv, count, type, RedOp::kSum, 0, streams);
}

namespace {

// Rank r's record of a barrier it gave up on: 1 + the rank that did not arrive. Most often that
// rank's stream never reached the operation (work ahead of it, a held stream, a call missing on
// it); a pair whose P2P writes never land looks the same, and `gpupeer check` tells them apart.
// No KB entry is named: none explains the timeout by itself.
Status barrierTimeout(const Communicator::Impl& c, int r, std::uint32_t error) {
  return GPUPEER_ERROR(ErrorCode::kTimeout,
                       fmt::format("rank {} (GPU{}) waited more than {:g} s at a barrier for rank {} (GPU{}): its "
                                   "stream did not reach the same operation (work ahead of it, or a call missing "
                                   "there), or writes between the two GPUs do not arrive (`gpupeer check` tests "
                                   "every pair)",
                                   r, c.devices[r], c.timeoutNs / 1e9, error - 1, c.devices[error - 1]));
}

}  // namespace

Status Communicator::checkBarriers() {
  if (!impl_->p2p) return Status::ok();
  for (int r = 0; r < impl_->n(); ++r) {
    std::uint32_t error = 0;
    const int d = impl_->devices[r];
    GPUPEER_CUDA_CHECK(d, cudaSetDevice(d));
    GPUPEER_CUDA_CHECK(d, cudaMemcpy(&error, impl_->counters(r) + 2, sizeof error, cudaMemcpyDeviceToHost));
    if (error) {
      GPUPEER_CUDA_CHECK(d, cudaMemset(impl_->counters(r) + 2, 0, sizeof error));
      // Cleared before this returns: the legacy stream's memset is not ordered before the next
      // collective on a non-blocking stream. Only the legacy stream is awaited, not the held one.
      GPUPEER_CUDA_CHECK(d, cudaStreamSynchronize(cudaStreamLegacy));
      return barrierTimeout(*impl_, r, error);
    }
  }
  return Status::ok();
}

Status Communicator::pollBarriers() const {
  if (!impl_->p2p) return Status::ok();
  for (int r = 0; r < impl_->n(); ++r) {
    std::uint32_t error = 0;
    GPUPEER_RETURN_IF_ERROR(readDeviceMemoryNow(impl_->devices[r], impl_->counters(r) + 2, &error, sizeof error));
    if (error) return barrierTimeout(*impl_, r, error);
  }
  return Status::ok();
}

}  // namespace gpupeer
