// Pure parts of the cross-process check: what the platform facts say stands in the way, and the
// report in text and JSON.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/bounded_input.hpp"
#include "core/terminal_text.hpp"
#include "gpupeer/ipc_check.hpp"
#include "gpupeer/probe.hpp"

namespace gpupeer {
namespace {

// The host's initial namespaces (PROC_IPC_INIT_INO, PROC_PID_INIT_INO in include/linux/proc_ns.h).
constexpr const char* kHostIpcNamespace = "ipc:[4026531839]";
constexpr const char* kHostPidNamespace = "pid:[4026531836]";
constexpr int kCapSysPtrace = 19;
// NCCL's SHM transport and vLLM's shared-memory broadcast need more than Docker's 64 MiB.
constexpr std::int64_t kMinDevShmBytes = 1ll << 30;

}  // namespace

const char* ipcMechanismName(IpcMechanism m) {
  switch (m) {
    case IpcMechanism::kCudaIpc: return "cuda-ipc";
    case IpcMechanism::kCuMemPosixFd: return "cumem-posix-fd";
  }
  return "?";
}

std::vector<IpcObstacle> ipcObstacles(const Snapshot& s) {
  std::vector<IpcObstacle> out;
  const Platform& p = s.platform;
  if (p.ptraceScope.known() && p.ptraceScope.value() > 0) {
    int scope = p.ptraceScope.value();
    bool cap = p.hasCapability(kCapSysPtrace).valueOr(false);
    // Scope 1 still lets a process take from its descendants, but ranks are siblings; with
    // CAP_SYS_PTRACE scopes 1 and 2 allow it, scope 3 never does.
    if (scope == 3 || !cap)
      out.push_back({"cumem-posix-fd",
                     fmt::format("Yama ptrace_scope={}{}: pidfd_getfd between sibling processes is refused", scope,
                                 scope < 3 ? " without CAP_SYS_PTRACE" : ""),
                     "nccl/cumem-import-pidfd"});
  }
  if (p.ipcNamespace.known() && p.ipcNamespace.value() != kHostIpcNamespace)
    out.push_back({"all",
                   fmt::format("own IPC namespace {}: processes in other containers cannot open this one's CUDA IPC "
                               "handles or shared memory",
                               p.ipcNamespace.value()),
                   "nccl/ipc-across-containers"});
  if (p.pidNamespace.known() && p.pidNamespace.value() != kHostPidNamespace)
    out.push_back({"cumem-posix-fd",
                   fmt::format("own PID namespace {}: processes in other containers cannot name this one's pid for "
                               "pidfd_getfd",
                               p.pidNamespace.value()),
                   "nccl/ipc-across-containers"});
  if (!p.devShmBytes.known() && p.devShmBytes.reason() != kNotRecorded)
    out.push_back({"posix-shm", "no usable /dev/shm (" + p.devShmBytes.reason() + ")", "nccl/devshm-exhausted"});
  else if (p.devShmBytes.known() && p.devShmBytes.value() < kMinDevShmBytes)
    out.push_back({"posix-shm",
                   fmt::format("/dev/shm holds only {} MiB: NCCL's SHM transport and shared-memory broadcasts run "
                               "out of space",
                               p.devShmBytes.value() >> 20),
                   "nccl/devshm-exhausted"});
  return out;
}

Status ipcSharingFailure(ErrorCode code, const std::string& what, IpcMechanism mechanism, const Platform& platform,
                         const std::string& fallbackKbId) {
  Snapshot s;
  s.platform = platform;
  std::string seen, kbId;
  for (const IpcObstacle& o : ipcObstacles(s)) {
    if (o.mechanism != "all" && o.mechanism != ipcMechanismName(mechanism)) continue;
    seen += fmt::format("{}{} (KB {})", seen.empty() ? "" : "; ", o.why, o.kbId);
    if (kbId.empty()) kbId = o.kbId;
  }
  std::string message =
      seen.empty() ? what +
                         ": the processes must see each other (same IPC and PID namespace, e.g. docker --ipc=host "
                         "--pid=host) and their GPUs must support P2P"
                   : what + ". In this process's surroundings: " + seen;
  message += ". `gpupeer check --ipc` tests sharing GPU memory between two processes here and says why it fails";
  return GPUPEER_ERROR(code, message).withKbId(kbId.empty() ? fallbackKbId : kbId);
}

std::string renderIpcNoGpu(const Snapshot& s) {
  std::string out = "no NVIDIA GPU visible: " + terminalSafe(whyNoGpu(s)) + "\n";
  for (const IpcObstacle& o : ipcObstacles(s))
    out += fmt::format("  {}: {} (KB {})\n", o.mechanism, terminalSafe(o.why), o.kbId);
  return out;
}

int IpcCheckReport::count(CheckOutcome o) const {
  int n = 0;
  for (const IpcMechanismResult& r : results) n += r.outcome == o;
  return n;
}

std::string renderIpcCheckReport(const IpcCheckReport& r) {
  std::string out = fmt::format("Sharing GPU{} ({}) memory with a second process:\n", r.device, r.busId);
  for (const IpcMechanismResult& m : r.results) {
    out += fmt::format("  {:<15} {}  {}\n", ipcMechanismName(m.mechanism), checkOutcomeName(m.outcome), m.detail);
    if (!m.kbId.empty()) out += fmt::format("                       explained by KB {}\n", m.kbId);
  }
  if (!r.obstacles.empty()) out += "In this process's surroundings:\n";
  for (const IpcObstacle& o : r.obstacles) out += fmt::format("  {}: {} (KB {})\n", o.mechanism, o.why, o.kbId);
  return out;
}

std::string ipcCheckReportToJson(const IpcCheckReport& r) {
  nlohmann::ordered_json j;
  j["device"] = r.device;
  j["busId"] = r.busId;
  j["results"] = nlohmann::ordered_json::array();
  for (const IpcMechanismResult& m : r.results)
    j["results"].push_back({{"mechanism", ipcMechanismName(m.mechanism)},
                            {"outcome", checkOutcomeName(m.outcome)},
                            {"detail", m.detail},
                            {"kbId", m.kbId},
                            {"onlyPidfdRefused", m.onlyPidfdRefused}});
  j["obstacles"] = nlohmann::ordered_json::array();
  for (const IpcObstacle& o : r.obstacles)
    j["obstacles"].push_back({{"mechanism", o.mechanism}, {"why", o.why}, {"kbId", o.kbId}});
  return dumpJson(j, 2) + "\n";
}

}  // namespace gpupeer
