#include "gpupeer/explain.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "gpupeer/kb_render.hpp"
#include "query_lookup.hpp"

namespace gpupeer {
namespace {

// The tool-output triggers ride in the KB matcher's pass: one pass over the input serves both.
template <class Scan>
Result<Explanation> explainWith(const KnowledgeBase& kb, Scan scan) {
  Result<KbMatcher> matcher = KbMatcher::build(kb, ToolOutputReader::triggerPatterns());
  if (!matcher.isOk()) return matcher.status();
  ToolOutputReader outputs;
  // The first line is kept for the query lookup, which reads an input of one line only; a
  // longer first line is no query (and is not copied).
  constexpr std::size_t kLongestQuery = 256;
  std::string firstLine;
  Result<KbScan> scanned = scan(
      matcher.value(), [&outputs, &firstLine](std::string_view line, std::uint64_t n, std::span<const int> triggered) {
        if (n == 1 && line.size() <= kLongestQuery) firstLine = line;
        outputs.feed(line, n, triggered);
      });
  if (!scanned.isOk()) return scanned.status();
  Explanation e;
  e.scan = std::move(scanned).value();
  if (e.scan.linesRead == 1 && !firstLine.empty()) {
    explain_detail::QueryLookup query = explain_detail::lookUpQuery(kb, firstLine);
    e.codes = query.readings;
    explain_detail::mergeQueryMatches(e.scan, std::move(query));
  }
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
  // What a query was read as comes first, so a reader sees which error the entries are for.
  std::string codes;
  for (const ApiErrorCode& c : e.codes)
    codes += fmt::format("  {} error: {}\n", apiErrorFamilyName(c.family), describeApiError(c));
  if (!codes.empty())
    codes =
        (e.codes.size() == 1 ? "Read as an error code:\n" : "Read as an error code of each family that defines it:\n") +
        codes + "\n";
  // Tool outputs first: when a table was pasted, what it shows is the answer; KB matches of its
  // lines follow.
  std::string text = renderToolOutputsText(e.tools);
  if (!e.scan.matches.empty()) text += (text.empty() ? "" : "\n") + renderKbScanText(e.scan, top);
  if (text.empty())
    return codes + fmt::format("No known failure matched the {} line{} read ({} entr{} in the knowledge base).\n",
                               e.scan.linesRead, e.scan.linesRead == 1 ? "" : "s", e.kbEntries,
                               e.kbEntries == 1 ? "y" : "ies");
  return codes + text;
}

std::string explanationToJson(const Explanation& e, std::size_t top) {
  nlohmann::ordered_json out = kbScanToJsonValue(e.scan, top);
  out["toolOutputs"] = toolOutputsToJson(e.tools);
  nlohmann::ordered_json codes = nlohmann::ordered_json::array();
  for (const ApiErrorCode& c : e.codes) {
    nlohmann::ordered_json code = {
        {"family", apiErrorFamilyName(c.family)}, {"type", apiErrorTypeName(c.family)}, {"name", c.name}};
    code["number"] = c.number ? nlohmann::ordered_json(*c.number) : nlohmann::ordered_json(nullptr);
    codes.push_back(std::move(code));
  }
  out["errorCodes"] = std::move(codes);
  // Log lines may hold invalid UTF-8: replace it rather than throw.
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace gpupeer
