#include "gpupeer/explain.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace gpupeer {
namespace {

// The tool-output triggers ride in the KB matcher's pass: one pass over the input serves both.
template <class Scan>
Result<Explanation> explainWith(const KnowledgeBase& kb, Scan scan) {
  Result<KbMatcher> matcher = KbMatcher::build(kb, ToolOutputReader::triggerPatterns());
  if (!matcher.isOk()) return matcher.status();
  ToolOutputReader outputs;
  Result<KbScan> scanned =
      scan(matcher.value(), [&outputs](std::string_view line, std::uint64_t n, std::span<const int> triggered) {
        outputs.feed(line, n, triggered);
      });
  if (!scanned.isOk()) return scanned.status();
  Explanation e;
  e.scan = std::move(scanned).value();
  e.tools = outputs.finish();
  e.kbEntries = kb.size();
  return e;
}

}  // namespace

Result<Explanation> explainStream(const KnowledgeBase& kb, std::istream& in) {
  return explainWith(kb,
                     [&in](const KbMatcher& m, const KbMatcher::LineObserver& onLine) { return m.scan(in, onLine); });
}

Result<Explanation> explainText(const KnowledgeBase& kb, const std::string& text) {
  return explainWith(kb, [&text](const KbMatcher& m, const KbMatcher::LineObserver& onLine) -> Result<KbScan> {
    return m.scanText(text, onLine);
  });
}

std::string renderExplanationText(const Explanation& e, std::size_t top) {
  // Tool outputs first: when a table was pasted, what it shows is the answer; KB matches of its
  // lines follow.
  std::string text = renderToolOutputsText(e.tools);
  if (!e.scan.matches.empty()) text += (text.empty() ? "" : "\n") + renderKbScanText(e.scan, top);
  if (text.empty())
    text = fmt::format("No known failure matched the {} line{} read ({} entries in the knowledge base).\n",
                       e.scan.linesRead, e.scan.linesRead == 1 ? "" : "s", e.kbEntries);
  return text;
}

std::string explanationToJson(const Explanation& e, std::size_t top) {
  nlohmann::ordered_json out = kbScanToJsonValue(e.scan, top);
  out["toolOutputs"] = toolOutputsToJson(e.tools);
  // Log lines may hold invalid UTF-8: replace it rather than throw.
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gpupeer
