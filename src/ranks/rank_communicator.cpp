#include "gpupeer/rank_communicator.hpp"

#include <fmt/format.h>

#include <optional>

#include "collectives/one_shot_kernels.cuh"
#include "core/nvtx_range.hpp"
#include "cuda/cuda_status.hpp"
#include "cuda/device_guard.hpp"
#include "cuda/device_read_now.hpp"
#include "gpupeer/bench.hpp"
#include "gpupeer/collective_algo.hpp"
#include "ranks/bootstrap.hpp"
#include "ranks/call_signature.hpp"
#include "ranks/rank_communicator_impl.hpp"
#include "ranks/zero_copy_rules.hpp"

namespace gpupeer {
namespace {

// Every start-up message is padded to this size, so that a framework's all-gather, which
// wants equal parts (torch.distributed's all_gather_into_tensor), can carry it.
constexpr std::size_t kExchangeBytes = 4096;

Result<std::string> padded(const std::string& blob) {
  if (blob.size() > kExchangeBytes)
    return GPUPEER_ERROR(ErrorCode::kInternal, fmt::format("start-up message of {} bytes", blob.size()));
  std::string out = blob;
  out.resize(kExchangeBytes, '\0');
  return out;
}

// What a rank can tell alone, before it waits for the others: its bound and its GPU. Without
// this, a rank given a GPU that does not exist (or on a machine without one) waited for the
// rendezvous up to the bound before it said so, and its peers timed out naming it.
Status checkBeforeJoining(int rank, const RankCommOptions& options) {
  if (options.timeoutMs < 1)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("a bound of {} ms", options.timeoutMs));
  int visible = 0;
  GPUPEER_CUDA_CHECK(-1, cudaGetDeviceCount(&visible));
  if (options.device >= visible)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("rank {}: GPU{} does not exist ({} visible)", rank, options.device, visible));
  return Status::ok();
}

}  // namespace

RankCommunicator::RankCommunicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RankCommunicator::~RankCommunicator() {
  // Kernels still waiting for a peer give up now rather than at their bound; freeing the
  // memory below waits for them.
  if (impl_ && impl_->abortWord.get()) *static_cast<volatile std::uint32_t*>(impl_->abortWord.get()) = 1;
}

Result<std::unique_ptr<RankCommunicator>> RankCommunicator::init(int nranks, const UniqueId& id, int rank,
                                                                 const RankCommOptions& options) {
  if (nranks < 1 || nranks > kMaxCommRanks || rank < 0 || rank >= nranks)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("rank {} of {} ranks: give 1 to {} ranks and a rank from 0 to ranks - 1", rank,
                                     nranks, kMaxCommRanks));
  GPUPEER_RETURN_IF_ERROR(checkBeforeJoining(rank, options));
  Result<Bootstrap> joined = Bootstrap::join(nranks, id, rank, options.timeoutMs);
  if (!joined.isOk()) return joined.status();
  auto impl = std::make_unique<Impl>();
  // Kept open for registerBuffer's exchanges.
  impl->bootstrap = std::move(joined).value();
  AllGatherFn exchange = [bootstrap = &impl->bootstrap](const std::string& blob) -> Result<std::string> {
    Result<std::string> mine = padded(blob);
    if (!mine.isOk()) return mine.status();
    Result<std::vector<std::string>> all = bootstrap->allGather(mine.value());
    if (!all.isOk()) return all.status();
    std::string joinedParts;
    for (const std::string& part : all.value()) joinedParts += part;
    return joinedParts;
  };
  GPUPEER_RETURN_IF_ERROR(initRank(*impl, nranks, rank, options, exchange, "over a Unix socket"));
  return std::unique_ptr<RankCommunicator>(new RankCommunicator(std::move(impl)));
}

Result<std::unique_ptr<RankCommunicator>> RankCommunicator::initWithAllGather(int nranks, int rank,
                                                                              const AllGatherFn& allGather,
                                                                              const RankCommOptions& options) {
  if (nranks < 1 || nranks > kMaxCommRanks || rank < 0 || rank >= nranks)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("rank {} of {} ranks: give 1 to {} ranks and a rank from 0 to ranks - 1", rank,
                                     nranks, kMaxCommRanks));
  if (!allGather) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "no all-gather function given");
  GPUPEER_RETURN_IF_ERROR(checkBeforeJoining(rank, options));
  AllGatherFn exchange = [allGather](const std::string& blob) -> Result<std::string> {
    Result<std::string> mine = padded(blob);
    if (!mine.isOk()) return mine.status();
    return allGather(mine.value());
  };
  auto impl = std::make_unique<Impl>();
  GPUPEER_RETURN_IF_ERROR(initRank(*impl, nranks, rank, options, exchange, "through the caller's all-gather"));
  return std::unique_ptr<RankCommunicator>(new RankCommunicator(std::move(impl)));
}

