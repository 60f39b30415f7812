// The doctor's findings in detail, on fixtures with planted faults: the GPUs each finding
// concerns, fixes written for this machine, info findings without commands, a headline that
// counts what is listed, the peer limit, mixed models, MIG once, and exit codes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "fixture_support.hpp"
#include "gpupeer/doctor.hpp"

namespace gpupeer {
namespace {

using testing::loadFixture;
using testing::rulesOf;

const Finding* findingOf(const DoctorReport& r, const std::string& rule) {
  for (const Finding& f : r.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

std::vector<int> indicesOf(const Finding& f) {
  std::vector<int> out;
  for (const FindingGpu& g : f.gpus) out.push_back(g.index);
  return out;
}

// `count` GPUs of the PCIe fixture's model, every ordered pair P2P-capable, no NVLink.
Snapshot pcieMesh(int count) {
  Snapshot s = loadFixture("snapshot_pcie_4gpu_two_switches.json");
  Gpu model = s.gpus[0];
  PeerPair pair = s.pairs[0];
  s.gpus.clear();
  s.pairs.clear();
  for (int i = 0; i < count; ++i) {
    Gpu g = model;
    g.index = i;
    g.pciBusId = fmt::format("0000:{:02x}:00.0", 0x10 + i);
    g.uuid = fmt::format("GPU-{:04d}", i);
    s.gpus.push_back(g);
  }
  for (int a = 0; a < count; ++a)
    for (int b = 0; b < count; ++b) {
      if (a == b) continue;
      PeerPair p = pair;
      p.src = a;
      p.dst = b;
      p.canAccessPeer = true;
      p.nvmlP2pRead = std::string("OK");
      p.nvmlP2pWrite = std::string("OK");
      s.pairs.push_back(p);
    }
  return s;
}

TEST(DoctorDetails, FindingsNameTheirGpusWithBusIds) {
  DoctorReport r = diagnose(loadFixture("snapshot_pcie_4gpu_two_switches.json"), nullptr);
  const Finding* f = findingOf(r, "p2p-unsupported");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(indicesOf(*f), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(f->gpus[2].busId, "0000:b1:00.0");
  Snapshot s = loadFixture("snapshot_pcie_4gpu_two_switches.json");
  std::string text = renderDoctorReport(s, r, nullptr, 0);
  EXPECT_NE(text.find("GPUs: GPU0 (0000:3d:00.0), GPU1 (0000:3e:00.0)"), std::string::npos) << text;
  nlohmann::json j = nlohmann::json::parse(doctorReportToJson(r, nullptr));
  EXPECT_EQ(j["findings"][0]["gpus"][3]["busId"], "0000:b2:00.0");
}

TEST(DoctorDetails, AcsRedirectNamesTheGpusBehindEachBridgeAndFixesOnlyThose) {
  Snapshot s = loadFixture("snapshot_consumer_2gpu_no_p2p.json");
  // A bridge with redirect off is left alone by the fix.
  std::vector<BridgeAcs> bridges = s.platform.acs.value();
  bridges.push_back({"0000:00:07.1", 0});
  s.platform.acs = bridges;
  DoctorReport report = diagnose(s, nullptr);
  const Finding* f = findingOf(report, "acs-redirect");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->evidence.find("bridge 0000:00:01.1: ACS control 0x001d (redirect on), above GPU0 (0000:01:00.0)"),
            std::string::npos)
      << f->evidence;
  EXPECT_EQ(indicesOf(*f), (std::vector<int>{0, 1}));
  EXPECT_NE(f->fix.find("sudo setpci -s 0000:00:01.1 ECAP_ACS+6.w=0000"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find("sudo setpci -s 0000:00:03.1 ECAP_ACS+6.w=0000"), std::string::npos) << f->fix;
  EXPECT_EQ(f->fix.find("0000:00:07.1"), std::string::npos) << f->fix;
  EXPECT_EQ(f->fix.find("lspci -d"), std::string::npos) << "the KB's loop over every bridge: " << f->fix;
}

TEST(DoctorDetails, InfoFindingsOfferNoCommand) {
  DoctorReport r = diagnose(loadFixture("snapshot_consumer_2gpu_no_p2p.json"), nullptr);
  const Finding* acs = findingOf(r, "acs-redirect");
  const Finding* iommu = findingOf(r, "iommu-translated");
  ASSERT_NE(acs, nullptr);
  ASSERT_NE(iommu, nullptr);
  ASSERT_EQ(acs->severity, Severity::kInfo);  // no PCIe pair uses P2P here
  EXPECT_EQ(firstThingToTry(*acs), "");
  EXPECT_EQ(firstThingToTry(*iommu), "");  // the KB's first workaround edits GRUB and reboots
  EXPECT_NE(firstThingToTry(*findingOf(r, "p2p-unsupported")), "");
  nlohmann::json j = nlohmann::json::parse(doctorReportToJson(r, nullptr));
  for (const auto& f : j["findings"])
    if (f["severity"] == "info") {
      EXPECT_EQ(f["firstWorkaround"], "") << f["rule"];
    }
}

TEST(DoctorDetails, HeadlineCountsWhatIsListed) {
  DoctorReport r = diagnose(loadFixture("snapshot_consumer_2gpu_no_p2p.json"), nullptr);
  ASSERT_EQ(r.findings.size(), 3u);
  EXPECT_NE(r.verdict.find("0 error(s), 1 warning(s) and 2 info finding(s)"), std::string::npos) << r.verdict;
  Snapshot healthy = loadFixture("snapshot_h200_2gpu_captured.json");
  healthy.environment["CUDA_VISIBLE_DEVICES"] = "1,0";
  std::swap(healthy.gpus[0].pciBusId, healthy.gpus[1].pciBusId);
  DoctorReport noted = diagnose(healthy, nullptr);
  ASSERT_EQ(noted.findings.size(), 1u);
  EXPECT_NE(noted.verdict.find("P2P healthy with 1 info finding(s)"), std::string::npos) << noted.verdict;
}

TEST(DoctorDetails, NumaFixBindsToTheGpusNode) {
  Snapshot s = loadFixture("snapshot_hgx_h100_8gpu.json");
  s.platform.processCpuAffinity = std::string("0-55");  // node 0's CPUs; GPUs 4-7 are on node 1
  DoctorReport report = diagnose(s, nullptr);
  const Finding* f = findingOf(report, "numa-affinity");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(indicesOf(*f), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_NE(f->fix.find("numactl --cpunodebind=1 --membind=1"), std::string::npos) << f->fix;
  EXPECT_NE(f->evidence.find("(NUMA node 1)"), std::string::npos) << f->evidence;
}

TEST(DoctorDetails, DriverTooOldStatesBothVersionsAndTheDriverNeeded) {
  Snapshot s = loadFixture("snapshot_h200_2gpu_captured.json");
  s.driverVersion = std::string("570.86.15");
  s.cudaDriverVersion = 12080;
  s.cudaRuntimeVersion = 13000;
  DoctorReport report = diagnose(s, nullptr);
  const Finding* f = findingOf(report, "driver-too-old");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence,
            "driver 570.86.15 (supports up to CUDA 12.8), runtime CUDA 13.0, which needs driver 580 or newer");
  // Where CUDA refused to start, the versions come first and the runtime's words follow.
  DoctorReport refused = diagnose(loadFixture("snapshot_fault_insufficient_driver.json"), nullptr);
  const Finding* r = findingOf(refused, "driver-too-old");
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r->evidence.find("driver 580.159.04, runtime CUDA 13.0"), std::string::npos) << r->evidence;
  EXPECT_NE(r->evidence.find("cudaErrorInsufficientDriver"), std::string::npos) << r->evidence;
}

TEST(DoctorDetails, NoDriverAtAllIsNoGpuNotAnOldDriver) {
  // The runtime answers cudaErrorInsufficientDriver when libcuda is missing too.
  Snapshot s = loadFixture("snapshot_fault_insufficient_driver.json");
  s.driverVersion = Known<std::string>::unknown("no NVIDIA kernel module");
  DoctorReport r = diagnose(s, nullptr);
  EXPECT_EQ(findingOf(r, "driver-too-old"), nullptr);
  EXPECT_EQ(doctorExitCode(s, r), 3);
}

TEST(DoctorDetails, MoreThanEightReachablePeersIsNotHealthy) {
  DoctorReport ten = diagnose(pcieMesh(10), nullptr);
  const Finding* f = findingOf(ten, "peer-limit");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->kbId, "cuda/too-many-peers");
  EXPECT_EQ(f->gpus.size(), 10u);
  EXPECT_NE(f->evidence.find("GPU9: 9 peers reachable"), std::string::npos) << f->evidence;
  EXPECT_NE(f->fix.find("CUDA_VISIBLE_DEVICES=GPU-0009"), std::string::npos) << f->fix;  // the second group
  EXPECT_EQ(ten.verdict.find("P2P healthy"), std::string::npos) << ten.verdict;
  // Nine GPUs: eight peers each, within the limit.
  EXPECT_EQ(findingOf(diagnose(pcieMesh(9), nullptr), "peer-limit"), nullptr);
}

TEST(DoctorDetails, MixedModelsGetTheirOwnFinding) {
  Snapshot s = loadFixture("snapshot_pcie_4gpu_two_switches.json");
  s.gpus[3].name = "NVIDIA RTX A4000";
  DoctorReport report = diagnose(s, nullptr);
  const Finding* f = findingOf(report, "mixed-models");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kbId, "cuda/peer-mixed-gpu-models");
  EXPECT_EQ(f->severity, Severity::kWarning);  // the cross-model pairs have no P2P here
  EXPECT_NE(f->evidence.find("NVIDIA RTX A4000: GPU3 (0000:b2:00.0)"), std::string::npos) << f->evidence;
  EXPECT_EQ(findingOf(diagnose(loadFixture("snapshot_pcie_4gpu_two_switches.json"), nullptr), "mixed-models"), nullptr);
}

TEST(DoctorDetails, MigIsReportedOnceWithTheMigEntry) {
  DoctorReport r = diagnose(loadFixture("snapshot_mig_one_gpu.json"), nullptr);
  EXPECT_EQ(rulesOf(r), (std::multiset<std::string>{"mig"}));
  const Finding* f = findingOf(r, "mig");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->kbId, "cuda/mig-no-p2p");
  EXPECT_EQ(indicesOf(*f), (std::vector<int>{1}));
  EXPECT_NE(f->evidence.find("no P2P on GPU0->GPU1, GPU1->GPU0"), std::string::npos) << f->evidence;
}

TEST(DoctorDetails, ExitCodeFollowsTheWorstFinding) {
  // An error finding exits 1 even where no GPU is visible.
  Snapshot noGpu = loadFixture("snapshot_fault_insufficient_driver.json");
  ASSERT_TRUE(noGpu.gpus.empty());
  EXPECT_EQ(doctorExitCode(noGpu, diagnose(noGpu, nullptr)), 1);
  EXPECT_EQ(doctorExitCode(noGpu, DoctorReport{}), 3);
  Snapshot s = loadFixture("snapshot_h200_2gpu_captured.json");
  EXPECT_EQ(doctorExitCode(s, diagnose(s, nullptr)), 0);
  EXPECT_EQ(doctorExitCode(s, diagnose(loadFixture("snapshot_pcie_4gpu_two_switches.json"), nullptr)), 5);
  DoctorReport infoOnly;
  infoOnly.findings.push_back({"device-order", Severity::kInfo, "t", "e", ""});
  EXPECT_EQ(doctorExitCode(s, infoOnly), 0);
}

}  // namespace
}  // namespace gpupeer
