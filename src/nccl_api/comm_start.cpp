#include "nccl_api/comm_start.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/host_identity.hpp"
#include "cuda/device_guard.hpp"
#include "nccl_api/debug_log.hpp"
#include "nccl_api/host_layout.hpp"
#include "nccl_api/nccl_exchange.hpp"
#include "nccl_api/real_nccl.hpp"
#include "nccl_api/route_table.hpp"

namespace gpupeer::nccl_api {
namespace {

// NCCL programs may leave a rank out of a collective for minutes (a checkpoint written by rank 0
// alone) and NCCL waits; gpupeer's bound on waits for a peer is set as long as PyTorch's
// default watchdog (10 minutes) so that a slow rank is not taken for a dead one.
int waitBoundMs() {
  const char* text = std::getenv("GPUPEER_NCCL_TIMEOUT_MS");
  if (text != nullptr) {
    char* end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && value > 0 && value <= INT_MAX) return static_cast<int>(value);
    logWarn("GPUPEER_NCCL_TIMEOUT_MS={} is not a number of milliseconds from 1 to {}: using 600000", text, INT_MAX);
  }
  return 600000;
}

// gpupeer's tuning variables, with NCCL programs' bound on waits: a GPU of the set may be held
// by other work for as long as a peer process may.
Result<std::unique_ptr<Communicator>> oneProcessCommunicator(const std::vector<int>& devices) {
  Result<CommunicatorOptions> options = CommunicatorOptions::fromEnvironment();
  if (!options.isOk()) return options.status();
  CommunicatorOptions o = options.value();
  o.barrierTimeoutMs = waitBoundMs();
  return Communicator::create(devices, o);
}

// Why this rank alone would not start gpupeer ("" where it would).
std::string localRefusal(const CommState& s) {
  if (routeMode() == RouteMode::kNccl) return "GPUPEER_NCCL_ROUTE=nccl";
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    (void)cudaGetLastError();
    return "no GPU visible to CUDA in this process";
  }
  if (s.device < 0 || s.device >= count) return fmt::format("NCCL names GPU{}, {} visible", s.device, count);
  return {};
}

// The agreement that follows gpupeer's own start-up: ok only where every rank started.
bool everyRankStarted(CommState& s, bool started, std::string& why) {
  Result<std::vector<std::optional<std::string>>> all = gatherOverNccl(s, {}, !started);
  if (!all.isOk()) {
    why = all.status().toString();
    return false;
  }
  for (int r = 0; r < s.ranks; ++r)
    if (!all.value()[r]) {
      why = fmt::format("rank {} could not start its gpupeer communicator", r);
      return false;
    }
  return started;
}

// The rank, size and GPU NCCL gave the communicator; false (and `why`) where NCCL does not say.
bool readIdentity(CommState& s) {
  const RealNccl& real = realNccl();
  if (real.ncclCommUserRank(s.real, &s.rank) == ncclSuccess && real.ncclCommCount(s.real, &s.ranks) == ncclSuccess &&
      real.ncclCommCuDevice(s.real, &s.device) == ncclSuccess)
    return true;
  s.why = "NCCL did not say the communicator's rank, size or GPU";
  return false;
}

// Whether `states` are every rank of one communicator, once each, on GPUs of their own.
bool wholeCommunicator(const std::vector<std::shared_ptr<CommState>>& states) {
  const int n = static_cast<int>(states.size());
  std::vector<bool> rankSeen(n, false);
  std::vector<int> devices;
  for (const std::shared_ptr<CommState>& s : states) {
    if (s->ranks != n || s->rank < 0 || s->rank >= n || rankSeen[s->rank]) return false;
    if (std::find(devices.begin(), devices.end(), s->device) != devices.end()) return false;
    rankSeen[s->rank] = true;
    devices.push_back(s->device);
  }
  return true;
}

