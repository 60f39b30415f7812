// The tool-output parsers on real outputs from public bug reports (tests/data/tool_outputs,
// sources in SOURCES.md), on garbage, and through `gpupeer explain`.
#include "gpupeer/tool_output.hpp"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "cli_support.hpp"
#include "gpupeer/kb_matcher.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "tool_output/parsers.hpp"

namespace gpupeer {
namespace {

const std::string kDir = std::string(GPUPEER_TEST_DATA_DIR) + "/tool_outputs/";

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<ToolOutputFinding> readSample(const std::string& name) {
  std::string text = readFile(kDir + name);
  EXPECT_FALSE(text.empty()) << name;
  return readToolOutputs(text);
}

// The one finding of `tool`; fails the test when there is not exactly one.
ToolOutputFinding only(const std::vector<ToolOutputFinding>& found, const std::string& tool) {
  std::vector<ToolOutputFinding> of;
  for (const ToolOutputFinding& f : found)
    if (f.tool == tool) of.push_back(f);
  EXPECT_EQ(of.size(), 1u) << tool << ": " << renderToolOutputsText(found);
  return of.empty() ? ToolOutputFinding{} : of[0];
}

std::string allDetails(const ToolOutputFinding& f) {
  std::string out;
  for (const std::string& d : f.details) out += d + "\n";
  return out;
}

bool hasKb(const ToolOutputFinding& f, const std::string& id) {
  return std::find(f.kbIds.begin(), f.kbIds.end(), id) != f.kbIds.end();
}

TEST(TopoLinks, NvlinkMachinesAreHealthy) {
  ToolOutputFinding f =
      only(readToolOutputs(readFile(std::string(GPUPEER_TEST_DATA_DIR) + "/nvsmi_topo_h200_4gpu.txt")),
           "nvidia-smi topo -m");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.title, "4 GPUs, every pair on NVLink (NV18)");
  EXPECT_EQ(f.firstLine, 1u);

  f = only(readSample("topo_m_h100_4gpu_nv6_nics.txt"), "nvidia-smi topo -m");
  EXPECT_EQ(f.title, "4 GPUs, every pair on NVLink (NV6)");  // NIC columns are not GPU pairs
}

TEST(TopoLinks, HostBridgePairsPointAtTheP2pLevel) {
  ToolOutputFinding f = only(readSample("topo_m_4gpu_phb_mixed_models.txt"), "nvidia-smi topo -m");
  EXPECT_EQ(f.title, "4 GPUs: 0 of 6 pair(s) on NVLink, 6 through the CPU (no NCCL P2P by default)");
  EXPECT_NE(allDetails(f).find("PHB (6 pairs)"), std::string::npos) << allDetails(f);
  EXPECT_TRUE(hasKb(f, "nccl/p2p-level-semantics"));
}

TEST(TopoLinks, FewerNvlinksThanOtherPairsIsAWarning) {
  std::string text = readFile(std::string(GPUPEER_TEST_DATA_DIR) + "/nvsmi_topo_h200_4gpu.txt");
  // The captured H200 table with one bond shrunk, as a link down shows it.
  text.replace(text.find("NV18"), 4, "NV12");
  ToolOutputFinding f = only(readToolOutputs(text), "nvidia-smi topo -m");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_NE(allDetails(f).find("NV12 (1 pair): 12 bonded NVLink(s), fewer than the NV18"), std::string::npos)
      << allDetails(f);
  EXPECT_TRUE(hasKb(f, "nvlink/link-inactive"));
}

TEST(TopoP2p, GpuNotSupportedPairs) {
  std::vector<ToolOutputFinding> found = readSample("topo_p2p_rw_2x_rtx5090_gns.txt");
  ToolOutputFinding f = only(found, "nvidia-smi topo -p2p");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(f.title, "2 GPUs: 2 of 2 ordered pairs lack P2P");
  EXPECT_NE(allDetails(f).find("GNS (GPU not supported"), std::string::npos);
  EXPECT_NE(allDetails(f).find("GPU0->GPU1, GPU1->GPU0"), std::string::npos);
  EXPECT_EQ(f.kbIds.front(), "cuda/peer-access-unsupported-by-hardware");
  // The same table is not mistaken for a link table.
  for (const ToolOutputFinding& g : found) EXPECT_NE(g.tool, "nvidia-smi topo -m");
}

TEST(NvlinkStatus, InactiveLinksPerGpu) {
  ToolOutputFinding f = only(readSample("nvlink_s_v100_two_inactive.txt"), "nvidia-smi nvlink -s");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(f.title, "1 of 1 GPU(s) have inactive NVLinks (2 link(s) down)");
  EXPECT_NE(allDetails(f).find("GPU3 (Tesla V100-SXM2-32GB): link(s) 3,5 inactive, 4 of 6 up"), std::string::npos)
      << allDetails(f);
  EXPECT_EQ(f.kbIds.front(), "nvlink/link-inactive");

  f = only(readSample("nvlink_s_gb200_cut.txt"), "nvidia-smi nvlink -s");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.title, "2 GPU(s), all 20 NVLinks up");
  EXPECT_NE(allDetails(f).find("every active link at 53.125 GB/s"), std::string::npos);
}

