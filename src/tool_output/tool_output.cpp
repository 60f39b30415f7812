// The parsers as one reader, and how `explain` shows what they found.
#include "gpupeer/tool_output.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <nlohmann/json.hpp>

#include "gpupeer/kb.hpp"
#include "tool_output/parsers.hpp"

namespace gpupeer {

std::vector<std::unique_ptr<ToolOutputParser>> makeToolOutputParsers() {
  using namespace tool_output;
  std::vector<std::unique_ptr<ToolOutputParser>> out;
  out.push_back(makeTopoLinksParser());
  out.push_back(makeTopoP2pParser());
  out.push_back(makeNvlinkStatusParser());
  out.push_back(makeDcgmiNvlinkParser());
  out.push_back(makeSimpleP2pParser());
  out.push_back(makeP2pBandwidthParser());
  out.push_back(makeNcclTestsParser());
  out.push_back(makeNcclTransportParser());
  return out;
}

// Every parser's triggers as one alternation, for callers that do not match them themselves;
// built on first use.
struct ToolOutputReader::Triggers {
  std::unique_ptr<RE2> any;
};

std::vector<std::string> ToolOutputReader::triggerPatterns() {
  // Rows of nccl-tests tables start with the size; every other output has a literal.
  std::vector<std::string> out = {R"(^[ \t]*[0-9])"};
  for (const auto& p : makeToolOutputParsers())
    for (const std::string& t : p->triggers()) out.push_back(RE2::QuoteMeta(t));
  return out;
}

ToolOutputReader::ToolOutputReader() : parsers_(makeToolOutputParsers()), triggers_(std::make_unique<Triggers>()) {}

ToolOutputReader::~ToolOutputReader() = default;

void ToolOutputReader::feed(std::string_view line, std::uint64_t lineNumber) {
  if (!triggers_->any) {
    std::string alternation;
    for (const std::string& t : triggerPatterns()) {
      if (!alternation.empty()) alternation += '|';
      alternation += "(?:" + t + ")";
    }
    RE2::Options o;
    o.set_log_errors(false);
    triggers_->any = std::make_unique<RE2>(alternation, o);
  }
  feed(line, lineNumber, RE2::PartialMatch(line, *triggers_->any));
}

void ToolOutputReader::feed(std::string_view line, std::uint64_t lineNumber, bool triggered) {
  bool wanted = triggered;
  for (const auto& p : parsers_) wanted = wanted || p->wantsEveryLine();
  if (!wanted) return;
  for (auto& p : parsers_) p->feed(line, lineNumber);
}

std::vector<ToolOutputFinding> ToolOutputReader::finish() {
  std::vector<ToolOutputFinding> all;
  for (auto& p : parsers_) p->finish(all);
  parsers_.clear();
  // A log that repeats one output (a test run many times) gives it once, with the count.
  std::vector<ToolOutputFinding> out;
  std::vector<int> repeats;
  for (ToolOutputFinding& f : all) {
    auto same = std::find_if(out.begin(), out.end(), [&f](const ToolOutputFinding& o) {
      return o.tool == f.tool && o.title == f.title && o.details == f.details;
    });
    if (same != out.end()) {
      ++repeats[same - out.begin()];
      continue;
    }
    out.push_back(std::move(f));
    repeats.push_back(1);
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    if (repeats[i] > 1)
      out[i].details.push_back(fmt::format("the same output appears {} times in the input", repeats[i]));
  std::stable_sort(out.begin(), out.end(),
                   [](const ToolOutputFinding& a, const ToolOutputFinding& b) { return a.severity > b.severity; });
  return out;
}

std::vector<ToolOutputFinding> readToolOutputs(std::string_view text) {
  ToolOutputReader reader;
  std::uint64_t number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, std::min(end - start, kKbMaxLinePiece));
    reader.feed(normaliseLogLine(line), ++number);
    start = end + 1;
  }
  return reader.finish();
}

std::string renderToolOutputsText(const std::vector<ToolOutputFinding>& findings) {
  std::string out;
  if (findings.empty()) return out;
  out += fmt::format("{} tool output{} recognised.\n", findings.size(), findings.size() == 1 ? "" : "s");
  for (const ToolOutputFinding& f : findings) {
    out += fmt::format("\n[{}] {} (line {}): {}\n", severityName(f.severity), f.tool, f.firstLine, f.title);
    for (const std::string& d : f.details) out += "   - " + d + "\n";
    if (!f.kbIds.empty()) out += fmt::format("   KB: {}\n", fmt::join(f.kbIds, ", "));
  }
  return out;
}

nlohmann::ordered_json toolOutputsToJson(const std::vector<ToolOutputFinding>& findings) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const ToolOutputFinding& f : findings)
    out.push_back({{"tool", f.tool},
                   {"severity", severityName(f.severity)},
                   {"title", f.title},
                   {"details", f.details},
                   {"kbIds", f.kbIds},
                   {"line", f.firstLine}});
  return out;
}

}  // namespace gpupeer
