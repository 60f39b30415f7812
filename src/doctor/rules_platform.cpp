// Platform: IOMMU, ACS, NUMA placement, MIG, compute mode.
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
  std::string evidence;
  for (const BridgeAcs& b : s.platform.acs.value())
    if (b.acsControl.known() && (b.acsControl.value() & kRedirect))
      evidence += fmt::format("\n  bridge {}: ACS control 0x{:04x} (redirect on)", b.busId, b.acsControl.value());
  if (evidence.empty()) return;
  bool pcieP2p = !pciePeerPairs(s).empty();
  out.push_back({"acs-redirect", pcieP2p ? Severity::kWarning : Severity::kInfo,
                 "ACS redirect is on for bridges above the GPUs", evidence.substr(1), "platform/acs-redirect"});
}

void numaRemoteAffinity(const Snapshot& s, const Measurements*, Findings& out) {
  if (!s.platform.processCpuAffinity.known()) return;
  auto mine = parseCpuList(s.platform.processCpuAffinity.value());
  if (!mine || mine->empty()) return;
  std::string evidence;
  for (const Gpu& g : s.gpus) {
    if (!g.cpuAffinity.known()) continue;
    auto local = parseCpuList(g.cpuAffinity.value());
    if (!local || local->empty()) continue;
    bool overlap = false;
    for (int c : *mine) overlap = overlap || local->count(c);
    if (!overlap)
      evidence += fmt::format("\n  GPU{}: local CPUs {}, this process runs on {}", g.index, g.cpuAffinity.value(),
                              s.platform.processCpuAffinity.value());
  }
  if (evidence.empty()) return;
  out.push_back({"numa-affinity", Severity::kWarning,
                 "This process runs on CPUs of another NUMA node than some GPUs (host-staged copies slow down)",
                 evidence.substr(1), "platform/numa-remote-affinity"});
}

void migEnabled(const Snapshot& s, const Measurements*, Findings& out) {
  std::string evidence;
  for (const Gpu& g : s.gpus)
    if (g.migEnabled.valueOr(false)) evidence += fmt::format(", GPU{}", g.index);
  if (evidence.empty()) return;
  out.push_back({"mig", Severity::kWarning, "MIG is enabled: MIG instances get no CUDA P2P",
                 "MIG on for" + evidence.substr(1), "cuda/mig-no-p2p"});
}

void exclusiveComputeMode(const Snapshot& s, const Measurements*, Findings& out) {
  // Exclusive-process lets one process per GPU create a context (a second rank or a helper
  // process on that GPU fails); prohibited lets none.
  std::string exclusive, prohibited;
  for (const Gpu& g : s.gpus) {
    if (!g.computeMode.known() || g.computeMode.value() == "default") continue;
    std::string line = fmt::format("\n  GPU{}: compute mode {}", g.index, g.computeMode.value());
    (g.computeMode.value() == "prohibited" ? prohibited : exclusive) += line;
  }
  if (!prohibited.empty())
    out.push_back({"compute-mode", Severity::kError, "GPUs in the prohibited compute mode: no process can use them",
                   prohibited.substr(1) + "\n  nvidia-smi -i N -c DEFAULT restores them",
                   "cuda/exclusive-process-mode"});
  if (!exclusive.empty())
    out.push_back({"compute-mode", Severity::kWarning,
                   "GPUs are not in the default compute mode: a second process cannot use them", exclusive.substr(1),
                   "cuda/exclusive-process-mode"});
}

}  // namespace gpupeer::rules
