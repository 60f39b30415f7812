// The sysfs parsers, and the probe run against a fake /sys and /proc tree.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpupeer/probe.hpp"
#include "gpupeer/topology.hpp"
#include "probe/probe_parts.hpp"
#include "probe/sysfs.hpp"

namespace gpupeer {
namespace {

namespace fs = std::filesystem;

testing::AssertionResult contains(const std::string& text, const std::string& needle) {
  if (text.find(needle) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "'" << needle << "' not in: " << text;
}

// ---- pcieGenFromSpeed -------------------------------------------------------------------

TEST(PcieGenFromSpeed, KnownSpeeds) {
  EXPECT_EQ(sysfs::pcieGenFromSpeed("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(sysfs::pcieGenFromSpeed("5.0 GT/s PCIe"), 2);
  EXPECT_EQ(sysfs::pcieGenFromSpeed("8.0 GT/s PCIe"), 3);
  EXPECT_EQ(sysfs::pcieGenFromSpeed("16.0 GT/s PCIe"), 4);
  EXPECT_EQ(sysfs::pcieGenFromSpeed("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(sysfs::pcieGenFromSpeed("64.0 GT/s PCIe"), 6);
  // Older kernels print no "PCIe" suffix.
  EXPECT_EQ(sysfs::pcieGenFromSpeed("8 GT/s"), 3);
}

TEST(PcieGenFromSpeed, UnrecognisedText) {
  EXPECT_EQ(sysfs::pcieGenFromSpeed("garbage"), std::nullopt);
  EXPECT_EQ(sysfs::pcieGenFromSpeed(""), std::nullopt);
  EXPECT_EQ(sysfs::pcieGenFromSpeed("Unknown"), std::nullopt);
  EXPECT_EQ(sysfs::pcieGenFromSpeed("12.0 GT/s PCIe"), std::nullopt);
}

// ---- acsControlFromConfig ---------------------------------------------------------------

// PCI config space with extended capabilities written at the given offsets.
class ConfigSpace {
 public:
  explicit ConfigSpace(size_t size) : bytes_(size, '\0') {
    // A plausible standard header: vendor 0x10b5 (PLX/Broadcom), a bridge.
    put16(0x00, 0x10b5);
    put16(0x02, 0xc010);
  }
  // Extended capability header: id (16 bits), version (4), next offset (12).
  ConfigSpace& cap(size_t offset, uint16_t id, uint16_t next, uint8_t version = 1) {
    put32(offset, id | uint32_t(version & 0xf) << 16 | uint32_t(next & 0xfff) << 20);
    return *this;
  }
  ConfigSpace& acs(size_t offset, uint16_t next, uint16_t capability, uint16_t control) {
    cap(offset, 0x000D, next);
    put16(offset + 4, capability);
    put16(offset + 6, control);
    return *this;
  }
  const std::string& bytes() const { return bytes_; }

 private:
  void put16(size_t off, uint16_t v) {
    bytes_[off] = char(v & 0xff);
    bytes_[off + 1] = char(v >> 8);
  }
  void put32(size_t off, uint32_t v) {
    put16(off, uint16_t(v & 0xffff));
    put16(off + 2, uint16_t(v >> 16));
  }
  std::string bytes_;
};

TEST(AcsControlFromConfig, AcsAfterAnotherCapability) {
  // AER (id 0x0001) at 0x100 points to ACS at 0x148; ACS control 0x001d (SV|RR|CR|UF).
  ConfigSpace c(4096);
  c.cap(0x100, 0x0001, 0x148, 2).acs(0x148, 0, 0x005f, 0x001d);
  EXPECT_EQ(sysfs::acsControlFromConfig(c.bytes()), 0x1d);
}

TEST(AcsControlFromConfig, LongerChainAndHighControlBits) {
  ConfigSpace c(4096);
  c.cap(0x100, 0x0001, 0x150, 2)       // AER
      .cap(0x150, 0x0002, 0x200)       // virtual channel
      .cap(0x200, 0x0010, 0xe00)       // SR-IOV
      .acs(0xe00, 0, 0x007f, 0x0a5d);  // control uses both bytes
  EXPECT_EQ(sysfs::acsControlFromConfig(c.bytes()), 0x0a5d);
}

TEST(AcsControlFromConfig, NoExtendedConfigSpace) {
  // Non-root readers get 256 bytes; whatever lies there is not an extended capability list.
  ConfigSpace c(256);
  EXPECT_EQ(sysfs::acsControlFromConfig(c.bytes()), std::nullopt);
  EXPECT_EQ(sysfs::acsControlFromConfig(""), std::nullopt);
  EXPECT_EQ(sysfs::acsControlFromConfig(std::string(64, '\xff')), std::nullopt);
}

TEST(AcsControlFromConfig, ChainWithoutAcs) {
  ConfigSpace c(4096);
  c.cap(0x100, 0x0001, 0x148, 2).cap(0x148, 0x000b, 0);  // AER, vendor-specific, end
  EXPECT_EQ(sysfs::acsControlFromConfig(c.bytes()), std::nullopt);
  ConfigSpace empty(4096);  // header 0 at 0x100: no extended capability at all
  EXPECT_EQ(sysfs::acsControlFromConfig(empty.bytes()), std::nullopt);
}

TEST(AcsControlFromConfig, LoopingOrCorruptChainsTerminate) {
  ConfigSpace self(4096);
  self.cap(0x100, 0x0001, 0x100);  // points to itself
  EXPECT_EQ(sysfs::acsControlFromConfig(self.bytes()), std::nullopt);
  ConfigSpace cycle(4096);
  cycle.cap(0x100, 0x0001, 0x200).cap(0x200, 0x0002, 0x100);  // two-element cycle
  EXPECT_EQ(sysfs::acsControlFromConfig(cycle.bytes()), std::nullopt);
  ConfigSpace allOnes(4096);
  allOnes.cap(0x100, 0xffff, 0xfff, 0xf);  // 0xffffffff: device gone
  EXPECT_EQ(sysfs::acsControlFromConfig(allOnes.bytes()), std::nullopt);
  // Next pointer below 0x100 (into the standard header) or past the end of what was read.
  ConfigSpace low(4096);
  low.cap(0x100, 0x0001, 0x040);
  EXPECT_EQ(sysfs::acsControlFromConfig(low.bytes()), std::nullopt);
  ConfigSpace shortRead(0x180);
  shortRead.cap(0x100, 0x0001, 0x17c);  // header fits, the ACS registers would not
  EXPECT_EQ(sysfs::acsControlFromConfig(shortRead.bytes()), std::nullopt);
}

// ---- bridgesOnPath, normalizeBusId ------------------------------------------------------

TEST(BridgesOnPath, BridgesBetweenHostBridgeAndDevice) {
  EXPECT_EQ(sysfs::bridgesOnPath("/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:00.0/0000:1a:00.0"),
            (std::vector<std::string>{"0000:17:01.0", "0000:18:00.0", "0000:19:00.0"}));
  // A GPU straight on the host bridge (VMs): no bridge.
  EXPECT_TRUE(sysfs::bridgesOnPath("/sys/devices/pci0000:00/0000:00:06.0").empty());
  EXPECT_TRUE(sysfs::bridgesOnPath("").empty());
  EXPECT_TRUE(sysfs::bridgesOnPath("/sys/devices/virtual/net/lo").empty());
}

TEST(NormalizeBusId, NvmlAndSysfsForms) {
  EXPECT_EQ(sysfs::normalizeBusId("00000000:1A:00.0"), "0000:1a:00.0");
  EXPECT_EQ(sysfs::normalizeBusId("0000:18:00.0"), "0000:18:00.0");
  EXPECT_EQ(sysfs::normalizeBusId("00000001:C1:1F.7"), "0001:c1:1f.7");
  EXPECT_EQ(sysfs::normalizeBusId("not a bus id"), "not a bus id");
}

// ---- cpuVendorFromCpuinfo ---------------------------------------------------------------

TEST(CpuVendorFromCpuinfo, X86VendorIds) {
  EXPECT_EQ(sysfs::cpuVendorFromCpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
                                        "processor\t: 1\nvendor_id\t: GenuineIntel\n"),
            "GenuineIntel");
  EXPECT_EQ(sysfs::cpuVendorFromCpuinfo("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763\n"),
            "AuthenticAMD");
}

TEST(CpuVendorFromCpuinfo, ArmImplementer) {
  // NVIDIA Grace (Neoverse V2) as its /proc/cpuinfo prints it: no vendor_id line.
  EXPECT_EQ(sysfs::cpuVendorFromCpuinfo("processor\t: 0\nBogoMIPS\t: 2000.00\nFeatures\t: fp asimd\n"
                                        "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU part\t: 0xd4f\n"),
            "ARM implementer 0x41");
}

TEST(CpuVendorFromCpuinfo, NoVendorLine) {
  EXPECT_EQ(sysfs::cpuVendorFromCpuinfo(""), std::nullopt);
  EXPECT_EQ(sysfs::cpuVendorFromCpuinfo("processor\t: 0\nvendor_idx\t: nope\nvendor_id\t:\n"), std::nullopt);
}

TEST(IommuVendorOf, EachVendorAndUnknown) {
  EXPECT_EQ(iommuVendorOf(std::string("GenuineIntel")), IommuVendor::kIntel);
  EXPECT_EQ(iommuVendorOf(std::string("AuthenticAMD")), IommuVendor::kAmd);
  EXPECT_EQ(iommuVendorOf(std::string("HygonGenuine")), IommuVendor::kAmd);
  EXPECT_EQ(iommuVendorOf(std::string("ARM implementer 0x41")), IommuVendor::kArm);
  EXPECT_EQ(iommuVendorOf(std::string("IBM/S390")), IommuVendor::kUnknown);
  EXPECT_EQ(iommuVendorOf(Known<std::string>::unknown(kNotRecorded)), IommuVendor::kUnknown);
}

// ---- probe against a fake tree ------------------------------------------------------------

class FakeRoot : public testing::Test {
 protected:
  void SetUp() override {
    const auto* info = testing::UnitTest::GetInstance()->current_test_info();
    root_ = (fs::path(testing::TempDir()) / (std::string("gpupeer_fakeroot_") + info->test_suite_name() + "_" +
                                             info->name() + "_" + std::to_string(::getpid())))
                .string();
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(root_ + "/proc/cmdline", fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace,
                    ec);
    fs::remove_all(root_, ec);
  }
  void write(const std::string& path, const std::string& text) {
    fs::create_directories(fs::path(root_ + path).parent_path());
    std::ofstream out(root_ + path, std::ios::binary | std::ios::trunc);
    out << text;
  }
  void mkdir(const std::string& path) { fs::create_directories(root_ + path); }
  // A relative symlink, as sysfs makes them.
  void link(const std::string& path, const std::string& target) {
    fs::create_directories(fs::path(root_ + path).parent_path());
    fs::create_directory_symlink(fs::relative(root_ + target, fs::path(root_ + path).parent_path()), root_ + path);
  }
  ProbeOptions options() const {
    ProbeOptions o;
    o.fsRoot = root_;
    o.useNvml = false;
    o.useCuda = false;
    return o;
  }
  std::string root_;
};

TEST_F(FakeRoot, EmptyTreeGivesUnknownsWithReasons) {
  Snapshot s = probeMachine(options());
  EXPECT_TRUE(s.gpus.empty());
  EXPECT_TRUE(s.pairs.empty());
  ASSERT_FALSE(s.platform.kernelCmdline.known());
  EXPECT_TRUE(contains(s.platform.kernelCmdline.reason(), "/proc/cmdline"));
  EXPECT_FALSE(contains(s.platform.kernelCmdline.reason(), root_));  // paths as on a machine
  ASSERT_FALSE(s.driverVersion.known());
  EXPECT_TRUE(contains(s.driverVersion.reason(), "/proc/driver/nvidia/version"));
  EXPECT_FALSE(s.deviceCount.known());
  EXPECT_FALSE(s.deviceCount.reason().empty());
  EXPECT_FALSE(s.nvmlVersion.known());
  EXPECT_TRUE(contains(s.nvmlVersion.reason(), "disabled"));
  EXPECT_EQ(s.platform.iommu.valueOr("?"), "off");  // no /sys/class/iommu
  ASSERT_TRUE(s.platform.acs.known());
  EXPECT_TRUE(s.platform.acs.value().empty());
  EXPECT_FALSE(s.description.empty());
  EXPECT_FALSE(s.capturedAt.empty());
  EXPECT_FALSE(whyNoGpu(s).empty());
}

TEST_F(FakeRoot, KernelCmdlineAndDriverVersionAreRead) {
  write("/proc/cmdline", "BOOT_IMAGE=/boot/vmlinuz-6.8.0 root=/dev/sda1 ro intel_iommu=on iommu=pt\n");
  write("/proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\n"
        "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n");
  Snapshot s = probeMachine(options());
  ASSERT_TRUE(s.platform.kernelCmdline.known()) << s.platform.kernelCmdline.reason();
  EXPECT_EQ(s.platform.kernelCmdline.value(),
            "BOOT_IMAGE=/boot/vmlinuz-6.8.0 root=/dev/sda1 ro intel_iommu=on iommu=pt");
  ASSERT_TRUE(s.driverVersion.known()) << s.driverVersion.reason();
  EXPECT_EQ(s.driverVersion.value(), "550.90.07");
}

TEST_F(FakeRoot, CpuVendorIsReadFromCpuinfo) {
  Snapshot none = probeMachine(options());
  ASSERT_FALSE(none.platform.cpuVendor.known());
  EXPECT_TRUE(contains(none.platform.cpuVendor.reason(), "/proc/cpuinfo"));
  write("/proc/cpuinfo", "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n");
  Snapshot s = probeMachine(options());
  EXPECT_EQ(s.platform.cpuVendor.valueOr("?"), "AuthenticAMD") << s.platform.cpuVendor.reason();
}

TEST_F(FakeRoot, UnrecognisedDriverVersionLineSaysSo) {
  write("/proc/driver/nvidia/version", "something else entirely\n");
  Snapshot s = probeMachine(options());
  ASSERT_FALSE(s.driverVersion.known());
  EXPECT_TRUE(contains(s.driverVersion.reason(), "unrecognised version line"));
}

TEST_F(FakeRoot, IommuUnitsWithoutReadableGroupsAreUnknown) {
  mkdir("/sys/class/iommu/dmar0");
  Snapshot s = probeMachine(options());
  ASSERT_FALSE(s.platform.iommu.known());
  EXPECT_TRUE(contains(s.platform.iommu.reason(), "IOMMU present"));
}

TEST_F(FakeRoot, UnreadableCmdlineIsUnknownWithTheOsReason) {
  write("/proc/cmdline", "quiet\n");
  fs::permissions(root_ + "/proc/cmdline", fs::perms::none, fs::perm_options::replace);
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: chmod 000 does not stop root from reading the file";
  Snapshot s = probeMachine(options());
  ASSERT_FALSE(s.platform.kernelCmdline.known());
  EXPECT_TRUE(contains(s.platform.kernelCmdline.reason(), "/proc/cmdline"));
  EXPECT_TRUE(contains(s.platform.kernelCmdline.reason(), "Permission denied"));
}

// The sysfs step on GPUs that CUDA would have found: a fake HGX-like tree with two GPUs on
// two host bridges, one with its NUMA node, one where sysfs says -1 on a one-node machine.
TEST_F(FakeRoot, SysfsAndPlatformStepsReadAFakeGpuTree) {
  const std::string gpu0 = "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/0000:19:00.0/0000:1a:00.0";
  const std::string gpu1 = "/sys/devices/pci0000:ca/0000:ca:01.0/0000:cb:00.0";
  mkdir("/sys/devices/system/node/node0");
  write("/sys/devices/system/node/possible", "0\n");
  write("/sys/devices/system/node/online", "0\n");
  write(gpu0 + "/numa_node", "-1\n");
  write(gpu0 + "/local_cpulist", "0-55,112-167\n");
  write(gpu0 + "/current_link_speed", "16.0 GT/s PCIe\n");
  write(gpu0 + "/max_link_speed", "32.0 GT/s PCIe\n");
  write(gpu0 + "/current_link_width", "8\n");
  write(gpu0 + "/max_link_width", "16\n");
  write("/sys/kernel/iommu_groups/42/type", "DMA-FQ\n");
  link(gpu0 + "/iommu_group", "/sys/kernel/iommu_groups/42");
  write(gpu1 + "/numa_node", "0\n");
  write(gpu1 + "/local_cpulist", "0-55,112-167\n");
  write(gpu1 + "/current_link_speed", "Unknown\n");
  write(gpu1 + "/max_link_width", "x16\n");
  link("/sys/bus/pci/devices/0000:1a:00.0", gpu0);
  link("/sys/bus/pci/devices/0000:cb:00.0", gpu1);
  // Bridges above GPU0: ACS readable, 256 bytes only (not root), and no config file.
  ConfigSpace withAcs(4096);
  withAcs.cap(0x100, 0x0001, 0x148, 2).acs(0x148, 0, 0x005f, 0x001d);
  write("/sys/devices/pci0000:17/0000:17:01.0/config", withAcs.bytes());
  link("/sys/bus/pci/devices/0000:17:01.0", "/sys/devices/pci0000:17/0000:17:01.0");
  write("/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0/config", ConfigSpace(256).bytes());
  link("/sys/bus/pci/devices/0000:18:00.0", "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0");
  ConfigSpace noAcs(4096);
  noAcs.cap(0x100, 0x0001, 0, 2);
  write("/sys/devices/pci0000:ca/0000:ca:01.0/config", noAcs.bytes());
  link("/sys/bus/pci/devices/0000:ca:01.0", "/sys/devices/pci0000:ca/0000:ca:01.0");
  mkdir("/sys/class/iommu/dmar0");

  Snapshot s;
  for (int i = 0; i < 2; ++i) {
    Gpu g;
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.pciBusId = i == 0 ? "0000:1a:00.0" : "0000:cb:00.0";
    s.gpus.push_back(g);
  }
  for (auto [a, b] : {std::pair{0, 1}, std::pair{1, 0}}) {
    PeerPair p;
    p.src = a;
    p.dst = b;
    p.pciPath = Known<std::string>::unknown("not classified");
    s.pairs.push_back(p);
  }
  probe::readSysfs(s, root_);
  probe::readPlatform(s, root_);

  const Gpu& g0 = s.gpus[0];
  EXPECT_EQ(g0.sysfsPath.valueOr("?"), gpu0);
  EXPECT_EQ(g0.numaNode.valueOr(-7), 0) << g0.numaNode.reason();  // the single node
  EXPECT_EQ(g0.cpuAffinity.valueOr("?"), "0-55,112-167");
  EXPECT_EQ(g0.iommuGroupType.valueOr("?"), "DMA-FQ");
  EXPECT_EQ(g0.pcie.currentGen.valueOr(0), 4);
  EXPECT_EQ(g0.pcie.maxGen.valueOr(0), 5);
  EXPECT_EQ(g0.pcie.currentWidth.valueOr(0), 8);
  EXPECT_EQ(g0.pcie.maxWidth.valueOr(0), 16);

  const Gpu& g1 = s.gpus[1];
  EXPECT_EQ(g1.sysfsPath.valueOr("?"), gpu1);
  EXPECT_EQ(g1.numaNode.valueOr(-7), 0);
  ASSERT_FALSE(g1.iommuGroupType.known());
  EXPECT_TRUE(contains(g1.iommuGroupType.reason(), "no IOMMU group"));
  ASSERT_FALSE(g1.pcie.currentGen.known());
  EXPECT_TRUE(contains(g1.pcie.currentGen.reason(), "unrecognised speed 'Unknown'"));
  ASSERT_FALSE(g1.pcie.maxGen.known());
  EXPECT_TRUE(contains(g1.pcie.maxGen.reason(), "max_link_speed"));
  ASSERT_FALSE(g1.pcie.maxWidth.known());
  EXPECT_TRUE(contains(g1.pcie.maxWidth.reason(), "not a number: 'x16'"));

  // Two host bridges of one NUMA node.
  ASSERT_TRUE(s.findPair(0, 1)->pciPath.known()) << s.findPair(0, 1)->pciPath.reason();
  EXPECT_EQ(s.findPair(0, 1)->pciPath.value(), "NODE");
  EXPECT_EQ(s.findPair(1, 0)->pciPath.valueOr("?"), "NODE");

  // GPU0's group translates DMA, GPU1's type is unknown: translated.
  EXPECT_EQ(s.platform.iommu.valueOr("?"), "translated");
  ASSERT_TRUE(s.platform.acs.known());
  const std::vector<BridgeAcs>& acs = s.platform.acs.value();
  ASSERT_EQ(acs.size(), 4u);
  EXPECT_EQ(acs[0].busId, "0000:17:01.0");
  EXPECT_EQ(acs[0].acsControl.valueOr(-1), 0x1d);
  EXPECT_EQ(acs[1].busId, "0000:18:00.0");
  EXPECT_TRUE(contains(acs[1].acsControl.reason(), "needs root"));
  EXPECT_EQ(acs[2].busId, "0000:19:00.0");
  EXPECT_TRUE(contains(acs[2].acsControl.reason(), "/sys/bus/pci/devices/0000:19:00.0/config"));
  EXPECT_EQ(acs[3].busId, "0000:ca:01.0");
  EXPECT_TRUE(contains(acs[3].acsControl.reason(), "no ACS capability"));
}

TEST_F(FakeRoot, MissingDeviceDirectoryLeavesEveryGpuFactUnknown) {
  Snapshot s;
  Gpu g;
  g.pciBusId = "0000:3b:00.0";
  s.gpus.push_back(g);
  Gpu h = g;
  h.index = 1;
  h.pciBusId = "0000:86:00.0";
  s.gpus.push_back(h);
  PeerPair p;
  p.src = 0;
  p.dst = 1;
  s.pairs.push_back(p);
  probe::readSysfs(s, root_);
  EXPECT_FALSE(s.gpus[0].sysfsPath.known());
  EXPECT_TRUE(contains(s.gpus[0].sysfsPath.reason(), "/sys/bus/pci/devices/0000:3b:00.0"));
  EXPECT_FALSE(s.gpus[0].numaNode.known());
  EXPECT_FALSE(s.gpus[0].pcie.maxGen.known());
  EXPECT_FALSE(s.pairs[0].pciPath.known());
  EXPECT_TRUE(contains(s.pairs[0].pciPath.reason(), "sysfs paths are unreadable"));
}

}  // namespace
}  // namespace gpupeer
