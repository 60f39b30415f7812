// Whose copy engines carry the copy-engine algorithm's copies by default (collectives/ce_issuer.hpp).
#include "collectives/ce_issuer.hpp"

#include <gtest/gtest.h>

namespace gpupeer {
namespace {

TEST(CeIssuer, ReceiversPullOnTwoGpusSendersPushFromThree) {
  EXPECT_EQ(ceIssuerFor(2), CeIssuer::kReceiver);
  for (int ranks : {3, 4, 8}) EXPECT_EQ(ceIssuerFor(ranks), CeIssuer::kSender) << ranks;
}

}  // namespace
}  // namespace gpupeer
