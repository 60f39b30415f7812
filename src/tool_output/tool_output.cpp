// The parsers as one reader, and how `explain` shows what they found.
#include "gpupeer/tool_output.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <array>
#include <nlohmann/json.hpp>

#include "gpupeer/kb_matcher.hpp"
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

// Which parser each of triggerPatterns() belongs to, and its literal (for feed() without a
// caller's match).
struct ToolOutputReader::Triggers {
  std::vector<std::size_t> parserOf;
  std::vector<std::string> literal;
  std::array<std::vector<std::size_t>, 256> startsWith;  // parsers whose lineStarts() hold the byte
  std::vector<char> wanted;                              // per parser, for the line being fed
  std::vector<char> everyLine;                           // per parser: wantsEveryLine() after its last feed
  std::size_t everyLineCount = 0;
  std::vector<int> matched;
};

std::vector<std::string> ToolOutputReader::triggerPatterns() {
  std::vector<std::string> out;
  for (const auto& p : makeToolOutputParsers())
    for (const std::string& t : p->triggers()) out.push_back(RE2::QuoteMeta(t));
  return out;
}

ToolOutputReader::ToolOutputReader() : parsers_(makeToolOutputParsers()), triggers_(std::make_unique<Triggers>()) {
  for (std::size_t k = 0; k < parsers_.size(); ++k)
    for (const std::string& t : parsers_[k]->triggers()) {
      triggers_->parserOf.push_back(k);
      triggers_->literal.push_back(t);
    }
  for (std::size_t k = 0; k < parsers_.size(); ++k)
    for (char c : parsers_[k]->lineStarts()) triggers_->startsWith[static_cast<unsigned char>(c)].push_back(k);
  triggers_->wanted.assign(parsers_.size(), 0);
  triggers_->everyLine.assign(parsers_.size(), 0);
  for (std::size_t k = 0; k < parsers_.size(); ++k) {
    triggers_->everyLine[k] = parsers_[k]->wantsEveryLine();
    triggers_->everyLineCount += triggers_->everyLine[k];
  }
}

ToolOutputReader::~ToolOutputReader() = default;

void ToolOutputReader::feed(std::string_view line, std::uint64_t lineNumber) {
  std::vector<int>& matched = triggers_->matched;
  matched.clear();
  for (std::size_t i = 0; i < triggers_->literal.size(); ++i)
    if (line.find(triggers_->literal[i]) != std::string_view::npos) matched.push_back(static_cast<int>(i));
  feed(line, lineNumber, matched);
}

void ToolOutputReader::feed(std::string_view line, std::uint64_t lineNumber, std::span<const int> triggered) {
  std::vector<char>& wanted = triggers_->wanted;
  bool any = false;
  for (int i : triggered) {
    wanted[triggers_->parserOf[i]] = 1;
    any = true;
  }
  std::size_t first = 0;  // the first non-blank character
  while (first < line.size() && (line[first] == ' ' || line[first] == '\t')) ++first;
  if (first < line.size())
    for (std::size_t k : triggers_->startsWith[static_cast<unsigned char>(line[first])]) {
      wanted[k] = 1;
      any = true;
    }
  // wantsEveryLine() changes only in feed(): it is asked after each feed, not on every line.
  std::vector<char>& everyLine = triggers_->everyLine;
  if (triggers_->everyLineCount > 0)
    for (std::size_t k = 0; k < parsers_.size(); ++k)
      if (everyLine[k]) wanted[k] = any = true;
  if (!any) return;
  for (std::size_t k = 0; k < parsers_.size(); ++k) {
    if (!wanted[k]) continue;
    wanted[k] = 0;
    parsers_[k]->feed(line, lineNumber);
    char now = parsers_[k]->wantsEveryLine();
    triggers_->everyLineCount += now - everyLine[k];
    everyLine[k] = now;
  }
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
