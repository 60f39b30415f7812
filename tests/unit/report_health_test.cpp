// The report shows health at a glance: the verdict banner first, every link in its state (down,
// fewer links than its peers, PCIe trained narrow, no P2P) with a legend, the bandwidth results as
// one heatmap, readable size axes, each KB text and each P2P reason once, and charts from
// results records. The link states are planted in tests/data/snapshot_link_states_4gpu.json.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <regex>

#include "fixture_support.hpp"
#include "gpupeer/bench.hpp"
#include "gpupeer/report.hpp"
#include "gpupeer/topology.hpp"
#include "report/link_states.hpp"
#include "report/report_sections.hpp"
#include "report/svg_chart.hpp"

namespace gpupeer {
namespace {

using report::LinkState;
using testing::loadFixture;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::string render(const Snapshot& s, const ReportResults* results = nullptr) {
  ReportInput in;
  in.snapshot = &s;
  in.results = results;
  return renderHtmlReport(in);
}

const char* const kFixtures[] = {"snapshot_consumer_2gpu_no_p2p.json", "snapshot_degraded_nvlink_pcie.json",
                                 "snapshot_h200_2gpu_captured.json",   "snapshot_h200_4gpu_captured.json",
                                 "snapshot_hgx_h100_8gpu.json",        "snapshot_link_states_4gpu.json",
                                 "snapshot_mig_one_gpu.json",          "snapshot_pcie_4gpu_two_switches.json"};

TEST(LinkStates, PlantedFixtureHasEachState) {
  Snapshot s = loadFixture("snapshot_link_states_4gpu.json");
  report::LinkStates st = report::linkStates(s);
  EXPECT_FALSE(st.nvswitch);
  ASSERT_EQ(st.bonds.size(), 2u);
  EXPECT_EQ(st.bonds[0].a, 0);
  EXPECT_EQ(st.bonds[0].b, 1);
  EXPECT_EQ(st.bonds[0].active, 2);
  EXPECT_EQ(st.bonds[0].best, 4);
  EXPECT_EQ(st.bonds[0].down, 2);  // the two links GPU0 and GPU1 each report inactive
  EXPECT_EQ(st.bonds[0].state(), LinkState::kFewer);
  EXPECT_EQ(st.bonds[1].state(), LinkState::kOk);
  EXPECT_EQ(st.bonds[1].down, 0);
  EXPECT_EQ(st.linksDown(), 2);
  EXPECT_EQ(st.fewerBonds(), 1);
  ASSERT_EQ(st.pcieDowntrained(), 1);
  EXPECT_TRUE(st.gpu(2)->pcieDowntrained);
  EXPECT_EQ(st.gpu(2)->pcieTrained, "Gen3 x8");
  EXPECT_EQ(st.gpu(2)->pcieExpected, "Gen5 x16");
  ASSERT_EQ(st.noP2p.size(), 4u);  // every pair across the sockets
  for (const report::NoP2pPair& p : st.noP2p) {
    EXPECT_LT(p.a, 2);
    EXPECT_GE(p.b, 2);
    EXPECT_EQ(p.code, "TNS");
  }
  EXPECT_EQ(report::pairState(st, 0, 1), LinkState::kFewer);
  EXPECT_EQ(report::pairState(st, 3, 2), LinkState::kOk);
  EXPECT_EQ(report::pairState(st, 1, 3), LinkState::kNoP2p);
}

TEST(LinkStates, DowntrainedAgainstItsOwnTopWhenPeersAreAlike) {
  // GPU2 at Gen3 x8 where its own top and its peers' are Gen4 x16.
  report::LinkStates st = report::linkStates(loadFixture("snapshot_degraded_nvlink_pcie.json"));
  EXPECT_EQ(st.pcieDowntrained(), 1);
  EXPECT_EQ(st.gpu(2)->pcieExpected, "Gen4 x16");
  EXPECT_EQ(st.linksDown(), 2);
  EXPECT_TRUE(st.noP2p.empty());
}

TEST(LinkStates, LowerGenerationAloneIsToldNotCounted) {
  // An idle GPU drops its link to a lower generation (here Gen1 x16 of Gen5 x16): not a fault,
  // so no banner count, no downtrained line, but the tooltip says so and what to do.
  Snapshot s = loadFixture("snapshot_h200_2gpu_captured.json");
  ASSERT_TRUE(s.gpus[0].pcie.maxGen.known() && s.gpus[0].pcie.currentWidth.known());
  s.gpus[0].pcie.currentGen = Known<int>(1);
  report::LinkStates st = report::linkStates(s);
  EXPECT_EQ(st.pcieDowntrained(), 0);
  EXPECT_FALSE(st.gpu(0)->pcieDowntrained);
  EXPECT_TRUE(st.gpu(0)->pcieSlowerNow);
  EXPECT_FALSE(st.gpu(1)->pcieSlowerNow);
  const std::string html = render(s);
  EXPECT_EQ(count(html, "class=\"pcie-link state-downtrained\""), 0u);
  EXPECT_NE(html.find(htmlEscape(fmt::format("GPU0 PCIe link: Gen1 x{} now", s.gpus[0].pcie.currentWidth.value()))),
            std::string::npos);
  EXPECT_NE(html.find("GPUs slow the link when idle"), std::string::npos);
  // Narrower as well: a fault whatever the load.
  s.gpus[0].pcie.currentWidth = Known<int>(s.gpus[0].pcie.currentWidth.value() / 2);
  EXPECT_EQ(report::linkStates(s).pcieDowntrained(), 1);
}

TEST(LinkStates, HealthyMachinesHaveNoneAndNvSwitchIsNotABond) {
  for (const char* name : {"snapshot_h200_2gpu_captured.json", "snapshot_hgx_h100_8gpu.json"}) {
    SCOPED_TRACE(name);
    report::LinkStates st = report::linkStates(loadFixture(name));
    EXPECT_EQ(st.linksDown() + st.fewerBonds() + st.pcieDowntrained(), 0);
    EXPECT_TRUE(st.noP2p.empty());
  }
  report::LinkStates hgx = report::linkStates(loadFixture("snapshot_hgx_h100_8gpu.json"));
  EXPECT_TRUE(hgx.nvswitch);
  EXPECT_TRUE(hgx.bonds.empty());
}

TEST(LinkStates, GpuWithFewerSwitchLinksIsFewerAndItsDownLinksAreCounted) {
  Snapshot s = loadFixture("snapshot_hgx_h100_8gpu.json");
  std::vector<NvLink> links = s.gpus[5].nvlinks.value();
  for (std::size_t i = 0; i < 3; ++i) links[i].active = false;
  s.gpus[5].nvlinks = Known<std::vector<NvLink>>(links);
  report::LinkStates st = report::linkStates(s);
  EXPECT_EQ(st.fewerBonds(), 1);
  EXPECT_EQ(st.linksDown(), 3);
  EXPECT_EQ(report::pairState(st, 5, 0), LinkState::kFewer);
  std::string html = render(s);
  EXPECT_EQ(count(html, "<g class=\"nvlink state-fewer\" data-gpu=\"5\""), 1u);
  EXPECT_EQ(count(html, "<g class=\"nvlink state-down\" data-gpu=\"5\""), 1u);
}

TEST(HealthAtAGlance, BannerIsTheFirstThingInTheBody) {
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    Snapshot s = loadFixture(name);
    std::string html = render(s);
    const std::size_t body = html.find("<body>\n");
    ASSERT_NE(body, std::string::npos);
    EXPECT_EQ(html.compare(body + 7, 22, "<header class=\"banner "), 0) << html.substr(body, 80);
    EXPECT_EQ(count(html, "class=\"banner "), 1u);
    DoctorReport doctor = diagnose(s, nullptr);
    EXPECT_EQ(count(html, htmlEscape(doctor.verdict)), 1u);  // in the banner only
    EXPECT_EQ(html.find("Drawn by this browser"), std::string::npos);
  }
}

TEST(HealthAtAGlance, EachPlantedLinkIsDrawnInItsState) {
  std::string html = render(loadFixture("snapshot_link_states_4gpu.json"));
  EXPECT_EQ(count(html, "<g class=\"nvlink state-fewer\" data-pair=\"0-1\""), 1u);
  EXPECT_NE(html.find(">NV2 of 4</text>"), std::string::npos);
  EXPECT_EQ(count(html, "<g class=\"nvlink state-down\" data-pair=\"0-1\""), 1u);
  EXPECT_NE(html.find(">2 down</text>"), std::string::npos);
  EXPECT_EQ(count(html, "<g class=\"nvlink state-ok\" data-pair=\"2-3\""), 1u);
  EXPECT_EQ(count(html, "<g class=\"pcie-link state-downtrained\" data-gpu=\"2\""), 1u);
  EXPECT_EQ(count(html, "<g class=\"pcie-link state-ok\""), 3u);
  EXPECT_NE(html.find(">Gen3 x8</text>"), std::string::npos);
  for (const char* pair : {"0-2", "0-3", "1-2", "1-3"})
    EXPECT_EQ(count(html, fmt::format("<g class=\"no-p2p state-no-p2p\" data-pair=\"{}\"", pair)), 1u) << pair;
  EXPECT_EQ(count(html, "<g class=\"no-p2p "), 4u);
  // The banner names each state with its count.
  for (const char* item : {"state-down\"><span class=\"swatch\"></span>2 NVLinks down",
                           "state-fewer\"><span class=\"swatch\"></span>1 NVLink pair with fewer links",
                           "state-downtrained\"><span class=\"swatch\"></span>1 PCIe link trained narrow",
                           "state-no-p2p\"><span class=\"swatch\"></span>4 GPU pairs without P2P"})
    EXPECT_NE(html.find(item), std::string::npos) << item;
  // The P2P matrix marks the degraded pair.
  EXPECT_EQ(count(html, "class=\"p2p p2p-ok state-fewer\""), 2u);
  EXPECT_EQ(count(html, "class=\"p2p p2p-no state-no-p2p\""), 8u);
}

TEST(HealthAtAGlance, LegendNamesEveryKindOfLinkAndCountsTheBadOnes) {
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    Snapshot s = loadFixture(name);
    std::string html = render(s);
    if (s.gpus.empty()) continue;
    EXPECT_EQ(count(html, "<ul class=\"link-legend\">"), 1u);
    for (const char* key : {"nvlink", "nvlink-fewer", "nvlink-down", "pcie", "pcie-downtrained", "no-p2p"})
      EXPECT_EQ(count(html, fmt::format("data-legend=\"{}\"", key)), 1u) << key;
  }
  std::string html = render(loadFixture("snapshot_link_states_4gpu.json"));
  EXPECT_NE(html.find("data-legend=\"nvlink-down\"><span class=\"swatch\"></span>NVLink down <b>(2)</b>"),
            std::string::npos);
  EXPECT_NE(html.find("GPU pair without P2P <b>(4)</b>"), std::string::npos);
}

