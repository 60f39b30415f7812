// gpupeer snapshot: capture the machine's multi-GPU state as versioned JSON.
#include <fmt/format.h>

#include "cli_common.hpp"
#include "core/output_file.hpp"
#include "snapshot/snapshot_summary.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::string output;
  std::string snapshotFile;
  bool json = false;
};

int run(const Options& o) {
  Result<Snapshot> snap = obtainSnapshot(o.snapshotFile, "snapshot");
  if (!snap.isOk()) return reportError(snap.status());
  if (!o.output.empty()) {
    Status written = writeOutputFile(o.output, snapshotToJson(snap.value()));
    if (!written.isOk()) return reportError(written);
    printTerminal(fmt::format("snapshot written to {}\n", o.output));
    return kExitOk;
  }
  if (o.json)
    fmt::print("{}", snapshotToJson(snap.value()));
  else
    printTerminal(renderSnapshotSummary(snap.value()));  // the snapshot's strings may come from anyone
  return kExitOk;
}

CommandRegistrar registrar("snapshot", 10, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("snapshot", "Capture the machine's multi-GPU state (JSON with --json or -o)");
  sub->add_flag("--json", opts->json, "print the snapshot as JSON");
  sub->add_option("-o,--output", opts->output, "write the JSON snapshot to this file")->check(nonEmptyFileName());
  addSnapshotOption(sub, opts->snapshotFile);
  sub->footer(helpFooter({"gpupeer snapshot", "gpupeer snapshot -o machine.json"},
                         "0 ok, 2 bad input, 4 error (also a file that cannot be written)"));
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
