// Topology views of the snapshot fixtures: matrix cells, P2P status and reasons, link limits,
// the text report and its JSON form.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpupeer/snapshot_json.hpp"
#include "gpupeer/topology.hpp"

namespace gpupeer {
namespace {

using Json = nlohmann::json;
using State = P2pStatus::State;

// A fixture that does not load fails the test with the reason (GoogleTest reports the
// exception) instead of handing an empty snapshot to lines that index its GPUs.
Snapshot load(const std::string& name) {
  Result<Snapshot> r = loadSnapshotFile(std::string(GPUPEER_TEST_DATA_DIR) + "/" + name);
  if (!r.isOk()) throw std::runtime_error("test fixture " + name + " did not load: " + r.status().toString());
  return r.value();
}

testing::AssertionResult contains(const std::string& text, const std::string& needle) {
  if (text.find(needle) != std::string::npos) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "'" << needle << "' not in: " << text;
}

// The matrix as rows of cells, GPUs in snapshot order.
std::vector<std::vector<std::string>> matrix(const Snapshot& s) {
  std::vector<std::vector<std::string>> rows;
  for (const Gpu& a : s.gpus) {
    rows.emplace_back();
    for (const Gpu& b : s.gpus) rows.back().push_back(topoCell(s, a.index, b.index));
  }
  return rows;
}

void expectMatrix(const Snapshot& s, const std::vector<std::vector<std::string>>& expected) {
  EXPECT_EQ(matrix(s), expected);
}

const double kNvlink4 = 26.5625;
const double kPcieGen4x16 = 16 * 16.0 * 128 / 130 / 8;  // 31.51 GB/s
const double kPcieGen5x16 = 2 * kPcieGen4x16;

// ---- HGX H100 8-GPU ---------------------------------------------------------------------

TEST(HgxH100, EveryPairIsNv18) {
  Snapshot s = load("snapshot_hgx_h100_8gpu.json");
  ASSERT_EQ(s.gpus.size(), 8u);
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      EXPECT_EQ(topoCell(s, a, b), a == b ? "X" : "NV18") << a << "," << b;
      if (a != b) {
        EXPECT_EQ(nvlinkCountBetween(s, a, b), 18);
      }
    }
  }
}

TEST(HgxH100, P2pOkAndLinkLimitIs18NvLink4) {
  Snapshot s = load("snapshot_hgx_h100_8gpu.json");
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      if (a == b) continue;
      P2pStatus st = p2pStatus(s, a, b);
      EXPECT_EQ(st.state, State::kOk);
      EXPECT_EQ(st.code, "OK");
      EXPECT_TRUE(st.reason.empty()) << st.reason;
      LinkLimit lim = theoreticalLinkLimit(s, a, b);
      EXPECT_EQ(lim.medium, "NVLink");
      EXPECT_DOUBLE_EQ(lim.gbps, 18 * kNvlink4);
      EXPECT_EQ(lim.description, "18 x NVLink4 at 26.56 GB/s");
    }
  }
}

TEST(HgxH100, SwitchLinksCountOnlyWhenActive) {
  Snapshot s = load("snapshot_hgx_h100_8gpu.json");
  // Three of GPU5's switch links go down: the pairs of GPU5 are limited by its 15.
  std::vector<NvLink> links = s.gpus[5].nvlinks.value();
  for (int l : {0, 7, 17}) links[l].active = false;
  s.gpus[5].nvlinks = links;
  EXPECT_EQ(topoCell(s, 5, 2), "NV15");
  EXPECT_EQ(topoCell(s, 2, 5), "NV15");
  EXPECT_EQ(topoCell(s, 2, 3), "NV18");
  EXPECT_DOUBLE_EQ(theoreticalLinkLimit(s, 2, 5).gbps, 15 * kNvlink4);
  // NVLink state unknown (no NVML): the PCIe class is shown instead.
  s.gpus[5].nvlinks = Known<std::vector<NvLink>>::unknown("NVML unavailable");
  EXPECT_EQ(topoCell(s, 5, 4), "NODE");
  EXPECT_EQ(topoCell(s, 5, 1), "SYS");
  LinkLimit lim = theoreticalLinkLimit(s, 5, 1);
  EXPECT_EQ(lim.medium, "PCIe");
  EXPECT_NEAR(lim.gbps, kPcieGen5x16, 0.01);
}