TEST(DcgmiNvlink, DownAndUp) {
  ToolOutputFinding f = only(readSample("dcgmi_nvlink_two_gpus_down.txt"), "dcgmi nvlink -s");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(f.title, "2 of 2 device(s) have NVLinks down");
  EXPECT_NE(allDetails(f).find("GPU 1: link(s) 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17 down, 0 up"),
            std::string::npos)
      << allDetails(f);

  f = only(readSample("dcgmi_nvlink_h100_8gpu_up.txt"), "dcgmi nvlink -s");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.title, "8 GPU(s), 0 NVSwitch(es): all 144 links up");
}

TEST(NcclTests, HealthyTablesAndOneGpu) {
  ToolOutputFinding f = only(readSample("nccl_tests_h100_pcie_nvlink_bridge.txt"), "nccl-tests");
  EXPECT_EQ(f.severity, Severity::kInfo);
  // The last row of the paste is cut: two rows read, the peak is the second one's in-place.
  EXPECT_EQ(f.title, "2 size(s), no wrong results");
  EXPECT_NE(allDetails(f).find("peak bus bandwidth 115.9 GB/s at 2 GiB"), std::string::npos) << allDetails(f);

  f = only(readSample("nccl_tests_rtx5090_alltoall_one_gpu.txt"), "nccl-tests");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.title, "1 size(s), no wrong results (1 rank(s), NVIDIA GeForce RTX 5090)");
}

TEST(NcclTests, WrongResultsAreErrorsNamingTheSizes) {
  ToolOutputFinding f = only(readSample("nccl_tests_out_of_bounds_failed.txt"), "nccl-tests");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_NE(allDetails(f).find("248 value(s) out of bounds"), std::string::npos);
  EXPECT_EQ(f.kbIds.front(), "nccl/wrong-results");

  // The H100 table of nccl-tests#194 with a wrong count planted in the 1 GiB row.
  std::string text = readFile(kDir + "nccl_tests_h100_pcie_nvlink_bridge.txt");
  std::size_t row = text.find("  1073741824");
  std::size_t cell = text.find("      0   9291.5", row);
  ASSERT_NE(cell, std::string::npos);
  text.replace(cell, 7, "     17");
  f = only(readToolOutputs(text), "nccl-tests");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_NE(allDetails(f).find("wrong results at 1 GiB (17 wrong)"), std::string::npos) << allDetails(f);
}

// A #wrong too large for a count is wrong all the same, and N/A (nccl-tests -c 0) is "not
// checked", never "no wrong results".
TEST(NcclTests, HugeWrongCountIsWrongAndNotApplicableIsUnchecked) {
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n";
  std::string text = header +
                     "           8             2     float     sum      -1     9.10    0.00    0.00  "
                     "99999999999999999999     9.00    0.00    0.00       0\n"
                     "        1024           256     float     sum      -1     9.10    0.11    0.21       0     9.00"
                     "    0.11    0.21       0\n";
  ToolOutputFinding f = only(readToolOutputs(text), "nccl-tests");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_NE(allDetails(f).find("wrong results at 8 B (at least 10^18 wrong)"), std::string::npos) << allDetails(f);

  std::string unchecked = header +
                          "           8             2     float     sum      -1     9.10    0.00    0.00     N/A     "
                          "9.00    0.00    0.00     N/A\n"
                          "        1024           256     float     sum      -1     9.10    0.11    0.21       0     "
                          "9.00    0.11    0.21       0\n";
  f = only(readToolOutputs(unchecked), "nccl-tests");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.title, "2 size(s), no wrong results in the 1 checked");
  EXPECT_NE(allDetails(f).find("1 of 2 size(s) not checked (#wrong N/A"), std::string::npos) << allDetails(f);
}

