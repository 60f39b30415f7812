// The P2P status matrix, and the measured results as one heatmap of testcase x pair per kind
// (bandwidth as % of the link's limit, latency against the fastest pair), sweeps as charts.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "gpupeer/bench.hpp"
#include "gpupeer/topology.hpp"
#include "report/link_states.hpp"
#include "report/report_sections.hpp"
#include "report/svg_chart.hpp"

namespace gpupeer::report {
namespace {

// Bounds on one heatmap, so that a results file of many testcases or pairs keeps the page small:
// far above what `gpupeer bench` writes (15 testcases; 56 GPU pairs and 32 host pairs on 8 GPUs).
constexpr std::size_t kMaxHeatmapColumns = 64;
constexpr std::size_t kMaxHeatmapRows = 512;

std::string endpointName(int index) { return index < 0 ? "host" : fmt::format("GPU{}", index); }

// A sweep: every cell is the same pair, one per size.
bool isSweep(const BenchResult& r) {
  if (r.cells.size() < 2) return false;
  return std::all_of(r.cells.begin(), r.cells.end(), [&](const BenchCell& c) {
    return c.row == r.cells[0].row && c.col == r.cells[0].col && c.bytes > 0;
  });
}

std::string cellTitle(const BenchCell& c, const std::string& unit) {
  std::string t = fmt::format("{}: median {:.2f} {} (min {:.2f}, max {:.2f}, {} samples)", c.label, c.value.median,
                              unit, c.value.min, c.value.max, c.value.samples);
  if (c.theoreticalGBps > 0) t += fmt::format("; link limit {:.1f} GB/s", c.theoreticalGBps);
  if (!c.note.empty()) t += "; " + c.note;
  return t;
}

// Row of a heatmap: one endpoint pair, or a total ("GPU0->all"), as the cell's label names it.
struct PairKey {
  int kind;  // 0: GPU to GPU, 1: to or from the host, 2: totals and the rest
  int row, col;
  std::string label;
  auto operator<=>(const PairKey&) const = default;
};

PairKey pairKeyOf(const BenchCell& c) {
  // -1 is the host in h2d/d2h cells but "all GPUs" in the fan-in/fan-out totals: the label
  // tells them apart.
  const bool host = c.label.find("host") != std::string::npos;
  const int kind = c.row >= 0 && c.col >= 0 && c.row != c.col ? 0 : host ? 1 : 2;
  std::string label = c.label.empty() ? fmt::format("{}->{}", endpointName(c.row), endpointName(c.col)) : c.label;
  return {kind, c.row, c.col, label};
}

// Testcase names break after their underscores, so that many columns fit.
std::string breakable(const std::string& key) {
  std::string out;
  for (char ch : key) {
    out += htmlEscape(std::string_view(&ch, 1));
    if (ch == '_') out += "<wbr>";
  }
  return out;
}

// One table for all testcases of a kind: a row per endpoint pair, a column per testcase, each cell
// coloured by its share of the link's limit (bandwidth) or of the column's fastest pair (latency).
std::string heatmapHtml(const Snapshot& s, const std::vector<const BenchResult*>& tests, bool latency) {
  const std::string unit = latency ? "us" : "GB/s";
  std::map<PairKey, std::map<std::size_t, const BenchCell*>> grid;  // pair -> column -> cell
  std::vector<double> fastest(tests.size(), 0);
  std::vector<std::pair<std::string, const BenchCell*>> others;  // a pair measured twice in one testcase
  std::size_t leftOutRows = 0;
  for (std::size_t t = 0; t < tests.size(); ++t)
    for (const BenchCell& c : tests[t]->cells) {
      PairKey key = pairKeyOf(c);
      auto row = grid.find(key);
      if (row == grid.end()) {
        if (grid.size() >= kMaxHeatmapRows) {
          ++leftOutRows;
          continue;
        }
        row = grid.emplace(key, std::map<std::size_t, const BenchCell*>{}).first;
      }
      if (!row->second.emplace(t, &c).second) {
        if (others.size() < kMaxHeatmapRows) others.push_back({tests[t]->key, &c});
        continue;
      }
      if (c.value.samples > 0 && c.value.median > 0)
        fastest[t] = fastest[t] == 0 ? c.value.median : std::min(fastest[t], c.value.median);
    }
  std::string html = fmt::format("<div class=\"scroll\"><table class=\"heatmap {}\"><tr><th>pair \\ testcase</th>",
                                 latency ? "latency" : "bandwidth");
  for (const BenchResult* r : tests) {
    const BenchTestcase* known = findBenchTestcase(r->key);
    const std::string& what = !r->description.empty() ? r->description : known ? known->description : r->description;
    html += fmt::format("<th class=\"testcase\" title=\"{}\">{}</th>", htmlEscape(what), breakable(r->key));
  }
  html += "</tr>\n";
  for (const auto& [key, cells] : grid) {
    html += fmt::format("<tr><th>{}</th>", htmlEscape(key.label));
    for (std::size_t t = 0; t < tests.size(); ++t) {
      auto it = cells.find(t);
      if (it == cells.end()) {
        html += "<td class=\"empty\"></td>";
        continue;
      }
      const BenchCell& c = *it->second;
      if (c.value.samples == 0) {
        html += fmt::format("<td class=\"bench-cell na\" title=\"{}\">{}</td>", htmlEscape(cellTitle(c, unit)),
                            htmlEscape(c.note.empty() ? "n/a" : c.note.substr(0, 12)));
        continue;
      }
      double share = 0;
      std::string sub;
      if (latency) {
        share = fastest[t] > 0 ? fastest[t] / c.value.median : 0;
      } else {
        double limit = c.theoreticalGBps;
        if (limit <= 0 && key.kind == 0) limit = theoreticalLinkLimit(s, c.row, c.col).gbps;
        share = limit > 0 ? c.value.median / limit : 0;
        if (limit > 0) sub = fmt::format("<small>{:.0f}%</small>", 100 * share);
      }
      html +=
          fmt::format("<td class=\"bench-cell\" style=\"background:{}\" title=\"{}\">{:.1f}{}</td>",
                      share > 0 ? heatColour(share) : "#f4f4f4", htmlEscape(cellTitle(c, unit)), c.value.median, sub);
    }
    html += "</tr>\n";
  }
  html += "</table></div>\n";
  if (leftOutRows > 0)
    html +=
        fmt::format("<p class=\"none\">{} more cells of other pairs left out: the table shows at most {} pairs.</p>\n",
                    leftOutRows, kMaxHeatmapRows);
  if (!others.empty()) {
    html += "<ul class=\"other-cells\">";
    for (const auto& [test, c] : others)
      html += fmt::format("<li>{} {}: {:.2f} {}{}</li>", htmlEscape(test), htmlEscape(c->label), c->value.median, unit,
                          c->note.empty() ? "" : " (" + htmlEscape(c->note) + ")");
    html += "</ul>\n";
  }
  return html;
}

}  // namespace

std::string heatColour(double share) {
  share = std::clamp(share, 0.0, 1.0);
  // Red below half the limit, through yellow, to green at the limit (healthy copy engines sit
  // at ~80%: light green).
  double hue = 120 * std::clamp((share - 0.4) / 0.6, 0.0, 1.0);
  return fmt::format("hsl({:.0f},70%,80%)", hue);
}

std::string p2pMatrixHtml(const Snapshot& s, const LinkStates& states) {
  std::string html = "<table class=\"matrix p2p-matrix\"><tr><th>src \\ dst</th>";
  for (const Gpu& g : s.gpus) html += fmt::format("<th>GPU{}</th>", g.index);
  html += "</tr>\n";
  // Each reason once, with every ordered pair it holds for; the pair's own ordinals in the
  // reason's first clause are written as src and dst so that both directions share it.
  std::vector<std::pair<std::string, std::vector<std::string>>> reasons;
  for (const Gpu& a : s.gpus) {
    html += fmt::format("<tr><th>GPU{}</th>", a.index);
    for (const Gpu& b : s.gpus) {
      std::string topo = topoCell(s, a.index, b.index);
      if (a.index == b.index) {
        html += "<td class=\"p2p diag\">X</td>";
        continue;
      }
      P2pStatus st = p2pStatus(s, a.index, b.index);
      const char* cls = st.state == P2pStatus::State::kOk            ? "p2p-ok"
                        : st.state == P2pStatus::State::kUnsupported ? "p2p-no"
                                                                     : "p2p-unknown";
      std::string code = st.code.empty() ? "?" : st.code;
      const std::string pair = fmt::format("GPU{} -> GPU{}", a.index, b.index);
      std::string title = fmt::format("{}: {} over {}", pair, code, topo);
      if (st.state != P2pStatus::State::kOk) title += "; why: below the table";
      html += fmt::format("<td class=\"p2p {} {}\" title=\"{}\">{}<small>{}</small></td>", cls,
                          linkStateClass(pairState(states, a.index, b.index)), htmlEscape(title), htmlEscape(code),
                          htmlEscape(topo));
      if (st.state == P2pStatus::State::kOk) continue;
      std::string reason = st.reason.empty() ? "no reason recorded" : st.reason;
      const std::string own = fmt::format("cudaDeviceCanAccessPeer({}, {})", a.index, b.index);
      if (reason.rfind(own, 0) == 0) reason = "cudaDeviceCanAccessPeer(src, dst)" + reason.substr(own.size());
      auto it = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.first == reason; });
      if (it == reasons.end()) it = reasons.insert(reasons.end(), {reason, {}});
      it->second.push_back(pair);
    }
    html += "</tr>\n";
  }
  html += "</table>\n";
  if (!reasons.empty()) {
    html += "<p>Pairs without P2P, and why:</p><ul class=\"p2p-reasons\">";
    for (const auto& [reason, pairs] : reasons)
      html += fmt::format("<li><b>{}</b>: <span class=\"p2p-reason\">{}</span></li>",
                          htmlEscape(fmt::format("{}", fmt::join(pairs, ", "))), htmlEscape(reason));
    html += "</ul>\n";
  }
  return html;
}