// gpupeer's one-process communicator for every rank of one communicator, all in `states`; their
// `why` where it cannot start.
void startOneProcessSet(const std::vector<std::shared_ptr<CommState>>& states) {
  const int n = static_cast<int>(states.size());
  std::string why;
  if (n > kMaxCommRanks) why = fmt::format("{} ranks (gpupeer joins 2 to {})", n, kMaxCommRanks);
  std::vector<int> devices(n);
  for (const std::shared_ptr<CommState>& s : states) {
    devices[s->rank] = s->device;
    if (why.empty()) why = localRefusal(*s);
  }
  if (!why.empty()) {
    for (const std::shared_ptr<CommState>& s : states) s->why = why;
    logInfo("comm {} ({} ranks in this process): every call to NCCL: {}", fmt::ptr(states.front()->real), n, why);
    return;
  }
  std::shared_ptr<Communicator> comm;
  {
    DeviceGuard guard;  // the communicator's making switches devices; the program's stays
    Result<std::unique_ptr<Communicator>> made = oneProcessCommunicator(devices);
    if (!made.isOk()) {
      for (const std::shared_ptr<CommState>& s : states) s->why = made.status().toString();
      logWarn("comm {} ({} ranks in this process): gpupeer did not start, every call to NCCL: {}",
              fmt::ptr(states.front()->real), n, made.status().toString());
      return;
    }
    comm = std::move(made).value();
  }
  for (const std::shared_ptr<CommState>& s : states) s->oneProcess = comm;
  logInfo(
      "comm {} ({} ranks, all in this process, GPUs {}): gpupeer's one-process communicator started ({}); "
      "grouped calls of every rank go where route '{}' says",
      fmt::ptr(states.front()->real), n, fmt::join(devices, ","), comm->transport(), routeModeName(routeMode()));
}

// Takes out of `states` each communicator this process drives every rank of and starts its
// one-process set (a communicator of one rank is left).
void startOneProcessSets(std::vector<std::shared_ptr<CommState>>& states) {
  std::map<std::string, std::vector<std::shared_ptr<CommState>>> byClique;
  for (const std::shared_ptr<CommState>& s : states)
    if (!s->clique.empty() && s->why.empty() && s->ranks > 1) byClique[s->clique].push_back(s);
  for (auto& [clique, members] : byClique) {
    if (!wholeCommunicator(members)) continue;
    startOneProcessSet(members);
    std::erase_if(states, [&members](const std::shared_ptr<CommState>& s) {
      return std::find(members.begin(), members.end(), s) != members.end();
    });
    for (std::shared_ptr<CommState>& s : members) addComm(std::move(s));
  }
}

}  // namespace

bool blockingComm(const ncclConfig_t* config) {
  if (config != nullptr && config->blocking != NCCL_CONFIG_UNDEF_INT) return config->blocking != 0;
  const char* env = std::getenv("NCCL_COMM_BLOCKING");
  return env == nullptr || std::atoi(env) != 0;
}

std::shared_ptr<CommState> newState(ncclComm_t real, std::string clique) {
  auto state = std::make_shared<CommState>();
  state->real = real;
  state->clique = std::move(clique);
  return state;
}

