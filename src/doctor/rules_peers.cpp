// How many peers each GPU has, and which GPUs are alike: CUDA's limit on enabled peers, and
// machines that mix GPU models.
#include <algorithm>
#include <map>

#include "doctor/rules.hpp"

namespace gpupeer::rules {
namespace {

// CUDA's documented limit: without NVSwitch, one device holds at most eight peer connections
// system-wide; enabling a ninth fails with cudaErrorTooManyPeers.
constexpr int kMaxPeersWithoutNvSwitch = 8;

// Whether the GPU's NVLinks lead to something that is not a GPU (an NVSwitch), which lifts the
// limit. Unknown links count as no NVSwitch.
bool behindNvSwitch(const Snapshot& s, const Gpu& g) {
  if (!g.nvlinks.known()) return false;
  for (const NvLink& l : g.nvlinks.value()) {
    if (!l.remoteBusId.known()) continue;
    bool toGpu = false;
    for (const Gpu& other : s.gpus) toGpu = toGpu || other.pciBusId == l.remoteBusId.value();
    if (!toGpu) return true;
  }
  return false;
}

// CUDA_VISIBLE_DEVICES by UUID where the snapshot has every one (ordinals shift with the
// variable already set), else by ordinal.
std::string visibleDevices(const Snapshot& s, const std::vector<int>& indices) {
  std::string uuids, ordinals;
  bool allUuids = true;
  for (int i : indices) {
    const Gpu* g = s.findGpu(i);
    allUuids = allUuids && g && g->uuid.known();
    if (g && g->uuid.known()) uuids += (uuids.empty() ? "" : ",") + g->uuid.value();
    ordinals += fmt::format("{}{}", ordinals.empty() ? "" : ",", i);
  }
  return "CUDA_VISIBLE_DEVICES=" + (allUuids ? uuids : ordinals);
}

}  // namespace

void tooManyPeers(const Snapshot& s, const Measurements*, Findings& out) {
  std::map<int, int> peers;  // ordinal -> peers it can access
  for (const PeerPair& p : s.pairs)
    if (p.canAccessPeer.valueOr(false)) ++peers[p.src];
  std::string evidence;
  std::vector<int> over;
  for (const auto& [index, count] : peers) {
    const Gpu* g = s.findGpu(index);
    if (count <= kMaxPeersWithoutNvSwitch || (g && behindNvSwitch(s, *g))) continue;
    evidence += fmt::format("\n  GPU{}: {} peers reachable", index, count);
    over.push_back(index);
  }
  if (over.empty()) return;
  // A process that sees at most 9 GPUs enables at most 8 peers per GPU.
  std::string fix;
  std::vector<int> all;
  for (const Gpu& g : s.gpus) all.push_back(g.index);
  for (std::size_t start = 0; start < all.size(); start += kMaxPeersWithoutNvSwitch + 1) {
    std::vector<int> group(all.begin() + start,
                           all.begin() + std::min(all.size(), start + kMaxPeersWithoutNvSwitch + 1));
    fix += fmt::format("{}{} \"$SHELL\"   # start one process for GPU {} from this shell", fix.empty() ? "" : "\n",
                       visibleDevices(s, group), fmt::join(group, ","));
  }
  out.push_back({"peer-limit", Severity::kWarning,
                 fmt::format("{} GPU(s) can reach more than {} peers, but CUDA enables at most {} per device "
                             "(cudaErrorTooManyPeers): a full mesh of peer access fails",
                             over.size(), kMaxPeersWithoutNvSwitch, kMaxPeersWithoutNvSwitch),
                 evidence.substr(1), "cuda/too-many-peers", fix, gpusOf(s, over)});
}

void mixedGpuModels(const Snapshot& s, const Measurements*, Findings& out) {
  std::map<std::string, std::vector<int>> byModel;
  for (const Gpu& g : s.gpus) byModel[g.name].push_back(g.index);
  if (byModel.size() < 2) return;
  std::string evidence;
  for (const auto& [model, indices] : byModel) {
    evidence += fmt::format("\n  {}:", model);
    for (const FindingGpu& g : gpusOf(s, indices)) evidence += fmt::format(" GPU{} ({})", g.index, g.busId);
  }
  // Pairs across models without P2P make it a warning; otherwise collectives still run at the
  // slowest model's pace, which is worth knowing but changes nothing to fix.
  std::vector<std::pair<int, int>> noP2p;
  for (const PeerPair& p : s.pairs) {
    const Gpu* a = s.findGpu(p.src);
    const Gpu* b = s.findGpu(p.dst);
    if (a && b && a->name != b->name && !p.canAccessPeer.valueOr(true)) noP2p.push_back({p.src, p.dst});
  }
  if (!noP2p.empty()) evidence += "\n  no P2P across models: " + pairList(noP2p);
  std::string fix;
  for (const auto& [model, indices] : byModel)
    if (indices.size() > 1)
      fix += fmt::format("{}{} \"$SHELL\"   # start the job for the {} GPUs from this shell", fix.empty() ? "" : "\n",
                         visibleDevices(s, indices), model);
  out.push_back(
      {"mixed-models", noP2p.empty() ? Severity::kInfo : Severity::kWarning,
       fmt::format("{} GPU models in one machine: P2P between different models is rarely supported", byModel.size()),
       evidence.substr(1), "cuda/peer-mixed-gpu-models", fix, allGpus(s)});
}

}  // namespace gpupeer::rules
