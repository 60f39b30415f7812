// gpupeer doctor: the main job. Snapshot, P2P data check, a short bandwidth per pair, and every
// rule; a verdict line first, then findings with the KB entry that explains each.
#include <fmt/format.h>

#include <chrono>
#include <iterator>
#include <nlohmann/json.hpp>

#include "cli_common.hpp"
#include "doctor_kb.hpp"
#include "gpupeer/bench.hpp"
#include "gpupeer/doctor.hpp"
#include "gpupeer/peer_check.hpp"

namespace gpupeer::cli {
namespace {

struct Options {
  std::string snapshotFile;
  bool json = false;
  bool noGpuActions = false;
};

// Exit codes by worst severity: errors 1, warnings only 5 (so scripts can tell them apart).
constexpr int kExitWarnings = 5;

Measurements measure(const Snapshot& s) {
  Measurements m;
  if (s.gpus.size() < 2) {
    m.notRun.push_back("P2P data check and bandwidth: fewer than two GPUs");
    return m;
  }
  CheckOptions check;
  check.largeBytes = 8u << 20;  // enough to cross every code path; keeps 56 pairs under 30 s
  Result<CheckReport> report = runPeerCheck(s, check);
  if (report.isOk())
    m.check = report.value();
  else
    m.notRun.push_back("P2P data check: " + report.status().toString());
  const BenchTestcase* ce = findBenchTestcase("ce_write");
  BenchOptions bench;
  bench.bytes = 64u << 20;  // past the L2 of current GPUs, short enough for a quick look
  bench.samples = 3;
  bench.copiesPerSample = 4;
  BenchResult r = ce->run(s, bench);
  for (const BenchCell& c : r.cells)
    if (c.value.samples > 0 && c.row >= 0 && c.col >= 0)
      m.copyEngineGBps[{c.row, c.col}] = c.value.median;
    else if (c.note.rfind("FAIL", 0) == 0)
      m.notRun.push_back("bandwidth " + c.label + ": " + c.note);
  return m;
}

// Every line of `text` at one indentation, whatever indentation it came with.
std::string indent(const std::string& text, const std::string& pad) {
  std::string out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    line.erase(0, line.find_first_not_of(' ') == std::string::npos ? line.size() : line.find_first_not_of(' '));
    if (!out.empty()) out += '\n';
    out += pad + line;
    start = end + 1;
  }
  return out;
}

void printText(const Snapshot& s, const DoctorReport& r, const Measurements* m, double seconds) {
  std::string text;
  auto out = std::back_inserter(text);
  fmt::format_to(out, "gpupeer doctor: {}\n", r.verdict);
  if (!r.findings.empty()) fmt::format_to(out, "\nFindings ({}):\n", r.findings.size());
  for (const Finding& f : r.findings) {
    fmt::format_to(out, "  [{}] {}  ({})\n", severityName(f.severity), f.title, f.rule);
    if (!f.evidence.empty()) fmt::format_to(out, "{}\n", indent(f.evidence, "      "));
    KbAdvice advice = kbAdviceFor(f.kbId);
    if (!f.kbId.empty())
      fmt::format_to(out, "      explained by KB {}{}\n", f.kbId, advice.found ? "" : " (entry not loaded)");
    if (!advice.firstWorkaround.empty())
      fmt::format_to(out, "      first thing to try:\n{}\n", indent(advice.firstWorkaround, "        "));
  }
  fmt::format_to(out, "\nWhat was checked: {} rules over the snapshot of {} ({} GPU(s))", doctorRules().size(),
                 s.hostname.empty() ? "this machine" : s.hostname, s.gpus.size());
  if (m && m->check)
    fmt::format_to(out, "; P2P data check: {} passed, {} failed, {} skipped", m->check->count(CheckOutcome::kPass),
                   m->check->count(CheckOutcome::kFail), m->check->count(CheckOutcome::kSkip));
  if (m && !m->copyEngineGBps.empty()) {
    fmt::format_to(out, "; copy-engine bandwidth:");
    for (const auto& [p, gbps] : m->copyEngineGBps)
      fmt::format_to(out, " GPU{}->GPU{} {:.0f} GB/s", p.first, p.second, gbps);
  }
  fmt::format_to(out, " ({:.1f} s)\n", seconds);
  for (const std::string& n : r.notRun) fmt::format_to(out, "Not run: {}\n", n);
  printTerminal(text);
}

void printJson(const DoctorReport& r, const Measurements* m) {
  nlohmann::ordered_json j;
  j["verdict"] = r.verdict;
  j["worst"] = r.findings.empty() ? "none" : severityName(r.worst());
  j["findings"] = nlohmann::ordered_json::array();
  for (const Finding& f : r.findings) {
    KbAdvice advice = kbAdviceFor(f.kbId);
    j["findings"].push_back({{"rule", f.rule},
                             {"severity", severityName(f.severity)},
                             {"title", f.title},
                             {"evidence", f.evidence},
                             {"kbId", f.kbId},
                             {"firstWorkaround", advice.firstWorkaround}});
  }
  j["notRun"] = r.notRun;
  if (m) {
    j["copyEngineGBps"] = nlohmann::ordered_json::array();
    for (const auto& [p, gbps] : m->copyEngineGBps)
      j["copyEngineGBps"].push_back({{"src", p.first}, {"dst", p.second}, {"gbps", gbps}});
    if (m->check) j["check"] = nlohmann::ordered_json::parse(checkReportToJson(*m->check));
  }
  fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

int run(const Options& o) {
  auto start = std::chrono::steady_clock::now();
  Result<Snapshot> snap = obtainSnapshot(o.snapshotFile);
  if (!snap.isOk()) return reportError(snap.status());
  const Snapshot& s = snap.value();
  bool offline = !o.snapshotFile.empty() || o.noGpuActions;
  Measurements measured;
  if (!offline) measured = measure(s);
  DoctorReport report = diagnose(s, offline ? nullptr : &measured);
  if (o.noGpuActions && o.snapshotFile.empty()) report.notRun = {"GPU actions (--no-gpu-actions)"};
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (o.json)
    printJson(report, offline ? nullptr : &measured);
  else
    printText(s, report, offline ? nullptr : &measured, seconds);
  if (s.gpus.empty()) return kExitNotApplicable;
  if (report.findings.empty()) return kExitOk;
  switch (report.worst()) {
    case Severity::kError: return kExitFailed;
    case Severity::kWarning: return kExitWarnings;
    case Severity::kInfo: return kExitOk;
  }
  return kExitOk;
}

CommandRegistrar registrar("doctor", 5, [](CLI::App& app, int& exitCode) {
  auto opts = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "doctor",
      "Run every check and say what is wrong with P2P here and what to do (exit 0 healthy, 1 errors, "
      "5 warnings, 3 no GPU)");
  sub->add_flag("--json", opts->json, "JSON output");
  sub->add_flag("--no-gpu-actions", opts->noGpuActions, "only the rules over the snapshot; no data check or bandwidth");
  addSnapshotOption(sub, opts->snapshotFile);
  sub->callback([opts, &exitCode] { exitCode = run(*opts); });
});

}  // namespace
}  // namespace gpupeer::cli
