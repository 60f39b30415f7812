// Communicator::create as its stages: check the options, resolve the rules they leave open,
// enable peer access, decide on the 128-byte lines, prepare each rank (kernels, scratch,
// streams, events), then the signals, the staged copies and the launch threads.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "collectives/ce_issuer.hpp"
#include "collectives/communicator_impl.hpp"
#include "collectives/line128_rules.hpp"
#include "collectives/one_shot_kernels.cuh"
#include "collectives/tuning_variables.hpp"
#include "cuda/cuda_status.hpp"
#include "gpupeer/log.hpp"
#include "gpupeer/peer_access.hpp"
#include "probe/sysfs.hpp"

namespace gpupeer {
namespace {

// The staged pipeline's shape: 4 MiB chunks moved as fast as 8 MiB ones on 2x H200 with half
// the pinned memory (the no-P2P paragraph of docs/collectives.md): n(n-1) pairs hold 12 MiB each.
constexpr std::size_t kStagingChunkBytes = 4u << 20;
constexpr int kStagingBuffers = 3;

using Impl = Communicator::Impl;
using PairSet = std::set<std::pair<int, int>>;

// The NUMA node the GPU's PCIe device sits on (sysfs), or -1 (any) where it is not known.
int numaNodeOf(int device) {
  Known<int> node = sysfs::readInt("", "/sys/bus/pci/devices/" + busIdOf(device) + "/numa_node");
  return node.known() ? node.value() : -1;
}

Status checkDevices(const std::vector<int>& devices) {
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
  return Status::ok();
}

// The values the options leave to rules of the rank count, and the algorithm override.
Status resolveTuning(Impl& c) {
  const CommunicatorOptions& o = c.options;
  const int n = c.n();
  GPUPEER_RETURN_IF_ERROR(checkTuningRanges(o));
  c.line128SlotBytes = o.line128SlotBytes == CommunicatorOptions::kByRule ? line128SlotBytesFor(n) : o.line128SlotBytes;
  c.line128OneShotSlotBytes = c.line128SlotBytes;
  c.line128FromBytes = o.line128FromBytes == CommunicatorOptions::kByRule ? line128FromBytesFor(n) : o.line128FromBytes;
  switch (o.ceIssue) {
    case CommunicatorOptions::CeIssue::kByRule: c.ceIssuer = ceIssuerFor(n); break;
    case CommunicatorOptions::CeIssue::kSender: c.ceIssuer = CeIssuer::kSender; break;
    case CommunicatorOptions::CeIssue::kReceiver: c.ceIssuer = CeIssuer::kReceiver; break;
  }
  if (o.barrierTimeoutMs < 1)
    return GPUPEER_ERROR(
        ErrorCode::kInvalidArgument,
        fmt::format("CommunicatorOptions::barrierTimeoutMs = {}: give at least 1", o.barrierTimeoutMs));
  c.timeoutNs = static_cast<unsigned long long>(o.barrierTimeoutMs) * 1'000'000ULL;
  c.algorithmOverride = o.algorithm;
  if (!o.algorithm.empty()) {
    Result<CollAlgo> parsed = parseCollAlgo(o.algorithm);
    if (!parsed.isOk()) return parsed.status();
  }
  return Status::ok();
}

// P2P between every pair, or the reason the copies will be staged through host memory; and
// whether each rank still reaches the next one (rank order, the ring's links) by P2P. Returns
// the ordered pairs of ranks whose copies are staged.
PairSet enablePeerAccess(Impl& c) {
  const int n = c.n();
  PairSet staged;
  if (c.options.disableP2p) {
    c.p2p = false;
    c.transport =
        "P2P disabled (CommunicatorOptions::disableP2p, which GPUPEER_P2P_DISABLE=1 or NCCL_P2P_DISABLE=1 sets): "
        "copies staged through host memory";
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k)
        if (i != k) staged.insert({i, k});
    c.ringP2p = false;
    return staged;
  }
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      if (i == k) continue;
      const int a = c.devices[i], b = c.devices[k];
      if (Status st = PeerAccess::process().enable(a, b); !st.isOk()) {
        if (staged.empty())
          c.transport =
              fmt::format("no P2P from GPU{} to GPU{} ({}): copies staged through host memory", a, b, st.message());
        staged.insert({i, k});
        c.p2p = false;
      }
    }
  c.ringP2p = true;
  for (int i = 0; i < n; ++i)
    if (staged.count({i, (i + 1) % n}) || staged.count({(i + 1) % n, i})) c.ringP2p = false;
  return staged;
}

