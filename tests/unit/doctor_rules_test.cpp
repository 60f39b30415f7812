// Each fixture gets the findings it was built to show, and no others; each rule is also
// driven on its own by small changes to a healthy snapshot.
#include <gtest/gtest.h>

#include <set>

#include "fixture_support.hpp"
#include "gpupeer/doctor.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "gpupeer/snapshot_json.hpp"

namespace gpupeer {
namespace {

Snapshot fixture(const std::string& name) { return testing::loadFixture(name); }

using testing::rulesOf;

const Finding* findingOf(const DoctorReport& r, const std::string& rule) {
  for (const Finding& f : r.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

TEST(DoctorFixtures, HealthyMachinesHaveNoFindings) {
  for (const char* name :
       {"snapshot_hgx_h100_8gpu.json", "snapshot_h200_2gpu_captured.json", "snapshot_h200_4gpu_captured.json"}) {
    DoctorReport r = diagnose(fixture(name), nullptr);
    EXPECT_TRUE(r.findings.empty()) << name << ": first finding " << (r.findings.empty() ? "" : r.findings[0].rule);
    EXPECT_NE(r.verdict.find("P2P healthy"), std::string::npos) << r.verdict;
    EXPECT_EQ(r.notRun.size(), 3u) << "offline diagnosis must say what it did not check";
  }
}

TEST(DoctorFixtures, ConsumerBoxWithoutP2p) {
  DoctorReport r = diagnose(fixture("snapshot_consumer_2gpu_no_p2p.json"), nullptr);
  EXPECT_EQ(rulesOf(r), (std::multiset<std::string>{"p2p-unsupported", "iommu-translated", "acs-redirect"}));
  const Finding* f = findingOf(r, "p2p-unsupported");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->evidence.find("GNS"), std::string::npos);
  EXPECT_EQ(f->kbId, "cuda/peer-access-unsupported-by-hardware");
  // No PCIe pair uses P2P, so the IOMMU and ACS are only information here.
  EXPECT_EQ(findingOf(r, "iommu-translated")->severity, Severity::kInfo);
  EXPECT_EQ(findingOf(r, "acs-redirect")->severity, Severity::kInfo);
  EXPECT_NE(r.verdict.find("P2P unavailable"), std::string::npos) << r.verdict;
}

TEST(DoctorFixtures, PcieBoxWithTwoSwitches) {
  DoctorReport r = diagnose(fixture("snapshot_pcie_4gpu_two_switches.json"), nullptr);
  EXPECT_EQ(rulesOf(r), (std::multiset<std::string>{"p2p-unsupported"}));
  EXPECT_NE(r.findings[0].title.find("8 of 12"), std::string::npos) << r.findings[0].title;
}

TEST(DoctorFixtures, DegradedNvlinkAndDowntrainedPcie) {
  DoctorReport r = diagnose(fixture("snapshot_degraded_nvlink_pcie.json"), nullptr);
  EXPECT_EQ(rulesOf(r), (std::multiset<std::string>{"nvlink-inactive", "nvlink-degraded", "pcie-width", "pcie-speed",
                                                    "acs-redirect"}));
  EXPECT_NE(findingOf(r, "nvlink-degraded")->evidence.find("GPU0<->GPU1: NV2"), std::string::npos);
  EXPECT_EQ(findingOf(r, "nvlink-degraded")->title, "1 GPU pair has fewer NVLinks than the rest");
  EXPECT_NE(findingOf(r, "pcie-width")->evidence.find("x8 of x16"), std::string::npos);
  EXPECT_EQ(findingOf(r, "pcie-speed")->severity, Severity::kInfo);  // idle links slow down
}

TEST(DoctorFixtures, MigOnOneGpu) {
  DoctorReport r = diagnose(fixture("snapshot_mig_one_gpu.json"), nullptr);
  EXPECT_EQ(rulesOf(r), (std::multiset<std::string>{"mig"}));  // its pairs are the mig finding's
  EXPECT_NE(findingOf(r, "mig")->evidence.find("GPU1"), std::string::npos);
}

TEST(DoctorRules, NcclP2pDisableSaysWhatItCosts) {
  Snapshot s = fixture("snapshot_h200_2gpu_captured.json");
  s.environment["NCCL_P2P_DISABLE"] = "1";
  DoctorReport r = diagnose(s, nullptr);
  const Finding* f = findingOf(r, "p2p-disabled-env");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_NE(f->evidence.find("478 GB/s"), std::string::npos) << f->evidence;
  EXPECT_NE(f->evidence.find("63 GB/s"), std::string::npos) << f->evidence;  // PCIe Gen5 x16
  s.environment["NCCL_P2P_DISABLE"] = "0";
  EXPECT_EQ(findingOf(diagnose(s, nullptr), "p2p-disabled-env"), nullptr);
}

TEST(DoctorRules, VisibleDevicesOrderIsNoted) {
  Snapshot s = fixture("snapshot_h200_2gpu_captured.json");
  std::swap(s.gpus[0].pciBusId, s.gpus[1].pciBusId);  // what CUDA_VISIBLE_DEVICES=1,0 shows
  s.environment["CUDA_VISIBLE_DEVICES"] = "1,0";
  DoctorReport r = diagnose(s, nullptr);
  const Finding* f = findingOf(r, "device-order");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->title.find("CUDA_VISIBLE_DEVICES=1,0"), std::string::npos);
  EXPECT_EQ(f->severity, Severity::kInfo);
}

TEST(DoctorRules, NcclP2pLevelExcludingPairs) {
  Snapshot s = fixture("snapshot_pcie_4gpu_two_switches.json");
  s.environment["NCCL_P2P_LEVEL"] = "LOC";
  DoctorReport r = diagnose(s, nullptr);
  const Finding* f = findingOf(r, "nccl-p2p-level");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  s.environment["NCCL_P2P_LEVEL"] = "PIX";  // same-switch pairs are PIX: nothing excluded
  EXPECT_EQ(findingOf(diagnose(s, nullptr), "nccl-p2p-level")->severity, Severity::kInfo);
  s.environment["NCCL_P2P_LEVEL"] = "BOGUS";
  EXPECT_NE(findingOf(diagnose(s, nullptr), "nccl-p2p-level")->title.find("not a value"), std::string::npos);
}

TEST(DoctorRules, FabricManagerNotDone) {
  Snapshot s = fixture("snapshot_hgx_h100_8gpu.json");
  s.gpus[3].fabricState = std::string("in-progress");
  DoctorReport r = diagnose(s, nullptr);
  const Finding* f = findingOf(r, "fabric-manager");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kError);
  EXPECT_NE(f->evidence.find("GPU3"), std::string::npos);
}

TEST(DoctorRules, VersionsThatDoNotFit) {
  Snapshot s = fixture("snapshot_h200_2gpu_captured.json");
  s.cudaDriverVersion = 12080;
  s.cudaRuntimeVersion = 13000;
  s.nvmlVersion = std::string("13.575.57.08");
  DoctorReport r = diagnose(s, nullptr);
  EXPECT_NE(findingOf(r, "driver-too-old"), nullptr);
  EXPECT_NE(findingOf(r, "nvml-mismatch"), nullptr);
  s.gpus[0].ccMajor = 12;
  s.gpus[0].ccMinor = 0;
  s.ncclVersion = 22501;
  EXPECT_NE(findingOf(diagnose(s, nullptr), "nccl-too-old"), nullptr);
  s.ncclVersion = 22803;
  EXPECT_EQ(findingOf(diagnose(s, nullptr), "nccl-too-old"), nullptr);
}

TEST(DoctorRules, NumaAffinityAndComputeMode) {
  Snapshot s = fixture("snapshot_hgx_h100_8gpu.json");
  s.platform.processCpuAffinity = std::string(s.gpus[7].cpuAffinity.value());
  s.gpus[2].computeMode = std::string("exclusive-process");
  DoctorReport r = diagnose(s, nullptr);
  ASSERT_NE(findingOf(r, "numa-affinity"), nullptr);
  EXPECT_NE(findingOf(r, "numa-affinity")->evidence.find("GPU0"), std::string::npos);
  EXPECT_EQ(findingOf(r, "numa-affinity")->evidence.find("GPU7"), std::string::npos);
  EXPECT_NE(findingOf(r, "compute-mode"), nullptr);
}

// CPU lists of the sizes a hostile snapshot gives: 300 ranges per GPU, one range thousands of
// times, a CPU past any machine's. Each is read in time linear in its text (the old reader
// looped past INT_MAX on "2147483647"); the finding's evidence stays short.
TEST(DoctorRules, HostileCpuListsAreReadWhole) {
  Snapshot s = fixture("snapshot_hgx_h100_8gpu.json");
  std::string evenCpus, repeated;
  for (int c = 0; c < 600; c += 2) evenCpus += std::to_string(c) + ",";
  for (int i = 0; i < 4000; ++i) repeated += "1000-1999,";
  s.platform.processCpuAffinity = evenCpus;
  for (Gpu& g : s.gpus) g.cpuAffinity = repeated;
  s.gpus[0].cpuAffinity = std::string("2147483647");
  s.gpus[1].cpuAffinity = evenCpus.substr(0, 4);  // "0,2,": shares CPUs with this process
  DoctorReport r = diagnose(s, nullptr);
  const Finding* numa = findingOf(r, "numa-affinity");
  ASSERT_NE(numa, nullptr);
  EXPECT_EQ(numa->evidence.find("GPU0"), std::string::npos);  // unreadable: not judged
  EXPECT_EQ(numa->evidence.find("GPU1"), std::string::npos);
  EXPECT_NE(numa->evidence.find("GPU7: local CPUs 1000-1999,1000"), std::string::npos) << numa->evidence;
  EXPECT_LT(numa->evidence.size(), 4000u);
}

TEST(DoctorRules, MeasuredBandwidthAndDataCheck) {
  Snapshot s = fixture("snapshot_h200_2gpu_captured.json");
  Measurements m;
  m.copyEngineGBps[{0, 1}] = 394;
  m.copyEngineGBps[{1, 0}] = 392;
  DoctorReport healthy = diagnose(s, &m);
  EXPECT_TRUE(healthy.findings.empty());
  EXPECT_NE(healthy.verdict.find("392 GB/s per direction"), std::string::npos) << healthy.verdict;
  EXPECT_NE(healthy.verdict.find("82% of NVLink"), std::string::npos) << healthy.verdict;

  m.copyEngineGBps[{1, 0}] = 150;  // 31% of 478: low, and asymmetric
  DoctorReport slow = diagnose(s, &m);
  EXPECT_NE(findingOf(slow, "bandwidth-low"), nullptr);
  EXPECT_NE(findingOf(slow, "bandwidth-asymmetric"), nullptr);

  CheckReport check;
  check.pairs.push_back(
      {0, 1, {{CheckMethod::kKernelWrite, CheckOutcome::kFail, "1 of 4093 byte(s) wrong", false, 0}}});
  m.check = check;
  DoctorReport broken = diagnose(s, &m);
  ASSERT_FALSE(broken.findings.empty());
  EXPECT_EQ(broken.findings[0].rule, "p2p-data-check");  // errors first
  EXPECT_EQ(broken.findings[0].severity, Severity::kError);
  EXPECT_NE(broken.findings[0].title.find("driver reports P2P"), std::string::npos);
  EXPECT_EQ(broken.worst(), Severity::kError);
}

TEST(DoctorRules, EveryFindingNamesAnExistingKbEntry) {
  // Drive every rule that can fire from fixtures, then check the ids against the KB.
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({GPUPEER_SOURCE_KB_DIR}, nullptr);
  ASSERT_TRUE(kb.isOk()) << kb.status().toString();
  std::set<std::string> seen;
  for (const char* name : {"snapshot_consumer_2gpu_no_p2p.json", "snapshot_degraded_nvlink_pcie.json",
                           "snapshot_mig_one_gpu.json", "snapshot_pcie_4gpu_two_switches.json"})
    for (const Finding& f : diagnose(fixture(name), nullptr).findings) seen.insert(f.kbId);
  EXPECT_GE(seen.size(), 6u);
  for (const std::string& id : seen) EXPECT_NE(kb.value().find(id), nullptr) << id;
}

TEST(DoctorRules, NoGpuVerdictSaysWhy) {
  Snapshot s;
  s.deviceCount = Known<int>::unknown("cudaGetDeviceCount: cudaErrorNoDevice");
  s.driverVersion = std::string("580.159.04");
  s.environment["CUDA_VISIBLE_DEVICES"] = "";
  DoctorReport r = diagnose(s, nullptr);
  EXPECT_NE(r.verdict.find("No NVIDIA GPU visible"), std::string::npos);
  EXPECT_NE(r.verdict.find("CUDA_VISIBLE_DEVICES"), std::string::npos) << r.verdict;
}

}  // namespace
}  // namespace gpupeer
