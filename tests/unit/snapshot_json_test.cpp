// Snapshot JSON: the fixtures load, write/read is lossless (unknowns keep their reasons), and
// every kind of malformed input is refused with a kParse Status that names the problem.
#include "gpupeer/snapshot_json.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gpupeer/topology.hpp"

namespace gpupeer {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const std::string kDataDir = GPUPEER_TEST_DATA_DIR;

std::string dataPath(const std::string& name) { return kDataDir + "/" + name; }

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

testing::AssertionResult contains(const std::string& text, const std::string& needle) {
  if (text.find(needle) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "'" << needle << "' not in: " << text;
}

// The fixtures this test suite and topology_fixture_test rely on.
const std::vector<std::string> kFixtures = {
    "snapshot_hgx_h100_8gpu.json",        "snapshot_pcie_4gpu_two_switches.json",
    "snapshot_consumer_2gpu_no_p2p.json", "snapshot_degraded_nvlink_pcie.json",
    "snapshot_mig_one_gpu.json",          "snapshot_h200_2gpu_captured.json",
    "snapshot_h200_4gpu_captured.json"};

// ---- every fixture ----------------------------------------------------------------------

class FixtureTest : public testing::TestWithParam<std::string> {};

TEST_P(FixtureTest, LoadsAndIsConsistent) {
  Result<Snapshot> r = loadSnapshotFile(dataPath(GetParam()));
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  const Snapshot& s = r.value();
  EXPECT_EQ(s.schemaVersion, kSnapshotSchemaVersion);
  EXPECT_FALSE(s.description.empty());
  ASSERT_FALSE(s.gpus.empty());
  ASSERT_TRUE(s.deviceCount.known());
  EXPECT_EQ(s.deviceCount.value(), static_cast<int>(s.gpus.size()));
  // Every ordered pair is present exactly once.
  const size_t n = s.gpus.size();
  EXPECT_EQ(s.pairs.size(), n * (n - 1));
  std::set<std::pair<int, int>> seen;
  for (const PeerPair& p : s.pairs) EXPECT_TRUE(seen.insert({p.src, p.dst}).second);
  for (const Gpu& a : s.gpus)
    for (const Gpu& b : s.gpus)
      if (a.index != b.index) {
        EXPECT_NE(s.findPair(a.index, b.index), nullptr);
      }
  // The recorded PCIe path class agrees with what the sysfs paths say.
  for (const PeerPair& p : s.pairs) {
    const Gpu* a = s.findGpu(p.src);
    const Gpu* b = s.findGpu(p.dst);
    ASSERT_TRUE(a->sysfsPath.known() && b->sysfsPath.known());
    ASSERT_TRUE(p.pciPath.known());
    EXPECT_EQ(classifyPciPath(a->sysfsPath.value(), b->sysfsPath.value(), a->numaNode, b->numaNode), p.pciPath.value())
        << "pair " << p.src << "->" << p.dst;
    // pciBusId is the last component of the sysfs path.
    EXPECT_TRUE(a->sysfsPath.value().ends_with("/" + a->pciBusId)) << a->sysfsPath.value();
  }
  // Direct NVLinks name a GPU of the snapshot.
  for (const Gpu& g : s.gpus) {
    if (!g.nvlinks.known()) continue;
    for (const NvLink& l : g.nvlinks.value()) {
      if (l.remoteType != LinkRemote::kGpu) continue;
      ASSERT_TRUE(l.remoteBusId.known());
      bool found = false;
      for (const Gpu& other : s.gpus) found = found || other.pciBusId == l.remoteBusId.value();
      EXPECT_TRUE(found) << "GPU" << g.index << " link " << l.link << " -> " << l.remoteBusId.value();
    }
  }
}

TEST_P(FixtureTest, IsInTheExactLayoutSnapshotToJsonWrites) {
  const std::string path = dataPath(GetParam());
  Result<Snapshot> r = loadSnapshotFile(path);
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  // A file saved by hand may lack the final newline; everything else must match.
  auto trimmed = [](std::string t) {
    while (!t.empty() && t.back() == '\n') t.pop_back();
    return t;
  };
  EXPECT_EQ(trimmed(snapshotToJson(r.value())), trimmed(readText(path)));
}

TEST_P(FixtureTest, WriteThenReadGivesAnEqualSnapshot) {
  Result<Snapshot> r = loadSnapshotFile(dataPath(GetParam()));
  ASSERT_TRUE(r.isOk()) << r.status().toString();
  Result<Snapshot> again = snapshotFromJson(snapshotToJson(r.value()), "roundtrip");
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_EQ(again.value(), r.value());
}

INSTANTIATE_TEST_SUITE_P(Data, FixtureTest, testing::ValuesIn(kFixtures),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// Any snapshot file added to tests/data later must load too.
TEST(SnapshotJson, EverySnapshotFileInTheDataDirectoryLoads) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator(kDataDir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("snapshot_", 0) != 0 || entry.path().extension() != ".json") continue;
    ++count;
    Result<Snapshot> r = loadSnapshotFile(entry.path().string());
    EXPECT_TRUE(r.isOk()) << name << ": " << r.status().toString();
  }
  EXPECT_GE(count, static_cast<int>(kFixtures.size()));
}

// ---- round trip of unknowns -----------------------------------------------------------

Snapshot snapshotWithUnknowns() {
  Snapshot s;
  s.capturedAt = "2026-01-02T03:04:05Z";
  s.hostname = "host-\"quoted\"\\slash";
  s.description = "unknowns everywhere; non-ASCII text: \xc3\xa9t\xc3\xa9";
  s.driverVersion = Known<std::string>::unknown(
      "no NVIDIA kernel module: /proc/driver/nvidia/version: "
      "No such file or directory");
  s.cudaDriverVersion = Known<int>::unknown("no CUDA driver (libcuda.so.1) found");
  s.cudaRuntimeVersion = 13000;
  s.nvmlVersion = Known<std::string>::unknown("cannot open libnvidia-ml.so.1");
  s.ncclVersion = Known<int>::unknown("");  // an empty reason survives too
  s.deviceCount = 2;
  for (int i = 0; i < 2; ++i) {
    Gpu g;
    g.index = i;
    g.name = "NVIDIA H100 80GB HBM3";
    g.uuid = Known<std::string>::unknown("uuid unreadable");
    g.pciBusId = i == 0 ? "0000:18:00.0" : "0000:2a:00.0";
    g.ccMajor = 9;
    g.memoryBytes = 85520809984ull;
    g.smCount = 132;
    g.migEnabled = Known<bool>::unknown("NVML unavailable");
    g.computeMode = std::string("default");
    g.numaNode = Known<int>::unknown("sysfs numa_node is -1 (no NUMA information)");
    g.cpuAffinity = std::string("0-55,112-167");
    g.sysfsPath = Known<std::string>::unknown("/sys/bus/pci/devices/x: No such file or directory");
    g.iommuGroupType = std::string("identity");
    g.pcie.currentGen = 5;
    g.pcie.maxGen = Known<int>::unknown("nvmlDeviceGetMaxPcieLinkGeneration: Not Supported");
    g.pcie.currentWidth = 16;
    g.pcie.maxWidth = Known<int>::unknown("max_link_width: not a number: 'x'");
    g.fabricState = Known<std::string>::unknown("nvmlDeviceGetGpuFabricInfo not in this NVML");
    if (i == 0) {
      NvLink up;
      up.link = 0;
      up.active = true;
      up.version = 6;
      up.remoteType = LinkRemote::kSwitch;
      up.remoteBusId = std::string("0000:05:00.0");
      NvLink down;
      down.link = 1;
      down.active = false;
      down.version = Known<int>::unknown("nvmlDeviceGetNvLinkVersion failed");
      down.remoteType = LinkRemote::kUnknown;
      down.remoteBusId = Known<std::string>::unknown("nvmlDeviceGetNvLinkRemotePciInfo failed");
      NvLink cpu;
      cpu.link = 2;
      cpu.remoteType = LinkRemote::kCpu;
      cpu.remoteBusId = std::string("0000:00:00.0");
      NvLink gpu;
      gpu.link = 3;
      gpu.active = true;
      gpu.remoteType = LinkRemote::kGpu;
      gpu.version = 4;
      gpu.remoteBusId = std::string("0000:2a:00.0");
      g.nvlinks = std::vector<NvLink>{up, down, cpu, gpu};
    } else {
      g.nvlinks = Known<std::vector<NvLink>>::unknown("NVML unavailable: dlopen failed");
    }
    s.gpus.push_back(g);
  }
  PeerPair p;
  p.src = 0;
  p.dst = 1;
  p.canAccessPeer = Known<bool>::unknown("cudaDeviceCanAccessPeer: cudaErrorInvalidDevice");
  p.performanceRank = 0;
  p.accessSupported = false;
  p.nativeAtomics = Known<bool>::unknown("cudaDeviceGetP2PAttribute: error");
  p.arrayAccess = true;
  p.nvmlP2pRead = std::string("TNS");
  p.nvmlP2pWrite = Known<std::string>::unknown("NVML not read");
  p.pciPath = Known<std::string>::unknown("not classified");
  s.pairs.push_back(p);
  p.src = 1;
  p.dst = 0;
  p.canAccessPeer = false;
  s.pairs.push_back(p);
  s.platform.iommu = Known<std::string>::unknown("IOMMU present but GPU group types unreadable");
  s.platform.kernelCmdline = std::string("BOOT_IMAGE=/vmlinuz ro iommu=pt");
  s.platform.acs = std::vector<BridgeAcs>{
      {"0000:17:01.0", 0x1d}, {"0000:18:00.0", Known<int>::unknown("extended config space not readable (needs root)")}};
  s.platform.processCpuAffinity = Known<std::string>::unknown("sched_getaffinity failed");
  s.environment = {{"NCCL_P2P_DISABLE", "1"}, {"CUDA_VISIBLE_DEVICES", ""}};
  return s;
}

TEST(SnapshotJson, RoundTripKeepsUnknownsAndTheirReasons) {
  const Snapshot s = snapshotWithUnknowns();
  const std::string text = snapshotToJson(s);
  Result<Snapshot> back = snapshotFromJson(text, "mem");
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back.value(), s);
  // Spot checks, so a failure says which part was lost.
  const Snapshot& b = back.value();
  EXPECT_EQ(b.driverVersion.reason(), s.driverVersion.reason());
  EXPECT_FALSE(b.gpus[1].nvlinks.known());
  EXPECT_EQ(b.gpus[1].nvlinks.reason(), "NVML unavailable: dlopen failed");
  ASSERT_TRUE(b.gpus[0].nvlinks.known());
  ASSERT_EQ(b.gpus[0].nvlinks.value().size(), 4u);
  EXPECT_EQ(b.gpus[0].nvlinks.value()[1].version.reason(), "nvmlDeviceGetNvLinkVersion failed");
  EXPECT_EQ(b.gpus[0].nvlinks.value()[2].remoteType, LinkRemote::kCpu);
  EXPECT_EQ(b.gpus[0].memoryBytes, 85520809984ull);
  EXPECT_FALSE(b.ncclVersion.known());
  EXPECT_EQ(b.ncclVersion.reason(), "");
  ASSERT_TRUE(b.platform.acs.known());
  EXPECT_EQ(b.platform.acs.value()[1].acsControl.reason(), "extended config space not readable (needs root)");
  EXPECT_EQ(b.environment.at("CUDA_VISIBLE_DEVICES"), "");
  // The layout: an unknown fact is {"unknown": reason} in place of the value.
  Json j = Json::parse(text);
  EXPECT_EQ(j["schema"], "gpupeer.snapshot");
  EXPECT_EQ(j["version"], kSnapshotSchemaVersion);
  EXPECT_EQ(j["cudaDriverVersion"], Json({{"unknown", "no CUDA driver (libcuda.so.1) found"}}));
  EXPECT_EQ(j["gpus"][0]["computeCapability"], "9.0");
  EXPECT_EQ(j["pairs"][0]["canAccessPeer"]["unknown"], "cudaDeviceCanAccessPeer: cudaErrorInvalidDevice");
}