TEST(NcclTests, BusBandwidthFarBelowNvlink) {
  // An 8x H100 SXM single-host header above rows as slow as host staging.
  std::string text =
      "# Using devices\n"
      "#  Rank  0 Group  0 Pid 1 on  node1 device  0 [0x18] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid 1 on  node1 device  1 [0x2a] NVIDIA H100 80GB HBM3\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw "
      "#wrong\n"
      "    67108864      16777216     float     sum      -1    24410    2.75    5.27      0    24425    2.75    5.27   "
      "   0\n"
      "   134217728      33554432     float     sum      -1    49264    2.72    5.22      0    48558    2.76    5.30   "
      "   0\n"
      "     1048576        262144     float     sum      -1   1626.5    0.64    1.24      0   2302.3    0.46    0.87   "
      "   0\n";
  ToolOutputFinding f = only(readToolOutputs(text), "nccl-tests");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_NE(allDetails(f).find("far below NVLink4 (450 GB/s per direction per GPU): 64 MiB (5.3 GB/s), 128 MiB "
                               "(5.3 GB/s)"),
            std::string::npos)
      << allDetails(f);
  EXPECT_EQ(allDetails(f).find("1 MiB ("), std::string::npos) << "small sizes are latency-bound, not compared";
}

TEST(SimpleP2p, RefusedPairsAndMixedModels) {
  ToolOutputFinding f = only(readSample("simple_p2p_k40m_two_boards.txt"), "simpleP2P");
  EXPECT_EQ(f.severity, Severity::kWarning);
  // The paste ends inside its 11th line, which is not counted.
  EXPECT_EQ(f.title, "7 of 10 GPU pair(s) cannot access each other");
  EXPECT_NE(allDetails(f).find("GPU0->GPU2, GPU0->GPU3"), std::string::npos) << allDetails(f);
  EXPECT_FALSE(hasKb(f, "cuda/peer-mixed-gpu-models"));

  f = only(readSample("simple_p2p_mixed_models_cut.txt"), "simpleP2P");
  EXPECT_TRUE(hasKb(f, "cuda/peer-mixed-gpu-models"));
  EXPECT_NE(allDetails(f).find("GPU0 (NVIDIA GeForce RTX 4090) and GPU2 (NVIDIA GeForce RTX 5090)"), std::string::npos);
}

TEST(SimpleP2p, VerificationErrorIsDataCorruption) {
  std::string text =
      "> Peer access from NVIDIA A100 (GPU0) -> NVIDIA A100 (GPU1) : Yes\n"
      "Verification error @ element 1: val = 0.000000, ref = 4.000000\n"
      "Verification error @ element 2: val = 0.000000, ref = 8.000000\n";
  ToolOutputFinding f = only(readToolOutputs(text), "simpleP2P");
  EXPECT_EQ(f.severity, Severity::kError);
  EXPECT_EQ(f.kbIds.front(), "platform/iommu-translated-corruption");
}

TEST(P2pBandwidth, P2pSlowerThanStaging) {
  ToolOutputFinding f = only(readSample("p2pbw_6x_rtx4090_p2p_slower.txt"), "p2pBandwidthLatencyTest");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(f.title, "0 pair(s) without peer access, 30 matrix cell(s) where P2P is slower than staging");
  EXPECT_NE(allDetails(f).find("uni GPU0->GPU1 9.90 vs 20.10 GB/s"), std::string::npos) << allDetails(f);
  EXPECT_TRUE(hasKb(f, "platform/acs-redirect"));
}

TEST(P2pBandwidth, CannotAccessAndHealthy) {
  ToolOutputFinding f = only(readSample("p2pbw_mixed_models_cannot_access.txt"), "p2pBandwidthLatencyTest");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_NE(allDetails(f).find("no peer access (15 of 18)"), std::string::npos) << allDetails(f);

  f = only(readSample("p2pbw_hgx_h100_8gpu_healthy_cut.txt"), "p2pBandwidthLatencyTest");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.title, "peer access on all pairs; P2P at least 10.0x the staged copy");
}

TEST(NcclTransport, ShmBetweenGpusOfOneHost) {
  ToolOutputFinding f = only(readSample("nccl_info_8gpu_shm.txt"), "NCCL_DEBUG=INFO log");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_EQ(f.title, "NCCL connected 9 rank pair(s): 0 by P2P, 9 by SHM, 0 by the network");
  EXPECT_NE(allDetails(f).find("P2P expected but not used (both GPUs in one host): 0[0]->4[4] via SHM"),
            std::string::npos)
      << allDetails(f);
  EXPECT_NE(allDetails(f).find("nothing in this log says why"), std::string::npos);
  EXPECT_EQ(f.kbIds.front(), "nccl/p2p-level-semantics");
}

