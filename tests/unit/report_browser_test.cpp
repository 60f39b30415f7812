// `gpupeer report` of every fixture, opened in a real browser (headless Chromium): the page's
// script ran to its end, nothing was logged to the console (no script error, no blocked fetch),
// and the DOM holds the verdict banner first, one node per GPU, every P2P cell and every finding,
// the legend, each KB text once, one bandwidth heatmap and the charts of results records; the
// fixture that plants every link state shows each link in its state. The pages and their
// screenshots stay under <build>/report-artifacts/ for a person to look at.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_support.hpp"
#include "fixture_support.hpp"
#include "gpupeer/doctor.hpp"
#include "gpupeer/knowledge_base.hpp"

namespace gpupeer {
namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

// Text as the browser writes it back in a dumped DOM: only &, < and > escaped.
std::string domText(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
  return out;
}

// Debian names the browser chromium; other distributions chromium-browser.
std::string findChromium() {
  for (const char* name : {"chromium", "chromium-browser"}) {
    std::string cmd = std::string("command -v ") + name + " 2>/dev/null";
    FILE* p = popen(cmd.c_str(), "r");
    char buf[512] = {0};
    std::string out = p && fgets(buf, sizeof buf, p) ? buf : "";
    if (p) pclose(p);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    if (!out.empty()) return out;
  }
  return "";
}

// Results given with the fixtures they were measured on, so the heatmaps and charts are drawn too.
std::string resultsFor(const std::string& fixture) {
  std::string data = GPUPEER_TEST_DATA_DIR;
  if (fixture == "snapshot_h200_2gpu_captured.json")
    return " --results " + quote(data + "/results_h200x2_bench.jsonl") + " " +
           quote(data + "/results_records_h200x2.jsonl") + " " + quote(data + "/results_h200x2_collectives.jsonl");
  if (fixture == "snapshot_h200_4gpu_captured.json")
    return " --results " + quote(data + "/results_h200x4_all_reduce_graph.json");
  return "";
}

class ReportInBrowser : public ::testing::TestWithParam<const char*> {};

TEST_P(ReportInBrowser, LoadsWithoutErrorsAndShowsEveryGpuPairAndFinding) {
  const std::string chromium = findChromium();
  if (chromium.empty())
    GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it): browser check not run";
  const std::string fixture = GetParam();
  Snapshot s = testing::loadFixture(fixture);
  ASSERT_FALSE(s.gpus.empty());
  const std::size_t n = s.gpus.size();
  const std::size_t findings = diagnose(s, nullptr).findings.size();

  const std::string artifacts = std::filesystem::path(GPUPEER_CLI_PATH).parent_path() / "report-artifacts";
  std::filesystem::create_directories(artifacts);
  const std::string stem = artifacts + "/" + std::filesystem::path(fixture).stem().string();
  testing::TempDir scratch;
  CliRun made = runCli(scratch, "report --snapshot " + quote(std::string(GPUPEER_TEST_DATA_DIR) + "/" + fixture) +
                                    resultsFor(fixture) + " -o " + quote(stem + ".html"));
  ASSERT_EQ(made.exitCode, 0) << made.out << made.err;

  // One browser run both dumps the DOM after the page's script ran and takes the screenshot.
  // A fresh profile per run, so parallel tests do not share one.
  std::string cmd =
      "timeout 60 " + quote(chromium) +
      " --headless --disable-gpu --no-sandbox --no-first-run --user-data-dir=" + quote(scratch.path() + "/profile") +
      " --enable-logging=stderr --v=0 --window-size=1280,2400" + " --screenshot=" + quote(stem + ".png") +
      " --dump-dom " + quote("file://" + stem + ".html") + " >" + quote(stem + ".dom.html") + " 2>" +
      quote(stem + ".browser.log");
  int status = std::system(cmd.c_str());
  const std::string log = readFile(stem + ".browser.log");
  ASSERT_EQ(status, 0) << "chromium failed; its log:\n" << log;
  const std::string dom = readFile(stem + ".dom.html");