// The 128-byte lines rely on a line stored by one instruction arriving whole, which NVLink
// provides (NCCL takes its LL128 only over NVLink too). CUDA reports native atomics between
// two GPUs over NVLink (true for every pair of the 2x and 4x H200 machines' snapshots), not
// over PCIe: without them on every pair, no 128-byte lines, whatever line128SlotBytes says.
void detectLineSupport(Impl& c) {
  const int n = c.n();
  bool nativeAtomics = c.p2p;
  for (int i = 0; i < n && nativeAtomics; ++i)
    for (int k = 0; k < n && nativeAtomics; ++k) {
      int value = 0;
      nativeAtomics = i == k || (cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrNativeAtomicSupported, c.devices[i],
                                                           c.devices[k]) == cudaSuccess &&
                                 value == 1);
    }
  (void)cudaGetLastError();
  if (!nativeAtomics) c.line128SlotBytes = c.line128OneShotSlotBytes = 0;
}

// transport() completed: what carries the copies where P2P is missing somewhere.
void describeTransport(Impl& c) {
  if (c.p2p) {
    c.transport = fmt::format("P2P between all {} GPUs", c.n());
    return;
  }
  if (c.ringP2p)
    c.transport += fmt::format(
        "; the ring (every rank to the next in rank order) runs over P2P for all-reduce, all-gather, "
        "reduce-scatter, broadcast and reduce");
  c.transport += c.options.stagedPipeline
                     ? fmt::format(" (gpupeer's pipeline: {} MiB chunks through {} pinned buffers per pair)",
                                   kStagingChunkBytes >> 20, kStagingBuffers)
                     : " (CUDA's own staging: CommunicatorOptions::stagedPipeline off, GPUPEER_STAGING=cuda)";
  GPUPEER_WARN("communicator: {}", c.transport);
}

// Before any rank's kernel can wait for this one's (one_shot_device.cuh: loadKernels): a first
// launch behind busy work would otherwise hold the launching thread, and with it the other
// ranks' launches, until that work ends.
Status loadKernels(int d) {
  GPUPEER_CUDA_CHECK(d, cudaSetDevice(d));
  GPUPEER_CUDA_CHECK(d, loadCollectiveKernels());
  return Status::ok();
}

// Rank r's one-shot scratch, flags, counters and lines, zeroed (on the current device, d's).
Status allocateScratch(Impl& c, int r) {
  Impl::Rank& rank = c.ranks[r];
  const int d = c.devices[r], n = c.n();
  GPUPEER_RETURN_IF_ERROR(rank.scratch.allocate(d, 2 * n * c.options.oneShotSlotBytes));
  GPUPEER_RETURN_IF_ERROR(rank.flags.allocate(d, kOneShotFlagBytes));
  GPUPEER_RETURN_IF_ERROR(rank.counters.allocate(d, kCounterWords * sizeof(std::uint32_t)));
  GPUPEER_RETURN_IF_ERROR(rank.lineScratch.allocate(d, oneShotLineScratchBytes(n, c.options.lineSlotBytes)));
  GPUPEER_CUDA_CHECK(d, cudaMemset(rank.lineScratch.get(), 0, rank.lineScratch.size()));
  if (c.line128SlotBytes) {
    GPUPEER_RETURN_IF_ERROR(rank.line128Scratch.allocate(d, 2 * n * c.line128SlotBytes));
    GPUPEER_CUDA_CHECK(d, cudaMemset(rank.line128Scratch.get(), 0, rank.line128Scratch.size()));
  }
  GPUPEER_CUDA_CHECK(d, cudaMemset(rank.flags.get(), 0, kOneShotFlagBytes));
  GPUPEER_CUDA_CHECK(d, cudaMemset(rank.counters.get(), 0, rank.counters.size()));
  return Status::ok();
}

// Rank r's GPU facts and its copy-engine scratch, side stream and events.
Status prepareCopies(Impl& c, int r) {
  Impl::Rank& rank = c.ranks[r];
  const int d = c.devices[r];
  int major = 0, sms = 0;
  GPUPEER_CUDA_CHECK(d, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, d));
  GPUPEER_CUDA_CHECK(d, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d));
  c.fewestSms = r == 0 ? sms : std::min(c.fewestSms, sms);
  rank.hopperOrLater = major >= 9;
  GPUPEER_RETURN_IF_ERROR(rank.ceScratch.allocate(d, c.n() * c.options.ceSlotBytes));
  return createSideStream(rank, d, false);
}

