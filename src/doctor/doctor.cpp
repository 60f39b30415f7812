// The rule list, and the verdict line that sums the findings up.
#include <algorithm>

#include "doctor/rules.hpp"
#include "gpupeer/probe.hpp"
#include "gpupeer/topology.hpp"

namespace gpupeer {

const char* severityName(Severity s) {
  switch (s) {
    case Severity::kInfo: return "info";
    case Severity::kWarning: return "warning";
    case Severity::kError: return "error";
  }
  return "?";
}

const std::vector<DoctorRule>& doctorRules() {
  using namespace rules;
  static const std::vector<DoctorRule> kRules = {
      {"p2p-data-check", "p2p", p2pCheckFailures},
      {"p2p-unsupported", "p2p", p2pUnsupportedPairs},
      {"p2p-capability-disagrees", "p2p", p2pCapabilityDisagrees},
      {"peer-limit", "p2p", tooManyPeers},
      {"mixed-models", "p2p", mixedGpuModels},
      {"fabric-manager", "nvlink", fabricManager},
      {"nvlink-inactive", "nvlink", nvlinkInactive},
      {"nvlink-degraded", "nvlink", nvlinkFewerThanPeers},
      {"pcie-width", "pcie", pcieNarrow},
      {"pcie-speed", "pcie", pcieSlow},
      {"iommu-translated", "pcie", iommuTranslated},
      {"acs-redirect", "pcie", acsRedirect},
      {"numa-affinity", "numa", numaRemoteAffinity},
      {"mig", "p2p", migEnabled},
      {"compute-mode", "driver", exclusiveComputeMode},
      {"driver-too-old", "driver", driverTooOld},
      {"nvml-mismatch", "driver", nvmlMismatch},
      {"nccl-too-old", "driver", ncclOlderThanGpu},
      {"p2p-disabled-env", "env", p2pDisabledByEnvironment},
      {"nccl-p2p-level", "env", ncclP2pLevel},
      {"device-order", "env", visibleDevicesOrder},
      {"device-nodes", "container", deviceNodesDenied},
      {"dev-shm-small", "container", devShmTooSmall},
      {"ipc-namespace", "container", privateIpcNamespace},
      {"ptrace-scope", "container", ptraceBlocksFdPassing},
      {"memlock-limit", "container", memlockLimit},
      {"ipc-sharing", "container", ipcSharingFails},
      {"persistence-mode", "driver", persistenceModeOff},
      {"bandwidth-low", "perf", bandwidthBelowExpectation},
      {"bandwidth-asymmetric", "perf", bandwidthAsymmetric},
  };
  return kRules;
}

Severity DoctorReport::worst() const {
  Severity w = Severity::kInfo;
  for (const Finding& f : findings) w = std::max(w, f.severity);
  return w;
}

int doctorExitCode(const Snapshot& snapshot, const DoctorReport& report) {
  // The CLI's numbering (tools/gpupeer/cli_common.hpp): failed 1, not applicable 3; 5 is the
  // doctor's own, so scripts can tell warnings from errors.
  if (!report.findings.empty() && report.worst() == Severity::kError) return 1;
  if (snapshot.gpus.empty()) return 3;
  if (!report.findings.empty() && report.worst() == Severity::kWarning) return 5;
  return 0;
}

namespace {

std::string verdictLine(const Snapshot& s, const Measurements* m, const DoctorReport& r) {
  if (s.gpus.empty()) return "No NVIDIA GPU visible: " + whyNoGpu(s);
  if (s.gpus.size() == 1) return fmt::format("One GPU visible ({}): there is no peer to talk to", s.gpus[0].name);
  // The counts add up to the findings listed below the verdict, info findings included.
  int errors = 0, warnings = 0, infos = 0;
  for (const Finding& f : r.findings) {
    errors += f.severity == Severity::kError;
    warnings += f.severity == Severity::kWarning;
    infos += f.severity == Severity::kInfo;
  }
  std::string andInfos = infos ? fmt::format(" and {} info finding(s)", infos) : "";
  int okPairs = 0;
  for (const PeerPair& p : s.pairs) okPairs += p2pStatus(s, p.src, p.dst).state == P2pStatus::State::kOk;
  std::string head =
      okPairs == 0 ? fmt::format("P2P unavailable: {} error(s), {} warning(s){}", errors, warnings, andInfos)
      : errors     ? fmt::format("P2P has problems: {} error(s), {} warning(s){}", errors, warnings, andInfos)
      : warnings   ? fmt::format("P2P works with {} warning(s){}", warnings, andInfos)
      : infos      ? fmt::format("P2P healthy with {} info finding(s)", infos)
                   : std::string("P2P healthy");
  std::string pairs = okPairs == static_cast<int>(s.pairs.size())
                          ? fmt::format("P2P on all {} pairs", okPairs)
                          : fmt::format("P2P on {} of {} pairs", okPairs, s.pairs.size());
  if (!m || m->copyEngineGBps.empty())
    return fmt::format("{}; {}{}", head, pairs, m ? "" : " (offline: no data check, no bandwidth measured)");
  // The slowest pair speaks for the machine.
  auto slowest = std::min_element(m->copyEngineGBps.begin(), m->copyEngineGBps.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
  LinkLimit lim = theoreticalLinkLimit(s, slowest->first.first, slowest->first.second);
  std::string rate = fmt::format("{:.0f} GB/s per direction{}", slowest->second,
                                 m->copyEngineGBps.size() > 1 ? " (slowest pair)" : "");
  if (lim.known()) rate += fmt::format(", {:.0f}% of {}", 100 * slowest->second / lim.gbps, lim.medium);
  return fmt::format("{}; {}, {}", head, pairs, rate);
}

}  // namespace

DoctorReport diagnose(const Snapshot& snapshot, const Measurements* measured) {
  DoctorReport report;
  for (const DoctorRule& rule : doctorRules()) rule.apply(snapshot, measured, report.findings);
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
  if (!measured) {
    report.notRun = {kNotRunDataCheck, kNotRunBandwidth, kNotRunIpcCheck};
  } else {
    report.notRun = measured->notRun;
  }
  report.verdict = verdictLine(snapshot, measured, report);
  return report;
}

}  // namespace gpupeer
