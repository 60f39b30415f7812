// The HTML report: what each section draws from the fixtures, escaping of hostile input, the
// results readers.
#include "gpupeer/report.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "cli_support.hpp"
#include "fixture_support.hpp"
#include "gpupeer/topology.hpp"
#include "kb_test_support.hpp"
#include "report/report_sections.hpp"

namespace gpupeer {
namespace {

using testing::loadFixture;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::string dataPath(const std::string& name) { return std::string(GPUPEER_TEST_DATA_DIR) + "/" + name; }

std::string render(const Snapshot& s, const ReportResults* results = nullptr) {
  ReportInput in;
  in.snapshot = &s;
  in.results = results;
  return renderHtmlReport(in);
}

TEST(HtmlEscape, EscapesMarkupQuotesAndControls) {
  EXPECT_EQ(htmlEscape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(htmlEscape("tab\tnew\nline"), "tab\tnew\nline");
  EXPECT_EQ(htmlEscape(std::string("bell\x07")), "bell&#x2407;");
}

TEST(PcieSwitch, UpstreamPortAboveTheDownstreamPort) {
  EXPECT_EQ(pcieSwitchOf("/sys/devices/pci0000:3a/0000:3a:02.0/0000:3b:00.0/0000:3c:08.0/0000:3d:00.0"),
            "0000:3b:00.0");
  EXPECT_EQ(pcieSwitchOf("/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0"), "");  // root port only
  EXPECT_EQ(pcieSwitchOf("not a sysfs path"), "");
}

// Every fixture: one GPU node per GPU, one P2P cell per ordered pair and diagonal, one block
// per doctor finding, and the page ends with its script.
TEST(HtmlReport, EachFixtureDrawsEveryGpuPairAndFinding) {
  for (const char* name :
       {"snapshot_consumer_2gpu_no_p2p.json", "snapshot_degraded_nvlink_pcie.json", "snapshot_h200_2gpu_captured.json",
        "snapshot_h200_4gpu_captured.json", "snapshot_hgx_h100_8gpu.json", "snapshot_link_states_4gpu.json",
        "snapshot_mig_one_gpu.json", "snapshot_pcie_4gpu_two_switches.json"}) {
    SCOPED_TRACE(name);
    Snapshot s = loadFixture(name);
    ASSERT_FALSE(s.gpus.empty());
    std::string html = render(s);
    const std::size_t n = s.gpus.size();
    EXPECT_EQ(count(html, "<g class=\"gpu-node\""), n);
    EXPECT_EQ(count(html, "<td class=\"p2p"), n >= 2 ? n * n : 0);
    DoctorReport doctor = diagnose(s, nullptr);
    EXPECT_EQ(count(html, "<div class=\"finding"), doctor.findings.size());
    for (const Finding& f : doctor.findings) EXPECT_NE(html.find("data-rule=\"" + f.rule + "\""), std::string::npos);
    EXPECT_EQ(count(html, "<script>"), 1u);
    EXPECT_NE(html.find("</html>"), std::string::npos);
  }
}

TEST(HtmlReport, NvSwitchMachineDrawsTheFabricWithLinkCounts) {
  std::string html = render(loadFixture("snapshot_hgx_h100_8gpu.json"));
  EXPECT_EQ(count(html, "class=\"nvswitch\""), 1u);
  EXPECT_EQ(count(html, ">NV18</text>"), 8u);
}

TEST(HtmlReport, TwoSwitchMachineDrawsTwoSwitchesAndTwoSockets) {
  Snapshot s = loadFixture("snapshot_pcie_4gpu_two_switches.json");
  std::string html = render(s);
  EXPECT_EQ(count(html, "<g class=\"pcie-switch\""), 2u);
  EXPECT_EQ(count(html, "<g class=\"numa-node\""), 2u);
  EXPECT_EQ(count(html, "class=\"nvlink\""), 0u);
}

TEST(HtmlReport, DirectNvLinksAreArcsNamedByTheirCount) {
  Snapshot s = loadFixture("snapshot_degraded_nvlink_pcie.json");
  std::string html = render(s);
  std::size_t pairs = 0;
  for (const Gpu& a : s.gpus)
    for (const Gpu& b : s.gpus)
      if (a.index < b.index && nvlinkCountBetween(s, a.index, b.index) > 0) {
        ++pairs;
        // GPU0-GPU1 lost 2 of its 4 links: "NV2 of 4", and the two down links as an arc of their own.
        const int n = nvlinkCountBetween(s, a.index, b.index);
        EXPECT_NE(html.find(n < 4 ? fmt::format(">NV{} of 4</text>", n) : fmt::format(">NV{}</text>", n)),
                  std::string::npos);
      }
  ASSERT_GT(pairs, 0u);
  EXPECT_EQ(count(html, "<path class=\"nvlink-line\""), pairs + 1);
}

TEST(HtmlReport, PairsWithoutP2pShowTheirReason) {
  Snapshot s = loadFixture("snapshot_consumer_2gpu_no_p2p.json");
  P2pStatus st = p2pStatus(s, 0, 1);
  ASSERT_NE(st.state, P2pStatus::State::kOk);
  std::string html = render(s);
  EXPECT_EQ(count(html, "class=\"p2p p2p-no ") + count(html, "class=\"p2p p2p-unknown "), 2u);
  // Both directions share the reason, the pair's ordinals written as src and dst.
  ASSERT_EQ(st.reason.rfind("cudaDeviceCanAccessPeer(0, 1)", 0), 0u) << st.reason;
  EXPECT_NE(html.find(htmlEscape("cudaDeviceCanAccessPeer(src, dst)" + st.reason.substr(29))), std::string::npos);
}

// A snapshot is input from anywhere: nothing in it may become markup or script.
TEST(HtmlReport, HostileSnapshotStringsAreEscaped) {
  Snapshot s = loadFixture("snapshot_h200_2gpu_captured.json");
  const std::string attack = "\"><script>alert(1)</script><img src=x onerror=alert(2)>";
  s.hostname = attack;
  s.description = attack;
  s.gpus[0].name = attack;
  s.gpus[1].pciBusId = attack;
  s.driverVersion = Known<std::string>(attack);
  s.environment["NCCL_P2P_LEVEL"] = attack;
  std::string html = render(s);
  EXPECT_EQ(count(html, "<script"), 1u);  // the page's own
  EXPECT_EQ(html.find("<img"), std::string::npos);
  // Neither out of an attribute (the quote) nor into markup (the angle brackets): text only.
  EXPECT_EQ(html.find("\"><script"), std::string::npos);
  EXPECT_NE(html.find("&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;"),
            std::string::npos);
}

TEST(HtmlReport, KbLinksOnlyForWebUrls) {
  Snapshot s = loadFixture("snapshot_consumer_2gpu_no_p2p.json");
  DoctorReport doctor;
  doctor.verdict = "one finding";
  doctor.findings.push_back({"test-rule", Severity::kError, "<b>title</b>", "evidence <i>", "test/entry"});
  KnowledgeBase kb;
  KbEntry e;
  e.id = "test/entry";
  e.regex = "x";
  e.rootCause = "cause <u>";
  e.officialDocUrl = "javascript:alert(1)";
  e.workarounds.push_back({"do <this>", "run --this", 0.9, "", {}});
  ASSERT_TRUE(kb.add(e).isOk());
  ReportInput in{&s, &doctor, &kb, nullptr, "", ""};
  std::string html = renderHtmlReport(in);
  EXPECT_EQ(html.find("href=\"javascript"), std::string::npos);
  EXPECT_NE(html.find("cause &lt;u&gt;"), std::string::npos);
  EXPECT_NE(html.find("<pre><code>run --this</code></pre>"), std::string::npos);
  EXPECT_NE(html.find("90% success"), std::string::npos);
  EXPECT_EQ(html.find("<b>title</b>"), std::string::npos);
}

TEST(ReportResults, ReadsBenchLinesCollTablesAndRecords) {
  ReportResults r;
  ASSERT_TRUE(loadReportResults(dataPath("results_h200x2_bench.jsonl"), r).isOk());
  ASSERT_TRUE(loadReportResults(dataPath("results_h200x4_all_reduce_graph.json"), r).isOk());
  ASSERT_TRUE(loadReportResults(dataPath("results_records_h200x2.jsonl"), r).isOk());
  EXPECT_EQ(r.bench.size(), 15u);  // the logged "$ build/gpupeer ..." line is not a result
  EXPECT_TRUE(r.warnings.empty());
  ASSERT_EQ(r.bench[1].key, "ce_write");
  ASSERT_EQ(r.bench[1].cells.size(), 2u);
  EXPECT_NEAR(r.bench[1].cells[0].value.median, 396.278, 1e-3);
  // 82.88% of the link: the limit the line was measured against, 18 x 26.5625 GB/s.
  EXPECT_NEAR(r.bench[1].cells[0].theoreticalGBps, 478.125, 0.01);
  EXPECT_EQ(r.bench.back().kind, BenchKind::kLatency);
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].op, "all_reduce");
  EXPECT_EQ(r.collectives[0].gpus, 4);
  ASSERT_FALSE(r.collectives[0].rows.empty());
  EXPECT_EQ(r.collectives[0].rows[0].bytes, 8);
  EXPECT_NEAR(r.collectives[0].rows[0].us, 4.28832, 1e-4);
  ASSERT_EQ(r.collectives[0].rows[0].baselines.count("nccl_graph"), 1u);
  EXPECT_NEAR(r.collectives[0].rows[0].baselines.at("nccl_graph").first, 8.70672, 1e-4);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].metric, "all_reduce.time");
  EXPECT_EQ(r.records[0].bytes, 1048576);
  EXPECT_EQ(r.records[0].baselineValue, 14.2);
}

