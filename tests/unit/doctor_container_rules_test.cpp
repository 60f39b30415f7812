// The rules for containers, VMs and the driver's process-wide state: each fixture plants one
// fault into a healthy snapshot and must give exactly that rule's finding.
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

struct Planted {
  const char* fixture;
  const char* rule;
  Severity severity;
  const char* kbId;
  const char* evidence;  ///< a piece of the title or evidence that names the fault
};

const Planted kPlanted[] = {
    {"snapshot_fault_dev_shm_64m.json", "dev-shm-small", Severity::kWarning, "nccl/devshm-exhausted",
     "/dev/shm is only 64 MiB (in a docker container)"},
    {"snapshot_fault_private_ipc_namespace.json", "ipc-namespace", Severity::kInfo, "nccl/ipc-across-containers",
     "IPC namespace ipc:[4026532447] (the host's is ipc:[4026531839])"},
    {"snapshot_fault_memlock_64k.json", "memlock-limit", Severity::kInfo, "platform/memlock-limit",
     "Locked-memory limit is 64 KiB"},
    {"snapshot_fault_ptrace_scope_2.json", "ptrace-scope", Severity::kWarning, "nccl/cumem-import-pidfd",
     "ptrace_scope=2 without CAP_SYS_PTRACE"},
    {"snapshot_fault_cgroup_denies_nvidia1.json", "device-nodes", Severity::kError,
     "platform/container-nvml-unknown-error", "EPERM for /dev/nvidia1"},
    {"snapshot_fault_persistence_off.json", "persistence-mode", Severity::kInfo, "driver/persistence-mode-off",
     "off on GPU 0, 1"},
    {"snapshot_fault_compute_prohibited.json", "compute-mode", Severity::kError, "cuda/exclusive-process-mode",
     "GPU1: compute mode prohibited"},
    {"snapshot_fault_fabric_manager_not_started.json", "fabric-manager", Severity::kError,
     "nvlink/fabric-manager-not-running", "cudaErrorSystemNotReady"},
    {"snapshot_fault_insufficient_driver.json", "driver-too-old", Severity::kError, "driver/cuda-driver-too-old",
     "cudaErrorInsufficientDriver"},
};

TEST(ContainerRules, HealthyProcessSnapshotHasNoFindings) {
  DoctorReport r = diagnose(fixture("snapshot_h200_2gpu_process_healthy.json"), nullptr);
  EXPECT_TRUE(r.findings.empty()) << "first finding: " << (r.findings.empty() ? "" : r.findings[0].rule);
  EXPECT_NE(r.verdict.find("P2P healthy"), std::string::npos) << r.verdict;
}

TEST(ContainerRules, EachFixtureShowsExactlyItsFault) {
  for (const Planted& p : kPlanted) {
    DoctorReport r = diagnose(fixture(p.fixture), nullptr);
    EXPECT_EQ(rulesOf(r), (std::multiset<std::string>{p.rule})) << p.fixture;
    if (r.findings.size() != 1) continue;
    const Finding& f = r.findings[0];
    EXPECT_EQ(f.severity, p.severity) << p.fixture;
    EXPECT_EQ(f.kbId, p.kbId) << p.fixture;
    EXPECT_NE((f.title + "\n" + f.evidence).find(p.evidence), std::string::npos) << p.fixture << ": " << f.title << "\n"
                                                                                 << f.evidence;
  }
}

TEST(ContainerRules, EveryKbIdExists) {
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({GPUPEER_SOURCE_KB_DIR}, nullptr);
  ASSERT_TRUE(kb.isOk()) << kb.status().toString();
  for (const Planted& p : kPlanted) EXPECT_NE(kb.value().find(p.kbId), nullptr) << p.kbId;
}

TEST(ContainerRules, OldSnapshotsWithoutTheFieldsStaySilent) {
  // Fixtures written before these fields existed load them as "not recorded" and write them back
  // unchanged.
  Snapshot s = fixture("snapshot_h200_2gpu_captured.json");
  EXPECT_FALSE(s.platform.devShmBytes.known());
  EXPECT_EQ(s.platform.devShmBytes.reason(), kNotRecorded);
  EXPECT_EQ(s.gpus[0].persistenceMode.reason(), kNotRecorded);
  EXPECT_EQ(snapshotToJson(s).find("devShmBytes"), std::string::npos);
  EXPECT_TRUE(diagnose(s, nullptr).findings.empty());
}

TEST(ContainerRules, NewFieldsRoundTrip) {
  Snapshot s = fixture("snapshot_fault_cgroup_denies_nvidia1.json");
  Result<Snapshot> again = snapshotFromJson(snapshotToJson(s), "roundtrip");
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_EQ(again.value(), s);
  ASSERT_TRUE(s.platform.deviceNodes.known());
  EXPECT_EQ(s.platform.deviceNodes.value()[3].access, "EPERM");
  EXPECT_EQ(s.platform.memlockBytes.value(), kUnlimited);
}

TEST(ContainerRules, ThresholdsAndCapabilities) {
  Snapshot s = fixture("snapshot_h200_2gpu_process_healthy.json");
  s.platform.devShmBytes = std::int64_t{1} << 30;  // exactly the recommended 1 GiB: fine
  EXPECT_TRUE(diagnose(s, nullptr).findings.empty());
  s.platform.memlockBytes = std::int64_t{65536};  // root keeps CAP_IPC_LOCK: the limit does not apply
  EXPECT_TRUE(diagnose(s, nullptr).findings.empty());
  s.platform.capEff = std::string("00000000a80425fb");  // Docker's default set: no IPC_LOCK, no SYS_PTRACE
  std::multiset<std::string> rules = rulesOf(diagnose(s, nullptr));
  EXPECT_EQ(rules, (std::multiset<std::string>{"memlock-limit", "ptrace-scope"}));
  s.platform.ptraceScope = 0;
  EXPECT_EQ(rulesOf(diagnose(s, nullptr)), (std::multiset<std::string>{"memlock-limit"}));
  s.platform.capEff = std::string("not-hex");
  EXPECT_FALSE(s.platform.hasCapability(19).known());
}

TEST(ContainerRules, DeviceNodesNeedALoadedDriver) {
  Snapshot s = fixture("snapshot_fault_cgroup_denies_nvidia1.json");
  s.driverVersion = Known<std::string>::unknown("no NVIDIA kernel module");
  EXPECT_TRUE(diagnose(s, nullptr).findings.empty());
}

TEST(ContainerRules, ExclusiveProcessStaysAWarning) {
  Snapshot s = fixture("snapshot_h200_2gpu_process_healthy.json");
  s.gpus[0].computeMode = std::string("exclusive-process");
  DoctorReport r = diagnose(s, nullptr);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].severity, Severity::kWarning);
}

}  // namespace
}  // namespace gpupeer