TEST(HgxH100, RenderTopologyHasMatrixLegendAndP2pSection) {
  Snapshot s = load("snapshot_hgx_h100_8gpu.json");
  const std::string text = renderTopology(s);
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_GE(lines.size(), 9u);
  // Header: 8 GPU columns then the affinity columns.
  std::istringstream header(lines[0]);
  std::vector<std::string> headerWords;
  for (std::string w; header >> w;) headerWords.push_back(w);
  ASSERT_GE(headerWords.size(), 8u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(headerWords[i], "GPU" + std::to_string(i));
  EXPECT_TRUE(contains(lines[0], "CPU Affinity"));
  EXPECT_TRUE(contains(lines[0], "NUMA Affinity"));
  // Eight rows of "GPUi c0 .. c7 cpus numa".
  for (int i = 0; i < 8; ++i) {
    std::istringstream row(lines[1 + i]);
    std::vector<std::string> cells;
    for (std::string w; row >> w;) cells.push_back(w);
    ASSERT_EQ(cells.size(), 11u) << lines[1 + i];
    EXPECT_EQ(cells[0], "GPU" + std::to_string(i));
    for (int j = 0; j < 8; ++j) EXPECT_EQ(cells[1 + j], i == j ? "X" : "NV18") << lines[1 + i];
    EXPECT_EQ(cells[9], i < 4 ? "0-55,112-167" : "56-111,168-223");
    EXPECT_EQ(cells[10], i < 4 ? "0" : "1");
  }
  EXPECT_EQ(lines[8].rfind("GPU7", 0), 0u) << lines[8];
  EXPECT_TRUE(contains(text, "Legend:"));
  EXPECT_TRUE(contains(text, "NV#  = joined by # NVLinks"));
  EXPECT_TRUE(contains(text, "SYS  = PCIe, across the link between NUMA nodes"));
  EXPECT_TRUE(contains(text, "P2P by ordered pair"));
  // One line per ordered pair in the P2P section.
  int pairLines = 0;
  for (const std::string& line : lines)
    if (line.find(" -> GPU") != std::string::npos) {
      ++pairLines;
      EXPECT_TRUE(contains(line, "OK"));
      EXPECT_TRUE(contains(line, "478.1 GB/s (18 x NVLink4 at 26.56 GB/s)"));
    }
  EXPECT_EQ(pairLines, 56);
  EXPECT_TRUE(contains(text, "  GPU7 -> GPU6  OK"));
  EXPECT_FALSE(contains(text, "why:"));  // nothing to explain when every pair is OK
}

TEST(HgxH100, TopologyJsonHas56Pairs) {
  Snapshot s = load("snapshot_hgx_h100_8gpu.json");
  Json j = Json::parse(topologyToJson(s));  // throws (test error) if not JSON
  ASSERT_EQ(j["gpus"].size(), 8u);
  ASSERT_EQ(j["matrix"].size(), 8u);
  for (int i = 0; i < 8; ++i) {
    ASSERT_EQ(j["matrix"][i].size(), 8u);
    for (int k = 0; k < 8; ++k) EXPECT_EQ(j["matrix"][i][k], i == k ? "X" : "NV18");
  }
  ASSERT_EQ(j["pairs"].size(), 56u);
  for (const Json& p : j["pairs"]) {
    EXPECT_NE(p["src"], p["dst"]);
    EXPECT_EQ(p["path"], "NV18");
    EXPECT_EQ(p["nvlinks"], 18);
    EXPECT_EQ(p["p2p"], "ok");
    EXPECT_EQ(p["p2pCode"], "OK");
    EXPECT_EQ(p["linkMedium"], "NVLink");
    EXPECT_DOUBLE_EQ(p["theoreticalGBps"].get<double>(), 18 * kNvlink4);
  }
  EXPECT_EQ(j["gpus"][4]["numaNode"], "1");
  EXPECT_EQ(j["gpus"][7]["pciBusId"], "0000:db:00.0");
}

// ---- 4x RTX A6000 in two PCIe switches --------------------------------------------------

TEST(PcieTwoSwitches, MatrixIsPixWithinASwitchAndSysAcross) {
  Snapshot s = load("snapshot_pcie_4gpu_two_switches.json");
  expectMatrix(
      s,
      {{"X", "PIX", "SYS", "SYS"}, {"PIX", "X", "SYS", "SYS"}, {"SYS", "SYS", "X", "PIX"}, {"SYS", "SYS", "PIX", "X"}});
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      if (a != b) {
        EXPECT_EQ(nvlinkCountBetween(s, a, b), 0);
      }
}

TEST(PcieTwoSwitches, P2pOkInASwitchAndTopologyNotSupportedAcross) {
  Snapshot s = load("snapshot_pcie_4gpu_two_switches.json");
  for (auto [a, b] : std::vector<std::pair<int, int>>{{0, 1}, {1, 0}, {2, 3}, {3, 2}}) {
    P2pStatus st = p2pStatus(s, a, b);
    EXPECT_EQ(st.state, State::kOk) << a << "->" << b;
    EXPECT_TRUE(st.reason.empty());
  }
  for (auto [a, b] : std::vector<std::pair<int, int>>{{0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 0}, {2, 1}, {3, 0}, {3, 1}}) {
    P2pStatus st = p2pStatus(s, a, b);
    EXPECT_EQ(st.state, State::kUnsupported) << a << "->" << b;
    EXPECT_EQ(st.code, "TNS");
    EXPECT_TRUE(contains(st.reason, "cudaDeviceCanAccessPeer"));
    EXPECT_TRUE(contains(st.reason, "TNS"));
    EXPECT_TRUE(contains(st.reason, p2pCodeMeaning("TNS")));
    EXPECT_TRUE(contains(st.reason, "PCIe topology does not allow P2P"));
    EXPECT_TRUE(contains(st.reason, "crosses the link between CPU sockets"));
    EXPECT_FALSE(contains(st.reason, "different GPU models"));
  }
}

TEST(PcieTwoSwitches, LinkLimitIsPcieGen4x16) {
  Snapshot s = load("snapshot_pcie_4gpu_two_switches.json");
  for (auto [a, b] : std::vector<std::pair<int, int>>{{0, 1}, {2, 3}, {0, 3}}) {
    LinkLimit lim = theoreticalLinkLimit(s, a, b);
    EXPECT_EQ(lim.medium, "PCIe");
    EXPECT_NEAR(lim.gbps, 31.5, 0.05);
    EXPECT_NEAR(lim.gbps, kPcieGen4x16, 0.001);
    EXPECT_EQ(lim.description, "PCIe Gen4 x16");
  }
}

TEST(PcieTwoSwitches, ReportExplainsRefusedPairs) {
  Snapshot s = load("snapshot_pcie_4gpu_two_switches.json");
  const std::string text = renderTopology(s);
  EXPECT_TRUE(contains(text, "GPU0 -> GPU2  NOT SUPPORTED"));
  EXPECT_TRUE(contains(text, "GPU0 -> GPU1  OK"));
  EXPECT_TRUE(contains(text, "why: cudaDeviceCanAccessPeer(0, 2) = 0; NVML: TNS"));
  // A rate only where P2P works: the PCIe link's 31.5 GB/s is no P2P rate for a refused pair.
  EXPECT_TRUE(contains(text, "GPU0 -> GPU1  OK             PIX   31.5 GB/s (PCIe Gen4 x16)")) << text;
  EXPECT_TRUE(contains(text, "GPU0 -> GPU2  NOT SUPPORTED  SYS   no P2P rate (copies go through host memory)")) << text;
  EXPECT_FALSE(contains(text, "NOT SUPPORTED  SYS   31.5")) << text;
  Json j = Json::parse(topologyToJson(s));
  ASSERT_EQ(j["pairs"].size(), 12u);
  int unsupported = 0;
  for (const Json& p : j["pairs"]) {
    if (p["p2p"] == "unsupported") {
      ++unsupported;
      EXPECT_EQ(p["path"], "SYS");
      EXPECT_EQ(p["p2pCode"], "TNS");
      EXPECT_TRUE(p["theoreticalGBps"].is_null()) << p;
      EXPECT_EQ(p["linkDescription"], "PCIe Gen4 x16");
    } else {
      EXPECT_NEAR(p["theoreticalGBps"].get<double>(), 31.5, 0.05) << p;
    }
  }
  EXPECT_EQ(unsupported, 8);
}

// ---- 2x RTX 4090 ------------------------------------------------------------------------

TEST(Consumer, PhbWithoutP2pBecauseOfTheGpuModel) {
  Snapshot s = load("snapshot_consumer_2gpu_no_p2p.json");
  expectMatrix(s, {{"X", "PHB"}, {"PHB", "X"}});
  for (auto [a, b] : std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}) {
    P2pStatus st = p2pStatus(s, a, b);
    EXPECT_EQ(st.state, State::kUnsupported);
    EXPECT_EQ(st.code, "GNS");
    EXPECT_TRUE(contains(st.reason, "GNS"));
    EXPECT_TRUE(contains(st.reason, p2pCodeMeaning("GNS")));
    EXPECT_TRUE(contains(st.reason, "GPU model does not allow P2P"));
    EXPECT_FALSE(contains(st.reason, "CPU sockets"));
  }
  LinkLimit lim = theoreticalLinkLimit(s, 0, 1);
  EXPECT_EQ(lim.medium, "PCIe");
  EXPECT_EQ(lim.description, "PCIe Gen4 x16");
  EXPECT_NEAR(lim.gbps, kPcieGen4x16, 0.001);
  EXPECT_EQ(s.platform.iommu.valueOr(""), "translated");
  EXPECT_EQ(s.gpus[0].iommuGroupType.valueOr(""), "DMA-FQ");
}