namespace {

void startGpupeer(CommState& s);

// A communicator whose ranks run on several hosts: its all-reduce may run in parts (runCall),
// gpupeer among each host's ranks and NCCL across hosts, where every host has as many ranks,
// several, each in a process of its own. Collective over the communicator: every rank decides
// alike from the exchange, makes the same two NCCL splits, and joins the same agreement, so that
// every rank ends with the parts or every rank without them.
void startAcrossHosts(CommState& s, const HostLayout& layout, const std::vector<std::string>& hostOf,
                      bool anySharesProcess) {
  int other = 0;
  while (hostOf[other] == hostOf[s.rank]) ++other;
  const std::string where = fmt::format("ranks on {} hosts (rank {} on {}, rank {} on {})", layout.hosts, s.rank,
                                        hostDisplayName(hostOf[s.rank]), other, hostDisplayName(hostOf[other]));
  // Every call to NCCL, for `reason`; `failed`: the parts were to start but did not.
  auto noParts = [&](const std::string& reason, bool failed) {
    s.why = fmt::format("{}: calls between hosts are NCCL's, and no call runs in parts: {}", where, reason);
    if (failed)
      logWarn("comm {} rank {}/{}: every call to NCCL: {}", fmt::ptr(s.real), s.rank, s.ranks, s.why);
    else
      logInfo("comm {} rank {}/{}: every call to NCCL: {}", fmt::ptr(s.real), s.rank, s.ranks, s.why);
  };
  if (layout.perHost == 0) return noParts("the hosts have different numbers of ranks", false);
  if (layout.perHost == 1) return noParts("one rank per host", false);
  if (anySharesProcess) return noParts("a process drives several of the communicator's GPUs", false);
  auto parts = std::make_unique<CommState::AcrossHosts>();
  // NCCL's splits are collective over the whole communicator: every rank makes both.
  const ncclResult_t madeInside =
      GPUPEER_REAL_NCCL(ncclCommSplit, s.real, layout.hostIndex, s.rank, &parts->insideComm, nullptr);
  const ncclResult_t madeAcross =
      GPUPEER_REAL_NCCL(ncclCommSplit, s.real, layout.localIndex, s.rank, &parts->across, nullptr);
  std::string why;
  if (madeInside == ncclSuccess && madeAcross == ncclSuccess && parts->insideComm != nullptr &&
      parts->across != nullptr) {
    parts->inside = newState(parts->insideComm);
    if (readIdentity(*parts->inside)) startGpupeer(*parts->inside);  // among this host's ranks only
    why = parts->inside->why;
  } else {
    why = fmt::format("NCCL could not split the communicator by host ({}, {})",
                      realNccl().ncclGetErrorString(madeInside), realNccl().ncclGetErrorString(madeAcross));
  }
  std::string agreed;
  if (!everyRankStarted(s, why.empty(), agreed) && why.empty()) why = agreed;
  if (!why.empty()) {
    endSplits(*parts, false);
    return noParts(why, true);
  }
  s.acrossHosts = std::move(parts);
  logInfo(
      "comm {} rank {}/{}: {}, {} each: an all-reduce may run in parts, gpupeer among this host's ranks "
      "(place {}) and NCCL across hosts, where route '{}' says; every other call to NCCL",
      fmt::ptr(s.real), s.rank, s.ranks, where, layout.perHost, layout.localIndex, routeModeName(routeMode()));
}

// Collective over the communicator's ranks, whose identity was read (readIdentity): where every
// rank runs on one host, gpupeer may be used and each rank's gpupeer communicator started, keeps
// it; else s.why says why not. Every rank takes part in the same number of exchanges whatever
// fails where, so no rank is left waiting.
void startGpupeer(CommState& s) {
  if (!s.why.empty()) return;  // NCCL did not say the rank, size or GPU
  // Decided alike on every rank without an exchange: the rank count is the same everywhere.
  if (s.ranks < 2 || s.ranks > kMaxCommRanks) {
    s.why = fmt::format("{} ranks (gpupeer joins 2 to {})", s.ranks, kMaxCommRanks);
    logInfo("comm {} rank {}/{}: every call to NCCL: {}", fmt::ptr(s.real), s.rank, s.ranks, s.why);
    return;
  }
  // 1: whether every rank can and may start, on which host it runs, and whether its process
  // drives other ranks of the communicator too.
  const std::string refusal = localRefusal(s);
  nlohmann::json mine = {{"host", hostIdentity()}, {"refusal", refusal}, {"sharesProcess", s.sharesProcess}};
  Result<std::vector<std::optional<std::string>>> hosts = gatherOverNccl(s, mine.dump(), false);
  if (!hosts.isOk()) {
    s.why = hosts.status().toString();
    logWarn("comm {} rank {}/{}: every call to NCCL: {}", fmt::ptr(s.real), s.rank, s.ranks, s.why);
    return;
  }
  std::vector<std::string> hostOf(s.ranks);
  bool anySharesProcess = false;
  for (int r = 0; r < s.ranks && s.why.empty(); ++r) {
    nlohmann::json theirs = nlohmann::json::parse(hosts.value()[r].value_or(""), nullptr, false);
    hostOf[r] = theirs.is_object() ? theirs.value("host", std::string()) : std::string();
    const std::string theirRefusal = theirs.is_object() ? theirs.value("refusal", std::string("?")) : "?";
    anySharesProcess |= theirs.is_object() && theirs.value("sharesProcess", false);
    if (!theirRefusal.empty()) s.why = fmt::format("rank {}: {}", r, theirRefusal);
  }
  if (!s.why.empty()) {
    logInfo("comm {} rank {}/{}: every call to NCCL: {}", fmt::ptr(s.real), s.rank, s.ranks, s.why);
    return;
  }
  if (const HostLayout layout = hostLayout(hostOf, s.rank); layout.hosts > 1) {
    startAcrossHosts(s, layout, hostOf, anySharesProcess);
    return;
  }

  // 2: gpupeer's own start-up, its exchanges carried by NCCL; then the agreement. A rank whose
  // start-up failed on its own sends its failure in the next exchange, which its peers are
  // either in (they fail at once) or reach next (the agreement): the counts stay equal.
  auto sawFailure = std::make_shared<bool>(false);
  AllGatherFn exchange = [state = &s, sawFailure](const std::string& blob) -> Result<std::string> {
    Result<std::vector<std::optional<std::string>>> parts = gatherOverNccl(*state, blob, false);
    if (!parts.isOk()) return parts.status();
    std::size_t each = 1;
    for (const std::optional<std::string>& p : parts.value()) each = std::max(each, p ? p->size() : 0);
    std::string joined;
    for (int r = 0; r < state->ranks; ++r) {
      if (!parts.value()[r]) {
        *sawFailure = true;
        return GPUPEER_ERROR(ErrorCode::kUnsupported,
                             fmt::format("rank {} could not start its gpupeer communicator", r));
      }
      std::string part = *parts.value()[r];
      part.resize(each, '\0');
      joined += part;
    }
    return joined;
  };
  RankCommOptions options;
  options.device = s.device;
  options.timeoutMs = waitBoundMs();
  Result<std::unique_ptr<RankCommunicator>> made =
      RankCommunicator::initWithAllGather(s.ranks, s.rank, exchange, options);
  // This rank's own failure is the reason it gives; the agreement it still joins (so that its
  // peers' exchange counts stay equal) would only name this rank back.
  std::string agreed;
  if (!made.isOk()) {
    s.why = made.status().toString();
    if (!*sawFailure) everyRankStarted(s, false, agreed);
  } else if (!everyRankStarted(s, true, agreed)) {
    s.why = agreed;
  }
  if (!s.why.empty()) {
    logWarn("comm {} rank {}/{} (GPU{}): gpupeer did not start, every call to NCCL: {}", fmt::ptr(s.real), s.rank,
            s.ranks, s.device, s.why);
    return;
  }
  // Registration exchanges later use the same path; they fail rather than wait on a failure.
  s.gpupeer = std::move(made).value();
  logInfo("comm {} rank {}/{} (GPU{}): gpupeer started ({}); calls go where route '{}' says", fmt::ptr(s.real), s.rank,
          s.ranks, s.device, s.gpupeer->transport(), routeModeName(routeMode()));
}

}  // namespace

void startAndAdd(std::vector<std::shared_ptr<CommState>> states) {
  for (const std::shared_ptr<CommState>& s : states) readIdentity(*s);
  startOneProcessSets(states);
  if (states.empty()) return;
  for (const std::shared_ptr<CommState>& s : states) s->sharesProcess = states.size() > 1;
  if (states.size() == 1) {
    startGpupeer(*states[0]);
  } else {
    std::vector<std::thread> threads;
    for (const std::shared_ptr<CommState>& s : states) threads.emplace_back([s] { startGpupeer(*s); });
    for (std::thread& t : threads) t.join();
  }
  for (std::shared_ptr<CommState>& s : states) addComm(std::move(s));
}

}  // namespace gpupeer::nccl_api