int RankCommunicator::rank() const { return impl_->rank; }
int RankCommunicator::ranks() const { return impl_->n(); }
int RankCommunicator::device() const { return impl_->device; }
const std::string& RankCommunicator::transport() const { return impl_->transport; }
std::size_t RankCommunicator::slotBytes() const { return impl_->core.options.oneShotSlotBytes; }

namespace {

// The table's choice for ranks that reach each other through the scratch alone (GPUPEER_ALGO
// where it names one of those algorithms: every rank must be given the same).
Result<CollAlgo> scratchAlgorithm(const RankCommunicator::Impl& c, CollOp op, std::size_t bytes) {
  return chooseAlgorithm(op, bytes, c.n(), true, c.core.algorithmOverride, algorithmTable(), false, false, false,
                         /*hostKnowsPeers=*/false);
}

// What a call whose buffers lie in registered buffers takes instead of the scratch, at
// zeroCopyFromBytes and above (or the rule's sizes) per rank (`rankBytes`: count x element size): the pull kernel for a
// reduce-scatter, split (the peers' buffers read and written) for an all-reduce, all-gather,
// broadcast or reduce; nothing for alltoall (and send/recv, which have channels of their own).
std::optional<CollAlgo> zeroCopyAlgorithm(const RankCommunicator::Impl& c, CollOp op, std::size_t rankBytes) {
  const std::optional<ZeroCopySizes> sizes = c.zeroCopyFromBytes == RankCommOptions::kZeroCopyByRule
                                                 ? zeroCopySizesFor(op, c.n())
                                                 : std::optional<ZeroCopySizes>(ZeroCopySizes{c.zeroCopyFromBytes});
  if (c.n() < 2 || !sizes || !sizes->holds(rankBytes)) return std::nullopt;
  if (op == CollOp::kReduceScatter) return CollAlgo::kPull;
  if (op == CollOp::kAllToAll || op == CollOp::kSendRecv) return std::nullopt;
  return CollAlgo::kSplit;
}

}  // namespace

const char* RankCommunicator::algorithmFor(CollOp op, std::size_t bytes, bool registered) const {
  const int n = impl_->n();
  if (n == 1) return "copy";
  if (op == CollOp::kSendRecv) return "p2p";
  const std::size_t rankBytes = op == CollOp::kAllGather || op == CollOp::kReduceScatter ? bytes / n : bytes;
  if (std::optional<CollAlgo> direct = zeroCopyAlgorithm(*impl_, op, rankBytes); registered && direct)
    return collAlgoName(*direct);
  Result<CollAlgo> algo = scratchAlgorithm(*impl_, op, bytes);
  return algo.isOk() ? collAlgoName(algo.value()) : "?";
}

namespace {

Status usable(const RankCommunicator::Impl& c) {
  if (c.aborted.load()) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "the communicator was aborted");
  return c.failure;
}