// ---- 4x A100 with a degraded NVLink pair and a down-trained PCIe link --------------------

TEST(DegradedA100, MatrixShowsNv2ForTheDegradedPair) {
  Snapshot s = load("snapshot_degraded_nvlink_pcie.json");
  expectMatrix(
      s,
      {{"X", "NV2", "NV4", "NV4"}, {"NV2", "X", "NV4", "NV4"}, {"NV4", "NV4", "X", "NV4"}, {"NV4", "NV4", "NV4", "X"}});
  // 12 links per GPU; GPU0 and GPU1 each have two inactive.
  for (const Gpu& g : s.gpus) {
    ASSERT_TRUE(g.nvlinks.known());
    EXPECT_EQ(g.nvlinks.value().size(), 12u);
    int active = 0;
    for (const NvLink& l : g.nvlinks.value()) active += l.active ? 1 : 0;
    EXPECT_EQ(active, g.index <= 1 ? 10 : 12) << "GPU" << g.index;
  }
}

TEST(DegradedA100, LinkLimitFollowsActiveLinks) {
  Snapshot s = load("snapshot_degraded_nvlink_pcie.json");
  LinkLimit degraded = theoreticalLinkLimit(s, 0, 1);
  EXPECT_EQ(degraded.medium, "NVLink");
  EXPECT_DOUBLE_EQ(degraded.gbps, 2 * 25.0);
  EXPECT_EQ(degraded.description, "2 x NVLink3 at 25.00 GB/s");
  LinkLimit healthy = theoreticalLinkLimit(s, 2, 3);
  EXPECT_DOUBLE_EQ(healthy.gbps, 4 * 25.0);
  EXPECT_DOUBLE_EQ(theoreticalLinkLimit(s, 1, 0).gbps, 2 * 25.0);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b)
      if (a != b) {
        EXPECT_EQ(p2pStatus(s, a, b).state, State::kOk);
      }
}