TEST(SnapshotJson, EqualityNoticesAChangedReason) {
  // The round trip test relies on operator== comparing reasons, not only values.
  Snapshot a = snapshotWithUnknowns();
  Snapshot b = a;
  b.gpus[0].nvlinks = Known<std::vector<NvLink>>::unknown("other reason");
  EXPECT_NE(a, b);
  Snapshot c = a;
  c.pairs[0].canAccessPeer = Known<bool>::unknown("cudaDeviceCanAccessPeer: something else");
  EXPECT_NE(a, c);
  Result<Snapshot> back = snapshotFromJson(snapshotToJson(c), "mem");
  ASSERT_TRUE(back.isOk());
  EXPECT_NE(back.value(), a);
  EXPECT_EQ(back.value(), c);
}

TEST(SnapshotJson, CpuVendorIsOptionalAndRoundTrips) {
  // A snapshot written before the field existed loads with it not recorded, and writes back
  // without it.
  Snapshot old = snapshotWithUnknowns();
  old.platform.cpuVendor = Known<std::string>::unknown(kNotRecorded);  // what reading such a file gives
  const std::string oldText = snapshotToJson(old);
  EXPECT_EQ(Json::parse(oldText)["platform"].count("cpuVendor"), 0u);
  Result<Snapshot> oldBack = snapshotFromJson(oldText, "old");
  ASSERT_TRUE(oldBack.isOk()) << oldBack.status().toString();
  EXPECT_FALSE(oldBack.value().platform.cpuVendor.known());
  EXPECT_EQ(oldBack.value().platform.cpuVendor.reason(), kNotRecorded);
  EXPECT_EQ(snapshotToJson(oldBack.value()), oldText);
  // Recorded, and unknown with the probe's reason: both kept.
  for (Known<std::string> vendor :
       {Known<std::string>(std::string("GenuineIntel")), Known<std::string>::unknown("/proc/cpuinfo: EACCES")}) {
    Snapshot s = snapshotWithUnknowns();
    s.platform.cpuVendor = vendor;
    Result<Snapshot> back = snapshotFromJson(snapshotToJson(s), "mem");
    ASSERT_TRUE(back.isOk()) << back.status().toString();
    EXPECT_EQ(back.value().platform.cpuVendor, vendor);
  }
  // A fixture that records it.
  Result<Snapshot> hgx = loadSnapshotFile(dataPath("snapshot_hgx_h100_8gpu.json"));
  ASSERT_TRUE(hgx.isOk()) << hgx.status().toString();
  EXPECT_EQ(hgx.value().platform.cpuVendor.valueOr("?"), "GenuineIntel");
}

