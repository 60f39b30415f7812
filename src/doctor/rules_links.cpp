// NVLink state, NVSwitch fabric, and PCIe link training.
#include <algorithm>

#include "doctor/rules.hpp"
#include "gpupeer/topology.hpp"

namespace gpupeer::rules {
namespace {

int activeLinks(const Gpu& g) {
  if (!g.nvlinks.known()) return -1;
  return static_cast<int>(
      std::count_if(g.nvlinks.value().begin(), g.nvlinks.value().end(), [](const NvLink& l) { return l.active; }));
}

bool onNvSwitch(const Snapshot& s) {
  for (const Gpu& g : s.gpus)
    if (g.nvlinks.known())
      for (const NvLink& l : g.nvlinks.value())
        if (l.remoteType == LinkRemote::kSwitch) return true;
  return false;
}

}  // namespace

void nvlinkInactive(const Snapshot& s, const Measurements*, Findings& out) {
  std::string evidence;
  for (const Gpu& g : s.gpus) {
    if (!g.nvlinks.known()) continue;
    std::vector<int> down;
    for (const NvLink& l : g.nvlinks.value())
      if (!l.active) down.push_back(l.link);
    if (down.empty()) continue;
    evidence += fmt::format("\n  GPU{} ({}): link(s) {} inactive, {} of {} active", g.index, g.pciBusId,
                            fmt::join(down, ","), activeLinks(g), g.nvlinks.value().size());
  }
  if (evidence.empty()) return;
  out.push_back(
      {"nvlink-inactive", Severity::kWarning, "NVLink links are down", evidence.substr(1), "nvlink/link-inactive"});
}

void nvlinkFewerThanPeers(const Snapshot& s, const Measurements*, Findings& out) {
  // Pairs joined by NVLink whose count is below what the best pair of the machine has: a
  // degraded bond carries proportionally less.
  int best = 0;
  for (const PeerPair& p : s.pairs) best = std::max(best, nvlinkCountBetween(s, p.src, p.dst));
  if (best == 0) return;
  std::vector<std::pair<int, int>> pairs;
  std::string counts;
  for (const PeerPair& p : s.pairs) {
    if (p.src > p.dst) continue;  // a bond is shared by both directions
    int n = nvlinkCountBetween(s, p.src, p.dst);
    if (n > 0 && n < best) {
      pairs.push_back({p.src, p.dst});
      counts += fmt::format("\n  GPU{}<->GPU{}: NV{} (others NV{}), {:.0f}% of the bandwidth", p.src, p.dst, n, best,
                            100.0 * n / best);
    }
  }
  if (pairs.empty()) return;
  out.push_back({"nvlink-degraded", Severity::kWarning,
                 pairs.size() == 1 ? std::string("1 GPU pair has fewer NVLinks than the rest")
                                   : fmt::format("{} GPU pairs have fewer NVLinks than the rest", pairs.size()),
                 counts.substr(1), "nvlink/link-inactive"});
}

void fabricManager(const Snapshot& s, const Measurements*, Findings& out) {
  // On NVSwitch systems CUDA refuses to start until Fabric Manager has set the fabric up
  // (cudaErrorSystemNotReady, "system not yet initialized"): no GPU is listed at all then.
  const std::string& why = s.deviceCount.reason();
  if (!s.deviceCount.known() && (why.find("SystemNotReady") != std::string::npos ||
                                 why.find("system not yet initialized") != std::string::npos)) {
    out.push_back({"fabric-manager", Severity::kError,
                   "CUDA reports the system not yet initialized: Fabric Manager is not running on this NVSwitch "
                   "system",
                   why + "; start nvidia-fabricmanager (same version as the driver) and check its log",
                   "nvlink/fabric-manager-not-running"});
    return;
  }
  if (!onNvSwitch(s)) return;
  std::string evidence;
  for (const Gpu& g : s.gpus) {
    if (!g.fabricState.known() || g.fabricState.value() == "completed") continue;
    evidence += fmt::format("\n  GPU{}: fabric state {}", g.index, g.fabricState.value());
  }
  if (evidence.empty()) return;
  out.push_back({"fabric-manager", Severity::kError,
                 "NVSwitch fabric is not ready: GPUs lose NVLink P2P until Fabric Manager finishes", evidence.substr(1),
                 "nvlink/fabric-manager-not-running"});
}

void pcieDowntrained(const Snapshot& s, const Measurements*, Findings& out) {
  std::string widthEvidence, speedEvidence;
  for (const Gpu& g : s.gpus) {
    const PcieLink& l = g.pcie;
    if (l.currentWidth.known() && l.maxWidth.known() && l.currentWidth.value() < l.maxWidth.value())
      widthEvidence +=
          fmt::format("\n  GPU{} ({}): x{} of x{}", g.index, g.pciBusId, l.currentWidth.value(), l.maxWidth.value());
    if (l.currentGen.known() && l.maxGen.known() && l.currentGen.value() < l.maxGen.value())
      speedEvidence +=
          fmt::format("\n  GPU{} ({}): Gen{} of Gen{}", g.index, g.pciBusId, l.currentGen.value(), l.maxGen.value());
  }
  // Width does not change with load; a narrow link is a hardware or slot problem.
  if (!widthEvidence.empty())
    out.push_back({"pcie-width", Severity::kWarning, "PCIe links trained narrower than they can run",
                   widthEvidence.substr(1), "platform/pcie-link-downtrained"});
  // Speed drops at idle to save power (ASPM), so a lower generation is only a hint until
  // confirmed under load.
  if (!speedEvidence.empty())
    out.push_back({"pcie-speed", Severity::kInfo,
                   "PCIe links run below their top speed (normal at idle; re-check under load)",
                   speedEvidence.substr(1), "platform/pcie-link-downtrained"});
}

}  // namespace gpupeer::rules
