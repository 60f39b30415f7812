// Start-up of one rank: who the others are, which one-shot variants every pair allows, this
// rank's memory, and the peers' memory mapped here. Three exchanges: identities, buffers,
// and each rank's verdict on mapping (so one rank's failure reaches every rank at once
// rather than as a timeout in its first operation).

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "collectives/line128_rules.hpp"
#include "collectives/one_shot_kernels.cuh"
#include "collectives/signal_numbers.hpp"
#include "collectives/tuning_variables.hpp"
#include "core/hex.hpp"
#include "core/host_identity.hpp"
#include "cuda/cuda_status.hpp"
#include "gpupeer/peer_access.hpp"
#include "ranks/rank_communicator_impl.hpp"

namespace gpupeer {
namespace {

constexpr std::size_t kP2pSlotBytes = 4u << 20;

}  // namespace

nlohmann::json sharedJson(const SharedBuffer& b) {
  return {{"handle", toHex(&b.handle, sizeof b.handle)}, {"pointer", b.pointer}, {"bytes", b.bytes}};
}

bool sharedFromJson(const nlohmann::json& j, SharedBuffer& b) {
  if (!j.is_object() || !j.contains("handle") || !j["handle"].is_string() ||
      !fromHex(j["handle"].get<std::string>(), &b.handle, sizeof b.handle))
    return false;
  b.pointer = j.value("pointer", std::uint64_t{0});
  b.bytes = j.value("bytes", std::uint64_t{0});
  return true;
}

namespace {

// Whether this rank's GPU reaches every peer's with native atomics (NVLink), which the 128-byte
// lines need (see Communicator::create). A peer this process cannot see, or on the same GPU,
// does not count.
bool nativeAtomicsToAll(int device, const std::vector<PeerIdentity>& peers, int rank) {
  for (int r = 0; r < static_cast<int>(peers.size()); ++r) {
    if (r == rank) continue;
    int other = -1, value = 0;
    if (cudaDeviceGetByPCIBusId(&other, peers[r].busId.c_str()) != cudaSuccess || other == device ||
        cudaDeviceGetP2PAttribute(&value, cudaDevP2PAttrNativeAtomicSupported, device, other) != cudaSuccess ||
        value != 1) {
      (void)cudaGetLastError();
      return false;
    }
  }
  return true;
}

}  // namespace

Result<std::vector<nlohmann::json>> exchangeJson(const AllGatherFn& exchange, const nlohmann::json& mine, int ranks,
                                                 const char* step) {
  Result<std::string> all = exchange(mine.dump());
  if (!all.isOk())
    return GPUPEER_ERROR(all.status().code(), fmt::format("start-up ({}): {}", step, all.status().message()));
  const std::string& bytes = all.value();
  if (bytes.size() % ranks != 0)
    return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("start-up ({}): the all-gather returned {} bytes for {} ranks",
                                                        step, bytes.size(), ranks));
  const std::size_t each = bytes.size() / ranks;
  std::vector<nlohmann::json> parsed;
  for (int r = 0; r < ranks; ++r) {
    std::string part = bytes.substr(r * each, each);
    part.erase(std::find(part.begin(), part.end(), '\0'), part.end());  // fixed-size padding
    nlohmann::json j = nlohmann::json::parse(part, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return GPUPEER_ERROR(ErrorCode::kParse,
                           fmt::format("start-up ({}): rank {}'s message is not gpupeer's (another program on the "
                                       "same id, or a mismatched version)",
                                       step, r));
    parsed.push_back(std::move(j));
  }
  return parsed;
}

// Ranks on several hosts cannot map each other's memory; say so before any rank tries, naming
// the hosts, instead of failing later in an import with a driver error.
static Status checkOneHost(const std::vector<nlohmann::json>& ids, int rank) {
  const std::string mine = ids[rank].value("host", std::string());
  for (std::size_t r = 0; r < ids.size(); ++r) {
    const std::string theirs = ids[r].value("host", std::string());
    if (theirs == mine) continue;
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("rank {} runs on host {}, rank {} on host {}: a gpupeer communicator joins the "
                                     "GPUs of one host; for ranks on several hosts run the NCCL program with "
                                     "libgpupeer_nccl.so (docs/nccl-api.md), which leaves the calls between hosts to "
                                     "NCCL",
                                     rank, hostDisplayName(mine), r, hostDisplayName(theirs)));
  }
  return Status::ok();
}