TEST(SnapshotJson, EmptySnapshotRoundTrips) {
  Snapshot s;  // no GPU: what a machine without a driver gives
  s.deviceCount = Known<int>::unknown("cudaGetDeviceCount: cudaErrorNoDevice");
  s.platform.acs = std::vector<BridgeAcs>{};
  Result<Snapshot> back = snapshotFromJson(snapshotToJson(s));
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back.value(), s);
}

// ---- malformed input --------------------------------------------------------------------

class MalformedSnapshot : public testing::Test {
 protected:
  void SetUp() override {
    Result<Snapshot> r = loadSnapshotFile(dataPath("snapshot_pcie_4gpu_two_switches.json"));
    ASSERT_TRUE(r.isOk()) << r.status().toString();
    good_ = Json::parse(snapshotToJson(r.value()));
  }
  // Parses `j` as if read from a file named "bad.json"; the Status must be kParse.
  Status parseError(const Json& j) {
    Result<Snapshot> r = snapshotFromJson(j.dump(2), "bad.json");
    EXPECT_FALSE(r.isOk()) << "accepted: " << j.dump().substr(0, 200);
    if (r.isOk()) return Status::ok();
    EXPECT_EQ(r.status().code(), ErrorCode::kParse) << r.status().toString();
    EXPECT_TRUE(contains(r.status().message(), "bad.json"));
    return r.status();
  }
  std::string tempFile(const std::string& name) {
    return (fs::path(testing::TempDir()) / ("gpupeer_snapshot_json_" + name)).string();
  }
  Json good_;
};

