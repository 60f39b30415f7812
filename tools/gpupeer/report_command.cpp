// gpupeer report: one self-contained HTML page of the machine (or a snapshot) and any results
// files: topology drawing, P2P matrix, doctor's findings, bandwidth heatmaps, collectives.
#include <fmt/format.h>

#include "cli_common.hpp"
#include "core/output_file.hpp"
#include "gpupeer/report.hpp"
#include "gpupeer/version.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::string snapshotFile;
  std::vector<std::string> results;
  std::string output = "gpupeer-report.html";
  std::string title;
};

int run(const Options& o) {
  // Results first: a wrong file name is a usage error before the machine is touched.
  ReportResults results;
  for (const std::string& file : o.results)
    if (Status st = loadReportResults(file, results); !st.isOk()) return reportError(st);
  for (const std::string& w : results.warnings) fmt::print(stderr, "gpupeer report: {}\n", terminalSafe(w));
  Result<Snapshot> snap = obtainSnapshot(o.snapshotFile, "report");
  if (!snap.isOk()) return reportError(snap.status());
  ReportInput input;
  input.snapshot = &snap.value();
  input.results = &results;
  input.title = o.title;
  input.generatedBy = fmt::format("gpupeer {} report from {}", kVersion,
                                  o.snapshotFile.empty() ? std::string("the machine, probed") : o.snapshotFile);
  for (const std::string& file : o.results) input.generatedBy += ", " + file;
  if (Status st = writeOutputFile(o.output, renderHtmlReport(input)); !st.isOk()) return reportError(st);
  printTerminal(fmt::format(
      "report written to {} ({} GPU(s), {} bench result(s), {} collective table(s), {} record(s))\n", o.output,
      snap.value().gpus.size(), results.bench.size(), results.collectives.size(), results.records.size()));
  return kExitOk;
}

CommandRegistrar registrar("report", 60, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "report", "One self-contained HTML page: topology drawing, P2P matrix, findings, bandwidth and collectives");
  sub->add_option("-o,--output", opts->output, "the HTML file to write (default gpupeer-report.html)")
      ->check(nonEmptyFileName());
  sub->add_option("--results", opts->results,
                  "results files: 'gpupeer bench --json' lines, 'gpupeer coll -o' or '--json' files, results records")
      ->expected(1, -1);
  sub->add_option("--title", opts->title, "page title (default: gpupeer report: <host>)");
  addSnapshotOption(sub, opts->snapshotFile);
  sub->footer(helpFooter({"gpupeer report -o report.html",
                          "gpupeer report --snapshot machine.json --results coll.json bench.jsonl --title lab-7"},
                         "0 written, 2 bad input, 4 error (also a file that cannot be written)"));
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
