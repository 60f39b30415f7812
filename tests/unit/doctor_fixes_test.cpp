// Fixes written for the machine in the snapshot: the CPU vendor's IOMMU option, real bus ids,
// no placeholder left for the reader to fill in, and every finding naming its GPUs.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>

#include "fixture_support.hpp"
#include "gpupeer/doctor.hpp"

namespace gpupeer {
namespace {

namespace fs = std::filesystem;
using testing::loadFixture;

const Finding* findingOf(const DoctorReport& r, const std::string& rule) {
  for (const Finding& f : r.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

// The PCIe fixture with the IOMMU translating and every pair P2P-capable: the warning case.
Snapshot translatedPcie(Known<std::string> vendor) {
  Snapshot s = loadFixture("snapshot_pcie_4gpu_two_switches.json");
  s.platform.iommu = std::string("translated");
  s.platform.cpuVendor = std::move(vendor);
  for (PeerPair& p : s.pairs) p.canAccessPeer = true;
  return s;
}

std::string iommuFix(Known<std::string> vendor) {
  DoctorReport r = diagnose(translatedPcie(std::move(vendor)), nullptr);
  const Finding* f = findingOf(r, "iommu-translated");
  if (!f) return "(no iommu-translated finding)";
  EXPECT_EQ(f->severity, Severity::kWarning);
  return firstThingToTry(*f);
}

TEST(DoctorFixes, IommuFixUsesTheCpuVendorsOption) {
  std::string intel = iommuFix(std::string("GenuineIntel"));
  EXPECT_NE(intel.find("intel_iommu=on iommu=pt"), std::string::npos) << intel;
  EXPECT_EQ(intel.find("amd_iommu"), std::string::npos) << intel;

  std::string amd = iommuFix(std::string("AuthenticAMD"));
  EXPECT_NE(amd.find("amd_iommu=off"), std::string::npos) << amd;
  EXPECT_NE(amd.find("&iommu=pt "), std::string::npos) << amd;
  EXPECT_EQ(amd.find("intel_iommu"), std::string::npos) << amd;

  std::string arm = iommuFix(std::string("ARM implementer 0x41"));
  EXPECT_NE(arm.find("iommu.passthrough=1"), std::string::npos) << arm;
  EXPECT_EQ(arm.find("intel_iommu"), std::string::npos) << arm;
  EXPECT_EQ(arm.find("amd_iommu"), std::string::npos) << arm;

  // A snapshot from before the vendor was recorded: no vendor's option is guessed.
  std::string unknown = iommuFix(Known<std::string>::unknown(kNotRecorded));
  EXPECT_NE(unknown.find("iommu.passthrough=1"), std::string::npos) << unknown;
  EXPECT_EQ(unknown.find("intel_iommu"), std::string::npos) << unknown;
  EXPECT_EQ(unknown.find("amd_iommu"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("does not record the CPU vendor"), std::string::npos) << unknown;
}

TEST(DoctorFixes, IommuFindingNamesThePciePeersAndTheVendor) {
  DoctorReport r = diagnose(translatedPcie(std::string("GenuineIntel")), nullptr);
  const Finding* f = findingOf(r, "iommu-translated");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->gpus.size(), 4u);
  EXPECT_EQ(f->gpus[0].busId, "0000:3d:00.0");
  EXPECT_NE(f->evidence.find("CPU vendor GenuineIntel"), std::string::npos) << f->evidence;
}

TEST(DoctorFixes, PcieWidthFixNamesEachNarrowGpusBusId) {
  Snapshot s = loadFixture("snapshot_degraded_nvlink_pcie.json");
  DoctorReport r = diagnose(s, nullptr);
  const Finding* f = findingOf(r, "pcie-width");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->gpus.size(), 1u);
  const Gpu* narrow = s.findGpu(f->gpus[0].index);
  ASSERT_NE(narrow, nullptr);
  EXPECT_EQ(f->gpus[0].busId, narrow->pciBusId);
  std::string fix = firstThingToTry(*f);
  EXPECT_NE(fix.find(fmt::format("sudo lspci -vv -s {} | grep -E 'LnkCap|LnkSta'", narrow->pciBusId)),
            std::string::npos)
      << fix;
  EXPECT_EQ(fix.find("<bdf>"), std::string::npos) << fix;
}

TEST(DoctorFixes, FabricManagerFixNamesTheDriversPackageAndTheGpus) {
  Snapshot s = loadFixture("snapshot_hgx_h100_8gpu.json");
  std::vector<Gpu>& gpus = s.gpus;
  gpus[2].fabricState = std::string("in-progress");
  gpus[5].fabricState = std::string("not-started");
  DoctorReport r = diagnose(s, nullptr);
  const Finding* f = findingOf(r, "fabric-manager");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->gpus.size(), 2u);
  EXPECT_EQ(f->gpus[0].index, 2);
  EXPECT_EQ(f->gpus[1].index, 5);
  EXPECT_EQ(f->gpus[1].busId, gpus[5].pciBusId);
  std::string fix = firstThingToTry(*f);
  EXPECT_NE(fix.find("nvidia-fabricmanager-550=550.90.07-1"), std::string::npos) << fix;
  EXPECT_NE(fix.find("nvidia-smi -i 2,5 -q"), std::string::npos) << fix;
}

TEST(DoctorFixes, MigFixNamesTheMigGpu) {
  DoctorReport r = diagnose(loadFixture("snapshot_mig_one_gpu.json"), nullptr);
  const Finding* f = findingOf(r, "mig");
  ASSERT_NE(f, nullptr);
  std::string fix = firstThingToTry(*f);
  EXPECT_NE(fix.find("sudo nvidia-smi -i 1 -mig 0 && sudo nvidia-smi -i 1 -r"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("-i 0 "), std::string::npos) << fix;  // GPU0 has MIG off
}

TEST(DoctorFixes, DeniedDeviceNodeNamesTheGpuItServes) {
  // /dev/nvidia1 is the second GPU by bus id when every GPU is in the snapshot.
  Snapshot s = loadFixture("snapshot_fault_cgroup_denies_nvidia1.json");
  DoctorReport r = diagnose(s, nullptr);
  const Finding* f = findingOf(r, "device-nodes");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->gpus.size(), 1u);
  EXPECT_EQ(f->gpus[0].index, 1);
  EXPECT_EQ(f->gpus[0].busId, "0000:00:07.0");
  // nvidiactl serves every GPU.
  std::vector<DeviceNode> nodes = s.platform.deviceNodes.value();
  nodes[0].access = "EPERM";
  s.platform.deviceNodes = nodes;
  f = findingOf(r = diagnose(s, nullptr), "device-nodes");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->gpus.size(), 2u);
}

// ---- every rule over the fixtures ------------------------------------------------------

// Every fixture of tests/data, plus plants that make the rules the fixtures leave silent fire.
std::vector<std::pair<std::string, Snapshot>> plantedSnapshots() {
  std::vector<std::pair<std::string, Snapshot>> out;
  for (const auto& entry : fs::directory_iterator(GPUPEER_TEST_DATA_DIR)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("snapshot_", 0) == 0 && entry.path().extension() == ".json")
      out.push_back({name, loadFixture(name)});
  }
  Snapshot iommu = translatedPcie(std::string("AuthenticAMD"));
  iommu.environment["NCCL_P2P_DISABLE"] = "1";
  iommu.environment["NCCL_P2P_LEVEL"] = "LOC";
  for (PeerPair& p : iommu.pairs)
    if (p.src == 0 && p.dst == 1) p.nvmlP2pRead = std::string("NS");  // CUDA and NVML disagree
  out.push_back({"translated IOMMU, NCCL variables", iommu});
  Snapshot hgx = loadFixture("snapshot_hgx_h100_8gpu.json");
  hgx.platform.processCpuAffinity = std::string("0-55");
  hgx.gpus[3].fabricState = std::string("in-progress");
  hgx.nvmlVersion = std::string("13.580.65.06");
  hgx.environment["CUDA_VISIBLE_DEVICES"] = "1,0,2,3,4,5,6,7";
  std::swap(hgx.gpus[0].pciBusId, hgx.gpus[1].pciBusId);
  out.push_back({"HGX on the wrong node", hgx});
  Snapshot mesh = loadFixture("snapshot_pcie_4gpu_two_switches.json");
  Gpu model = mesh.gpus[0];
  PeerPair pair = mesh.pairs[0];
  mesh.gpus.clear();
  mesh.pairs.clear();
  for (int i = 0; i < 10; ++i) {
    Gpu g = model;
    g.index = i;
    g.pciBusId = fmt::format("0000:{:02x}:00.0", 0x10 + i);
    g.uuid = fmt::format("GPU-{:04d}", i);
    g.ccMajor = 12;  // an RTX 5090's architecture, for the NCCL floor
    g.ccMinor = 0;
    if (i == 9) g.name = "NVIDIA GeForce RTX 5090";
    mesh.gpus.push_back(g);
  }
  for (int a = 0; a < 10; ++a)
    for (int b = 0; b < 10; ++b)
      if (a != b) {
        PeerPair p = pair;
        p.src = a;
        p.dst = b;
        p.canAccessPeer = true;  // nine peers each: over CUDA's limit
        p.nvmlP2pRead = std::string("OK");
        mesh.pairs.push_back(p);
      }
  mesh.ncclVersion = 22503;
  out.push_back({"ten PCIe GPUs of two models", mesh});
  return out;
}