  // The script sets the mark as its last step, after counting what was laid out.
  EXPECT_NE(dom.find("data-report-rendered=\"ok\""), std::string::npos) << "script did not finish; log:\n" << log;
  EXPECT_NE(dom.find("data-gpu-nodes=\"" + std::to_string(n) + "\""), std::string::npos);
  EXPECT_NE(dom.find("data-p2p-cells=\"" + std::to_string(n >= 2 ? n * n : 0) + "\""), std::string::npos);
  EXPECT_NE(dom.find("data-drawings=\"" + std::to_string(count(dom, "<svg")) + "\""), std::string::npos);
  EXPECT_EQ(dom.find("Drawn by this browser"), std::string::npos);
  // Console messages (uncaught errors, fetches the page's policy refused) are logged as CONSOLE.
  EXPECT_EQ(log.find(":CONSOLE"), std::string::npos) << log;
  EXPECT_EQ(count(dom, "<g class=\"gpu-node\""), n);
  EXPECT_EQ(count(dom, "<td class=\"p2p"), n >= 2 ? n * n : 0);
  EXPECT_EQ(count(dom, "<div class=\"finding"), findings);

  // The verdict banner is the body's first element.
  const std::size_t body = dom.find("<body>");
  ASSERT_NE(body, std::string::npos);
  const std::size_t first = dom.find_first_not_of(" \n\r\t", body + 6);
  EXPECT_EQ(dom.compare(first, 22, "<header class=\"banner "), 0) << dom.substr(body, 120);
  // The legend names every kind of link once.
  for (const char* key : {"nvlink", "nvlink-fewer", "nvlink-down", "pcie", "pcie-downtrained", "no-p2p"})
    EXPECT_EQ(count(dom, std::string("data-legend=\"") + key + "\""), 1u) << key;
  // Each KB entry's text once, however many findings it explains.
  const KnowledgeBase& kb = builtinKnowledgeBase();
  for (const Finding& f : diagnose(s, nullptr).findings) {
    const KbEntry* e = f.kbId.empty() ? nullptr : kb.find(f.kbId);
    if (e) {
      EXPECT_EQ(count(dom, domText(e->rootCause)), 1u) << f.kbId;
    }
  }

  if (fixture == "snapshot_link_states_4gpu.json") {
    for (const char* planted :
         {"<g class=\"nvlink state-fewer\" data-pair=\"0-1\"", "<g class=\"nvlink state-down\" data-pair=\"0-1\"",
          "<g class=\"nvlink state-ok\" data-pair=\"2-3\"", "<g class=\"pcie-link state-downtrained\" data-gpu=\"2\"",
          "<g class=\"no-p2p state-no-p2p\" data-pair=\"0-2\"", "<g class=\"no-p2p state-no-p2p\" data-pair=\"0-3\"",
          "<g class=\"no-p2p state-no-p2p\" data-pair=\"1-2\"", "<g class=\"no-p2p state-no-p2p\" data-pair=\"1-3\""})
      EXPECT_EQ(count(dom, planted), 1u) << planted;
    EXPECT_EQ(count(dom, "<g class=\"pcie-link state-ok\""), 3u);
    EXPECT_NE(dom.find("NVLink down <b>(2)</b>"), std::string::npos);
  }
  if (fixture == "snapshot_h200_2gpu_captured.json") {
    EXPECT_EQ(count(dom, "<table class=\"heatmap bandwidth\""), 1u);
    // Charts drawn from the results.jsonl records.
    EXPECT_NE(dom.find("<title>all_reduce graph time (h200x2, 2 GPUs)</title>"), std::string::npos);
    EXPECT_NE(dom.find("<title>all_reduce graph busbw (h200x2, 2 GPUs)</title>"), std::string::npos);
  }
  EXPECT_GT(std::filesystem::file_size(stem + ".png"), 10000u) << "screenshot missing or blank";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ReportInBrowser,
                         ::testing::Values("snapshot_consumer_2gpu_no_p2p.json", "snapshot_degraded_nvlink_pcie.json",
                                           "snapshot_h200_2gpu_captured.json", "snapshot_h200_4gpu_captured.json",
                                           "snapshot_hgx_h100_8gpu.json", "snapshot_link_states_4gpu.json",
                                           "snapshot_mig_one_gpu.json", "snapshot_pcie_4gpu_two_switches.json"),
                         [](const auto& info) {
                           std::string name = std::filesystem::path(info.param).stem().string();
                           return name.substr(name.find('_') + 1);
                         });

}  // namespace
}  // namespace gpupeer
