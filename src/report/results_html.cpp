// Collectives against their baselines (time and bus bandwidth by size) and the results-format
// records, as charts and a table.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "report/report_sections.hpp"
#include "report/svg_chart.hpp"

namespace gpupeer::report {
namespace {

// Bounds on the charts of results records, so that a file of many figures keeps the page small:
// the files in bench/results make at most 63 charts, of gpupeer and at most three baselines.
constexpr std::size_t kMaxRecordCharts = 128;
constexpr std::size_t kMaxSeriesPerChart = 6;

std::string collectiveHtml(const CollectiveTable& t) {
  std::string html =
      fmt::format("<h3>{} ({}, {} x {})</h3>\n", htmlEscape(t.op), htmlEscape(t.mode), t.gpus, htmlEscape(t.gpuName));
  std::set<std::string> names;
  for (const CollectiveRow& r : t.rows)
    for (const auto& [name, v] : r.baselines) names.insert(name);
  ChartSpec time{t.op + ": time", "time (us)", true, {}}, bw{t.op + ": bus bandwidth", "busbw (GB/s)", false, {}};
  ChartSeries ourTime{"gpupeer", {}, false}, ourBw{"gpupeer", {}, false};
  for (const CollectiveRow& r : t.rows)
    if (!r.failed) ourTime.points.push_back({r.bytes, r.us}), ourBw.points.push_back({r.bytes, r.busbw});
  time.series.push_back(ourTime), bw.series.push_back(ourBw);
  for (const std::string& name : names) {
    ChartSeries ts{name, {}, true}, bs{name, {}, true};
    for (const CollectiveRow& r : t.rows)
      if (auto it = r.baselines.find(name); it != r.baselines.end())
        ts.points.push_back({r.bytes, it->second.first}), bs.points.push_back({r.bytes, it->second.second});
    time.series.push_back(ts), bw.series.push_back(bs);
  }
  html += "<div class=\"charts\">" + renderLineChart(time) + renderLineChart(bw) + "</div>\n";
  // The figures themselves, for reading off and copying.
  html +=
      "<details><summary>Table</summary><table class=\"figures\"><tr><th>size</th><th>algorithm</th>"
      "<th>gpupeer us</th><th>busbw</th>";
  for (const std::string& name : names)
    html += fmt::format("<th>{0} us</th><th>{0} busbw</th><th>ratio</th>", htmlEscape(name));
  html += "</tr>\n";
  for (const CollectiveRow& r : t.rows) {
    html += fmt::format("<tr><td>{}</td><td>{}</td>", htmlEscape(formatBytes(static_cast<std::size_t>(r.bytes))),
                        htmlEscape(r.algorithm));
    html += r.failed ? "<td colspan=\"2\">failed</td>" : fmt::format("<td>{:.2f}</td><td>{:.2f}</td>", r.us, r.busbw);
    for (const std::string& name : names) {
      auto it = r.baselines.find(name);
      if (it == r.baselines.end()) {
        html += "<td colspan=\"3\">-</td>";
        continue;
      }
      double ratio = !r.failed && r.us > 0 ? it->second.first / r.us : 0;
      html += fmt::format("<td>{:.2f}</td><td>{:.2f}</td><td>{}</td>", it->second.first, it->second.second,
                          ratio > 0 ? fmt::format("{:.2f}x", ratio) : "-");
    }
    html += "</tr>\n";
  }
  html += "</table></details>\n";
  return html;
}

bool lowerIsBetter(const std::string& unit) { return unit == "us" || unit == "ms" || unit == "s"; }

// One chart per figure measured on one machine (machine, GPUs, metric, unit) over two sizes or
// more: gpupeer's series and each baseline's, a point per size; where a size was measured more
// than once (repeated runs, or one record per baseline), the point is the median of the values.
std::string recordChartsHtml(const std::vector<ResultRecord>& records) {
  using ChartKey = std::tuple<std::string, int, std::string, std::string>;
  // chart -> series name -> size -> values; charts and series in the order first seen.
  std::vector<ChartKey> order;
  std::map<ChartKey, std::vector<std::pair<std::string, std::map<double, std::vector<double>>>>> charts;
  std::size_t leftOut = 0;
  for (const ResultRecord& r : records) {
    if (r.bytes <= 0) continue;
    ChartKey key{r.machine, r.gpuCount, r.metric, r.unit};
    auto chart = charts.find(key);
    if (chart == charts.end()) {
      order.push_back(key);
      chart = charts.emplace(key, decltype(charts)::mapped_type{}).first;
    }
    auto add = [&](const std::string& series, double value) {
      auto& all = chart->second;
      auto it = std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.first == series; });
      if (it == all.end()) {
        if (all.size() >= kMaxSeriesPerChart) return;
        it = all.insert(all.end(), {series, {}});
      }
      it->second[r.bytes].push_back(value);
    };
    add("gpupeer", r.value);
    if (!r.baseline.empty()) add(r.baseline, r.baselineValue);
  }
  std::string html;
  std::size_t drawn = 0;
  for (const ChartKey& key : order) {
    // A figure of one size (its size in its name) is a line of the table, not a chart.
    const auto& all = charts[key];
    if (std::none_of(all.begin(), all.end(), [](const auto& s) { return s.second.size() >= 2; })) continue;
    if (drawn++ >= kMaxRecordCharts) {
      ++leftOut;
      continue;
    }
    const auto& [machine, gpus, metric, unit] = key;
    std::string title = metric;
    if (!machine.empty()) title += fmt::format(" ({}, {} GPU{})", machine, gpus, gpus == 1 ? "" : "s");
    ChartSpec spec{title, unit, lowerIsBetter(unit), {}};
    for (const auto& [name, bySize] : charts[key]) {
      ChartSeries series{name, {}, name != "gpupeer"};
      for (auto [bytes, values] : bySize) {
        std::sort(values.begin(), values.end());
        const std::size_t n = values.size();
        series.points.push_back({bytes, n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2});
      }
      spec.series.push_back(std::move(series));
    }
    html += renderLineChart(spec);
  }
  if (!html.empty()) html = "<div class=\"charts\">" + html + "</div>\n";
  if (leftOut > 0)
    html +=
        fmt::format("<p class=\"none\">{} more figures left out of the charts (at most {}); the table has them.</p>\n",
                    leftOut, kMaxRecordCharts);
  return html;
}

