// The host layout a communicator spanning hosts is split by: hosts in the order of their first
// rank, each rank's place on its host, and whether every host has as many ranks.

#include "nccl_api/host_layout.hpp"

#include <gtest/gtest.h>

namespace gpupeer::nccl_api {
namespace {

TEST(NcclHostLayout, TwoHostsOfTwoInBlocks) {
  const std::vector<std::string> hosts = {"a", "a", "b", "b"};
  const int hostOf[] = {0, 0, 1, 1}, localOf[] = {0, 1, 0, 1};
  for (int r = 0; r < 4; ++r) {
    HostLayout l = hostLayout(hosts, r);
    EXPECT_EQ(l.hosts, 2);
    EXPECT_EQ(l.perHost, 2);
    EXPECT_EQ(l.hostIndex, hostOf[r]) << "rank " << r;
    EXPECT_EQ(l.localIndex, localOf[r]) << "rank " << r;
  }
}

TEST(NcclHostLayout, InterleavedRanksKeepRankOrderOnEachHost) {
  const std::vector<std::string> hosts = {"b", "a", "b", "a", "b", "a"};
  HostLayout l = hostLayout(hosts, 3);  // the second rank of "a", the second host met
  EXPECT_EQ(l.hosts, 2);
  EXPECT_EQ(l.perHost, 3);
  EXPECT_EQ(l.hostIndex, 1);
  EXPECT_EQ(l.localIndex, 1);
  EXPECT_EQ(hostLayout(hosts, 4).localIndex, 2);
}

TEST(NcclHostLayout, UnevenHostsHaveNoRanksPerHost) {
  HostLayout l = hostLayout({"a", "a", "a", "b"}, 3);
  EXPECT_EQ(l.hosts, 2);
  EXPECT_EQ(l.perHost, 0);
  EXPECT_EQ(l.hostIndex, 1);
  EXPECT_EQ(l.localIndex, 0);
}

TEST(NcclHostLayout, OneHostAndOneRankPerHost) {
  EXPECT_EQ(hostLayout({"a", "a", "a"}, 2).hosts, 1);
  EXPECT_EQ(hostLayout({"a", "a", "a"}, 2).perHost, 3);
  HostLayout each = hostLayout({"a", "b", "c"}, 1);
  EXPECT_EQ(each.hosts, 3);
  EXPECT_EQ(each.perHost, 1);
  EXPECT_EQ(each.hostIndex, 1);
}

}  // namespace
}  // namespace gpupeer::nccl_api