TEST(DegradedA100, DownTrainedPcieLinkIsRecordedButTheLimitUsesTheMaximum) {
  Snapshot s = load("snapshot_degraded_nvlink_pcie.json");
  const PcieLink& pcie = s.gpus[2].pcie;
  EXPECT_EQ(pcie.currentGen.valueOr(0), 3);
  EXPECT_EQ(pcie.currentWidth.valueOr(0), 8);
  EXPECT_EQ(pcie.maxGen.valueOr(0), 4);
  EXPECT_EQ(pcie.maxWidth.valueOr(0), 16);
  // Without NVLink data the pair falls back to PCIe at the trained-for maximum.
  s.gpus[2].nvlinks = Known<std::vector<NvLink>>::unknown("NVML unavailable");
  EXPECT_EQ(topoCell(s, 2, 3), "NODE");
  EXPECT_EQ(topoCell(s, 2, 0), "SYS");
  LinkLimit lim = theoreticalLinkLimit(s, 2, 3);
  EXPECT_EQ(lim.medium, "PCIe");
  EXPECT_EQ(lim.description, "PCIe Gen4 x16");
  // The slower end limits the path.
  s.gpus[3].pcie.maxGen = 3;
  s.gpus[3].pcie.maxWidth = 8;
  s.gpus[3].nvlinks = Known<std::vector<NvLink>>::unknown("NVML unavailable");
  lim = theoreticalLinkLimit(s, 2, 3);
  EXPECT_EQ(lim.description, "PCIe Gen3 x8");
  EXPECT_NEAR(lim.gbps, 7.88, 0.01);
}