// Every record, for reading off and copying; folded, since a run's file holds hundreds.
std::string recordsTableHtml(const std::vector<ResultRecord>& records) {
  std::string html = fmt::format(
      "<details><summary>All {} records</summary><table class=\"records\"><tr><th>date</th><th>machine</th>"
      "<th>GPUs</th><th>metric</th><th>size</th><th>value</th><th>baseline</th><th>ratio</th><th>commit</th></tr>\n",
      records.size());
  for (const ResultRecord& r : records) {
    std::string baseline = r.baseline.empty() ? "-" : fmt::format("{} {:.3g}", htmlEscape(r.baseline), r.baselineValue);
    // A ratio above 1 means gpupeer did better: time divides the other way round from rate.
    double ratio = 0;
    if (!r.baseline.empty() && r.value > 0 && r.baselineValue > 0)
      ratio = lowerIsBetter(r.unit) ? r.baselineValue / r.value : r.value / r.baselineValue;
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{} x {}</td><td>{}</td><td>{}</td><td>{:.3g} {}</td><td>{}</td><td>{}</td>"
        "<td><code>{}</code></td></tr>\n",
        htmlEscape(r.date), htmlEscape(r.machine), r.gpuCount, htmlEscape(r.gpuModel), htmlEscape(r.metric),
        r.bytes > 0 ? htmlEscape(formatBytes(static_cast<std::size_t>(r.bytes))) : "", r.value, htmlEscape(r.unit),
        baseline, ratio > 0 ? fmt::format("{:.2f}x", ratio) : "-", htmlEscape(r.commit.substr(0, 10)));
  }
  return html + "</table></details>\n";
}

}  // namespace

std::string collectivesSectionHtml(const ReportResults& results) {
  if (results.collectives.empty() && results.records.empty())
    return "<p class=\"none\">No collective results given. Measure with <code>gpupeer coll all_reduce --baseline "
           "nccl --json ar.json</code> and pass <code>--results ar.json</code>.</p>\n";
  std::string html;
  for (const CollectiveTable& t : results.collectives) html += collectiveHtml(t);
  if (!results.records.empty())
    html += "<h3>Results records</h3>\n" + recordChartsHtml(results.records) + recordsTableHtml(results.records);
  return html;
}

}  // namespace gpupeer::report