// Every rank's kernels and memory, rank by rank; with P2P the one-shot path's too.
Status prepareRanks(Impl& c) {
  c.ranks.resize(c.n());
  for (int r = 0; r < c.n(); ++r) {
    const int d = c.devices[r];
    if (c.p2p) {
      GPUPEER_RETURN_IF_ERROR(loadKernels(d));
      GPUPEER_RETURN_IF_ERROR(allocateScratch(c, r));
    }
    GPUPEER_RETURN_IF_ERROR(prepareCopies(c, r));
    GPUPEER_CUDA_CHECK(d, cudaDeviceSynchronize());
    const Impl::Rank& rank = c.ranks[r];
    c.views.push_back({rank.scratch.get(), static_cast<std::uint32_t*>(rank.flags.get()), rank.lineScratch.get(),
                       rank.line128Scratch.get()});
    c.local.push_back(r);
  }
  return Status::ok();
}

// Per ordered pair without P2P, gpupeer's pipeline unless the options ask for CUDA's staging.
// Made here: pinned memory cannot be allocated while a CUDA graph is captured.
Status createStaging(Impl& c, const PairSet& staged) {
  if (c.p2p || !c.options.stagedPipeline) return Status::ok();
  for (const auto& [i, k] : staged) {
    auto pipeline = std::make_unique<StagedPipeline>();
    GPUPEER_RETURN_IF_ERROR(
        pipeline->init(c.devices[i], c.devices[k], kStagingChunkBytes, kStagingBuffers, numaNodeOf(c.devices[i])));
    c.staged[{i, k}] = std::move(pipeline);
  }
  return Status::ok();
}

// A launch thread per rank, unless the options say no or the process has fewer CPUs than ranks.
void startLaunchPool(Impl& c) {
  if (c.p2p && c.options.launchThreads && launchThreadsHelp(cpusAvailable(), c.n()))
    c.pool = std::make_unique<LaunchPool>(c.devices);
}

}  // namespace

Status createSideStream(Communicator::Impl::Rank& rank, int device, bool acrossProcesses) {
  GPUPEER_RETURN_IF_ERROR(rank.copyStream.create(device));
  GPUPEER_RETURN_IF_ERROR(rank.start.create(device));
  GPUPEER_RETURN_IF_ERROR(rank.copiesDone.create(device));
  rank.copied.resize(kMaxCePositions);
  for (Event& e : rank.copied) GPUPEER_RETURN_IF_ERROR(e.create(device));
  if (acrossProcesses) {
    rank.freed.resize(kMaxCePositions);
    for (Event& e : rank.freed) GPUPEER_RETURN_IF_ERROR(e.create(device));
    GPUPEER_RETURN_IF_ERROR(rank.postStream.create(device));
    GPUPEER_RETURN_IF_ERROR(rank.postsDone.create(device));
  }
  return Status::ok();
}

Result<std::unique_ptr<Communicator>> Communicator::create(const std::vector<int>& devices) {
  Result<CommunicatorOptions> options = CommunicatorOptions::fromEnvironment();
  if (!options.isOk()) return options.status();
  return create(devices, options.value());
}

Result<std::unique_ptr<Communicator>> Communicator::create(const std::vector<int>& devices,
                                                           const CommunicatorOptions& options) {
  GPUPEER_RETURN_IF_ERROR(checkDevices(devices));
  auto impl = std::make_unique<Impl>();
  impl->devices = devices;
  impl->options = options;
  GPUPEER_RETURN_IF_ERROR(resolveTuning(*impl));
  const PairSet staged = enablePeerAccess(*impl);
  detectLineSupport(*impl);
  describeTransport(*impl);
  GPUPEER_RETURN_IF_ERROR(prepareRanks(*impl));
  GPUPEER_RETURN_IF_ERROR(impl->signals.create(devices, kSignalsPerSender));
  GPUPEER_RETURN_IF_ERROR(createStaging(*impl, staged));
  startLaunchPool(*impl);
  return std::unique_ptr<Communicator>(new Communicator(std::move(impl)));
}

}  // namespace gpupeer
