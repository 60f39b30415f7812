// Platform: IOMMU, ACS, NUMA placement, MIG, compute mode.
#include <set>

#include "core/cpulist.hpp"
#include "doctor/rules.hpp"
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

// The kernel options that put the IOMMU in passthrough mode differ by vendor: intel_iommu= is
// Intel's VT-d driver, amd_iommu= AMD's (which knows no "on"; passthrough is iommu=pt), and
// Arm's SMMU takes iommu.passthrough=. With the vendor unknown only the generic option is given.
std::string iommuPassthroughFix(const Snapshot& s) {
  std::string options, alternative;
  switch (iommuVendorOf(s.platform.cpuVendor)) {
    case IommuVendor::kIntel:
      options = "intel_iommu=on iommu=pt";
      alternative = "# or intel_iommu=off to turn VT-d off (no device assignment to VMs then)";
      break;
    case IommuVendor::kAmd:
      options = "iommu=pt";
      alternative = "# or amd_iommu=off to turn AMD-Vi off (no device assignment to VMs then)";
      break;
    case IommuVendor::kArm: options = "iommu.passthrough=1"; break;
    case IommuVendor::kUnknown:
      options = "iommu.passthrough=1";
      alternative = "# the snapshot does not record the CPU vendor; iommu.passthrough=1 is the same on every vendor";
      break;
  }
  std::string fix = fmt::format(
      "sudo sed -i 's/^GRUB_CMDLINE_LINUX_DEFAULT=\"/&{} /' /etc/default/grub && sudo update-grub && sudo reboot",
      options);
  if (!alternative.empty()) fix += "\n" + alternative;
  return fix + "\ncat /proc/cmdline; cat /sys/kernel/iommu_groups/*/type | sort | uniq -c   # after the reboot";
}

}  // namespace

void iommuTranslated(const Snapshot& s, const Measurements*, Findings& out) {
  if (!s.platform.iommu.known() || s.platform.iommu.value() != "translated") return;
  auto pairs = pciePeerPairs(s);
  std::string vendor = s.platform.cpuVendor.known() ? "; CPU vendor " + s.platform.cpuVendor.value() : "";
  if (pairs.empty()) {
    // The GPUs whose IOMMU group translates: those a later PCIe P2P pair would involve.
    std::vector<int> translated;
    for (const Gpu& g : s.gpus)
      if (g.iommuGroupType.known() && g.iommuGroupType.value() != "identity") translated.push_back(g.index);
    out.push_back({"iommu-translated", Severity::kInfo, "IOMMU translates DMA; no PCIe P2P pair is affected now",
                   "IOMMU mode: translated" + vendor, "platform/iommu-translated-corruption", "",
                   gpusOf(s, translated)});
    return;
  }
  out.push_back({"iommu-translated", Severity::kWarning,
                 "IOMMU translates DMA: PCIe P2P writes can be dropped silently",
                 "PCIe P2P pairs: " + pairList(pairs) + vendor + "; run gpupeer check to see whether data arrives",
                 "platform/iommu-translated-corruption", iommuPassthroughFix(s), gpusOfPairs(s, pairs)});
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
  // The fix binds to the GPUs' own node; GPUs on several nodes need one process per node. It
  // starts a shell so the command is complete as printed: jobs started from it inherit the binding.
  std::string fix;
  for (int node : nodes) {
    std::vector<int> onNode;
    for (int i : remote)
      if (s.findGpu(i)->numaNode.valueOr(-1) == node) onNode.push_back(i);
    fix += fmt::format(
        "{0}numactl --cpunodebind={1} --membind={1} -- \"$SHELL\"   # start the job for GPU {2} (NUMA "
        "node {1}) from this shell",
        fix.empty() ? "" : "\n", node, fmt::join(onNode, ","));
  }
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
  // Either one process per MIG instance (no P2P between them), or MIG off for whole-GPU P2P.
  std::string fix =
      "nvidia-smi -L   # each MIG instance's UUID: run one process per instance with CUDA_VISIBLE_DEVICES set to it";
  for (int g : mig)
    fix += fmt::format("\nsudo nvidia-smi -i {0} -mig 0 && sudo nvidia-smi -i {0} -r   # or MIG off on GPU{0}", g);
  out.push_back({"mig", Severity::kWarning, "MIG is enabled: MIG instances get no CUDA P2P",
                 "MIG on for" + evidence.substr(1), "cuda/mig-no-p2p", fix, gpusOf(s, mig)});
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