TEST_F(MalformedSnapshot, TheUnmodifiedDocumentParses) {
  // Guards the other tests: each fails because of its one change only.
  Result<Snapshot> r = snapshotFromJson(good_.dump(2), "good.json");
  EXPECT_TRUE(r.isOk()) << r.status().toString();
}

TEST_F(MalformedSnapshot, TruncatedFileNamesTheFileAndTheLine) {
  const std::string full = readText(dataPath("snapshot_hgx_h100_8gpu.json"));
  // Cut in the middle of a line, well inside the document.
  size_t cut = full.find("\"smCount\"", full.size() / 2);
  ASSERT_NE(cut, std::string::npos);
  cut += 4;
  const std::string truncated = full.substr(0, cut);
  const size_t lastLine = 1 + std::count(truncated.begin(), truncated.end(), '\n');
  const std::string path = tempFile("truncated.json");
  writeText(path, truncated);
  Result<Snapshot> r = loadSnapshotFile(path);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kParse);
  const std::string msg = r.status().message();  // status() returns a copy: no reference
  EXPECT_TRUE(contains(msg, path));
  // The line is the one where the text stops, as "file:LINE:COLUMN" editors understand.
  EXPECT_TRUE(contains(msg, path + ":" + std::to_string(lastLine) + ":"));
  EXPECT_TRUE(contains(msg, "truncated"));
  fs::remove(path);
}

