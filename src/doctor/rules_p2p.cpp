// P2P availability, and whether what the driver claims matches what the data check saw.
#include <algorithm>

#include "doctor/rules.hpp"
#include "gpupeer/topology.hpp"

namespace gpupeer::rules {

std::string pairList(const std::vector<std::pair<int, int>>& pairs) {
  std::string out;
  for (const auto& [a, b] : pairs) out += fmt::format("{}GPU{}->GPU{}", out.empty() ? "" : ", ", a, b);
  return out;
}

std::vector<FindingGpu> gpusOf(const Snapshot& s, std::vector<int> indices) {
  std::sort(indices.begin(), indices.end());
  indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
  std::vector<FindingGpu> out;
  for (int i : indices) {
    const Gpu* g = s.findGpu(i);
    out.push_back({i, g ? g->pciBusId : ""});
  }
  return out;
}

std::vector<FindingGpu> allGpus(const Snapshot& s) {
  std::vector<int> indices;
  for (const Gpu& g : s.gpus) indices.push_back(g.index);
  return gpusOf(s, indices);
}

std::vector<FindingGpu> gpusOfPairs(const Snapshot& s, const std::vector<std::pair<int, int>>& pairs) {
  std::vector<int> indices;
  for (const auto& [a, b] : pairs) indices.insert(indices.end(), {a, b});
  return gpusOf(s, indices);
}

double stagedFallbackGBps(const Snapshot& s, int a, int b) {
  // Staging crosses both GPUs' PCIe links; the slower one bounds it.
  const Gpu* ga = s.findGpu(a);
  const Gpu* gb = s.findGpu(b);
  auto ra = ga ? pcieLinkGBps(*ga) : std::nullopt, rb = gb ? pcieLinkGBps(*gb) : std::nullopt;
  return ra && rb ? std::min(*ra, *rb) : 0;
}

void p2pUnsupportedPairs(const Snapshot& s, const Measurements*, Findings& out) {
  std::vector<std::pair<int, int>> pairs;
  std::string reasons;
  for (const PeerPair& p : s.pairs) {
    P2pStatus st = p2pStatus(s, p.src, p.dst);
    if (st.state != P2pStatus::State::kUnsupported || isMig(s, p.src) || isMig(s, p.dst)) continue;
    pairs.push_back({p.src, p.dst});
    if (reasons.size() < 600) reasons += fmt::format("\n  GPU{}->GPU{}: {}", p.src, p.dst, st.reason);
  }
  if (pairs.empty()) return;
  const PeerPair& first = *s.findPair(pairs[0].first, pairs[0].second);
  double fallback = stagedFallbackGBps(s, first.src, first.dst);
  std::string cost = fallback > 0
                         ? fmt::format(
                               "Copies between them are staged through host memory, bounded by PCIe (~{:.0f} GB/s "
                               "per direction in theory; CUDA's own staged copy reaches well under that).",
                               fallback)
                         : "Copies between them are staged through host memory.";
  out.push_back({"p2p-unsupported", Severity::kWarning,
                 fmt::format("P2P is not available on {} of {} ordered pairs", pairs.size(), s.pairs.size()),
                 pairList(pairs) + reasons + "\n  " + cost, "cuda/peer-access-unsupported-by-hardware", "",
                 gpusOfPairs(s, pairs)});
}

void p2pCapabilityDisagrees(const Snapshot& s, const Measurements*, Findings& out) {
  // NVML and CUDA answer the same question from different places; when they disagree the
  // driver's own view is inconsistent (often virtualisation or a patched driver).
  std::vector<std::pair<int, int>> pairs;
  for (const PeerPair& p : s.pairs) {
    if (!p.canAccessPeer.known() || !p.nvmlP2pRead.known()) continue;
    bool nvmlOk = p.nvmlP2pRead.value() == "OK";
    if (nvmlOk != p.canAccessPeer.value()) pairs.push_back({p.src, p.dst});
  }
  if (pairs.empty()) return;
  out.push_back({"p2p-capability-disagrees", Severity::kWarning, "CUDA and NVML disagree about P2P",
                 pairList(pairs) + ": cudaDeviceCanAccessPeer and nvmlDeviceGetP2PStatus give different "
                                   "answers; trust only the data check (gpupeer check)",
                 "platform/p2p-advertised-but-broken", "", gpusOfPairs(s, pairs)});
}

void p2pCheckFailures(const Snapshot& s, const Measurements* m, Findings& out) {
  if (!m || !m->check) return;
  std::string evidence;
  int advertisedButBroken = 0, failures = 0;
  std::vector<std::pair<int, int>> failed;
  for (const PairCheck& pc : m->check->pairs) {
    const PeerPair* facts = s.findPair(pc.src, pc.dst);
    bool advertised = facts && facts->canAccessPeer.valueOr(false);
    for (const MethodResult& r : pc.methods) {
      if (r.outcome != CheckOutcome::kFail) continue;
      ++failures;
      failed.push_back({pc.src, pc.dst});
      if (advertised) ++advertisedButBroken;
      evidence += fmt::format("\n  GPU{}->GPU{} {}: {}", pc.src, pc.dst, checkMethodName(r.method), r.detail);
    }
  }
  if (failures == 0) return;
  out.push_back(
      {"p2p-data-check", Severity::kError,
       advertisedButBroken
           ? fmt::format("The driver reports P2P, but {} data check(s) delivered wrong or no data", advertisedButBroken)
           : fmt::format("{} data check(s) failed", failures),
       evidence.substr(1), "platform/p2p-advertised-but-broken", "", gpusOfPairs(s, failed)});
}

}  // namespace gpupeer::rules
