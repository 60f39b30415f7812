#include "gpupeer/communicator.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "comm/communicator_impl.hpp"
#include "comm/line128_rules.hpp"
#include "comm/line_grid.hpp"
#include "core/nvtx_range.hpp"
#include "cuda/cuda_status.hpp"
#include "cuda/driver_entry.hpp"
#include "cuda/one_shot_kernels.cuh"
#include "gpupeer/bench.hpp"
#include "gpupeer/log.hpp"
#include "gpupeer/peer_access.hpp"
#include "probe/sysfs.hpp"

namespace gpupeer {
namespace {

// The staged pipeline's shape: 4 MiB chunks moved 51.7 GB/s against 52.7 for 8 MiB on 2x H200
// (176d235:bench/README.md), with half the pinned memory: n(n-1) pairs hold 12 MiB each.
constexpr std::size_t kStagingChunkBytes = 4u << 20;
constexpr int kStagingBuffers = 3;

// The NUMA node the GPU's PCIe device sits on (sysfs), or -1 (any) where it is not known.
int numaNodeOf(int device) {
  Known<int> node = sysfs::readInt("", "/sys/bus/pci/devices/" + busIdOf(device) + "/numa_node");
  return node.known() ? node.value() : -1;
}

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

// The value of `name`, or "" when it is not set.
std::string envValue(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool envSet(const char* name) {
  const std::string v = envValue(name);
  return !v.empty() && v != "0";
}

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

Result<std::unique_ptr<Communicator>> Communicator::create(const std::vector<int>& devices,
                                                           const CommunicatorOptions& options) {
  const int n = static_cast<int>(devices.size());
  if (n < 2 || n > kMaxCommRanks)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("a communicator takes 2 to {} GPUs, not {}", kMaxCommRanks, n));
  if (std::set<int>(devices.begin(), devices.end()).size() != devices.size())
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "a GPU appears twice in the communicator");
  int visible = 0;
  GPUPEER_CUDA_CHECK(-1, cudaGetDeviceCount(&visible));
  for (int d : devices)
    if (d < 0 || d >= visible)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("GPU{} does not exist ({} visible)", d, visible));
  auto impl = std::make_unique<Impl>();
  impl->devices = devices;
  impl->options = options;
  impl->line128SlotBytes = line128SlotBytesFor(n);
  impl->line128FromBytes = line128FromBytesFor(n);
  // Tuning knobs for measurements (scripts/gpu.sh tune, docs/collectives.md): the scratch slots' sizes, the one-shot
  // kernel's grid and step.
  for (auto [name, bytes] :
       {std::pair{"GPUPEER_CE_SLOT", &impl->options.ceSlotBytes},
        std::pair{"GPUPEER_ONESHOT_SLOT", &impl->options.oneShotSlotBytes},
        std::pair{"GPUPEER_ONESHOT_STEP", &impl->oneShotStepBytes}, std::pair{"GPUPEER_LL_SLOT", &impl->lineSlotBytes},
        std::pair{"GPUPEER_LL128_SLOT", &impl->line128SlotBytes},
        std::pair{"GPUPEER_LL128_FROM", &impl->line128FromBytes},
        std::pair{"GPUPEER_RING_CHUNK", &impl->options.ringChunkBytes},
        std::pair{"GPUPEER_RING_SPREAD_CHUNK", &impl->options.ringSpreadChunkBytes},
        std::pair{"GPUPEER_CHAIN_STEP", &impl->options.chainStepBytes},
        std::pair{"GPUPEER_CHAIN_REDUCE_STEP", &impl->options.chainReduceStepBytes},
        std::pair{"GPUPEER_PULL_BLOCK", &impl->pullBlockBytes}, std::pair{"GPUPEER_PULL_TILE", &impl->pullTileBytes}})
    if (const char* v = std::getenv(name)) {
      Result<std::size_t> parsed = parseByteSize(v);
      if (!parsed.isOk()) return parsed.status();
      *bytes = parsed.value();
    }
  if (const std::string v = envValue("GPUPEER_ONESHOT_BLOCKS"); !v.empty()) {
    Result<std::size_t> blocks = parseByteSize(v);
    if (!blocks.isOk() || blocks.value() < 1 || blocks.value() > kMaxOneShotBlocks)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("GPUPEER_ONESHOT_BLOCKS={}: give 1 to {} blocks", v, kMaxOneShotBlocks));
    impl->oneShotBlocks = static_cast<int>(blocks.value());
  }
  impl->ceIssuer = ceIssuerFor(n);
  if (const std::string v = envValue("GPUPEER_CE_ISSUE"); !v.empty()) {
    if (v == "sender")
      impl->ceIssuer = CeIssuer::kSender;
    else if (v == "receiver")
      impl->ceIssuer = CeIssuer::kReceiver;
    else
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("GPUPEER_CE_ISSUE={}: give sender or receiver", v));
  }
  if (const std::string v = envValue("GPUPEER_LL_BLOCK_LINES"); !v.empty()) {
    Result<std::size_t> lines = parseByteSize(v);
    if (!lines.isOk() || lines.value() < 32 || lines.value() > kMaxLineBlockLines || lines.value() % 32)
      return GPUPEER_ERROR(
          ErrorCode::kInvalidArgument,
          fmt::format("GPUPEER_LL_BLOCK_LINES={}: give a multiple of 32 from 32 to {} lines", v, kMaxLineBlockLines));
    impl->lineBlockLines = static_cast<int>(lines.value());
  }
  const CommunicatorOptions& o = impl->options;
  if (o.oneShotSlotBytes < 4096 || o.oneShotSlotBytes % 256 || o.ceSlotBytes < (1u << 20) || o.ceSlotBytes % 4096)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         "communicator options: one-shot slots of at least 4 KiB, a multiple of 256 bytes; copy-engine "
                         "slots of at least 1 MiB, a multiple of 4 KiB");
  if (o.ringChunkBytes < 4096 || o.ringSpreadChunkBytes < 4096)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("ring chunks (GPUPEER_RING_CHUNK, GPUPEER_RING_SPREAD_CHUNK) of at least 4 KiB, "
                                     "not {} and {} bytes",
                                     o.ringChunkBytes, o.ringSpreadChunkBytes));
  if (o.chainStepBytes < 16 || o.chainStepBytes % 16 || o.chainReduceStepBytes < 16 || o.chainReduceStepBytes % 16)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("chain steps (GPUPEER_CHAIN_STEP, GPUPEER_CHAIN_REDUCE_STEP) of a multiple of 16 "
                                     "bytes, not {} and {} bytes",
                                     o.chainStepBytes, o.chainReduceStepBytes));
  if (impl->pullTileBytes != kPullTileByRule && impl->pullTileBytes % 16)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("GPUPEER_PULL_TILE: a multiple of 16 bytes, not {}", impl->pullTileBytes));
  if (std::getenv("GPUPEER_PULL_BLOCK") && impl->pullBlockBytes < 1024)
    return GPUPEER_ERROR(
        ErrorCode::kInvalidArgument,
        fmt::format("GPUPEER_PULL_BLOCK: at least 1 KiB per block, not {} bytes", impl->pullBlockBytes));
  if (impl->lineSlotBytes < 4096 || impl->lineSlotBytes % 4096)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "GPUPEER_LL_SLOT: at least 4 KiB, a multiple of 4 KiB");
  if (impl->line128SlotBytes % 4096)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "GPUPEER_LL128_SLOT: a multiple of 4 KiB (0: none)");
  if (options.algorithm == "from-environment") {
    impl->algorithmOverride = envValue("GPUPEER_ALGO");
  } else {
    impl->algorithmOverride = options.algorithm;
  }
  if (!impl->algorithmOverride.empty()) {
    Result<CollAlgo> parsed = parseCollAlgo(impl->algorithmOverride);
    if (!parsed.isOk()) return parsed.status();
  }
  // P2P between every pair, or the reason the copies will be staged through host memory; and
  // whether each rank still reaches the next one (rank order, the ring's links) by P2P.
  bool disabled = false;
  for (const char* name : {"GPUPEER_P2P_DISABLE", "NCCL_P2P_DISABLE"})
    if (envSet(name) && !disabled) {
      disabled = true;
      impl->p2p = false;
      impl->transport = fmt::format("P2P disabled by {}=1: copies staged through host memory", name);
    }
  std::set<std::pair<int, int>> missing;
  for (int i = 0; i < n && !disabled; ++i)
    for (int k = 0; k < n; ++k) {
      if (i == k) continue;
      const int a = devices[i], b = devices[k];
      if (Status st = PeerAccess::process().enable(a, b); !st.isOk()) {
        if (missing.empty())
          impl->transport =
              fmt::format("no P2P from GPU{} to GPU{} ({}): copies staged through host memory", a, b, st.message());
        missing.insert({i, k});
        impl->p2p = false;
      }
    }
  // The 128-byte lines rely on a line stored by one instruction arriving whole, which NVLink
  // provides (NCCL takes its LL128 only over NVLink too). CUDA reports native atomics between
  // two GPUs over NVLink (true for every pair of the 2x and 4x H200 machines' snapshots), not
  // over PCIe: without them on every pair, no 128-byte lines, whatever GPUPEER_LL128_SLOT says.
  bool nativeAtomics = impl->p2p;
  for (int i = 0; i < n && nativeAtomics; ++i)
    for (int k = 0; k < n && nativeAtomics; ++k) {
      int value = 0;
      nativeAtomics = i == k || (cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrNativeAtomicSupported, devices[i],
                                                           devices[k]) == cudaSuccess &&
                                 value == 1);
    }
  (void)cudaGetLastError();
  if (!nativeAtomics) impl->line128SlotBytes = 0;
  impl->ringP2p = !disabled;
  for (int i = 0; i < n; ++i)
    if (missing.count({i, (i + 1) % n}) || missing.count({(i + 1) % n, i})) impl->ringP2p = false;
  if (impl->p2p)
    impl->transport = fmt::format("P2P between all {} GPUs", n);
  else if (impl->ringP2p)
    impl->transport += fmt::format(
        "; the ring (every rank to the next in rank order) runs over P2P for all-reduce, all-gather, "
        "reduce-scatter, broadcast and reduce");
  // Pairs without P2P copy through gpupeer's staged pipeline unless GPUPEER_STAGING=cuda
  // (CUDA's own staging, for comparison).
  const bool pipelined = envValue("GPUPEER_STAGING") != "cuda";
  if (!impl->p2p) {
    impl->transport += pipelined
                           ? fmt::format(" (gpupeer's pipeline: {} MiB chunks through {} pinned buffers per pair)",
                                         kStagingChunkBytes >> 20, kStagingBuffers)
                           : " (CUDA's own staging: GPUPEER_STAGING=cuda)";
    GPUPEER_WARN("communicator: {}", impl->transport);
  }
  impl->ranks.resize(n);
  for (int r = 0; r < n; ++r) {
    Impl::Rank& rank = impl->ranks[r];
    const int d = devices[r];
    if (impl->p2p) {
      // Before any rank's kernel can wait for this one's (one_shot_device.cuh: loadKernels): a
      // first launch behind busy work would otherwise hold the launching thread, and with it
      // the other ranks' launches, until that work ends.
      GPUPEER_CUDA_CHECK(d, cudaSetDevice(d));
      GPUPEER_CUDA_CHECK(d, loadOneShotKernels());
      GPUPEER_CUDA_CHECK(d, loadPullKernels());
      GPUPEER_CUDA_CHECK(d, loadChainKernels());
      GPUPEER_RETURN_IF_ERROR(rank.scratch.allocate(d, 2 * n * o.oneShotSlotBytes));
      GPUPEER_RETURN_IF_ERROR(rank.flags.allocate(d, kOneShotFlagBytes));
      GPUPEER_RETURN_IF_ERROR(rank.counters.allocate(d, kCounterWords * sizeof(std::uint32_t)));
      GPUPEER_RETURN_IF_ERROR(rank.lineScratch.allocate(d, oneShotLineScratchBytes(n, impl->lineSlotBytes)));
      GPUPEER_CUDA_CHECK(d, cudaMemset(rank.lineScratch.get(), 0, rank.lineScratch.size()));
      if (impl->line128SlotBytes) {
        GPUPEER_RETURN_IF_ERROR(rank.line128Scratch.allocate(d, 2 * n * impl->line128SlotBytes));
        GPUPEER_CUDA_CHECK(d, cudaMemset(rank.line128Scratch.get(), 0, rank.line128Scratch.size()));
      }
      GPUPEER_CUDA_CHECK(d, cudaMemset(rank.flags.get(), 0, kOneShotFlagBytes));
      GPUPEER_CUDA_CHECK(d, cudaMemset(rank.counters.get(), 0, rank.counters.size()));
    }
    int major = 0, sms = 0;
    GPUPEER_CUDA_CHECK(d, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
    GPUPEER_CUDA_CHECK(d, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
    impl->fewestSms = r == 0 ? sms : std::min(impl->fewestSms, sms);
    rank.hopperOrLater = major >= 9;
    GPUPEER_RETURN_IF_ERROR(rank.ceScratch.allocate(d, n * o.ceSlotBytes));
    GPUPEER_RETURN_IF_ERROR(rank.copyStream.create(d));
    GPUPEER_RETURN_IF_ERROR(rank.start.create(d));
    GPUPEER_RETURN_IF_ERROR(rank.copiesDone.create(d));
    rank.copied.resize(kMaxCePositions);
    for (Event& e : rank.copied) GPUPEER_RETURN_IF_ERROR(e.create(d));
    GPUPEER_CUDA_CHECK(d, cudaDeviceSynchronize());
    impl->views.push_back({rank.scratch.get(), static_cast<std::uint32_t*>(rank.flags.get()), rank.lineScratch.get(),
                           rank.line128Scratch.get()});
    impl->local.push_back(r);
  }
  GPUPEER_RETURN_IF_ERROR(impl->signals.create(devices, kSignalsPerSender));
  for (int i = 0; i < n && pipelined && !impl->p2p; ++i)
    for (int k = 0; k < n; ++k) {
      if (i == k || !(disabled || missing.count({i, k}))) continue;
      auto pipeline = std::make_unique<StagedPipeline>();
      GPUPEER_RETURN_IF_ERROR(
          pipeline->init(devices[i], devices[k], kStagingChunkBytes, kStagingBuffers, numaNodeOf(devices[i])));
      impl->staged[{i, k}] = std::move(pipeline);
    }
  // GPUPEER_LAUNCH_THREADS=0 launches every rank's kernels from the calling thread; so does a
  // process with fewer CPUs than ranks.
  if (impl->p2p && envValue("GPUPEER_LAUNCH_THREADS") != "0" && launchThreadsHelp(cpusAvailable(), n))
    impl->pool = std::make_unique<LaunchPool>(devices);
  return std::unique_ptr<Communicator>(new Communicator(std::move(impl)));
}

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
  const bool rooted = q.op == CollOp::kBroadcast || q.op == CollOp::kReduce;
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

namespace {

Status runChecked(Communicator::Impl& c, const CollRequest& q, CollAlgo algo);

}  // namespace

Status runTwoShot(Communicator::Impl& c, const CollRequest& q) {
  const int n = c.n();
  // Shares of whole 16-byte units: each rank's share then starts as aligned as the buffers,
  // so the halves move 16-byte vectors and lines. A share of any count put every share but
  // the first off that alignment, element by element (4x H200, bf16 all-reduce of 3 MiB +
  // 24 B across processes: 39 us, NCCL 32). The few elements left go to the tail.
  const std::size_t es = dataTypeSize(q.type), unit = es < 16 ? 16 / es : 1;
  const std::size_t share = q.count / n / unit * unit, rest = q.count - share * n;
  CollRequest scatter = q, gather = q, tail = q;
  scatter.op = CollOp::kReduceScatter;
  gather.op = CollOp::kAllGather;
  scatter.count = gather.count = share;
  tail.count = rest;
  for (int r : c.local) {
    void* mine = static_cast<char*>(q.recv[r]) + r * share * es;
    scatter.recv[r] = mine;
    gather.send[r] = mine;
    tail.send[r] = static_cast<const char*>(q.send[r]) + n * share * es;
    tail.recv[r] = static_cast<char*>(q.recv[r]) + n * share * es;
  }
  for (const CollRequest* part : {&scatter, &gather}) {
    if (!share) break;
    Result<CollAlgo> algo =
        chooseAlgorithm(part->op, collectiveBytes(part->op, share, q.type, n), n, c.p2p, "", algorithmTable(),
                        q.peersCanRead, false, q.peersCanRead && q.peersCanWrite, c.allRanksLocal());
    if (!algo.isOk()) return algo.status();
    GPUPEER_RETURN_IF_ERROR(runChecked(c, *part, algo.value()));
  }
  return rest ? runOneShot(c, tail) : Status::ok();
}

namespace {

Status runChecked(Communicator::Impl& c, const CollRequest& q, CollAlgo algo) {
  switch (algo) {
    case CollAlgo::kOneShot: return runOneShot(c, q);
    case CollAlgo::kCopyEngine: return runCopyEngine(c, q);
    case CollAlgo::kTwoShot: return runTwoShot(c, q);
    case CollAlgo::kPull: return runPull(c, q, false);
    case CollAlgo::kSplit: return runPull(c, q, true);
    case CollAlgo::kChain: return runChain(c, q);
    case CollAlgo::kRing: return runRing(c, q);
  }
  return GPUPEER_ERROR(ErrorCode::kInternal, "unknown algorithm");
}

}  // namespace

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
  Status st = runChecked(*impl_, q, chosen);
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
      return GPUPEER_ERROR(ErrorCode::kTimeout,
                           fmt::format("rank {} (GPU{}) waited more than 10 s at a barrier for rank {} (GPU{})", r, d,
                                       error - 1, impl_->devices[error - 1]))
          .withKbId("platform/p2p-advertised-but-broken");
    }
  }
  return Status::ok();
}

}  // namespace gpupeer
