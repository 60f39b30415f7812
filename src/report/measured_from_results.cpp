#include "report/measured_from_results.hpp"

#include <algorithm>

#include "gpupeer/bench.hpp"

namespace gpupeer::report {

namespace {

bool fromThisMachine(const Snapshot& s, const BenchResult& r, const std::string& gpus) {
  return !r.host.empty() && r.host == s.hostname && r.gpus == gpus;
}

}  // namespace

std::optional<Measurements> measuredFromResults(const Snapshot& s, const ReportResults& results) {
  Measurements m;
  const std::string gpus = benchGpusLabel(s);
  for (const BenchResult& r : results.bench) {
    if (r.key != "ce_write" || !fromThisMachine(s, r, gpus)) continue;
    for (const BenchCell& c : r.cells)
      if (c.row >= 0 && c.col >= 0 && c.row != c.col && c.value.samples > 0 && c.value.median > 0)
        m.copyEngineGBps[{c.row, c.col}] = c.value.median;
  }
  if (m.copyEngineGBps.empty()) return std::nullopt;
  m.notRun = {kNotRunDataCheck,
              "bandwidth per pair: not measured here; taken from the ce_write results given (gpupeer bench)",
              kNotRunIpcCheck};
  return m;
}

std::vector<std::string> otherBenchMachines(const Snapshot& s, const ReportResults& results) {
  const std::string gpus = benchGpusLabel(s);
  std::vector<std::string> others;
  for (const BenchResult& r : results.bench) {
    if (r.host.empty() || fromThisMachine(s, r, gpus)) continue;
    std::string name = r.host + (r.gpus.empty() ? "" : " (" + r.gpus + ")");
    if (std::find(others.begin(), others.end(), name) == others.end()) others.push_back(std::move(name));
  }
  return others;
}

}  // namespace gpupeer::report