TEST_F(MalformedSnapshot, SyntaxErrorInTheMiddleNamesItsLineAndColumn) {
  // The second comma on line 3 is at column 16.
  const std::string text = "{\n  \"schema\": \"gpupeer.snapshot\",\n  \"version\": 1,,\n}\n";
  Result<Snapshot> r = snapshotFromJson(text, "syntax.json");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kParse);
  EXPECT_TRUE(contains(r.status().message(), "syntax.json:3:16:")) << r.status().message();
}

TEST_F(MalformedSnapshot, WrongTypeNamesTheFieldPath) {
  Json j = good_;
  j["gpus"][0]["smCount"] = "84";
  Status st = parseError(j);
  EXPECT_TRUE(contains(st.message(), "gpus[0].smCount"));
  EXPECT_TRUE(contains(st.message(), "expected an integer"));
}

TEST_F(MalformedSnapshot, WrongTypeInNestedFieldsNamesTheFullPath) {
  {
    Json j = good_;
    j["gpus"][2]["pcie"]["maxGen"] = 4.0;
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "gpus[2].pcie.maxGen"));
  }
  {
    Json j = good_;
    j["pairs"][5]["canAccessPeer"] = "yes";
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "pairs[5].canAccessPeer"));
    EXPECT_TRUE(contains(st.message(), "expected true or false"));
  }
  {
    Json j = good_;
    j["gpus"][1]["numaNode"] = Json{{"unknown", 7}};  // the reason must be text
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "gpus[1].numaNode.unknown"));
  }
  {
    Json j = Json::parse(readText(dataPath("snapshot_hgx_h100_8gpu.json")));
    j["gpus"][3]["nvlinks"][7]["active"] = 1;
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "gpus[3].nvlinks[7].active"));
  }
  {
    Json j = Json::parse(readText(dataPath("snapshot_hgx_h100_8gpu.json")));
    j["gpus"][0]["nvlinks"][0]["remoteType"] = "nvswitch";
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "gpus[0].nvlinks[0].remoteType"));
  }
  {
    Json j = good_;
    j["gpus"][0]["computeCapability"] = "Ampere";
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "gpus[0].computeCapability"));
  }
  {
    Json j = good_;
    j["environment"]["NCCL_P2P_DISABLE"] = 1;
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "environment.NCCL_P2P_DISABLE"));
  }
  {
    Json j = good_;
    j["gpus"] = Json::object();
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "'gpus'"));
    EXPECT_TRUE(contains(st.message(), "expected an array"));
  }
}