// One rank's collective: checked as the one-process communicator checks its ranks; then on
// registered buffers the pull kernel, else what the algorithm table gives ranks that reach
// each other through the scratch (one-shot, two-shot, the chain, or the copy engines into the
// peers' scratch), or with one rank a local copy.
Status runCollective(RankCommunicator::Impl& c, CollOp op, const void* send, void* recv, std::size_t count,
                     DataType type, RedOp redop, int root, cudaStream_t stream) {
  GPUPEER_RETURN_IF_ERROR(usable(c));
  const int n = c.n();
  // One entry per rank, as the one-process checks take them; only this rank's is filled.
  CollRequest q{.op = op,
                .type = type,
                .redop = redop,
                .root = root,
                .count = count,
                .send = std::vector<const void*>(n, nullptr),
                .recv = std::vector<void*>(n, nullptr),
                .streams = std::vector<cudaStream_t>(n, nullptr)};
  q.send[c.rank] = send;
  q.recv[c.rank] = recv;
  q.streams[c.rank] = stream;
  DeviceGuard guard;
  GPUPEER_CUDA_CHECK(c.device, cudaSetDevice(c.device));
  GPUPEER_RETURN_IF_ERROR(validateRequest(c.core, q));
  if (count == 0) return Status::ok();
  // Registered buffers, large enough: the pull kernel reads (and for all-reduce and
  // all-gather, split, writes) the peers' buffers directly.
  RegisteredCall registered;
  const std::size_t es = dataTypeSize(type);
  const std::optional<CollAlgo> direct = zeroCopyAlgorithm(c, op, count * es);
  // A broadcast's other ranks read no input and a reduce's write no output: only the buffers
  // this rank uses must be registered (the unused one's reference stays empty).
  const bool readsSend = !(op == CollOp::kBroadcast && c.rank != root);
  const bool writesRecv = !(op == CollOp::kReduce && c.rank != root);
  const bool zeroCopy = direct &&
                        (!readsSend || findRegistered(c, q.send[c.rank], collectiveInputElements(op, count, n) * es,
                                                      registered.sendRef)) &&
                        (!writesRecv || findRegistered(c, q.recv[c.rank], collectiveOutputElements(op, count, n) * es,
                                                       registered.recvRef));
  const std::size_t bytes = collectiveBytes(op, count, type, n);
  CollAlgo algo = zeroCopy ? *direct : CollAlgo::kOneShot;
  if (!zeroCopy && n > 1) {
    Result<CollAlgo> chosen = scratchAlgorithm(c, op, bytes);
    if (!chosen.isOk()) return chosen.status();
    algo = chosen.value();
  }
  // As the one-process communicator's: Nsight shows each operation by name and size.
  NvtxRange range("{} {} {} by {}", collOpName(op), formatBytes(bytes), dataTypeName(type),
                  n == 1 ? "copy" : collAlgoName(algo));
  if (zeroCopy) {
    registered.table = static_cast<const RegisteredBuffer*>(c.registeredTable.get());
    return runPull(c.core, q, *direct == CollAlgo::kSplit, &registered);
  }
  if (n > 1) return runAlgorithm(c.core, q, algo);
  // One rank: the result is the input (all-gather's and alltoall's single chunk too).
  if (q.recv[0] != q.send[0])
    GPUPEER_CUDA_CHECK(
        c.device, cudaMemcpyAsync(q.recv[0], q.send[0], count * dataTypeSize(type), cudaMemcpyDeviceToDevice, stream));
  return Status::ok();
}

}  // namespace

Status RankCommunicator::allReduce(const void* send, void* recv, std::size_t count, DataType type, RedOp op,
                                   cudaStream_t stream) {
  return runCollective(*impl_, CollOp::kAllReduce, send, recv, count, type, op, 0, stream);
}
Status RankCommunicator::allGather(const void* send, void* recv, std::size_t count, DataType type,
                                   cudaStream_t stream) {
  return runCollective(*impl_, CollOp::kAllGather, send, recv, count, type, RedOp::kSum, 0, stream);
}
Status RankCommunicator::reduceScatter(const void* send, void* recv, std::size_t count, DataType type, RedOp op,
                                       cudaStream_t stream) {
  return runCollective(*impl_, CollOp::kReduceScatter, send, recv, count, type, op, 0, stream);
}
Status RankCommunicator::broadcast(const void* send, void* recv, std::size_t count, DataType type, int root,
                                   cudaStream_t stream) {
  return runCollective(*impl_, CollOp::kBroadcast, send, recv, count, type, RedOp::kSum, root, stream);
}
Status RankCommunicator::reduce(const void* send, void* recv, std::size_t count, DataType type, RedOp op, int root,
                                cudaStream_t stream) {
  return runCollective(*impl_, CollOp::kReduce, send, recv, count, type, op, root, stream);
}
Status RankCommunicator::allToAll(const void* send, void* recv, std::size_t count, DataType type, cudaStream_t stream) {
  return runCollective(*impl_, CollOp::kAllToAll, send, recv, count, type, RedOp::kSum, 0, stream);
}

Status RankCommunicator::registerBuffer(void* ptr, std::size_t bytes) {
  GPUPEER_RETURN_IF_ERROR(usable(*impl_));
  DeviceGuard guard;
  GPUPEER_CUDA_CHECK(impl_->device, cudaSetDevice(impl_->device));
  return registerRankBuffer(*impl_, ptr, bytes);
}

