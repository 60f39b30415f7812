// What `explain` prints for a scan: text for people, JSON for scripts.
#include "gpupeer/kb_render.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "gpupeer/kb_matcher.hpp"
#include "gpupeer/knowledge_base.hpp"

namespace gpupeer {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::size_t kShownLineChars = 240;  // a matched line is shown cut to this

std::string percent(double rate) { return fmt::format("{:.0f}%", rate * 100); }

std::string shortLine(const std::string& line) {
  if (line.size() <= kShownLineChars) return line;
  return line.substr(0, kShownLineChars) + " …";
}

// Every line of `text` indented by `indent` (workaround commands are often several lines).
std::string indented(const std::string& text, const std::string& indent) {
  std::string out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += indent + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

std::string edgeList(const std::vector<KbTransition>& edges) {
  std::string out;
  for (const KbTransition& t : edges) {
    if (!out.empty()) out += ", ";
    out += t.id;
    if (t.probability > 0) out += fmt::format(" ({})", percent(t.probability));
  }
  return out;
}

void renderMatch(std::string& out, std::size_t rank, const KbMatch& m) {
  const KbEntry& e = *m.entry;
  out +=
      fmt::format("{}. {}{}\n", rank, e.id, e.wrapper ? "  (generic wrapper: the entries above name the cause)" : "");
  if (m.matchedBy.empty())
    out += fmt::format("   line {}: {}\n", m.firstLine, shortLine(m.firstLineText));
  else
    out += fmt::format("   found by {}\n", m.matchedBy);
  if (m.matchingLines > 1) out += fmt::format("   ({} matching lines)\n", m.matchingLines);
  if (!e.rootCause.empty()) out += fmt::format("   Cause: {}\n", e.rootCause);
  if (!e.deadEnds.empty()) {
    out += "   Do not try:\n";
    for (const KbDeadEnd& d : e.deadEnds) {
      std::string action = d.action;
      if (!action.empty() && action.back() == '.' && !d.whyFails.empty()) action.pop_back();
      std::string what = action.empty() ? d.whyFails : d.whyFails.empty() ? action : action + ": " + d.whyFails;
      out += fmt::format("     - {} (fails {})\n", what, percent(d.failRate));
      if (!d.condition.empty()) out += fmt::format("       when: {}\n", d.condition);
    }
  }
  std::vector<const KbWorkaround*> sorted = workaroundsBySuccess(e);
  if (!sorted.empty()) {
    out += "   Try:\n";
    for (const KbWorkaround* w : sorted) {
      const std::string& title = w->action.empty() ? w->how : w->action;
      out += fmt::format("     - {} (works {})\n", title, percent(w->successRate));
      if (!w->condition.empty()) out += fmt::format("       when: {}\n", w->condition);
      if (!w->how.empty() && w->how != title) out += indented(w->how, "         ");
    }
  }
  if (!e.leadsTo.empty()) out += fmt::format("   Often leads to: {}\n", edgeList(e.leadsTo));
  if (!e.precededBy.empty()) out += fmt::format("   Often comes after: {}\n", edgeList(e.precededBy));
  if (!e.confusedWith.empty()) out += fmt::format("   Often confused with: {}\n", edgeList(e.confusedWith));
  if (!e.officialDocUrl.empty()) out += fmt::format("   Docs: {}\n", e.officialDocUrl);
}

Json edgesToJson(const std::vector<KbTransition>& edges) {
  Json out = Json::array();
  for (const KbTransition& t : edges)
    out.push_back({{"id", t.id}, {"probability", t.probability}, {"condition", t.condition}});
  return out;
}

Json matchToJson(std::size_t rank, const KbMatch& m) {
  const KbEntry& e = *m.entry;
  Json deadEnds = Json::array();
  for (const KbDeadEnd& d : e.deadEnds)
    deadEnds.push_back({{"action", d.action},
                        {"whyFails", d.whyFails},
                        {"failRate", d.failRate},
                        {"condition", d.condition},
                        {"sources", d.sources}});
  Json workarounds = Json::array();
  for (const KbWorkaround* w : workaroundsBySuccess(e))
    workarounds.push_back({{"action", w->action},
                           {"how", w->how},
                           {"successRate", w->successRate},
                           {"condition", w->condition},
                           {"sources", w->sources}});
  return {{"rank", rank},
          {"id", e.id},
          {"line", m.firstLine},
          {"text", m.firstLineText},
          {"matchingLines", m.matchingLines},
          {"matchedBy", m.matchedBy},
          {"wrapper", e.wrapper},
          {"domain", e.domain},
          {"category", e.category},
          {"errorCode", e.errorCode},
          {"signature", e.signature},
          {"rootCause", e.rootCause},
          {"confidence", e.confidence},
          {"fixSuccessRate", e.fixSuccessRate},
          {"deadEnds", deadEnds},
          {"workarounds", workarounds},
          {"leadsTo", edgesToJson(e.leadsTo)},
          {"precededBy", edgesToJson(e.precededBy)},
          {"confusedWith", edgesToJson(e.confusedWith)},
          {"tags", e.tags},
          {"officialDocUrl", e.officialDocUrl},
          {"sourceFile", e.sourceFile}};
}

std::size_t shownCount(const KbScan& scan, std::size_t top) {
  return top == 0 ? scan.matches.size() : std::min(top, scan.matches.size());
}

}  // namespace

std::string renderKbScanText(const KbScan& scan, std::size_t top) {
  std::string out;
  if (scan.matches.empty()) {
    out = fmt::format("No known failure matched the {} line{} read.\n", scan.linesRead, scan.linesRead == 1 ? "" : "s");
    return out;
  }
  std::size_t shown = shownCount(scan, top);
  out += fmt::format("{} known failure{} matched in {} line{}; best explanation first.\n\n", scan.matches.size(),
                     scan.matches.size() == 1 ? "" : "s", scan.linesRead, scan.linesRead == 1 ? "" : "s");
  for (std::size_t i = 0; i < shown; ++i) {
    if (i) out += "\n";
    renderMatch(out, i + 1, scan.matches[i]);
  }
  if (shown < scan.matches.size())
    out += fmt::format("\n({} more matched: {}; --top 0 shows all)\n", scan.matches.size() - shown, [&] {
      std::string ids;
      for (std::size_t i = shown; i < scan.matches.size(); ++i)
        ids += (i == shown ? "" : ", ") + scan.matches[i].entry->id;
      return ids;
    }());
  return out;
}

Json kbScanToJsonValue(const KbScan& scan, std::size_t top) {
  Json matches = Json::array();
  for (std::size_t i = 0; i < shownCount(scan, top); ++i) matches.push_back(matchToJson(i + 1, scan.matches[i]));
  return {{"linesRead", scan.linesRead},
          {"bytesRead", scan.bytesRead},
          {"totalMatches", scan.matches.size()},
          {"matches", matches}};
}

std::string kbScanToJson(const KbScan& scan, std::size_t top) {
  // Log lines may hold invalid UTF-8: replace it rather than throw.
  return kbScanToJsonValue(scan, top).dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

}  // namespace gpupeer
