// Measured bandwidth against what the link can carry.
#include <algorithm>
#include <cmath>

#include "doctor/rules.hpp"
#include "gpupeer/topology.hpp"

namespace gpupeer::rules {

void bandwidthBelowExpectation(const Snapshot& s, const Measurements* m, Findings& out) {
  if (!m) return;
  std::string evidence;
  std::vector<std::pair<int, int>> pairs;
  for (const auto& [pair, gbps] : m->copyEngineGBps) {
    LinkLimit lim = theoreticalLinkLimit(s, pair.first, pair.second);
    if (!lim.known() || gbps >= kLowBandwidthShare * lim.gbps) continue;
    pairs.push_back(pair);
    evidence += fmt::format("\n  GPU{}->GPU{}: {:.1f} GB/s, {:.0f}% of {:.1f} GB/s ({})", pair.first, pair.second, gbps,
                            100 * gbps / lim.gbps, lim.gbps, lim.description);
  }
  if (evidence.empty()) return;
  out.push_back({"bandwidth-low", Severity::kWarning,
                 fmt::format("Copy-engine bandwidth under {:.0f}% of the link's rate", 100 * kLowBandwidthShare),
                 evidence.substr(1), "nvlink/bandwidth-below-spec", "", gpusOfPairs(s, pairs)});
}

void bandwidthAsymmetric(const Snapshot& s, const Measurements* m, Findings& out) {
  if (!m) return;
  std::string evidence;
  std::vector<std::pair<int, int>> pairs;
  for (const auto& [pair, ab] : m->copyEngineGBps) {
    if (pair.first > pair.second) continue;
    auto back = m->copyEngineGBps.find({pair.second, pair.first});
    if (back == m->copyEngineGBps.end()) continue;
    double ba = back->second, hi = std::max(ab, ba);
    if (hi <= 0 || std::fabs(ab - ba) <= kAsymmetryShare * hi) continue;
    pairs.push_back(pair);
    evidence += fmt::format("\n  GPU{}->GPU{} {:.1f} GB/s but GPU{}->GPU{} {:.1f} GB/s", pair.first, pair.second, ab,
                            pair.second, pair.first, ba);
  }
  if (evidence.empty()) return;
  out.push_back({"bandwidth-asymmetric", Severity::kWarning, "The two directions of a pair differ in bandwidth",
                 evidence.substr(1), "nvlink/bandwidth-below-spec", "", gpusOfPairs(s, pairs)});
}

}  // namespace gpupeer::rules