TEST(HealthAtAGlance, HealthyMachineDrawsEveryLinkOk) {
  std::string html = render(loadFixture("snapshot_h200_2gpu_captured.json"));
  for (const char* bad : {"state-fewer\" data", "state-down\" data", "state-downtrained\" data", "state-no-p2p\" data"})
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  EXPECT_NE(html.find("Every link up, at its speed and width, with P2P."), std::string::npos);
}

TEST(HealthAtAGlance, EachKbTextOnce) {
  const KnowledgeBase& kb = builtinKnowledgeBase();
  for (const char* name : kFixtures) {
    SCOPED_TRACE(name);
    Snapshot s = loadFixture(name);
    std::string html = render(s);
    DoctorReport doctor = diagnose(s, nullptr);
    for (const Finding& f : doctor.findings) {
      const KbEntry* e = f.kbId.empty() ? nullptr : kb.find(f.kbId);
      if (!e) continue;
      EXPECT_EQ(count(html, htmlEscape(e->rootCause)), 1u) << f.kbId;
    }
  }
  // Two findings, one entry: written out under the first, pointed to from the second.
  std::string html = render(loadFixture("snapshot_link_states_4gpu.json"));
  EXPECT_EQ(count(html, "id=\"kb-nvlink-link-inactive\""), 1u);
  EXPECT_NE(html.find("Explained above: <a href=\"#kb-nvlink-link-inactive\">"), std::string::npos);
}