Status RankCommunicator::deregisterBuffer(void* ptr) {
  GPUPEER_RETURN_IF_ERROR(usable(*impl_));
  DeviceGuard guard;
  GPUPEER_CUDA_CHECK(impl_->device, cudaSetDevice(impl_->device));
  return deregisterRankBuffer(*impl_, ptr);
}

const char* RankCommunicator::registrationMechanism(const void* ptr) const {
  for (const Registration& r : impl_->registrations)
    if (r.live && r.base == ptr) return r.mechanism;
  return nullptr;
}

namespace {

// What the kernels' error word means, with the four words beside it where the kernel wrote them
// (the two calls of a mismatch, or a send's and its receive's lengths).
Status errorFromWord(const RankCommunicator::Impl& c, std::uint32_t error, const std::uint32_t calls[4]) {
  if (error & kMismatchError)
    return GPUPEER_ERROR(
        ErrorCode::kInvalidArgument,
        fmt::format("rank {} called {}, rank {} (this rank) {}: every rank must make the same calls in the same order "
                    "(count, type, operator and root)",
                    error & ~kMismatchError, describeCall({calls[0], calls[1]}), c.rank,
                    describeCall({calls[2], calls[3]})));
  if (error & kUnregisteredError)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("rank {}: rank {}'s buffer of a call on registered buffers is not registered "
                                     "(any more) here: it was deregistered before an operation (or a graph "
                                     "captured) with it ran, or lies outside the registered range",
                                     c.rank, error & ~kUnregisteredError));
  if (error & kLengthMismatchError) {
    auto bytes = [&](int i) { return static_cast<std::uint64_t>(calls[i + 1]) << 32 | calls[i]; };
    return GPUPEER_ERROR(
        ErrorCode::kInvalidArgument,
        fmt::format("rank {} (this rank) receives {} bytes from rank {}, whose send has {}: a send and "
                    "its receive must have the same count and type",
                    c.rank, bytes(2), error & ~kLengthMismatchError, bytes(0)));
  }
  if (error == kAbortedError)
    return GPUPEER_ERROR(ErrorCode::kTimeout, fmt::format("rank {}: the communicator was aborted", c.rank));
  if (error - 1 < static_cast<std::uint32_t>(c.n())) {
    const PeerIdentity& p = c.peers[error - 1];
    return GPUPEER_ERROR(ErrorCode::kTimeout,
                         fmt::format("rank {} waited more than {} ms for rank {} (pid {}, GPU{} {}): it died, hung "
                                     "or made a different call",
                                     c.rank, c.core.timeoutNs / 1'000'000, error - 1, p.pid, p.device, p.busId));
  }
  return GPUPEER_ERROR(ErrorCode::kInternal, fmt::format("rank {}: error word {}", c.rank, error));
}

}  // namespace

Status RankCommunicator::checkError() {
  Impl& c = *impl_;
  if (!c.failure.isOk()) return c.failure;
  if (c.n() == 1) return usable(c);
  std::uint32_t error = 0;
  DeviceGuard guard;
  GPUPEER_CUDA_CHECK(c.device, cudaSetDevice(c.device));
  GPUPEER_CUDA_CHECK(c.device, cudaMemcpy(&error, c.errorWord(), sizeof error, cudaMemcpyDeviceToHost));
  if (error == 0) return usable(c);
  // For a mismatch the kernel wrote both calls (or lengths) beside the error word before the
  // stream ended.
  std::uint32_t calls[4] = {};
  if (error & (kMismatchError | kLengthMismatchError))
    GPUPEER_CUDA_CHECK(c.device, cudaMemcpy(calls, c.errorWord() + 2, sizeof calls, cudaMemcpyDeviceToHost));
  c.failure = errorFromWord(c, error, calls);
  return c.failure;
}

Status RankCommunicator::pollError() const {
  const Impl& c = *impl_;
  if (!c.failure.isOk()) return c.failure;
  if (c.n() == 1) return usable(c);
  // The caller's streams may hold kernels that wait for a dead peer; this answers while they do.
  std::uint32_t words[6] = {};
  GPUPEER_RETURN_IF_ERROR(readDeviceMemoryNow(c.device, c.errorWord(), words, sizeof words));
  if (words[0] == 0) return usable(c);
  return errorFromWord(c, words[0], words + 2);
}

void RankCommunicator::abort() {
  impl_->aborted.store(true);
  *static_cast<volatile std::uint32_t*>(impl_->abortWord.get()) = 1;
}

}  // namespace gpupeer