// ---- 2x H100 PCIe, MIG on GPU1 -----------------------------------------------------------

TEST(Mig, PairsWithTheMigGpuHaveNoP2pAndSayWhy) {
  Snapshot s = load("snapshot_mig_one_gpu.json");
  expectMatrix(s, {{"X", "PXB"}, {"PXB", "X"}});
  for (auto [a, b] : std::vector<std::pair<int, int>>{{0, 1}, {1, 0}}) {
    P2pStatus st = p2pStatus(s, a, b);
    EXPECT_EQ(st.state, State::kUnsupported);
    EXPECT_EQ(st.code, "NS");
    EXPECT_TRUE(contains(st.reason, "MIG is enabled on GPU1"));
  }
  LinkLimit lim = theoreticalLinkLimit(s, 0, 1);
  EXPECT_EQ(lim.medium, "PCIe");
  EXPECT_EQ(lim.description, "PCIe Gen5 x16");
  EXPECT_NEAR(lim.gbps, kPcieGen5x16, 0.001);
  EXPECT_TRUE(contains(renderTopology(s), "why: MIG is enabled on GPU1"));
}

TEST(Mig, WhenTheDriverStillAllowsP2pTheStatusIsOkWithoutAReason) {
  Snapshot s = load("snapshot_mig_one_gpu.json");
  for (PeerPair& p : s.pairs) p.canAccessPeer = true;
  P2pStatus st = p2pStatus(s, 0, 1);
  EXPECT_EQ(st.state, State::kOk);
  EXPECT_EQ(st.code, "OK");
  EXPECT_EQ(st.reason, "");  // topology.hpp: "empty when OK"
}

// ---- 2x H200 (captured on the test machine) --------------------------------------------------

TEST(H200, CaptureIsNv18WithP2pOk) {
  {
    Snapshot s = load("snapshot_h200_2gpu_captured.json");
    expectMatrix(s, {{"X", "NV18"}, {"NV18", "X"}});
    EXPECT_EQ(p2pStatus(s, 0, 1).state, State::kOk);
    EXPECT_EQ(p2pStatus(s, 1, 0).state, State::kOk);
    LinkLimit lim = theoreticalLinkLimit(s, 0, 1);
    EXPECT_EQ(lim.medium, "NVLink");
    EXPECT_DOUBLE_EQ(lim.gbps, 18 * kNvlink4);
    EXPECT_EQ(s.driverVersion.valueOr(""), "580.159.04");
    EXPECT_EQ(s.cudaDriverVersion.valueOr(0), 13000);
  }
}

