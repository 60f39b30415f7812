// The doctor's report as text and as JSON, shared by `gpupeer doctor` and the C API (Python's
// gpupeer.doctor() and `python -m gpupeer doctor`), so both print the same.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "gpupeer/doctor.hpp"
#include "gpupeer/knowledge_base.hpp"

namespace gpupeer {

KbAdvice kbAdviceFor(const std::string& kbId) {
  KbAdvice advice;
  if (kbId.empty()) return advice;
  const KbEntry* entry = builtinKnowledgeBase().find(kbId);
  if (!entry) return advice;
  advice.found = true;
  advice.firstWorkaround = firstWorkaround(*entry);
  return advice;
}

std::string firstThingToTry(const Finding& finding) {
  if (finding.severity == Severity::kInfo) return {};
  return finding.fix.empty() ? kbAdviceFor(finding.kbId).firstWorkaround : finding.fix;
}

namespace {

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

// "GPU0 (0000:18:00.0), GPU1 (0000:2a:00.0)": the ordinal and the bus id, as NCCL names them.
std::string gpuList(const std::vector<FindingGpu>& gpus) {
  std::string out;
  for (const FindingGpu& g : gpus) {
    out += fmt::format("{}GPU{}", out.empty() ? "" : ", ", g.index);
    if (!g.busId.empty()) out += fmt::format(" ({})", g.busId);
  }
  return out;
}

}  // namespace

std::string renderDoctorReport(const Snapshot& s, const DoctorReport& r, const Measurements* m, double seconds) {
  std::string out;
  out += fmt::format("gpupeer doctor: {}\n", r.verdict);
  if (!r.findings.empty()) out += fmt::format("\nFindings ({}):\n", r.findings.size());
  for (const Finding& f : r.findings) {
    out += fmt::format("  [{}] {}  ({})\n", severityName(f.severity), f.title, f.rule);
    if (!f.gpus.empty()) out += fmt::format("      GPUs: {}\n", gpuList(f.gpus));
    if (!f.evidence.empty()) out += fmt::format("{}\n", indent(f.evidence, "      "));
    KbAdvice advice = kbAdviceFor(f.kbId);
    if (!f.kbId.empty())
      out += fmt::format("      explained by KB {}{}\n", f.kbId, advice.found ? "" : " (entry not loaded)");
    std::string fix = firstThingToTry(f);
    if (!fix.empty()) out += fmt::format("      first thing to try:\n{}\n", indent(fix, "        "));
  }
  out += fmt::format("\nWhat was checked: {} rules over the snapshot of {} ({} GPU(s))", doctorRules().size(),
                     s.hostname.empty() ? "this machine" : s.hostname, s.gpus.size());
  if (m && m->check)
    out += fmt::format("; P2P data check: {} passed, {} failed, {} skipped", m->check->count(CheckOutcome::kPass),
                       m->check->count(CheckOutcome::kFail), m->check->count(CheckOutcome::kSkip));
  if (m && !m->copyEngineGBps.empty()) {
    out += fmt::format("; copy-engine bandwidth:");
    for (const auto& [p, gbps] : m->copyEngineGBps)
      out += fmt::format(" GPU{}->GPU{} {:.0f} GB/s", p.first, p.second, gbps);
  }
  out += fmt::format(" ({:.1f} s)\n", seconds);
  for (const std::string& n : r.notRun) out += fmt::format("Not run: {}\n", n);
  return out;
}

namespace {

nlohmann::ordered_json gpusJson(const std::vector<FindingGpu>& gpus) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const FindingGpu& g : gpus) out.push_back({{"index", g.index}, {"busId", g.busId}});
  return out;
}

}  // namespace

std::string doctorReportToJson(const DoctorReport& report, const Measurements* measured) {
  nlohmann::ordered_json j;
  j["verdict"] = report.verdict;
  j["worst"] = report.findings.empty() ? "none" : severityName(report.worst());
  j["findings"] = nlohmann::ordered_json::array();
  for (const Finding& f : report.findings) {
    j["findings"].push_back({{"rule", f.rule},
                             {"severity", severityName(f.severity)},
                             {"title", f.title},
                             {"evidence", f.evidence},
                             {"kbId", f.kbId},
                             {"gpus", gpusJson(f.gpus)},
                             {"firstWorkaround", firstThingToTry(f)}});
  }
  j["notRun"] = report.notRun;
  if (measured) {
    j["copyEngineGBps"] = nlohmann::ordered_json::array();
    for (const auto& [pair, gbps] : measured->copyEngineGBps)
      j["copyEngineGBps"].push_back({{"src", pair.first}, {"dst", pair.second}, {"gbps", gbps}});
    if (measured->check) j["check"] = nlohmann::ordered_json::parse(checkReportToJson(*measured->check));
  }
  // Snapshot strings may hold invalid UTF-8: replace it rather than throw.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gpupeer
