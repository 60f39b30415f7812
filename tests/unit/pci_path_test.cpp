#include <gtest/gtest.h>

#include "gpupeer/topology.hpp"

namespace gpupeer {
namespace {

const Known<int> kNode0 = 0, kNode1 = 1;

TEST(ClassifyPciPath, SameSwitchIsPix) {
  EXPECT_EQ(
      classifyPciPath("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0",
                      "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:04:00.0", kNode0, kNode0),
      "PIX");
}

TEST(ClassifyPciPath, NestedSwitchesArePxb) {
  EXPECT_EQ(classifyPciPath(
                "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:08.0/0000:03:00.0/0000:04:00.0/0000:05:00.0",
                "/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:10.0/0000:06:00.0", kNode0, kNode0),
            "PXB");
}

TEST(ClassifyPciPath, DifferentRootPortsArePhb) {
  EXPECT_EQ(classifyPciPath("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0",
                            "/sys/devices/pci0000:00/0000:00:03.0/0000:02:00.0", kNode0, kNode0),
            "PHB");
}

TEST(ClassifyPciPath, HostBridgesOfOneNodeAreNodeAndOfTwoAreSys) {
  const std::string a = "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0";
  const std::string b = "/sys/devices/pci0000:ca/0000:ca:01.0/0000:cb:00.0";
  EXPECT_EQ(classifyPciPath(a, b, kNode0, kNode0), "NODE");
  EXPECT_EQ(classifyPciPath(a, b, kNode0, kNode1), "SYS");
  // Machines without NUMA report -1 (unknown) for both: one node.
  EXPECT_EQ(classifyPciPath(a, b, Known<int>::unknown("-1"), Known<int>::unknown("-1")), "NODE");
}

TEST(ClassifyPciPath, UnparseablePathGivesEmpty) {
  EXPECT_EQ(classifyPciPath("garbage", "/sys/devices/pci0000:00/0000:00:01.0", kNode0, kNode0), "");
  EXPECT_EQ(classifyPciPath("/sys/devices/virtual/x", "/sys/devices/pci0000:00/0000:00:01.0", kNode0, kNode0), "");
}

TEST(LinkRates, PcieAndNvlinkRates) {
  EXPECT_NEAR(*pcieRateGBps(4, 16), 31.5, 0.1);
  EXPECT_NEAR(*pcieRateGBps(5, 16), 63.0, 0.1);
  EXPECT_NEAR(*pcieRateGBps(3, 8), 7.88, 0.01);
  EXPECT_FALSE(pcieRateGBps(0, 16).has_value());
  EXPECT_FALSE(pcieRateGBps(7, 16).has_value());
  Gpu h200;
  h200.ccMajor = 9;
  EXPECT_DOUBLE_EQ(*nvlinkLinkRateGBps(h200), 26.5625);
  Gpu turing;
  turing.ccMajor = 7;
  turing.ccMinor = 5;
  EXPECT_DOUBLE_EQ(*nvlinkLinkRateGBps(turing), 25.0);
}

}  // namespace
}  // namespace gpupeer