Status initRank(RankCommunicator::Impl& c, int nranks, int rank, const RankCommOptions& given,
                const AllGatherFn& exchange, const std::string& how) {
  RankCommOptions options = given;
  if (options.slotBytes == 0) options.slotBytes = RankCommOptions::defaultSlotBytes(nranks);
  if (options.slotBytes < 4096 || options.slotBytes % 256)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("slots of at least 4 KiB, a multiple of 256 bytes, not {}", options.slotBytes));
  if (options.timeoutMs < 1)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("a bound of {} ms", options.timeoutMs));
  int device = options.device;
  if (device < 0) GPUPEER_CUDA_CHECK(-1, cudaGetDevice(&device));
  int visible = 0;
  GPUPEER_CUDA_CHECK(-1, cudaGetDeviceCount(&visible));
  if (device >= visible)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("rank {}: GPU{} does not exist ({} visible)", rank, device, visible));
  GPUPEER_CUDA_CHECK(device, cudaSetDevice(device));
  // Before any rank's kernel can wait for this one's (one_shot_device.cuh: loadKernels).
  if (nranks > 1) {
    GPUPEER_CUDA_CHECK(device, loadCollectiveKernels());
    GPUPEER_CUDA_CHECK(device, loadP2pKernels());
  }
  c.rank = rank;
  c.device = device;
  c.exchange = exchange;
  c.zeroCopyFromBytes = options.zeroCopyFromBytes;
  GPUPEER_RETURN_IF_ERROR(c.abortWord.allocate(sizeof(std::uint32_t), cudaHostAllocMapped));
  *static_cast<volatile std::uint32_t*>(c.abortWord.get()) = 0;
  Communicator::Impl& core = c.core;
  core.devices.assign(nranks, -1);
  core.devices[rank] = device;
  core.local = {rank};
  core.callLines = true;
  core.options.oneShotSlotBytes = options.slotBytes;
  // The tuning variables a rank reads as the one-process communicator does: GPUPEER_ALGO (the
  // algorithms through the scratch honour it: collective_algo.hpp) and the kernels' grids and
  // steps. Every rank must have the same: compared with the identities below.
  Result<CommunicatorOptions> environment = CommunicatorOptions::fromEnvironment();
  if (!environment.isOk()) return environment.status();
  core.algorithmOverride = environment.value().algorithm;
  applyRankTuning(environment.value(), core.options);
  const RankTuning tuning = rankTuningOf(environment.value());
  core.timeoutNs = static_cast<unsigned long long>(options.timeoutMs) * 1'000'000ULL;
  core.abortWord = static_cast<const volatile std::uint32_t*>(c.abortWord.get());
  core.ranks.resize(nranks);
  core.views.resize(nranks);
  int major = 0, sms = 0;
  GPUPEER_CUDA_CHECK(device, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  GPUPEER_CUDA_CHECK(device, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  core.ranks[rank].hopperOrLater = major >= 9;
  Communicator::Impl::Rank& mine = core.ranks[rank];
  GPUPEER_RETURN_IF_ERROR(mine.counters.allocate(device, kCounterWords * sizeof(std::uint32_t)));
  GPUPEER_CUDA_CHECK(device, cudaMemset(mine.counters.get(), 0, mine.counters.size()));

  // 1: identities.
  Result<std::vector<nlohmann::json>> ids = exchangeJson(exchange,
                                                         {{"pid", static_cast<int>(getpid())},
                                                          {"device", device},
                                                          {"bus", busIdOf(device)},
                                                          {"sms", sms},
                                                          {"slot", options.slotBytes},
                                                          {"tuning", tuning},
                                                          {"host", hostIdentity()}},
                                                         nranks, "identities");
  if (!ids.isOk()) return ids.status();
  GPUPEER_RETURN_IF_ERROR(checkOneHost(ids.value(), rank));
  for (int r = 0; r < nranks; ++r) {
    const nlohmann::json& j = ids.value()[r];
    c.peers.push_back({j.value("pid", 0), j.value("device", -1), j.value("bus", std::string())});
    if (j.value("slot", std::size_t{0}) != options.slotBytes)
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("rank {} uses slots of {} bytes, rank {} of {}: every rank must pass the same "
                                       "RankCommOptions::slotBytes",
                                       r, j.value("slot", std::size_t{0}), rank, options.slotBytes));
    GPUPEER_RETURN_IF_ERROR(sameRankTuning(tuning, rank, j.value("tuning", RankTuning{}), r));
    core.fewestSms = r == 0 ? j.value("sms", sms) : std::min(core.fewestSms, j.value("sms", sms));
  }
  if (nranks == 1) {
    c.transport = "one rank: every operation is a local copy";
    return Status::ok();
  }

  // 2: this rank's buffers, shared. The 128-byte lines only where every rank reaches every
  // other by NVLink; each rank knows its own links, so each allocates their scratch if its own
  // are all NVLink, and the variant is used only if all did.
  const bool lines128 = nativeAtomicsToAll(device, c.peers, rank);
  core.line128FromBytes = line128FromBytesFor(nranks);
  const std::size_t line128Need = (line128Bytes(options.slotBytes) + 4095) / 4096 * 4096;
  core.line128SlotBytes = lines128 ? std::min(line128SlotBytesAcrossProcessesFor(nranks), line128Need) : 0;
  core.line128OneShotSlotBytes = std::min(core.line128SlotBytes, line128SlotBytesFor(nranks));
  c.p2p.layout = {nranks, kP2pSlotBytes};
  struct Part {
    const char* name;
    DeviceBuffer* buffer;
    std::size_t bytes;
  };
  const Part parts[] = {{"scratch", &mine.scratch, 2 * nranks * options.slotBytes},
                        {"flags", &mine.flags, kOneShotFlagBytes + kRankSignalWords * sizeof(std::uint32_t)},
                        {"lines", &mine.lineScratch, oneShotLineScratchBytes(nranks, core.options.lineSlotBytes)},
                        {"lines128", &mine.line128Scratch, 2 * nranks * core.line128SlotBytes},
                        {"p2p", &c.p2pMemory, c.p2p.layout.bytes()}};
  nlohmann::json shared = {{"nvlink_to_all", lines128}};
  for (const Part& p : parts) {
    if (p.bytes == 0) continue;
    GPUPEER_RETURN_IF_ERROR(p.buffer->allocate(device, p.bytes));
    GPUPEER_CUDA_CHECK(device, cudaMemset(p.buffer->get(), 0, p.bytes));
    Result<SharedBuffer> s = shareBuffer(device, p.buffer->get(), p.bytes);
    if (!s.isOk()) return s.status();
    shared[p.name] = sharedJson(s.value());
  }
  // A piece is staged only where it goes in lines (one_shot_path.cpp: stagingFor), so each of
  // the n input and n output rows holds at most the longest piece of the lines variants
  // (16-byte lines: half their slot; 128-byte lines, the relay's included: less than theirs),
  // not a whole slot.
  const std::size_t stagedRow =
      std::min(options.slotBytes, std::max(core.options.lineSlotBytes / 2, core.line128SlotBytes));
  GPUPEER_RETURN_IF_ERROR(core.alignStaging.allocate(device, 2 * nranks * stagedRow));
  GPUPEER_RETURN_IF_ERROR(
      c.registeredTable.allocate(device, sizeof(RegisteredBuffer) * kMaxRegistrations * kMaxCommRanks));
  GPUPEER_CUDA_CHECK(device, cudaMemset(c.registeredTable.get(), 0, c.registeredTable.size()));
  GPUPEER_CUDA_CHECK(device, cudaDeviceSynchronize());  // zeroed before any peer can map it
  Result<std::vector<nlohmann::json>> buffers = exchangeJson(exchange, shared, nranks, "buffers");
  if (!buffers.isOk()) return buffers.status();

  // 3: map every peer's, then agree that every rank did.
  bool all128 = true;
  for (const nlohmann::json& j : buffers.value()) all128 = all128 && j.value("nvlink_to_all", false);
  if (!all128) core.line128SlotBytes = core.line128OneShotSlotBytes = 0;
  Status mapped;
  c.mapped.reserve(nranks * std::size(parts));
  for (int r = 0; r < nranks && mapped.isOk(); ++r) {
    void* at[std::size(parts)] = {};
    for (std::size_t k = 0; k < std::size(parts) && mapped.isOk(); ++k) {
      if (r == rank) {
        at[k] = parts[k].buffer->get();
        continue;
      }
      if (!buffers.value()[r].contains(parts[k].name)) continue;
      SharedBuffer b;
      if (!sharedFromJson(buffers.value()[r][parts[k].name], b)) {
        mapped = GPUPEER_ERROR(ErrorCode::kParse,
                               fmt::format("start-up: rank {}'s {} handle is malformed", r, parts[k].name));
        break;
      }
      if (c.peers[r].pid == getpid() && c.peers[r].device != device) {
        mapped = PeerAccess::process().enable(device, c.peers[r].device);
        if (!mapped.isOk()) break;
      }
      c.mapped.emplace_back();
      mapped = c.mapped.back().map(device, b, c.peers[r].pid);
      at[k] = c.mapped.back().get();
    }
    core.views[r] = {at[0], static_cast<std::uint32_t*>(at[1]), at[2], all128 ? at[3] : nullptr};
    c.p2p.memory[r] = at[4];
  }
  Result<std::vector<nlohmann::json>> verdicts = exchangeJson(
      exchange, {{"ok", mapped.isOk()}, {"why", mapped.message()}, {"kb", mapped.kbId()}}, nranks, "mapping");
  if (!verdicts.isOk()) return verdicts.status();
  if (!mapped.isOk()) return mapped;
  // Every rank says the same reason, with the KB entry and `gpupeer check --ipc` that the rank
  // which could not map found (peer_memory.cpp).
  for (int r = 0; r < nranks; ++r)
    if (!verdicts.value()[r].value("ok", false))
      return GPUPEER_ERROR(ErrorCode::kUnsupported, fmt::format("rank {} could not map its peers' memory: {}", r,
                                                                verdicts.value()[r].value("why", std::string())))
          .withKbId(verdicts.value()[r].value("kb", std::string()));
  // The copy-engine algorithm's signals: words after the one-shot flags of every rank.
  std::vector<std::uint32_t*> signalWords;
  for (int r = 0; r < nranks; ++r)
    signalWords.push_back(core.views[r].flags + kOneShotFlagBytes / sizeof(std::uint32_t));
  GPUPEER_RETURN_IF_ERROR(createSideStream(mine, device, true));
  GPUPEER_RETURN_IF_ERROR(core.signals.createInMemory(rank, device, signalWords, kSignalsPerSender,
                                                      {c.errorWord(), core.timeoutNs, core.abortWord}));
  c.p2p.rank = rank;
  GPUPEER_CUDA_CHECK(device, p2pBlockBudget(device, &c.p2p.blockBudget));
  c.p2p.error = c.errorWord();
  c.p2p.timeoutNs = core.timeoutNs;
  c.p2p.abortWord = core.abortWord;
  c.transport = fmt::format("{} ranks, peers' memory mapped by CUDA IPC handles exchanged {}{}", nranks, how,
                            all128 ? "; 128-byte lines (NVLink between every pair)" : "");
  return Status::ok();
}

}  // namespace gpupeer
