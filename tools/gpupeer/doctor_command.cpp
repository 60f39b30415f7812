// gpupeer doctor: the main job. Snapshot, P2P data check, a short bandwidth per pair, and every
// rule; a verdict line first, then findings with the KB entry that explains each.
#include <fmt/format.h>

#include <chrono>

#include "cli_common.hpp"
#include "gpupeer/doctor.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::string snapshotFile;
  bool json = false;
  bool noGpuActions = false;
};

int run(const Options& o) {
  auto start = std::chrono::steady_clock::now();
  Result<Snapshot> snap = obtainSnapshot(o.snapshotFile, "doctor");
  if (!snap.isOk()) return reportError(snap.status());
  const Snapshot& s = snap.value();
  bool offline = !o.snapshotFile.empty() || o.noGpuActions;
  Measurements measured;
  if (!offline) measured = measureForDoctor(s);
  DoctorReport report = diagnose(s, offline ? nullptr : &measured);
  if (o.noGpuActions && o.snapshotFile.empty()) report.notRun = {"GPU actions (--no-gpu-actions)"};
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.json)
    fmt::print("{}", doctorReportToJson(report, offline ? nullptr : &measured));
  else
    printTerminal(
        renderDoctorReport(s, report, offline ? nullptr : &measured, seconds));  // snapshot strings may hold escapes
  return doctorExitCode(s, report);
}

CommandRegistrar registrar("doctor", 5, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "doctor",
      "Run every check and say what is wrong with P2P here and what to do. Exit codes follow the worst "
      "finding: 1 when any finding is an error (with or without a GPU), else 3 when no GPU is visible, "
      "5 when warnings are the worst, 0 when healthy (info findings only)");
  sub->add_flag("--json", opts->json, "JSON output");
  sub->add_flag("--no-gpu-actions", opts->noGpuActions, "only the rules over the snapshot; no data check or bandwidth");
  addSnapshotOption(sub, opts->snapshotFile);
  sub->footer(helpFooter({"gpupeer doctor", "NCCL_P2P_DISABLE=1 gpupeer doctor --no-gpu-actions",
                          "gpupeer doctor --snapshot machine.json --json"},
                         "0 healthy or info findings only, 1 an error finding, 2 bad input, 3 no GPU, 4 error, "
                         "5 warnings are the worst"));
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