TEST(NcclTransport, P2pAndNetworkAcrossHosts) {
  ToolOutputFinding f = only(readSample("nccl_info_ipc_read_and_socket.txt"), "NCCL_DEBUG=INFO log");
  // Rank 6 prints nothing here, so its host is unknown and the NET link is not questioned.
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.title, "NCCL connected 6 rank pair(s): 5 by P2P, 0 by SHM, 1 by the network");
  EXPECT_NE(allDetails(f).find("P2P/IPC/read: 5 connection(s): 8[0]->15[7]"), std::string::npos) << allDetails(f);
  EXPECT_NE(allDetails(f).find("NET/Socket: 1 connection(s): 15[7]->6[6]"), std::string::npos) << allDetails(f);

  f = only(readSample("nccl_info_4gpu_ipc_read.txt"), "NCCL_DEBUG=INFO log");
  EXPECT_EQ(f.severity, Severity::kInfo);
  EXPECT_EQ(f.title, "NCCL connected 4 rank pair(s): 4 by P2P, 0 by SHM, 0 by the network");
}

TEST(NcclTransport, ReasonsFromTheLog) {
  ToolOutputFinding f = only(readSample("nccl_info_could_not_enable_p2p.txt"), "NCCL_DEBUG=INFO log");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_NE(allDetails(f).find("3[81000]->2[41000] via SHM"), std::string::npos) << allDetails(f);
  EXPECT_NE(allDetails(f).find("the driver refuses P2P between GPU1 and GPU0"), std::string::npos) << allDetails(f);
  EXPECT_EQ(f.kbIds.front(), "nccl/p2p-disabled-info");

  f = only(readSample("nccl_info_2080ti_direct_shared_memory.txt"), "NCCL_DEBUG=INFO log");
  // NCCL 2.4 wording; the paste's last line is cut inside "via direct shared m" and not read.
  EXPECT_EQ(f.title, "NCCL connected 1 rank pair(s): 0 by P2P, 1 by SHM, 0 by the network");
  EXPECT_EQ(f.severity, Severity::kWarning);

  f = only(readSample("nccl_tests_1050ti_950_p2p_level_loc.txt"), "NCCL_DEBUG=INFO log");
  EXPECT_EQ(f.severity, Severity::kWarning);
  EXPECT_NE(allDetails(f).find("NCCL_P2P_LEVEL=LOC set"), std::string::npos) << allDetails(f);
  EXPECT_EQ(f.kbIds.front(), "nccl/p2p-level-semantics");

  std::string text =
      "h:1:2 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1\n"
      "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n";
  f = only(readToolOutputs(text), "NCCL_DEBUG=INFO log");
  EXPECT_NE(allDetails(f).find("NCCL_P2P_DISABLE=1 set"), std::string::npos) << allDetails(f);
  EXPECT_EQ(f.kbIds.front(), "nccl/p2p-disabled-by-environment");
}

TEST(ToolOutputs, EveryKbIdExists) {
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({GPUPEER_SOURCE_KB_DIR}, nullptr);
  ASSERT_TRUE(kb.isOk()) << kb.status().toString();
  std::set<std::string> ids;
  for (const auto& file : std::filesystem::directory_iterator(kDir))
    for (const ToolOutputFinding& f : readToolOutputs(readFile(file.path().string())))
      ids.insert(f.kbIds.begin(), f.kbIds.end());
  for (const char* planted :
       {"Verification error @ element 1: val = 0.000000, ref = 4.000000\n",
        "h:1:2 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC\nh:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> "
        "1[1] via SHM/direct/direct\nh:1:2 [0] NCCL INFO Channel 00/0 : 1[1] -> 0[0] [send] via NET/Socket/0\n"})
    for (const ToolOutputFinding& f : readToolOutputs(planted)) ids.insert(f.kbIds.begin(), f.kbIds.end());
  EXPECT_GE(ids.size(), 10u);
  for (const std::string& id : ids) EXPECT_NE(kb.value().find(id), nullptr) << id;
}

