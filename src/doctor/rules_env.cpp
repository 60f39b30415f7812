// Environment variables that change what P2P users will do.
#include <algorithm>
#include <map>

#include "doctor/rules.hpp"
#include "gpupeer/topology.hpp"

namespace gpupeer::rules {
namespace {

// NCCL's path ranks for NCCL_P2P_LEVEL: P2P is used when the pair's path is at most the level.
int pathRank(const std::string& cls) {
  static const std::map<std::string, int> kRank = {{"NVL", 1}, {"PIX", 2},  {"PXB", 3},
                                                   {"PHB", 4}, {"NODE", 5}, {"SYS", 6}};
  auto it = kRank.find(cls);
  return it == kRank.end() ? -1 : it->second;
}

// Text values as NCCL >= 2.6 reads them; integers as the older numeric form
// (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 SYS).
int levelRank(const std::string& level) {
  static const std::map<std::string, int> kText = {{"LOC", 0}, {"NVL", 1}, {"PIX", 2},
                                                   {"PXB", 3}, {"PHB", 4}, {"SYS", 6}};
  static const int kNumeric[] = {0, 2, 3, 4, 6};
  std::string upper = level;
  std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
  if (auto it = kText.find(upper); it != kText.end()) return it->second;
  if (upper.size() == 1 && upper[0] >= '0' && upper[0] <= '4') return kNumeric[upper[0] - '0'];
  return -1;
}

std::vector<std::pair<int, int>> p2pPairs(const Snapshot& s) {
  std::vector<std::pair<int, int>> out;
  for (const PeerPair& p : s.pairs)
    if (p.canAccessPeer.valueOr(false)) out.push_back({p.src, p.dst});
  return out;
}

}  // namespace

void p2pDisabledByEnvironment(const Snapshot& s, const Measurements*, Findings& out) {
  for (const char* name : {"NCCL_P2P_DISABLE", "GPUPEER_P2P_DISABLE"}) {
    if (!s.envFlag(name)) continue;
    auto pairs = p2pPairs(s);
    std::string cost;
    if (!pairs.empty()) {
      LinkLimit lim = theoreticalLinkLimit(s, pairs[0].first, pairs[0].second);
      double staged = stagedFallbackGBps(s, pairs[0].first, pairs[0].second);
      if (lim.known() && staged > 0)
        cost = fmt::format(
            "; GPU{}->GPU{} drops from {:.0f} GB/s ({}) to host staging bounded by ~{:.0f} GB/s, "
            "{:.0f}x less",
            pairs[0].first, pairs[0].second, lim.gbps, lim.description, staged, lim.gbps / staged);
    }
    bool nccl = std::string(name) == "NCCL_P2P_DISABLE";
    out.push_back({"p2p-disabled-env", pairs.empty() ? Severity::kInfo : Severity::kWarning,
                   fmt::format("{}={} turns P2P off for {} although {} pair(s) support it", name, *s.env(name),
                               nccl ? "NCCL (it falls back to shared host memory)" : "gpupeer", pairs.size()),
                   (pairs.empty() ? "no pair supports P2P anyway" : "P2P-capable: " + pairList(pairs)) + cost,
                   "nccl/p2p-disabled-by-environment", "", gpusOfPairs(s, pairs)});
  }
}

void ncclP2pLevel(const Snapshot& s, const Measurements*, Findings& out) {
  const std::string* level = s.env("NCCL_P2P_LEVEL");
  if (!level) return;
  int rank = levelRank(*level);
  if (rank < 0) {
    out.push_back({"nccl-p2p-level", Severity::kWarning,
                   fmt::format("NCCL_P2P_LEVEL={} is not a value NCCL knows", *level),
                   "valid: LOC, NVL, PIX, PXB, PHB, SYS (or 0-4 on old NCCL)", "nccl/p2p-level-semantics"});
    return;
  }
  std::vector<std::pair<int, int>> excluded;
  for (const PeerPair& p : s.pairs) {
    if (!p.canAccessPeer.valueOr(false)) continue;
    std::string cell = topoCell(s, p.src, p.dst);
    int pr = pathRank(cell.rfind("NV", 0) == 0 ? "NVL" : cell);
    if (pr > rank) excluded.push_back({p.src, p.dst});
  }
  if (excluded.empty()) {
    out.push_back({"nccl-p2p-level", Severity::kInfo,
                   fmt::format("NCCL_P2P_LEVEL={} is set; it excludes no P2P-capable pair here", *level), "",
                   "nccl/p2p-level-semantics"});
    return;
  }
  out.push_back({"nccl-p2p-level", Severity::kWarning,
                 fmt::format("NCCL_P2P_LEVEL={} keeps NCCL off P2P for {} capable pair(s)", *level, excluded.size()),
                 pairList(excluded), "nccl/p2p-level-semantics", "", gpusOfPairs(s, excluded)});
}

void visibleDevicesOrder(const Snapshot& s, const Measurements*, Findings& out) {
  // nvidia-smi and NVML number GPUs by PCI bus id; CUDA numbers the visible ones in the order
  // CUDA_VISIBLE_DEVICES lists them (or fastest first without CUDA_DEVICE_ORDER=PCI_BUS_ID).
  std::string mapping;
  bool reordered = false;
  for (size_t i = 1; i < s.gpus.size(); ++i)
    if (s.gpus[i].pciBusId < s.gpus[i - 1].pciBusId) reordered = true;
  if (!reordered) return;
  for (const Gpu& g : s.gpus) mapping += fmt::format("\n  CUDA device {} = {} ({})", g.index, g.pciBusId, g.name);
  const std::string* visible = s.env("CUDA_VISIBLE_DEVICES");
  out.push_back({"device-order", Severity::kInfo,
                 visible ? fmt::format("CUDA_VISIBLE_DEVICES={} numbers GPUs differently from nvidia-smi", *visible)
                         : "CUDA numbers GPUs differently from PCI bus order (set CUDA_DEVICE_ORDER=PCI_BUS_ID)",
                 mapping.substr(1), "cuda/visible-devices-order", "", allGpus(s)});
}

}  // namespace gpupeer::rules
