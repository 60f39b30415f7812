// Collectives against their baselines (time and bus bandwidth by size) and the results-format
// records, as charts and a table.
#include <fmt/format.h>

#include <map>
#include <set>

#include "report/report_sections.hpp"
#include "report/svg_chart.hpp"

namespace gpupeer::report {
namespace {

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

std::string recordsHtml(const std::vector<ResultRecord>& records) {
  std::string html =
      "<table class=\"records\"><tr><th>date</th><th>machine</th><th>GPUs</th><th>metric</th><th>size</th>"
      "<th>value</th><th>baseline</th><th>ratio</th><th>commit</th></tr>\n";
  // Records with sizes also become charts: one per metric and unit, value against baseline.
  std::map<std::pair<std::string, std::string>, std::pair<ChartSeries, ChartSeries>> charts;
  for (const ResultRecord& r : records) {
    std::string baseline = r.baseline.empty() ? "-" : fmt::format("{} {:.3g}", htmlEscape(r.baseline), r.baselineValue);
    // A ratio above 1 means gpupeer did better: time divides the other way round from rate.
    bool lowerIsBetter = r.unit == "us" || r.unit == "ms" || r.unit == "s";
    double ratio = 0;
    if (!r.baseline.empty() && r.value > 0 && r.baselineValue > 0)
      ratio = lowerIsBetter ? r.baselineValue / r.value : r.value / r.baselineValue;
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{} x {}</td><td>{}</td><td>{}</td><td>{:.3g} {}</td><td>{}</td><td>{}</td>"
        "<td><code>{}</code></td></tr>\n",
        htmlEscape(r.date), htmlEscape(r.machine), r.gpuCount, htmlEscape(r.gpuModel), htmlEscape(r.metric),
        r.bytes > 0 ? htmlEscape(formatBytes(static_cast<std::size_t>(r.bytes))) : "", r.value, htmlEscape(r.unit),
        baseline, ratio > 0 ? fmt::format("{:.2f}x", ratio) : "-", htmlEscape(r.commit.substr(0, 10)));
    if (r.bytes > 0) {
      auto& [ours, theirs] = charts[{r.metric, r.unit}];
      ours.name = "gpupeer";
      ours.points.push_back({r.bytes, r.value});
      if (!r.baseline.empty()) {
        theirs.name = r.baseline, theirs.dashed = true;
        theirs.points.push_back({r.bytes, r.baselineValue});
      }
    }
  }
  html += "</table>\n";
  for (auto& [key, pair] : charts) {
    const auto& [metric, unit] = key;
    bool lowerIsBetter = unit == "us" || unit == "ms" || unit == "s";
    ChartSpec spec{metric, unit, lowerIsBetter, {pair.first}};
    if (!pair.second.points.empty()) spec.series.push_back(pair.second);
    html += renderLineChart(spec);
  }
  return html;
}

}  // namespace

std::string collectivesSectionHtml(const ReportResults& results) {
  if (results.collectives.empty() && results.records.empty())
    return "<p class=\"none\">No collective results given. Measure with <code>gpupeer coll all_reduce --baseline "
           "nccl --json ar.json</code> and pass <code>--results ar.json</code>.</p>\n";
  std::string html;
  for (const CollectiveTable& t : results.collectives) html += collectiveHtml(t);
  if (!results.records.empty()) html += "<h3>Results records</h3>\n" + recordsHtml(results.records);
  return html;
}

}  // namespace gpupeer::report