TEST(ToolOutputs, HealthyLogsGiveOnlyInformation) {
  // The benign log holds healthy NCCL channel lines, an nccl-tests table and simpleP2P output.
  std::vector<ToolOutputFinding> found =
      readToolOutputs(readFile(std::string(GPUPEER_TEST_DATA_DIR) + "/benign_log.txt"));
  EXPECT_GE(found.size(), 3u) << renderToolOutputsText(found);
  for (const ToolOutputFinding& f : found) EXPECT_EQ(f.severity, Severity::kInfo) << renderToolOutputsText(found);
}

TEST(ToolOutputs, RepeatedOutputIsReportedOnce) {
  std::string text = readFile(kDir + "nvlink_s_v100_two_inactive.txt");
  std::vector<ToolOutputFinding> found = readToolOutputs(text + "\nsomething else\n" + text);
  // A GPU listed twice counts once: the second listing replaces the first.
  ToolOutputFinding f = only(found, "nvidia-smi nvlink -s");
  EXPECT_EQ(f.title, "1 of 1 GPU(s) have inactive NVLinks (2 link(s) down)");
  std::string topo = readFile(std::string(GPUPEER_TEST_DATA_DIR) + "/nvsmi_topo_h200_4gpu.txt");
  f = only(readToolOutputs(topo + "\n" + topo + "\n" + topo), "nvidia-smi topo -m");
  EXPECT_NE(allDetails(f).find("the same output appears 3 times in the input"), std::string::npos) << allDetails(f);
}

TEST(ToolOutputs, TextWithoutToolOutputs) {
  EXPECT_TRUE(readToolOutputs("").empty());
  EXPECT_TRUE(readToolOutputs("GPU0 GPU1\n\n").empty());  // a header without rows
}