TEST(HealthAtAGlance, EachP2pReasonOnce) {
  for (const char* name : {"snapshot_pcie_4gpu_two_switches.json", "snapshot_link_states_4gpu.json",
                           "snapshot_consumer_2gpu_no_p2p.json"}) {
    SCOPED_TRACE(name);
    Snapshot s = loadFixture(name);
    std::string html = render(s);
    for (const Gpu& a : s.gpus)
      for (const Gpu& b : s.gpus) {
        if (a.index == b.index) continue;
        P2pStatus st = p2pStatus(s, a.index, b.index);
        if (st.state == P2pStatus::State::kOk) continue;
        // The reason past its first clause (which names the pair) is written once for all pairs.
        std::size_t cut = st.reason.find("; ");
        ASSERT_NE(cut, std::string::npos) << st.reason;
        EXPECT_EQ(count(html, htmlEscape(st.reason.substr(cut + 2))), 1u) << st.reason;
        EXPECT_EQ(html.find(htmlEscape(st.reason)), std::string::npos) << "a pair's own reason line is left out";
      }
  }
}

TEST(HealthAtAGlance, BandwidthIsOneHeatmapOfTestcaseByPair) {
  Snapshot s = loadFixture("snapshot_h200_2gpu_captured.json");
  ReportResults r;
  ASSERT_TRUE(loadReportResults(std::string(GPUPEER_TEST_DATA_DIR) + "/results_h200x2_bench.jsonl", r).isOk());
  std::string html = render(s, &r);
  EXPECT_EQ(count(html, "<table class=\"heatmap bandwidth\""), 1u);
  EXPECT_EQ(count(html, "<table class=\"heatmap latency\""), 1u);
  EXPECT_EQ(count(html, "<table class=\"heatmap"), 2u);
  // 12 bandwidth testcases as columns; pairs, host pairs and totals as rows.
  const std::size_t bw = html.find("<table class=\"heatmap bandwidth\"");
  const std::string table = html.substr(bw, html.find("</table>", bw) - bw);
  EXPECT_EQ(count(table, "<th class=\"testcase\""), 12u);
  for (const char* row :
       {"GPU0-&gt;GPU1", "GPU1-&gt;GPU0", "host-&gt;GPU0", "GPU1-&gt;host", "GPU0-&gt;all", "all-&gt;GPU1"})
    EXPECT_EQ(count(table, fmt::format("<tr><th>{}</th>", row)), 1u) << row;
  EXPECT_NE(table.find("ce_<wbr>write"), std::string::npos);
}

