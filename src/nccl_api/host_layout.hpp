#pragma once
// Where a communicator's ranks run, host by host: what splitting a communicator that spans hosts
// into the ranks of each host and the ranks of each position across hosts needs to know.

#include <string>
#include <vector>

namespace gpupeer::nccl_api {

struct HostLayout {
  int hosts = 0;       ///< distinct hosts, numbered in the order of their first rank
  int perHost = 0;     ///< ranks on each host where every host has as many; else 0
  int hostIndex = 0;   ///< this rank's host
  int localIndex = 0;  ///< this rank's place among its host's ranks, in rank order
};

/// The layout of ranks on `hostOfRank` (one host identity per rank, in rank order) as `rank`
/// sees it. Every rank gets the same `hosts` and `perHost` from the same list.
HostLayout hostLayout(const std::vector<std::string>& hostOfRank, int rank);

}  // namespace gpupeer::nccl_api