TEST_F(MalformedSnapshot, NumbersOutOfRangeAreRefused) {
  {
    Json j = good_;
    j["gpus"][0]["memoryBytes"] = -1;  // would wrap to 16 EiB
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "gpus[0].memoryBytes"));
  }
  {
    Json j = good_;
    j["gpus"][1]["smCount"] = 4294967296LL + 84;  // would truncate to 84 in an int
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "gpus[1].smCount"));
    EXPECT_TRUE(contains(st.message(), "range"));
  }
}

TEST_F(MalformedSnapshot, MissingFieldIsNamed) {
  {
    Json j = good_;
    j.erase("hostname");
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "'hostname'"));
    EXPECT_TRUE(contains(st.message(), "missing field"));
  }
  {
    Json j = good_;
    j["gpus"][2].erase("pciBusId");
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "gpus[2].pciBusId"));
    EXPECT_TRUE(contains(st.message(), "missing field"));
  }
  {
    Json j = good_;
    j["platform"].erase("acs");
    Status st = parseError(j);
    EXPECT_TRUE(contains(st.message(), "platform.acs"));
  }
}

TEST_F(MalformedSnapshot, NewerVersionIsNotSupported) {
  Json j = good_;
  j["version"] = 99;
  Status st = parseError(j);
  EXPECT_TRUE(contains(st.message(), "version 99"));
  EXPECT_TRUE(contains(st.message(), "not supported"));
  j["version"] = 0;
  st = parseError(j);
  EXPECT_TRUE(contains(st.message(), "not supported"));
}

TEST_F(MalformedSnapshot, OtherDocumentIsNotAGpupeerSnapshot) {
  Json j = good_;
  j["schema"] = "nvidia.topology";
  Status st = parseError(j);
  EXPECT_TRUE(contains(st.message(), "not a gpupeer snapshot"));
  // Valid JSON of another shape: refused with a Status, not an exception.
  Result<Snapshot> r = snapshotFromJson("[1, 2, 3]", "array.json");
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kParse);
  EXPECT_TRUE(contains(r.status().message(), "expected an object"));
}

TEST_F(MalformedSnapshot, DuplicateGpuIndex) {
  Json j = good_;
  j["gpus"][3]["index"] = 1;
  Status st = parseError(j);
  EXPECT_TRUE(contains(st.message(), "duplicate GPU index 1"));
  EXPECT_TRUE(contains(st.message(), "gpus[3].index"));
}

TEST_F(MalformedSnapshot, PairNamingAMissingGpu) {
  Json j = good_;
  j["pairs"][4]["dst"] = 9;
  Status st = parseError(j);
  EXPECT_TRUE(contains(st.message(), "pairs[4]"));
  EXPECT_TRUE(contains(st.message(), "->9"));
  EXPECT_TRUE(contains(st.message(), "does not name"));
  // A pair from a GPU to itself is refused too.
  Json k = good_;
  k["pairs"][0]["dst"] = k["pairs"][0]["src"];
  st = parseError(k);
  EXPECT_TRUE(contains(st.message(), "pairs[0]"));
}

TEST_F(MalformedSnapshot, EmptyFile) {
  const std::string path = tempFile("empty.json");
  writeText(path, "");
  Result<Snapshot> r = loadSnapshotFile(path);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kParse);
  EXPECT_TRUE(contains(r.status().message(), path));
  EXPECT_TRUE(contains(r.status().message(), "not valid JSON"));
  fs::remove(path);
}

TEST_F(MalformedSnapshot, MissingFileIsNotFound) {
  const std::string path = tempFile("does_not_exist.json");
  fs::remove(path);
  Result<Snapshot> r = loadSnapshotFile(path);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotFound);
  EXPECT_TRUE(contains(r.status().message(), path));
  EXPECT_TRUE(contains(r.status().message(), "No such file"));
}

}  // namespace
}  // namespace gpupeer