TEST(HealthAtAGlance, HeatmapIsBoundedInTestcasesAndPairs) {
  Snapshot s = loadFixture("snapshot_h200_2gpu_captured.json");
  ReportResults r;
  for (int t = 0; t < 100; ++t) {
    BenchResult b;
    b.key = fmt::format("case_{}", t);
    for (int p = 0; p < 10; ++p) {
      BenchCell c;
      c.row = 0, c.col = 1, c.label = fmt::format("link {}", t * 10 + p);
      c.value.median = 1, c.value.samples = 1;
      b.cells.push_back(c);
    }
    r.bench.push_back(b);
  }
  std::string html = render(s, &r);
  EXPECT_EQ(count(html, "<th class=\"testcase\""), 64u);
  EXPECT_NE(html.find("36 more testcases left out: a table shows at most 64."), std::string::npos);
  EXPECT_EQ(count(html, "<tr><th>link "), 512u);
  EXPECT_NE(html.find("128 more cells of other pairs left out: the table shows at most 512 pairs."), std::string::npos);
}

TEST(HealthAtAGlance, SizeAxisLabelsNeverTouch) {
  for (double top : {4096.0, 1048576.0, 536870912.0, 9007199254740992.0}) {
    report::ChartSpec spec{"t", "GB/s", false, {{"s", {}, false}}};
    for (double b = 8; b <= top; b *= 2) spec.series[0].points.push_back({b, b / 1e6});
    std::string svg = report::renderLineChart(spec);
    std::regex tick("<text class=\"tick\" x=\"([0-9.]+)\" y=\"[0-9.]+\" text-anchor=\"middle\">");
    std::vector<double> xs;
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), tick); it != std::sregex_iterator(); ++it)
      xs.push_back(std::stod((*it)[1]));
    ASSERT_GE(xs.size(), 2u) << top;
    for (std::size_t i = 1; i < xs.size(); ++i) EXPECT_GE(xs[i] - xs[i - 1], 60.0) << "top " << top;
  }
}

