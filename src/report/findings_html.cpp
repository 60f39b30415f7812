// The doctor's findings with what the KB says about each: root cause, what to try (best first)
// and what not to try; each entry written once, however many findings it explains.
#include <fmt/format.h>

#include <cctype>
#include <set>
#include <string_view>

#include "gpupeer/topology.hpp"
#include "report/report_sections.hpp"

namespace gpupeer::report {
namespace {

// Only web links become links: a KB file's URL could otherwise be "javascript:...".
std::string safeLink(const std::string& url) {
  if (url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0) return htmlEscape(url);
  return fmt::format("<a href=\"{0}\" rel=\"noreferrer\">{0}</a>", htmlEscape(url));
}

// The anchor of a KB entry's text on the page.
std::string kbAnchor(const std::string& id) {
  std::string a = "kb-";
  for (char c : id) a += (std::isalnum(static_cast<unsigned char>(c)) || c == '-') ? c : '-';
  return a;
}

std::string kbHtml(const KbEntry& e) {
  std::string html = fmt::format("<div class=\"kb\" id=\"{}\"><p><b>KB <code>{}</code></b>: {}</p>\n", kbAnchor(e.id),
                                 htmlEscape(e.id), htmlEscape(e.rootCause));
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

// The finding's evidence without the lines another section already shows; a pointer there instead.
std::string evidenceHtml(const std::string& evidence, const std::set<std::string>& shownElsewhere) {
  std::string kept;
  bool dropped = false;
  for (std::size_t at = 0; at <= evidence.size();) {
    std::size_t end = std::min(evidence.find('\n', at), evidence.size());
    std::string_view line(evidence.data() + at, end - at);
    at = end + 1;
    std::size_t first = line.find_first_not_of(' ');
    if (first != std::string_view::npos && shownElsewhere.count(std::string(line.substr(first)))) {
      dropped = true;
      continue;
    }
    kept += (kept.empty() ? "" : "\n") + std::string(line);
  }
  std::string html;
  if (!kept.empty()) html += fmt::format("<pre class=\"evidence\">{}</pre>\n", htmlEscape(kept));
  if (dropped) html += "<p class=\"rule\">Why each pair has no P2P: <a href=\"#p2p\">Peer-to-peer status</a>.</p>\n";
  return html;
}

}  // namespace

std::set<std::string> p2pReasonLines(const Snapshot& s) {
  std::set<std::string> lines;
  for (const Gpu& a : s.gpus)
    for (const Gpu& b : s.gpus)
      if (a.index != b.index) {
        P2pStatus st = p2pStatus(s, a.index, b.index);
        if (st.state != P2pStatus::State::kOk && !st.reason.empty())
          lines.insert(fmt::format("GPU{}->GPU{}: {}", a.index, b.index, st.reason));
      }
  return lines;
}

std::string findingsHtml(const DoctorReport& report, const KnowledgeBase& kb,
                         const std::set<std::string>& shownElsewhere) {
  std::string html;
  if (report.findings.empty()) html += "<p class=\"none\">No findings.</p>\n";
  std::set<std::string> kbShown;  // each entry's text once; later findings point to it
  for (const Finding& f : report.findings) {
    html += fmt::format(
        "<div class=\"finding sev-{0}\" data-rule=\"{1}\"><p><span class=\"badge\">{0}</span> <b>{2}</b> "
        "<span class=\"rule\">({1})</span></p>\n",
        severityName(f.severity), htmlEscape(f.rule), htmlEscape(f.title));
    if (!f.evidence.empty()) html += evidenceHtml(f.evidence, shownElsewhere);
    if (!f.kbId.empty()) {
      const KbEntry* e = kb.find(f.kbId);
      if (!e)
        html += fmt::format("<p class=\"kb missing\">KB <code>{}</code> (entry not loaded)</p>\n", htmlEscape(f.kbId));
      else if (!kbShown.insert(f.kbId).second)
        html += fmt::format("<p class=\"kb seen\">Explained above: <a href=\"#{}\">KB <code>{}</code></a></p>\n",
                            kbAnchor(f.kbId), htmlEscape(f.kbId));
      else
        html += kbHtml(*e);
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