TEST(ReportResults, UnreadableOrUselessFilesAreErrorsNamingThem) {
  gpupeer::testing::TempDir dir;
  ReportResults r;
  Status missing = loadReportResults(dir.path() + "/nope.json", r);
  EXPECT_EQ(missing.code(), ErrorCode::kNotFound);
  EXPECT_NE(missing.message().find("nope.json"), std::string::npos);
  Status other = loadReportResults(dir.write("other.json", "{\"something\": 1}"), r);
  EXPECT_EQ(other.code(), ErrorCode::kParse);
  Status text = loadReportResults(dir.write("notes.txt", "just words\n"), r);
  EXPECT_EQ(text.code(), ErrorCode::kParse);
  // One good line among broken ones: loaded, and the broken line is a warning.
  ASSERT_TRUE(loadReportResults(dir.write("mixed.jsonl", "{broken\n{\"metric\":\"m\",\"value\":2}\n"), r).isOk());
  EXPECT_EQ(r.records.size(), 1u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("mixed.jsonl:1"), std::string::npos);
}

TEST(HtmlReport, ResultsBecomeHeatmapsAndCharts) {
  Snapshot s = loadFixture("snapshot_h200_2gpu_captured.json");
  ReportResults r;
  ASSERT_TRUE(loadReportResults(dataPath("results_h200x2_bench.jsonl"), r).isOk());
  ASSERT_TRUE(loadReportResults(dataPath("results_h200x4_all_reduce_graph.json"), r).isOk());
  ASSERT_TRUE(loadReportResults(dataPath("results_records_h200x2.jsonl"), r).isOk());
  std::string html = render(s, &r);
  EXPECT_NE(html.find(">396.3<small>83%</small>"), std::string::npos);  // ce_write GPU0->GPU1
  // h2d has host rows; the fan-out total ("GPU0->all", col -1) is a row of its own, not a host row.
  EXPECT_NE(html.find("<tr><th>host-&gt;GPU0</th>"), std::string::npos);
  EXPECT_NE(html.find("<tr><th>GPU0-&gt;all</th>"), std::string::npos);
  // Time and busbw of the all-reduce table, and one chart of the records that carry sizes.
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 3u);
  EXPECT_NE(html.find(">nccl_graph</text>"), std::string::npos);
  EXPECT_NE(html.find(">nccl_symmetric</text>"), std::string::npos);
  // 14.2 us against 9.8 us: gpupeer 1.45x faster.
  EXPECT_NE(html.find("<td>1.45x</td>"), std::string::npos);
}

