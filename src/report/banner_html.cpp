// The verdict banner at the top of the page: the doctor's verdict, what state the links are
// in, and how many findings of each severity, so that the page tells health before any detail.
#include <fmt/format.h>

#include "report/link_states.hpp"
#include "report/report_sections.hpp"

namespace gpupeer::report {
namespace {

std::string plural(int n, const char* one, const char* many) { return fmt::format("{} {}", n, n == 1 ? one : many); }

}  // namespace

std::string verdictBannerHtml(const DoctorReport& doctor, const LinkStates& states, std::size_t gpus) {
  const char* sev = doctor.findings.empty() ? "none" : severityName(doctor.worst());
  std::string html = fmt::format("<header class=\"banner sev-{}\" id=\"verdict\" role=\"status\">\n", sev);
  html += fmt::format("<p class=\"banner-verdict\">{}</p>\n", htmlEscape(doctor.verdict));
  struct Item {
    LinkState state;
    int n;
    std::string text;
  };
  const Item items[] = {
      {LinkState::kDown, states.linksDown(), plural(states.linksDown(), "NVLink down", "NVLinks down")},
      {LinkState::kFewer, states.fewerBonds(),
       plural(states.fewerBonds(),
              states.nvswitch ? "GPU with fewer NVLinks than its peers" : "NVLink pair with fewer links than its peers",
              states.nvswitch ? "GPUs with fewer NVLinks than their peers"
                              : "NVLink pairs with fewer links than their peers")},
      {LinkState::kPcieDowntrained, states.pcieDowntrained(),
       plural(states.pcieDowntrained(), "PCIe link trained narrow", "PCIe links trained narrow")},
      {LinkState::kNoP2p, static_cast<int>(states.noP2p.size()),
       plural(static_cast<int>(states.noP2p.size()), "GPU pair without P2P", "GPU pairs without P2P")},
  };
  std::string links;
  for (const Item& item : items)
    if (item.n > 0)
      links += fmt::format("<li class=\"banner-link {}\"><span class=\"swatch\"></span>{}</li>",
                           linkStateClass(item.state), htmlEscape(item.text));
  if (!links.empty())
    html += "<ul class=\"banner-links\">" + links + "</ul>\n";
  else if (gpus >= 2)
    html += "<p class=\"banner-links-ok\">Every link up, at its speed and width, with P2P.</p>\n";
  int counts[3] = {0, 0, 0};
  for (const Finding& f : doctor.findings) ++counts[static_cast<int>(f.severity)];
  std::string tally;
  for (Severity s : {Severity::kError, Severity::kWarning, Severity::kInfo})
    if (int n = counts[static_cast<int>(s)]; n > 0)
      tally += fmt::format("{}{} {}", tally.empty() ? "" : ", ", n,
                           severityName(s) + std::string(n == 1 || s == Severity::kInfo ? "" : "s"));
  html += fmt::format(
      "<p class=\"banner-nav\">{} &middot; <a href=\"#topology\">topology</a> &middot; <a href=\"#p2p\">P2P</a> "
      "&middot; <a href=\"#bandwidth\">bandwidth</a> &middot; <a href=\"#collectives\">collectives</a></p>\n",
      tally.empty() ? std::string("No findings") : "<a href=\"#findings\">Findings</a>: " + tally);
  return html + "</header>\n";
}

}  // namespace gpupeer::report