std::string benchSectionHtml(const Snapshot& s, const ReportResults& results) {
  if (results.bench.empty())
    return "<p class=\"none\">No bandwidth or latency results given. Measure with <code>gpupeer bench --json "
           "&gt; bench.jsonl</code> and pass <code>--results bench.jsonl</code>.</p>\n";
  std::vector<const BenchResult*> bandwidth, latency, sweeps, notMeasured;
  std::size_t leftOutColumns = 0;
  for (const BenchResult& r : results.bench) {
    if (!r.waived.empty() || !r.error.empty()) notMeasured.push_back(&r);
    if (r.cells.empty()) continue;
    if (isSweep(r)) {
      sweeps.push_back(&r);
      continue;
    }
    auto& into = r.kind == BenchKind::kLatency ? latency : bandwidth;
    if (into.size() >= kMaxHeatmapColumns) {
      ++leftOutColumns;
      continue;
    }
    into.push_back(&r);
  }
  std::string html;
  if (!bandwidth.empty())
    html +=
        "<h3>Bandwidth</h3><p class=\"what\">Median GB/s of each testcase (column) for each pair (row), and its "
        "share of the link's theoretical per-direction rate; hover a testcase for what it measures.</p>\n" +
        heatmapHtml(s, bandwidth, false);
  if (!latency.empty())
    html +=
        "<h3>Latency</h3><p class=\"what\">Median microseconds, coloured against the fastest pair of the "
        "testcase.</p>\n" +
        heatmapHtml(s, latency, true);
  if (leftOutColumns > 0)
    html += fmt::format("<p class=\"none\">{} more testcases left out: a table shows at most {}.</p>\n", leftOutColumns,
                        kMaxHeatmapColumns);
  if (!notMeasured.empty()) {
    html += "<p>Not measured:</p><ul class=\"not-measured\">";
    for (const BenchResult* r : notMeasured)
      html += fmt::format("<li><b>{}</b>: {}</li>", htmlEscape(r->key),
                          htmlEscape(!r->waived.empty() ? "waived: " + r->waived : "failed: " + r->error));
    html += "</ul>\n";
  }
  if (!sweeps.empty()) html += "<h3>Sweeps</h3>\n<div class=\"charts\">";
  for (const BenchResult* r : sweeps) {
    ChartSpec spec{fmt::format("{} {}->{}", r->key, endpointName(r->cells[0].row), endpointName(r->cells[0].col)),
                   r->kind == BenchKind::kLatency ? "latency (us)" : "bandwidth (GB/s)",
                   r->kind == BenchKind::kLatency,
                   {}};
    ChartSeries measured{r->key, {}, false}, limit{"link limit", {}, true};
    for (const BenchCell& c : r->cells) {
      measured.points.push_back({static_cast<double>(c.bytes), c.value.median});
      if (c.theoreticalGBps > 0) limit.points.push_back({static_cast<double>(c.bytes), c.theoreticalGBps});
    }
    spec.series.push_back(measured);
    if (!limit.points.empty()) spec.series.push_back(limit);
    html += renderLineChart(spec);
  }
  if (!sweeps.empty()) html += "</div>\n";
  return html;
}

}  // namespace gpupeer::report