TEST(ToolOutputs, GarbageIsBoundedAndHarmless) {
  // Random bytes, every sample cut at every 97th byte, a 1 MiB line of digits and a table
  // with thousands of columns: no crash, bounded time (the test's own time limit).
  std::mt19937 rng(42);
  std::string noise(1 << 20, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  readToolOutputs(noise);
  for (const auto& file : std::filesystem::directory_iterator(kDir)) {
    std::string text = readFile(file.path().string());
    for (std::size_t cut = 0; cut < text.size(); cut += 97) readToolOutputs(text.substr(0, cut));
  }
  readToolOutputs(std::string(1 << 20, '7'));
  // 300 GPUs: rows and columns beyond kMaxDevices are dropped and the table says it is cut.
  std::string wide = "GPU0";
  for (int c = 1; c < 300; ++c) wide += " GPU" + std::to_string(c);
  for (int r = 0; r < 300; ++r) {
    wide += "\nGPU" + std::to_string(r);
    for (int c = 0; c < 300; ++c) wide += c == r ? " X" : " NV4";
  }
  ToolOutputFinding t = only(readToolOutputs(wide + "\n"), "nvidia-smi topo -m");
  EXPECT_NE(allDetails(t).find("the table looks cut"), std::string::npos) << allDetails(t);
  std::string channels;
  for (int i = 0; i < 40000; ++i)
    channels += "h:1:2 [0] NCCL INFO Channel 00/0 : " + std::to_string(i) + "[0] -> " + std::to_string(i + 1) +
                "[1] via P2P/IPC\n";
  ToolOutputFinding f = only(readToolOutputs(channels), "NCCL_DEBUG=INFO log");
  EXPECT_NE(allDetails(f).find("only the first 16384 connections kept"), std::string::npos);
}

TEST(ToolOutputs, ChannelLinesReadByHandAsTheRegexReadsThem) {
  // Lines built from right and wrong pieces; the hand reader must agree with RE2 on each.
  const std::vector<std::vector<std::string>> pieces = {
      {"", "h:1:2 [0] NCCL INFO ", "Channel x ", "Channel 1 : 2[3] -> junk Channel "},
      {"Channel "},
      {"00", "00/0", "3/", "12/34", "1/x", ""},
      {" : ", ": "},
      {"0", "15", ""},
      {"[0]", "[87000]", "[0x1a]", "[g]", "[]"},
      {" -> ", "->"},
      {"1", "6"},
      {"[1]", "[41000]", "[A0]"},
      {"", " [send]", " [receive]", " [recv]"},
      {" via P2P/IPC/read", " via SHM/direct/direct", " via NET/IB/0/GDRDMA", " via direct shared memory",
       " via P2P/direct pointer/read", " via P2P/", " via FOO/x", " via NVLS/x y", " via COLLNET/a pointer",
       " via P2P/ab\xc3\xa9", " via P2P/\xff", "via P2P/IPC"},
      {"", " extra", "\t", " Channel 00 : 9[9] -> 8[8] via SHM/x"}};
  RE2 re(tool_output::kNcclChannelPattern);
  ASSERT_TRUE(re.ok());
  std::mt19937 rng(7);
  int agreed = 0;
  for (int n = 0; n < 20000; ++n) {
    std::string line;
    for (const auto& choices : pieces) line += choices[rng() % choices.size()];
    std::string a, aDev, b, bDev, dir, via;
    bool regex = RE2::PartialMatch(line, re, &a, &aDev, &b, &bDev, &dir, &via);
    tool_output::NcclChannel c;
    tool_output::ChannelRead hand = tool_output::readNcclChannel(line, c);
    if (hand == tool_output::ChannelRead::kAskTheRegex) continue;  // non-ASCII: RE2 decides
    ASSERT_EQ(hand == tool_output::ChannelRead::kYes, regex) << line;
    if (regex) {
      EXPECT_EQ(std::vector<std::string>({c.a, c.aDev, c.b, c.bDev, c.dir, c.via}),
                std::vector<std::string>({a, aDev, b, bDev, dir, via}))
          << line;
      ++agreed;
    }
  }
  EXPECT_GT(agreed, 500);  // the pieces make enough real channel lines
}

TEST(ToolOutputs, TriggersRideInTheKbMatchersPass) {
  Result<KnowledgeBase> kb = KnowledgeBase::loadDirectories({GPUPEER_SOURCE_KB_DIR}, nullptr);
  ASSERT_TRUE(kb.isOk()) << kb.status().toString();
  Result<KbMatcher> plain = KbMatcher::build(kb.value());
  Result<KbMatcher> withTriggers = KbMatcher::build(kb.value(), ToolOutputReader::triggerPatterns());
  ASSERT_TRUE(plain.isOk() && withTriggers.isOk());
  std::string text = readFile(std::string(GPUPEER_TEST_DATA_DIR) + "/benign_log.txt") +
                     readFile(kDir + "nccl_info_could_not_enable_p2p.txt") + "step 7 loss 0.25\n";
  std::vector<std::pair<std::uint64_t, bool>> seen;
  ToolOutputReader outputs;
  KbScan a = plain.value().scanText(text);
  KbScan b =
      withTriggers.value().scanText(text, [&](std::string_view line, std::uint64_t n, std::span<const int> triggered) {
        seen.push_back({n, !triggered.empty()});
        outputs.feed(line, n, triggered);
      });
  // The KB's answer is the same with the extra patterns in the set.
  ASSERT_EQ(a.matches.size(), b.matches.size());
  for (std::size_t i = 0; i < a.matches.size(); ++i) EXPECT_EQ(a.matches[i].entry, b.matches[i].entry);
  ASSERT_EQ(seen.size(), b.linesRead);
  EXPECT_FALSE(seen.back().second) << "a training line is no tool output";
  // Fed this way, the reader finds what it finds reading the text itself.
  EXPECT_EQ(renderToolOutputsText(outputs.finish()), renderToolOutputsText(readToolOutputs(text)));
}

class ExplainToolOutputs : public ::testing::Test {
 protected:
  testing::TempDir scratch_;
};

TEST_F(ExplainToolOutputs, TextJsonAndExitCode) {
  CliRun r = runCli(scratch_, "explain --file " + quote(kDir + "topo_p2p_rw_2x_rtx5090_gns.txt"));
  EXPECT_EQ(r.exitCode, 0) << r.err;
  EXPECT_NE(r.out.find("[warning] nvidia-smi topo -p2p (line 1): 2 GPUs: 2 of 2 ordered pairs lack P2P"),
            std::string::npos)
      << r.out;
  r = runCli(scratch_, "explain --json --file " + quote(kDir + "nvlink_s_v100_two_inactive.txt"));
  EXPECT_EQ(r.exitCode, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  ASSERT_EQ(j["toolOutputs"].size(), 1u);
  EXPECT_EQ(j["toolOutputs"][0]["tool"], "nvidia-smi nvlink -s");
  EXPECT_EQ(j["toolOutputs"][0]["severity"], "warning");
  EXPECT_EQ(j["toolOutputs"][0]["line"], 4);
  r = runCli(scratch_, "explain --json 'Test passed'");
  EXPECT_EQ(r.exitCode, 1);
  j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["toolOutputs"].size(), 0u);
}

}  // namespace
}  // namespace gpupeer
