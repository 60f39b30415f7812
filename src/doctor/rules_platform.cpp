// Platform: IOMMU, ACS, NUMA placement, MIG, compute mode.
#include <set>

#include "doctor/rules.hpp"
#include "gpupeer/cpulist.hpp"
#include "gpupeer/topology.hpp"

namespace gpupeer::rules {
namespace {

// PCIe pairs that would use P2P: NVLink pairs never touch the IOMMU or ACS.
std::vector<std::pair<int, int>> pciePeerPairs(const Snapshot& s) {
  std::vector<std::pair<int, int>> out;
  for (const PeerPair& p : s.pairs)
    if (p.canAccessPeer.valueOr(false) && nvlinkCountBetween(s, p.src, p.dst) == 0) out.push_back({p.src, p.dst});
  return out;
}

}  // namespace

void iommuTranslated(const Snapshot& s, const Measurements*, Findings& out) {
  if (!s.platform.iommu.known() || s.platform.iommu.value() != "translated") return;
  auto pairs = pciePeerPairs(s);
  if (pairs.empty()) {
    out.push_back({"iommu-translated", Severity::kInfo, "IOMMU translates DMA; no PCIe P2P pair is affected now",
                   "IOMMU mode: translated", "platform/iommu-translated-corruption"});
    return;
  }
  out.push_back({"iommu-translated", Severity::kWarning,
                 "IOMMU translates DMA: PCIe P2P writes can be dropped silently",
                 "PCIe P2P pairs: " + pairList(pairs) + "; run gpupeer check to see whether data arrives",
                 "platform/iommu-translated-corruption"});
}

void acsRedirect(const Snapshot& s, const Measurements*, Findings& out) {
  if (!s.platform.acs.known()) return;
  // ACS Control bits 2 and 3: request and completion redirect send peer traffic up to the
  // root complex, where it is slowed or dropped.
  constexpr int kRedirect = (1 << 2) | (1 << 3);
  std::string evidence, fix;
  std::vector<int> behind;
  for (const BridgeAcs& b : s.platform.acs.value()) {
    if (!b.acsControl.known() || !(b.acsControl.value() & kRedirect)) continue;
    // A bridge is above a GPU when it is on the GPU's sysfs path (/sys/devices/pci…/<bridge>/…/<gpu>).
    std::string gpus;
    for (const Gpu& g : s.gpus)
      if (g.sysfsPath.known() && g.sysfsPath.value().find("/" + b.busId + "/") != std::string::npos) {
        gpus += fmt::format("{}GPU{} ({})", gpus.empty() ? "" : ", ", g.index, g.pciBusId);
        behind.push_back(g.index);
      }
    evidence += fmt::format("\n  bridge {}: ACS control 0x{:04x} (redirect on), above {}", b.busId,
                            b.acsControl.value(), gpus.empty() ? "no GPU the snapshot can place" : gpus);
    // Only these bridges: clearing ACS elsewhere weakens isolation for nothing.
    fix += fmt::format("sudo setpci -s {} ECAP_ACS+6.w=0000\n", b.busId);
  }
  if (evidence.empty()) return;
  fix += "sudo lspci -vvv | grep -i ACSCtl   # redirect bits (ReqRedir, CmpltRedir) now '-'; repeat after each reboot";
  bool pcieP2p = !pciePeerPairs(s).empty();
  out.push_back({"acs-redirect", pcieP2p ? Severity::kWarning : Severity::kInfo,
                 "ACS redirect is on for bridges above the GPUs", evidence.substr(1), "platform/acs-redirect", fix,
                 gpusOf(s, behind)});
}

namespace {

// A CPU list as the evidence shows it: cut, so that a list of thousands of ranges, once per
// GPU, cannot make the finding megabytes long.
std::string shownCpus(const Known<std::string>& list) {
  constexpr std::size_t kShown = 120;
  const std::string& text = list.value();
  return text.size() <= kShown ? text : text.substr(0, kShown) + fmt::format("... ({} characters)", text.size());
}

}  // namespace

void numaRemoteAffinity(const Snapshot& s, const Measurements*, Findings& out) {
  if (!s.platform.processCpuAffinity.known()) return;
  // As ranges: a hostile list ("0-65535" thousands of times, 300 ranges per GPU) costs its length.
  auto mine = parseCpuRanges(s.platform.processCpuAffinity.value());
  if (!mine || mine->empty()) return;
  std::string evidence;
  std::vector<int> remote;
  std::set<int> nodes;
  for (const Gpu& g : s.gpus) {
    if (!g.cpuAffinity.known()) continue;
    auto local = parseCpuRanges(g.cpuAffinity.value());
    if (!local || local->empty() || cpuRangesOverlap(*mine, *local)) continue;
    evidence += fmt::format("\n  GPU{}: local CPUs {}{}, this process runs on {}", g.index, shownCpus(g.cpuAffinity),
                            g.numaNode.known() ? fmt::format(" (NUMA node {})", g.numaNode.value()) : "",
                            shownCpus(s.platform.processCpuAffinity));
    remote.push_back(g.index);
    if (g.numaNode.known()) nodes.insert(g.numaNode.value());
  }
  if (evidence.empty()) return;
  // The fix binds to the GPUs' own node; GPUs on several nodes need one process per node.
  std::string fix;
  if (nodes.size() == 1)
    fix = fmt::format("numactl --cpunodebind={0} --membind={0} <your command>", *nodes.begin());
  else if (nodes.size() > 1)
    for (int node : nodes)
      fix += (fix.empty() ? "" : "\n") +
             fmt::format("numactl --cpunodebind={0} --membind={0} <the process for the GPUs of node {0}>", node);
  out.push_back({"numa-affinity", Severity::kWarning,
                 "This process runs on CPUs of another NUMA node than some GPUs (host-staged copies slow down)",
                 evidence.substr(1), "platform/numa-remote-affinity", fix, gpusOf(s, remote)});
}

void migEnabled(const Snapshot& s, const Measurements*, Findings& out) {
  // The pairs MIG takes P2P from are reported here, with the MIG entry, and left out of
  // p2p-unsupported, so one cause gives one finding.
  std::string evidence;
  std::vector<int> mig;
  for (const Gpu& g : s.gpus)
    if (g.migEnabled.valueOr(false)) {
      evidence += fmt::format(", GPU{}", g.index);
      mig.push_back(g.index);
    }
  if (evidence.empty()) return;
  std::vector<std::pair<int, int>> lost;
  for (const PeerPair& p : s.pairs)
    if (!p.canAccessPeer.valueOr(true) && (isMig(s, p.src) || isMig(s, p.dst))) lost.push_back({p.src, p.dst});
  if (!lost.empty()) evidence += "; no P2P on " + pairList(lost);
  out.push_back({"mig", Severity::kWarning, "MIG is enabled: MIG instances get no CUDA P2P",
                 "MIG on for" + evidence.substr(1), "cuda/mig-no-p2p", "", gpusOf(s, mig)});
}

bool isMig(const Snapshot& s, int index) {
  const Gpu* g = s.findGpu(index);
  return g && g->migEnabled.valueOr(false);
}

namespace {

std::string restoreDefaultMode(const std::vector<int>& gpus) {
  std::string fix;
  for (int g : gpus) fix += fmt::format("{}sudo nvidia-smi -i {} -c DEFAULT", fix.empty() ? "" : "\n", g);
  return fix;
}

}  // namespace

void exclusiveComputeMode(const Snapshot& s, const Measurements*, Findings& out) {
  // Exclusive-process lets one process per GPU create a context (a second rank or a helper
  // process on that GPU fails); prohibited lets none.
  std::string exclusive, prohibited;
  std::vector<int> exclusiveGpus, prohibitedGpus;
  for (const Gpu& g : s.gpus) {
    if (!g.computeMode.known() || g.computeMode.value() == "default") continue;
    std::string line = fmt::format("\n  GPU{}: compute mode {}", g.index, g.computeMode.value());
    bool none = g.computeMode.value() == "prohibited";
    (none ? prohibited : exclusive) += line;
    (none ? prohibitedGpus : exclusiveGpus).push_back(g.index);
  }
  if (!prohibited.empty())
    out.push_back({"compute-mode", Severity::kError, "GPUs in the prohibited compute mode: no process can use them",
                   prohibited.substr(1), "cuda/exclusive-process-mode", restoreDefaultMode(prohibitedGpus),
                   gpusOf(s, prohibitedGpus)});
  if (!exclusive.empty())
    out.push_back({"compute-mode", Severity::kWarning,
                   "GPUs are not in the default compute mode: a second process cannot use them", exclusive.substr(1),
                   "cuda/exclusive-process-mode", "", gpusOf(s, exclusiveGpus)});
}

}  // namespace gpupeer::rules