TEST(HealthAtAGlance, ResultsRecordsBecomeChartsOfEachFigure) {
  Snapshot s = loadFixture("snapshot_h200_2gpu_captured.json");
  ReportResults r;
  ASSERT_TRUE(loadReportResults(std::string(GPUPEER_TEST_DATA_DIR) + "/results_h200x2_collectives.jsonl", r).isOk());
  ASSERT_EQ(r.records.size(), 42u);
  std::string html = render(s, &r);
  // Time (gpupeer, nccl_graph, nccl_symmetric) and busbw (gpupeer, nccl_graph) against size.
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 2u);
  EXPECT_NE(html.find("<title>all_reduce graph time (h200x2, 2 GPUs)</title>"), std::string::npos);
  EXPECT_NE(html.find("<title>all_reduce graph busbw (h200x2, 2 GPUs)</title>"), std::string::npos);
  EXPECT_EQ(count(html, "<polyline class=\"series\""), 5u);
  // gpupeer's 14 sizes once each, though each came in two records (one per baseline).
  const std::size_t chart = html.find("<svg class=\"chart\"");
  const std::string first = html.substr(chart, html.find("</svg>", chart) - chart);
  EXPECT_EQ(count(first, "<title>gpupeer: "), 14u);
  EXPECT_NE(html.find("<details><summary>All 42 records</summary>"), std::string::npos);
}

TEST(HealthAtAGlance, RecordChartsAreBounded) {
  ReportResults r;
  for (int m = 0; m < 200; ++m)
    for (double bytes : {1024.0, 2048.0}) {
      ResultRecord rec;
      rec.metric = fmt::format("figure {}", m), rec.unit = "us", rec.value = 1, rec.bytes = bytes;
      r.records.push_back(rec);
    }
  ResultRecord single;  // a figure of one size is no chart
  single.metric = "one size", single.unit = "us", single.value = 1, single.bytes = 8;
  r.records.push_back(single);
  Snapshot s = loadFixture("snapshot_h200_2gpu_captured.json");
  std::string html = render(s, &r);
  EXPECT_EQ(count(html, "<svg class=\"chart\""), 128u);
  EXPECT_NE(html.find("72 more figures left out of the charts (at most 128); the table has them."), std::string::npos);
}

