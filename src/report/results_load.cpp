// Reads the files `gpupeer report --results` takes: `gpupeer coll --json` documents, `gpupeer
// bench --json` lines and results-format lines, told apart by their fields.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "core/bounded_input.hpp"
#include "gpupeer/report.hpp"

namespace gpupeer {
namespace {

using nlohmann::json;

std::string str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}
double num(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

BenchResult benchFromJson(const json& j) {
  BenchResult r;
  r.key = str(j, "testcase");
  const BenchTestcase* known = findBenchTestcase(r.key);
  r.description = known ? known->description : "";
  r.kind = str(j, "unit") == "us" ? BenchKind::kLatency : BenchKind::kBandwidth;
  r.waived = str(j, "waived");
  r.error = str(j, "error");
  for (const json& cj : j.value("cells", json::array())) {
    if (!cj.is_object()) continue;
    BenchCell c;
    c.row = static_cast<int>(num(cj, "src"));
    c.col = static_cast<int>(num(cj, "dst"));
    c.label = str(cj, "label");
    c.bytes = static_cast<std::size_t>(num(cj, "bytes"));
    c.value.median = num(cj, "median");
    c.value.min = num(cj, "min");
    c.value.max = num(cj, "max");
    c.value.samples = static_cast<int>(num(cj, "samples"));
    c.verified = cj.value("verified", false);
    c.note = str(cj, "note");
    // The line keeps the share of the limit, not the limit; the limit is what it came from.
    double percent = num(cj, "percentOfLink");
    if (percent > 0) c.theoreticalGBps = 100 * c.value.median / percent;
    r.cells.push_back(std::move(c));
  }
  return r;
}

CollectiveTable collectiveFromJson(const json& j, const std::string& source) {
  CollectiveTable t;
  t.op = str(j, "op");
  t.mode = str(j, "mode");
  t.gpuName = str(j, "gpu_name");
  t.gpus = static_cast<int>(num(j, "gpus"));
  t.source = source;
  for (const json& rj : j.value("rows", json::array())) {
    if (!rj.is_object()) continue;
    CollectiveRow row;
    row.bytes = num(rj, "bytes");
    row.algorithm = str(rj, "algo");
    row.us = num(rj, "us");
    row.busbw = num(rj, "busbw");
    row.failed = rj.contains("error") || !rj.contains("us");
    const json baselines = rj.value("baselines", json::object());  // items() must not outlive it
    for (const auto& [name, bj] : baselines.items())
      if (bj.is_object() && bj.contains("us")) row.baselines[name] = {num(bj, "us"), num(bj, "busbw")};
    t.rows.push_back(std::move(row));
  }
  return t;
}

ResultRecord recordFromJson(const json& j) {
  ResultRecord r;
  r.commit = str(j, "commit");
  r.date = str(j, "date");
  r.machine = str(j, "machine");
  r.gpuModel = str(j, "gpu_model");
  r.gpuCount = static_cast<int>(num(j, "gpu_count"));
  r.driver = str(j, "driver");
  r.command = str(j, "command");
  r.metric = str(j, "metric");
  r.value = num(j, "value");
  r.unit = str(j, "unit");
  r.baseline = str(j, "baseline");
  r.baselineValue = num(j, "baseline_value");
  r.bytes = num(j, "bytes");
  return r;
}

// Appends what one JSON value holds; false when it is none of the three forms.
bool take(const json& j, const std::string& source, ReportResults& into) {
  if (!j.is_object()) return false;
  if (j.contains("rows") && j.contains("op")) {
    into.collectives.push_back(collectiveFromJson(j, source));
    return true;
  }
  if (j.contains("testcase") && j.contains("cells")) {
    into.bench.push_back(benchFromJson(j));
    return true;
  }
  if (j.contains("metric") && j.contains("value")) {
    into.records.push_back(recordFromJson(j));
    return true;
  }
  return false;
}

}  // namespace

Status loadReportResults(const std::string& path, ReportResults& into) {
  Result<std::string> read = readFileBounded(path, kMaxResultsBytes, "results file");
  if (!read.isOk()) return read.status();
  const std::string& text = read.value();
  // A whole-file document first (`coll --json` is pretty-printed over many lines).
  json whole = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!whole.is_discarded()) {
    if (take(whole, path, into)) return Status::ok();
    return GPUPEER_ERROR(
        ErrorCode::kParse,
        fmt::format("{}: JSON, but not a coll --json document, bench --json line or results record", path));
  }
  std::size_t used = 0, lineNumber = 0;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    ++lineNumber;
    std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] != '{') continue;  // logged commands, notes
    json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && take(j, path, into))
      ++used;
    else
      into.warnings.push_back(fmt::format("{}:{}: skipped a line that is not a result", path, lineNumber));
  }
  if (used == 0) return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("{}: no result found in it", path));
  return Status::ok();
}

}  // namespace gpupeer
