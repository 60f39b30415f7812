#pragma once
// What the report's diagnosis may take from the results it is given: the copy-engine write
// bandwidth of each pair (`gpupeer bench`'s ce_write, the doctor's own measurement), where the
// results name the snapshot's machine. Pure.

#include <optional>
#include <string>
#include <vector>

#include "gpupeer/doctor.hpp"
#include "gpupeer/report.hpp"
#include "gpupeer/snapshot.hpp"

namespace gpupeer::report {

/// Measurements from `results` for diagnose(): every ce_write cell between two GPUs of a result
/// whose host and GPUs are the snapshot's (the last such result wins a pair), with notRun saying
/// where the bandwidth came from and what was not checked. Nothing when no such cell exists,
/// so that results of another machine never speak for this one.
std::optional<Measurements> measuredFromResults(const Snapshot& s, const ReportResults& results);

/// The machines other than the snapshot's that bench results name ("gpu-b (8x NVIDIA H100)"),
/// each once, in order: the page shows their figures as given and says whose they are.
std::vector<std::string> otherBenchMachines(const Snapshot& s, const ReportResults& results);

}  // namespace gpupeer::report
