// `gpupeer report` of every fixture, opened in a real browser (headless Chromium): the page's
// script ran to its end, nothing was logged to the console (no script error, no blocked fetch),
// and the DOM holds one node per GPU, every P2P cell and every finding. The pages and their
// screenshots stay under <build>/report-artifacts/ for a person to look at.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_support.hpp"
#include "fixture_support.hpp"
#include "gpupeer/doctor.hpp"

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
           quote(data + "/results_records_h200x2.jsonl");
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
  EXPECT_NE(dom.find("Drawn by this browser: " + std::to_string(n) + " GPU nodes, " +
                     std::to_string(n >= 2 ? n * n : 0) + " P2P cells"),
            std::string::npos);
  const std::size_t drawings = count(dom, "<svg");
  EXPECT_NE(dom.find(std::to_string(drawings) + (drawings == 1 ? " drawing" : " drawings") + "."), std::string::npos)
      << "drawings counted in words: " << drawings;
  // Console messages (uncaught errors, fetches the page's policy refused) are logged as CONSOLE.
  EXPECT_EQ(log.find(":CONSOLE"), std::string::npos) << log;
  EXPECT_EQ(count(dom, "<g class=\"gpu-node\""), n);
  EXPECT_EQ(count(dom, "<td class=\"p2p"), n >= 2 ? n * n : 0);
  EXPECT_EQ(count(dom, "<div class=\"finding"), findings);
  EXPECT_GT(std::filesystem::file_size(stem + ".png"), 10000u) << "screenshot missing or blank";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ReportInBrowser,
                         ::testing::Values("snapshot_consumer_2gpu_no_p2p.json", "snapshot_degraded_nvlink_pcie.json",
                                           "snapshot_h200_2gpu_captured.json", "snapshot_h200_4gpu_captured.json",
                                           "snapshot_hgx_h100_8gpu.json", "snapshot_mig_one_gpu.json",
                                           "snapshot_pcie_4gpu_two_switches.json"),
                         [](const auto& info) {
                           std::string name = std::filesystem::path(info.param).stem().string();
                           return name.substr(name.find('_') + 1);
                         });

}  // namespace
}  // namespace gpupeer
