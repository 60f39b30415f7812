// The doctor's findings with what the KB says about each: root cause, what to try (best first)
// and what not to try.
#include <fmt/format.h>

#include "report/report_sections.hpp"

namespace gpupeer::report {
namespace {

// Only web links become links: a KB file's URL could otherwise be "javascript:...".
std::string safeLink(const std::string& url) {
  if (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0) return htmlEscape(url);
  return fmt::format("<a href=\"{0}\" rel=\"noreferrer\">{0}</a>", htmlEscape(url));
}

std::string kbHtml(const KbEntry& e) {
  std::string html = fmt::format("<div class=\"kb\"><p><b>KB <code>{}</code></b>: {}</p>\n", htmlEscape(e.id),
                                 htmlEscape(e.rootCause));
  std::vector<const KbWorkaround*> tries = workaroundsBySuccess(e);
  if (!tries.empty()) {
    html += "<p>Try, best first:</p><ol class=\"workarounds\">";
    for (const KbWorkaround* w : tries) {
      html += fmt::format("<li>{} <span class=\"rate\">({:.0f}% success{})</span>", htmlEscape(w->action),
                          100 * w->successRate, w->condition.empty() ? "" : "; when " + htmlEscape(w->condition));
      if (!w->how.empty()) html += fmt::format("<pre><code>{}</code></pre>", htmlEscape(w->how));
      html += "</li>";
    }
    html += "</ol>\n";
  }
  if (!e.deadEnds.empty()) {
    html += "<p>Do not try:</p><ul class=\"dead-ends\">";
    for (const KbDeadEnd& d : e.deadEnds)
      html += fmt::format("<li>{}{} <span class=\"rate\">(fails {:.0f}%)</span></li>", htmlEscape(d.action),
                          d.action.empty() ? htmlEscape(d.whyFails) : ": " + htmlEscape(d.whyFails), 100 * d.failRate);
    html += "</ul>\n";
  }
  if (!e.officialDocUrl.empty()) html += "<p>Reference: " + safeLink(e.officialDocUrl) + "</p>\n";
  return html + "</div>\n";
}

}  // namespace

std::string findingsHtml(const DoctorReport& report, const KnowledgeBase& kb) {
  std::string html =
      fmt::format("<p class=\"verdict sev-{}\">{}</p>\n",
                  report.findings.empty() ? "none" : severityName(report.worst()), htmlEscape(report.verdict));
  for (const Finding& f : report.findings) {
    html += fmt::format(
        "<div class=\"finding sev-{0}\" data-rule=\"{1}\"><p><span class=\"badge\">{0}</span> <b>{2}</b> "
        "<span class=\"rule\">({1})</span></p>\n",
        severityName(f.severity), htmlEscape(f.rule), htmlEscape(f.title));
    if (!f.evidence.empty()) html += fmt::format("<pre class=\"evidence\">{}</pre>\n", htmlEscape(f.evidence));
    if (!f.kbId.empty()) {
      if (const KbEntry* e = kb.find(f.kbId))
        html += kbHtml(*e);
      else
        html += fmt::format("<p class=\"kb missing\">KB <code>{}</code> (entry not loaded)</p>\n", htmlEscape(f.kbId));
    }
    html += "</div>\n";
  }
  if (!report.notRun.empty()) {
    html += "<p>Not checked here:</p><ul class=\"not-run\">";
    for (const std::string& n : report.notRun) html += "<li>" + htmlEscape(n) + "</li>";
    html += "</ul>\n";
  }
  return html;
}

}  // namespace gpupeer::report
