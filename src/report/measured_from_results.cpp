#include "report/measured_from_results.hpp"

#include "gpupeer/bench.hpp"

namespace gpupeer::report {

std::optional<Measurements> measuredFromResults(const Snapshot& s, const ReportResults& results) {
  Measurements m;
  const std::string gpus = benchGpusLabel(s);
  for (const BenchResult& r : results.bench) {
    if (r.key != "ce_write" || r.host.empty() || r.host != s.hostname || r.gpus != gpus) continue;
    for (const BenchCell& c : r.cells)
      if (c.row >= 0 && c.col >= 0 && c.row != c.col && c.value.samples > 0 && c.value.median > 0)
        m.copyEngineGBps[{c.row, c.col}] = c.value.median;
  }
  if (m.copyEngineGBps.empty()) return std::nullopt;
  m.notRun = {"P2P data check (needs the GPUs; run without --snapshot)",
              "bandwidth per pair: not measured here; taken from the ce_write results given (gpupeer bench)",
              "cross-process memory sharing (needs a GPU)"};
  return m;
}

}  // namespace gpupeer::report