TEST(HtmlReport, SweepsAreCharts) {
  Snapshot s = loadFixture("snapshot_h200_2gpu_captured.json");
  BenchResult sweep;
  sweep.key = "ce_write";
  for (std::size_t bytes : {4096ul, 65536ul, 1048576ul}) {
    BenchCell c;
    c.row = 0, c.col = 1, c.bytes = bytes, c.label = formatBytes(bytes);
    c.value.median = static_cast<double>(bytes) / 4096, c.value.samples = 3, c.theoreticalGBps = 478.125;
    sweep.cells.push_back(c);
  }
  ReportResults r;
  r.bench.push_back(sweep);
  std::string html = render(s, &r);
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 1u);
  EXPECT_EQ(count(html, "<polyline class=\"series\""), 2u);  // measured and the link limit
  EXPECT_EQ(count(html, "class=\"bench-cell"), 0u);
}

TEST(HeatColour, RedBelowHalfGreenAtTheLimit) {
  EXPECT_EQ(report::heatColour(0.2), "hsl(0,70%,80%)");
  EXPECT_EQ(report::heatColour(0.7), "hsl(60,70%,80%)");
  EXPECT_EQ(report::heatColour(1.3), "hsl(120,70%,80%)");
}

TEST(ReportCli, BadResultsFileIsAUsageErrorAndWritesNothing) {
  gpupeer::testing::TempDir dir;
  const std::string fixture = quote(dataPath("snapshot_hgx_h100_8gpu.json"));
  CliRun r = runCli(dir, "report --snapshot " + fixture + " --results " + quote(dir.path() + "/nope.jsonl") + " -o " +
                             quote(dir.path() + "/r.html"));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("nope.jsonl"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/r.html"));
  // An unwritable output is gpupeer's failure to do its work (4), naming the path.
  CliRun w = runCli(dir, "report --snapshot " + fixture + " -o " + quote(dir.path() + "/no/dir/r.html"));
  EXPECT_EQ(w.exitCode, 4);
  EXPECT_NE(w.err.find("no/dir/r.html"), std::string::npos) << w.err;
}

}  // namespace
}  // namespace gpupeer
