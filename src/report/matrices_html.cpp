// The P2P status matrix and the measured matrices (bandwidth as % of the link's limit,
// latency against the fastest pair) as HTML tables coloured as heatmaps.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "gpupeer/bench.hpp"
#include "gpupeer/topology.hpp"
#include "report/report_sections.hpp"
#include "report/svg_chart.hpp"

namespace gpupeer::report {
namespace {

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

std::string matrixHtml(const Snapshot& s, const BenchResult& r) {
  const bool latency = r.kind == BenchKind::kLatency;
  const std::string unit = latency ? "us" : "GB/s";
  std::map<std::pair<int, int>, const BenchCell*> grid;
  std::vector<const BenchCell*> others;  // totals, loop/batch variants: listed below the grid
  std::set<int> rows, cols;
  for (const BenchCell& c : r.cells) {
    // -1 is the host in h2d/d2h cells but "all GPUs" in the fan-in/fan-out totals: the label
    // tells them apart.
    const bool hostRow = c.label.rfind("host", 0) == 0;
    const bool hostCol = c.label.size() >= 4 && c.label.compare(c.label.size() - 4, 4, "host") == 0;
    bool placeable = (c.row >= 0 || hostRow) && (c.col >= 0 || hostCol) && c.row != c.col;
    if (!placeable || grid.count({c.row, c.col})) {
      others.push_back(&c);
      continue;
    }
    grid[{c.row, c.col}] = &c;
    rows.insert(c.row), cols.insert(c.col);
  }
  double fastest = 0;
  for (const auto& [key, c] : grid)
    if (c->value.samples > 0 && c->value.median > 0)
      fastest = fastest == 0 ? c->value.median : std::min(fastest, c->value.median);
  std::string html;
  if (!grid.empty()) html += "<table class=\"matrix heatmap\"><tr><th>src \\ dst</th>";
  for (int c : cols) html += fmt::format("<th>{}</th>", endpointName(c));
  if (!grid.empty()) html += "</tr>\n";
  for (int row : rows) {
    html += fmt::format("<tr><th>{}</th>", endpointName(row));
    for (int col : cols) {
      auto it = grid.find({row, col});
      if (row == col) {
        html += "<td class=\"diag\">-</td>";
      } else if (it == grid.end()) {
        html += "<td class=\"empty\"></td>";
      } else if (it->second->value.samples == 0) {
        html +=
            fmt::format("<td class=\"bench-cell na\" title=\"{}\">{}</td>", htmlEscape(cellTitle(*it->second, unit)),
                        htmlEscape(it->second->note.empty() ? "n/a" : it->second->note.substr(0, 12)));
      } else {
        const BenchCell& c = *it->second;
        double share = 0;
        std::string sub;
        if (latency) {
          share = fastest > 0 ? fastest / c.value.median : 0;
        } else {
          double limit = c.theoreticalGBps;
          if (limit <= 0 && row >= 0 && col >= 0) limit = theoreticalLinkLimit(s, row, col).gbps;
          share = limit > 0 ? c.value.median / limit : 0;
          if (limit > 0) sub = fmt::format("<small>{:.0f}%</small>", 100 * share);
        }
        html +=
            fmt::format("<td class=\"bench-cell\" style=\"background:{}\" title=\"{}\">{:.1f}{}</td>",
                        share > 0 ? heatColour(share) : "#f4f4f4", htmlEscape(cellTitle(c, unit)), c.value.median, sub);
      }
    }
    html += "</tr>\n";
  }
  if (!grid.empty()) html += "</table>\n";
  if (!others.empty()) {
    html += "<ul class=\"other-cells\">";
    for (const BenchCell* c : others)
      html += fmt::format("<li>{}: {:.2f} {}{}</li>", htmlEscape(c->label), c->value.median, unit,
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

std::string p2pMatrixHtml(const Snapshot& s) {
  std::string html = "<table class=\"matrix p2p-matrix\"><tr><th>src \\ dst</th>";
  for (const Gpu& g : s.gpus) html += fmt::format("<th>GPU{}</th>", g.index);
  html += "</tr>\n";
  std::map<std::string, std::string> reasons;  // code -> meaning, for the legend
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
      std::string title = fmt::format("GPU{} -> GPU{}: {} over {}", a.index, b.index, code, topo);
      if (!st.reason.empty()) title += "\n" + st.reason;
      html += fmt::format("<td class=\"p2p {}\" title=\"{}\">{}<small>{}</small></td>", cls, htmlEscape(title),
                          htmlEscape(code), htmlEscape(topo));
      if (st.state != P2pStatus::State::kOk) reasons[fmt::format("GPU{} -> GPU{}", a.index, b.index)] = st.reason;
    }
    html += "</tr>\n";
  }
  html += "</table>\n";
  if (!reasons.empty()) {
    html += "<p>Pairs without P2P, and why:</p><ul class=\"p2p-reasons\">";
    for (const auto& [pair, reason] : reasons)
      html += fmt::format("<li><b>{}</b>: {}</li>", pair, htmlEscape(reason.empty() ? "no reason recorded" : reason));
    html += "</ul>\n";
  }
  return html;
}

std::string benchSectionHtml(const Snapshot& s, const ReportResults& results) {
  if (results.bench.empty())
    return "<p class=\"none\">No bandwidth or latency results given. Measure with <code>gpupeer bench --json "
           "&gt; bench.jsonl</code> and pass <code>--results bench.jsonl</code>.</p>\n";
  std::string html;
  for (const BenchResult& r : results.bench) {
    const BenchTestcase* known = findBenchTestcase(r.key);
    const std::string& what = !r.description.empty() ? r.description : known ? known->description : r.description;
    html += fmt::format("<h3>{}</h3><p class=\"what\">{}</p>\n", htmlEscape(r.key), htmlEscape(what));
    if (!r.waived.empty()) html += fmt::format("<p class=\"waived\">Waived: {}</p>\n", htmlEscape(r.waived));
    if (!r.error.empty()) html += fmt::format("<p class=\"error\">Failed: {}</p>\n", htmlEscape(r.error));
    if (r.cells.empty()) continue;
    if (isSweep(r)) {
      ChartSpec spec{fmt::format("{} {}->{}", r.key, endpointName(r.cells[0].row), endpointName(r.cells[0].col)),
                     r.kind == BenchKind::kLatency ? "latency (us)" : "bandwidth (GB/s)",
                     r.kind == BenchKind::kLatency,
                     {}};
      ChartSeries measured{r.key, {}, false}, limit{"link limit", {}, true};
      for (const BenchCell& c : r.cells) {
        measured.points.push_back({static_cast<double>(c.bytes), c.value.median});
        if (c.theoreticalGBps > 0) limit.points.push_back({static_cast<double>(c.bytes), c.theoreticalGBps});
      }
      spec.series.push_back(measured);
      if (!limit.points.empty()) spec.series.push_back(limit);
      html += renderLineChart(spec);
    } else {
      html += matrixHtml(s, r);
    }
  }
  return html;
}

}  // namespace gpupeer::report