// ---- 4x H200 behind NVSwitches (captured on the 4-GPU test machine) --------------------------

// The GPU-to-GPU cells of `nvidia-smi topo -m` as printed (tabs, an underlined header line).
std::vector<std::vector<std::string>> nvidiaSmiMatrix(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::vector<std::vector<std::string>> rows;
  std::size_t gpus = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream words(line);
    std::vector<std::string> cells;
    for (std::string w; words >> w;) cells.push_back(w);
    if (cells.empty()) continue;
    if (gpus == 0 && line.find("GPU0") != std::string::npos) {  // the header: count its GPU columns
      for (const std::string& c : cells)
        if (c.find("GPU") != std::string::npos && c != "GPU") ++gpus;
      continue;
    }
    if (cells[0].rfind("GPU", 0) != 0 || cells.size() < gpus + 1) continue;
    rows.emplace_back(cells.begin() + 1, cells.begin() + 1 + static_cast<std::ptrdiff_t>(gpus));
  }
  return rows;
}

TEST(H200x4, CaptureAgreesWithNvidiaSmiAndEveryPairIsNv18ThroughTheSwitches) {
  Snapshot s = load("snapshot_h200_4gpu_captured.json");
  ASSERT_EQ(s.gpus.size(), 4u);
  const auto smi = nvidiaSmiMatrix(std::string(GPUPEER_TEST_DATA_DIR) + "/nvsmi_topo_h200_4gpu.txt");
  ASSERT_EQ(smi.size(), 4u);
  EXPECT_EQ(matrix(s), smi);
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 4; ++b) {
      if (a == b) continue;
      EXPECT_EQ(p2pStatus(s, a, b).state, State::kOk) << a << "->" << b;
      LinkLimit lim = theoreticalLinkLimit(s, a, b);
      EXPECT_EQ(lim.medium, "NVLink");
      EXPECT_DOUBLE_EQ(lim.gbps, 18 * kNvlink4);
    }
  // Every link of every GPU goes to a switch, none to a peer directly.
  for (const Gpu& g : s.gpus) {
    ASSERT_TRUE(g.nvlinks.known());
    EXPECT_EQ(g.nvlinks.value().size(), 18u);
    for (const NvLink& l : g.nvlinks.value()) EXPECT_TRUE(l.active && l.remoteType == LinkRemote::kSwitch);
  }
}

// ---- statuses that do not come from a fixture's normal state -----------------------------

TEST(P2pStatusEdges, UnknownCanAccessPeerAndMissingPair) {
  Snapshot s = load("snapshot_consumer_2gpu_no_p2p.json");
  s.pairs[0].canAccessPeer = Known<bool>::unknown("cudaErrorNoDevice (no CUDA-capable device)");
  P2pStatus st = p2pStatus(s, s.pairs[0].src, s.pairs[0].dst);
  EXPECT_EQ(st.state, State::kUnknown);
  EXPECT_TRUE(contains(st.reason, "cudaErrorNoDevice"));
  EXPECT_EQ(st.code, "GNS");  // NVML's code is still the best there is
  P2pStatus missing = p2pStatus(s, 0, 5);
  EXPECT_EQ(missing.state, State::kUnknown);
  EXPECT_TRUE(contains(missing.reason, "0->5 is not in the snapshot"));
  EXPECT_EQ(topoCell(s, 0, 5), "?");
}

TEST(P2pStatusEdges, DifferentModelsAreMentioned) {
  Snapshot s = load("snapshot_consumer_2gpu_no_p2p.json");
  s.gpus[1].name = "NVIDIA GeForce RTX 3090";
  P2pStatus st = p2pStatus(s, 0, 1);
  EXPECT_TRUE(contains(st.reason, "different GPU models"));
  EXPECT_TRUE(contains(st.reason, "NVIDIA GeForce RTX 3090"));
}

}  // namespace
}  // namespace gpupeer
