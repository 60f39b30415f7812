#include "nccl_api/host_layout.hpp"

#include <algorithm>

namespace gpupeer::nccl_api {

HostLayout hostLayout(const std::vector<std::string>& hostOfRank, int rank) {
  std::vector<std::string> hosts;  // in the order of their first rank
  std::vector<int> ranksOn;
  HostLayout layout;
  for (int r = 0; r < static_cast<int>(hostOfRank.size()); ++r) {
    auto it = std::find(hosts.begin(), hosts.end(), hostOfRank[r]);
    const int h = static_cast<int>(it - hosts.begin());
    if (it == hosts.end()) {
      hosts.push_back(hostOfRank[r]);
      ranksOn.push_back(0);
    }
    if (r == rank) {
      layout.hostIndex = h;
      layout.localIndex = ranksOn[h];
    }
    ++ranksOn[h];
  }
  layout.hosts = static_cast<int>(hosts.size());
  const bool even =
      !ranksOn.empty() && std::all_of(ranksOn.begin(), ranksOn.end(), [&](int n) { return n == ranksOn[0]; });
  layout.perHost = even ? ranksOn[0] : 0;
  return layout;
}

}  // namespace gpupeer::nccl_api