// A bench run of this machine given as results speaks in the diagnosis: the verdict states the
// slowest pair's bandwidth against the link, a pair far below it is a finding, and the page
// says where the figures came from. Results of another machine (host or GPUs) are not taken.
TEST(HealthAtAGlance, BandwidthOfThisMachineInTheResultsIsDiagnosed) {
  Snapshot s = loadFixture("snapshot_h200_2gpu_captured.json");
  auto line = [](const std::string& host, const std::string& gpus, double forward, double back) {
    return fmt::format(R"({{"testcase":"ce_write","unit":"GB/s","host":"{}","gpus":"{}","cells":[)"
                       R"({{"label":"GPU0->GPU1","src":0,"dst":1,"bytes":536870912,"median":{},"samples":5}},)"
                       R"({{"label":"GPU1->GPU0","src":1,"dst":0,"bytes":536870912,"median":{},"samples":5}}]}})"
                       "\n",
                       host, gpus, forward, back);
  };
  const std::string mine = benchGpusLabel(s);
  ASSERT_EQ(mine, "2x NVIDIA H200");
  auto rendered = [&](const std::string& text) {
    ReportResults r;
    EXPECT_TRUE(readReportResults(text, "bench.jsonl", r).isOk());
    return render(s, &r);
  };
  const std::string healthy = rendered(line(s.hostname, mine, 396.2, 393.9));
  EXPECT_NE(healthy.find("394 GB/s per direction (slowest pair)"), std::string::npos);
  EXPECT_EQ(healthy.find("no bandwidth measured"), std::string::npos);
  EXPECT_NE(healthy.find("taken from the ce_write results given"), std::string::npos);
  EXPECT_EQ(healthy.find("bandwidth-low"), std::string::npos);

  const std::string slow = rendered(line(s.hostname, mine, 396.2, 120.0));
  EXPECT_NE(slow.find("bandwidth-low"), std::string::npos);
  EXPECT_NE(slow.find("bandwidth-asymmetric"), std::string::npos);

  // Another host, or other GPUs: drawn as given, said to be another machine's, not diagnosed.
  for (const auto& [other, named] :
       {std::pair{line("another-host", mine, 120.0, 120.0), "another-host (" + mine + ")"},
        std::pair{line(s.hostname, "8x NVIDIA H100", 120.0, 120.0), s.hostname + " (8x NVIDIA H100)"}}) {
    const std::string html = rendered(other);
    EXPECT_NE(html.find("no bandwidth measured"), std::string::npos);
    EXPECT_EQ(html.find("bandwidth-low"), std::string::npos);
    EXPECT_NE(html.find(htmlEscape("Some figures below were measured on " + named + ", not on this snapshot")),
              std::string::npos)
        << named;
  }
  EXPECT_EQ(healthy.find("Some figures below were measured on"), std::string::npos);
}

// The largest machine a snapshot may hold, with no pair able to peer: every pair is named once in
// the P2P matrix, the drawing gives each GPU one stub, and the page stays a few megabytes.
TEST(HealthAtAGlance, LargestMachineWithoutP2pStaysBounded) {
  Snapshot s = loadFixture("snapshot_consumer_2gpu_no_p2p.json");
  const Gpu model = s.gpus[0];
  const PeerPair pair = s.pairs[0];
  s.gpus.clear();
  s.pairs.clear();
  for (int i = 0; i < 128; ++i) {
    Gpu g = model;
    g.index = i;
    g.pciBusId = fmt::format("0000:{:02x}:00.0", i);
    s.gpus.push_back(g);
    for (int j = 0; j < 128; ++j)
      if (j != i) {
        PeerPair p = pair;
        p.src = i, p.dst = j;
        s.pairs.push_back(p);
      }
  }
  ASSERT_EQ(p2pStatus(s, 3, 77).state, P2pStatus::State::kUnsupported);
  std::string html = render(s);
  // Past a few pairs, one stub per GPU rather than an arc per pair.
  EXPECT_EQ(count(html, "<g class=\"no-p2p state-no-p2p\" data-gpu="), 128u);
  EXPECT_EQ(count(html, "<g class=\"no-p2p state-no-p2p\" data-pair="), 0u);
  EXPECT_NE(html.find("<title>GPU3: no P2P to GPU0, GPU1, GPU2, GPU4, GPU5,"), std::string::npos);
  EXPECT_NE(html.find(">no P2P to 127 GPUs</text>"), std::string::npos);
  EXPECT_NE(html.find("8128 GPU pairs without P2P"), std::string::npos);  // the banner still counts pairs
  EXPECT_EQ(count(html, "<td class=\"p2p p2p-no state-no-p2p\""), 128u * 127);
  EXPECT_LT(html.size(), 20u << 20) << html.size();
}

}  // namespace
}  // namespace gpupeer
