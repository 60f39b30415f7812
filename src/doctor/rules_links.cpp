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

// Fabric Manager must be the driver's own version; with the version in the snapshot the package
// is named, else it is read from nvidia-smi. `gpus`: those whose fabric state to check after.
std::string fabricManagerFix(const Snapshot& s, const std::vector<int>& gpus) {
  std::string fix;
  if (s.driverVersion.known()) {
    const std::string& v = s.driverVersion.value();
    fix = fmt::format("sudo apt-get install nvidia-fabricmanager-{}={}-1   # the driver's version, {}\n",
                      v.substr(0, v.find('.')), v, v);
  } else {
    fix =
        "DRV=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1)\n"
        "sudo apt-get install nvidia-fabricmanager-${DRV%%.*}=${DRV}-1\n";
  }
  fix += "sudo systemctl enable --now nvidia-fabricmanager\n";
  fix += gpus.empty() ? "nvidia-smi -q | grep -A 2 -i fabric   # State: Completed, Status: Success"
                      : fmt::format("nvidia-smi -i {} -q | grep -A 2 -i fabric   # State: Completed, Status: Success",
                                    fmt::join(gpus, ","));
  return fix;
}

}  // namespace

void nvlinkInactive(const Snapshot& s, const Measurements*, Findings& out) {
  std::string evidence;
  std::vector<int> gpus;
  for (const Gpu& g : s.gpus) {
    if (!g.nvlinks.known()) continue;
    std::vector<int> down;
    for (const NvLink& l : g.nvlinks.value())
      if (!l.active) down.push_back(l.link);
    if (down.empty()) continue;
    gpus.push_back(g.index);
    evidence += fmt::format("\n  GPU{} ({}): link(s) {} inactive, {} of {} active", g.index, g.pciBusId,
                            fmt::join(down, ","), activeLinks(g), g.nvlinks.value().size());
  }
  if (evidence.empty()) return;
  out.push_back({"nvlink-inactive", Severity::kWarning, "NVLink links are down", evidence.substr(1),
                 "nvlink/link-inactive", "", gpusOf(s, gpus)});
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
                 counts.substr(1), "nvlink/link-inactive", "", gpusOfPairs(s, pairs)});
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
                   "nvlink/fabric-manager-not-running", fabricManagerFix(s, {})});
    return;
  }
  if (!onNvSwitch(s)) return;
  std::string evidence;
  std::vector<int> gpus;
  for (const Gpu& g : s.gpus) {
    if (!g.fabricState.known() || g.fabricState.value() == "completed") continue;
    evidence += fmt::format("\n  GPU{} ({}): fabric state {}", g.index, g.pciBusId, g.fabricState.value());
    gpus.push_back(g.index);
  }
  if (evidence.empty()) return;
  out.push_back({"fabric-manager", Severity::kError,
                 "NVSwitch fabric is not ready: GPUs lose NVLink P2P until Fabric Manager finishes", evidence.substr(1),
                 "nvlink/fabric-manager-not-running", fabricManagerFix(s, gpus), gpusOf(s, gpus)});
}

void pcieNarrow(const Snapshot& s, const Measurements*, Findings& out) {
  // Width does not change with load; a narrow link is a hardware or slot problem.
  std::string evidence, fix;
  std::vector<int> narrow;
  for (const Gpu& g : s.gpus) {
    const PcieLink& l = g.pcie;
    if (!l.currentWidth.known() || !l.maxWidth.known() || l.currentWidth.value() >= l.maxWidth.value()) continue;
    evidence +=
        fmt::format("\n  GPU{} ({}): x{} of x{}", g.index, g.pciBusId, l.currentWidth.value(), l.maxWidth.value());
    narrow.push_back(g.index);
    // LnkSta below LnkCap on the GPU itself; the same on its bridge means the slot or riser.
    fix += fmt::format("sudo lspci -vv -s {} | grep -E 'LnkCap|LnkSta'   # GPU{}: x{} expected\n", g.pciBusId, g.index,
                       l.maxWidth.value());
  }
  if (narrow.empty()) return;
  fix += fmt::format(
      "nvidia-smi -i {} --query-gpu=index,pci.bus_id,pcie.link.width.current,pcie.link.width.max --format=csv\n"
      "# still narrow after a cold boot: reseat the card, or move it to a slot wired x{}",
      fmt::join(narrow, ","), s.findGpu(narrow[0])->pcie.maxWidth.value());
  out.push_back({"pcie-width", Severity::kWarning, "PCIe links trained narrower than they can run", evidence.substr(1),
                 "platform/pcie-link-downtrained", fix, gpusOf(s, narrow)});
}

void pcieSlow(const Snapshot& s, const Measurements*, Findings& out) {
  // Speed drops at idle to save power (ASPM), so a lower generation is only a hint until
  // confirmed under load.
  std::string evidence;
  std::vector<int> slow;
  for (const Gpu& g : s.gpus) {
    const PcieLink& l = g.pcie;
    if (!l.currentGen.known() || !l.maxGen.known() || l.currentGen.value() >= l.maxGen.value()) continue;
    evidence +=
        fmt::format("\n  GPU{} ({}): Gen{} of Gen{}", g.index, g.pciBusId, l.currentGen.value(), l.maxGen.value());
    slow.push_back(g.index);
  }
  if (slow.empty()) return;
  out.push_back({"pcie-speed", Severity::kInfo,
                 "PCIe links run below their top speed (normal at idle; re-check under load)", evidence.substr(1),
                 "platform/pcie-link-downtrained", "", gpusOf(s, slow)});
}

}  // namespace gpupeer::rules
