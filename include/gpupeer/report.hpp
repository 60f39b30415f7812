#pragma once
/// \file report.hpp
/// `gpupeer report`: one self-contained HTML page (inline CSS, SVG and a few lines of script;
/// nothing fetched when it is opened) that shows a machine's topology as a drawing, the P2P
/// status of every pair, measured bandwidth and latency as heatmaps against the link's limit,
/// collectives against their NCCL baseline, and the doctor's findings with their KB entries.
/// Every function here is pure or touches only the files it names; all may be called from any
/// thread (the KB, when given, must outlive the call).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpupeer/bench.hpp"
#include "gpupeer/doctor.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "gpupeer/snapshot.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// One measurement in the results format shared by the scripts (one JSON object a line):
/// what ran, where, the figure, and the baseline measured in the same run.
struct ResultRecord {
  std::string commit, date, machine;      ///< where and when: git commit, ISO date, machine name
  std::string gpuModel, driver, command;  ///< GPU model, driver version, the command that ran
  int gpuCount = 0;                       ///< GPUs the command used
  std::string metric;                     ///< "all_reduce.busbw", "ce_write.GPU0->GPU1", ...
  double value = 0;                       ///< the figure, in `unit`
  std::string unit;                       ///< "GB/s", "us", ...
  std::string baseline;                   ///< what it is compared with ("nccl"); "" when nothing
  double baselineValue = 0;               ///< the baseline's figure in the same unit; valid when `baseline` is set
  double bytes = 0;                       ///< message size when the record has one ("bytes" field), else 0
};

/// One size of a collective table (`gpupeer coll --json`): gpupeer's time and bus bandwidth and
/// each baseline's, keyed by the baseline's name ("nccl", "nccl_symmetric").
struct CollectiveRow {
  double bytes = 0;          ///< the size column
  std::string algorithm;     ///< the table's choice ("oneshot", "ring", ...); "" when not given
  double us = 0, busbw = 0;  ///< gpupeer's time and bus bandwidth (GB/s)
  bool failed = false;       ///< gpupeer's run failed at this size
  std::map<std::string, std::pair<double, double>> baselines;  ///< name -> (us, busbw)
};

/// A whole `gpupeer coll --json` document.
struct CollectiveTable {
  std::string op;                   ///< "all_reduce", ...
  std::string mode;                 ///< "eager" or "graph"
  std::string gpuName, source;      ///< source: the file it came from
  int gpus = 0;                     ///< ranks
  std::vector<CollectiveRow> rows;  ///< one per size, in file order
};

/// Everything read from the `--results` files, in file order.
struct ReportResults {
  std::vector<BenchResult> bench;            ///< `gpupeer bench --json` lines (matrices and sweeps)
  std::vector<CollectiveTable> collectives;  ///< `gpupeer coll --json` documents
  std::vector<ResultRecord> records;         ///< results-format lines
  std::vector<std::string> warnings;         ///< lines or files that were skipped, and why
};

/// Reads one results file: a `gpupeer coll --json` document, or lines each of which is a
/// `gpupeer bench --json` object or a results record (other lines, such as a logged "$ command",
/// are skipped; a line that looks like JSON but is neither is a warning). Appends to `into`.
/// An error when the file cannot be read or holds nothing usable.
Status loadReportResults(const std::string& path, ReportResults& into);
/// loadReportResults on text already read, named `path` in its messages.
Status readReportResults(std::string_view text, const std::string& path, ReportResults& into);

/// What the page is made from. Borrowed: the pointers must outlive renderHtmlReport().
struct ReportInput {
  const Snapshot* snapshot = nullptr;      ///< required
  const DoctorReport* doctor = nullptr;    ///< null: diagnose(*snapshot, nullptr) is run
  const KnowledgeBase* kb = nullptr;       ///< explains findings; null: builtinKnowledgeBase()
  const ReportResults* results = nullptr;  ///< null or empty: those sections say none was given
  std::string title;                       ///< "" gives "gpupeer report: <hostname>"
  std::string generatedBy;                 ///< footer line, e.g. "gpupeer 0.1.0 report --snapshot x.json"
};

/// The whole page. Every string taken from the snapshot, the results or the KB is escaped, so
/// a hostile file cannot inject markup or script. Deterministic for a given input.
std::string renderHtmlReport(const ReportInput& input);

/// Text safe inside HTML element content and quoted attribute values (& < > " ' escaped).
std::string htmlEscape(std::string_view text);

}  // namespace gpupeer