// A check report with a failed kernel write, and bandwidths low and lopsided.
Measurements plantedMeasurements() {
  Measurements m;
  CheckReport check;
  check.devices = {0, 1};
  MethodResult broken{CheckMethod::kKernelWrite, CheckOutcome::kFail, "case 2 offset 4096: expected 0x5a got 0x00"};
  check.pairs.push_back({0, 1, {broken}});
  m.check = check;
  m.copyEngineGBps[{0, 1}] = 3;
  m.copyEngineGBps[{1, 0}] = 9;
  IpcCheckReport ipc;
  ipc.device = 0;
  ipc.results = {{IpcMechanism::kCudaIpc, CheckOutcome::kPass, "2097152 bytes checked", ""},
                 {IpcMechanism::kCuMemPosixFd, CheckOutcome::kFail,
                  "pidfd_getfd: Operation not permitted (Yama ptrace_scope=2 allows pidfd_getfd only with "
                  "CAP_SYS_PTRACE, which this process lacks)",
                  "nccl/cumem-import-pidfd"}};
  m.ipc = ipc;
  return m;
}

TEST(DoctorFixes, FailedCrossProcessSharingIsAFindingForItsGpu) {
  Snapshot s = loadFixture("snapshot_fault_ptrace_scope_2.json");
  Measurements m = plantedMeasurements();
  m.check.reset();  // only the cross-process check
  m.copyEngineGBps.clear();
  DoctorReport r = diagnose(s, &m);
  const Finding* f = findingOf(r, "ipc-sharing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);  // NCCL can be told to pass no descriptors
  EXPECT_EQ(f->kbId, "nccl/cumem-import-pidfd");
  EXPECT_NE(f->evidence.find("cumem-posix-fd: pidfd_getfd: Operation not permitted"), std::string::npos) << f->evidence;
  ASSERT_EQ(f->gpus.size(), 1u);
  EXPECT_EQ(f->gpus[0].busId, s.gpus[0].pciBusId);
  // Under Yama scope 1 with the memory proven over a Unix socket it is only worth knowing.
  Snapshot scopeOne = s;
  scopeOne.platform.ptraceScope = 1;
  m.ipc->results[1].detail =
      "pidfd_getfd: Operation not permitted (Yama ptrace_scope=1 lets a process without CAP_SYS_PTRACE take "
      "descriptors only from its own descendants, not from a sibling or parent rank); the same memory passed over a "
      "Unix socket (SCM_RIGHTS) imports and checks fine";
  m.ipc->results[1].onlyPidfdRefused = true;
  f = findingOf(r = diagnose(scopeOne, &m), "ipc-sharing");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  // A failed cudaIpc handle is an error: gpupeer's communicators and custom all-reduce need it.
  m.ipc->results[0] = {IpcMechanism::kCudaIpc, CheckOutcome::kFail, "cudaIpcOpenMemHandle: CUDA_ERROR_INVALID_VALUE",
                       "cuda/ipc-open-mem-handle-failed"};
  r = diagnose(s, &m);
  EXPECT_EQ(r.findings[0].rule, "ipc-sharing");
  EXPECT_EQ(r.findings[0].severity, Severity::kError);
  EXPECT_EQ(doctorExitCode(s, r), 1);
}

TEST(DoctorFixes, NoPlaceholderSurvivesInAnyReport) {
  // "<bdf>", "<your command>", "<uuid-a>": anything in angle brackets is text the reader would
  // have to replace, on a machine whose facts the snapshot holds.
  const std::regex placeholder("<[A-Za-z][^<>\\n]*>");  // not "GPU0<->GPU1"
  Measurements measured = plantedMeasurements();
  std::set<std::string> fired;
  for (const auto& [name, s] : plantedSnapshots())
    for (const Measurements* m : std::vector<const Measurements*>{nullptr, &measured}) {
      DoctorReport r = diagnose(s, m);
      for (const Finding& f : r.findings) {
        fired.insert(f.rule);
        std::smatch hit;
        std::string fix = firstThingToTry(f);  // what the reader is shown (nothing for info findings)
        EXPECT_FALSE(std::regex_search(fix, hit, placeholder))
            << name << ", rule " << f.rule << ": '" << hit.str() << "' in\n"
            << fix;
        EXPECT_FALSE(std::regex_search(f.evidence, hit, placeholder)) << name << ", rule " << f.rule;
      }
      for (const std::string& text : {renderDoctorReport(s, r, m, 0), doctorReportToJson(r, m)}) {
        std::smatch hit;
        EXPECT_FALSE(std::regex_search(text, hit, placeholder)) << name << ": '" << hit.str() << "' in\n" << text;
      }
    }
  // Every rule was seen, so the scan above covered what each can print; and every finding's id
  // is one of the rule list's, as the report's reader looks it up.
  std::set<std::string> listed;
  for (const DoctorRule& rule : doctorRules()) {
    listed.insert(rule.name);
    EXPECT_TRUE(fired.count(rule.name)) << rule.name << " never fired";
  }
  for (const std::string& rule : fired) EXPECT_TRUE(listed.count(rule)) << rule << " is not in doctorRules()";
}

TEST(DoctorFixes, EveryFindingNamesItsGpus) {
  Measurements measured = plantedMeasurements();
  for (const auto& [name, s] : plantedSnapshots()) {
    if (s.gpus.empty()) continue;  // nothing to name: the verdict says why no GPU is seen
    for (const Measurements* m : std::vector<const Measurements*>{nullptr, &measured})
      for (const Finding& f : diagnose(s, m).findings) {
        EXPECT_FALSE(f.gpus.empty()) << name << ": " << f.rule << " names no GPU";
        for (const FindingGpu& g : f.gpus) {
          const Gpu* gpu = s.findGpu(g.index);
          ASSERT_NE(gpu, nullptr) << name << ": " << f.rule << " names GPU" << g.index;
          EXPECT_EQ(g.busId, gpu->pciBusId) << name << ": " << f.rule;
        }
      }
  }
}

}  // namespace
}  // namespace gpupeer
