// The whole report page: head with inline CSS, the verdict banner, a summary of the machine,
// each section, and a short script that counts what the browser drew and marks the page
// rendered in attributes of <html> (the browser test reads them; a reader sees nothing of it).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpupeer/bench.hpp"
#include "gpupeer/report.hpp"
#include "gpupeer/version_text.hpp"
#include "report/measured_from_results.hpp"
#include "report/report_sections.hpp"

namespace gpupeer {
namespace {

constexpr const char* kStyle = R"css(
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1280px;
 padding:0 16px;color:#1d1d1f;background:#fff;line-height:1.4}
h1{font-size:1.6em;margin-bottom:4px}h2{border-bottom:2px solid #dde;padding-bottom:4px;margin-top:36px}
h3{margin-bottom:4px}.what{color:#555;margin-top:0}.none{color:#666;font-style:italic}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid #ccd;padding:4px 8px;text-align:center}
th{background:#f3f4f8}td small{display:block;color:#444;font-size:.75em}
table.facts td,table.facts th{text-align:left}table.records td{font-size:.9em}
td.p2p-ok{background:#d8f0d8}td.p2p-no{background:#f6d3d3}td.p2p-unknown{background:#eee}td.diag{background:#fafafa;color:#999}
svg{display:block;margin:8px 0;max-width:100%;height:auto;font-size:12px}
svg text{fill:#222}svg .tick{font-size:10px;fill:#555}svg .chart-title{font-weight:600}
svg .grid{stroke:#e4e4ea}svg .frame{fill:none;stroke:#999}
.numa-node rect{fill:#eef2fb;stroke:#7b8fc4}.pcie-switch rect{fill:#fff6e5;stroke:#c9a45c}
.gpu-node rect{fill:#76b900;stroke:#3d6000}.gpu-node text{fill:#fff}.gpu-node .gpu-label{font-weight:700;font-size:14px}
.gpu-node .bus{font-size:10px}.nvswitch rect{fill:#e8f5d0;stroke:#5b8c00}
line.pcie{stroke:#b08a3e;stroke-width:2}.nvlink-line{stroke:#5b8c00;stroke-width:4}
.link-count{font-weight:700;fill:#3d6000;paint-order:stroke;stroke:#fff;stroke-width:3px}
.link-note{font-size:11px;font-weight:700;paint-order:stroke;stroke:#fff;stroke-width:3px}
.nvlink.state-fewer .nvlink-line{stroke:#e69a00}.state-fewer .link-count{fill:#a86c00}
.nvlink.state-down .nvlink-line{stroke:#c62828;stroke-width:3;stroke-dasharray:7 5}.state-down .link-note{fill:#c62828}
.pcie-link.state-downtrained line.pcie{stroke:#7b1fa2;stroke-width:4;stroke-dasharray:3 3}
.state-downtrained .link-note{fill:#7b1fa2}
.no-p2p-line{stroke:#c62828;stroke-width:2;stroke-dasharray:2 4;fill:none}.state-no-p2p .link-note{fill:#c62828}
ul.link-legend,ul.banner-links{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px 18px}
.swatch{display:inline-block;width:30px;height:0;margin-right:6px;vertical-align:middle;border-top:4px solid #5b8c00}
.pcie.state-ok .swatch{border-top:2px solid #b08a3e}.state-fewer .swatch{border-top-color:#e69a00}
.state-down .swatch{border-top:3px dashed #c62828}.state-downtrained .swatch{border-top:4px dotted #7b1fa2}
.state-no-p2p .swatch{border-top:2px dotted #c62828}
td.p2p.state-fewer,td.p2p.state-down,td.p2p.state-downtrained{box-shadow:inset 0 0 0 3px #e69a00}
.banner{border-left:8px solid #2e7d32;background:#eef7ee;padding:10px 16px;margin:0 0 16px;border-radius:4px}
.banner.sev-info{border-color:#1f5fa8;background:#eef3fa}.banner.sev-warning{border-color:#e69a00;background:#fff6e5}
.banner.sev-error{border-color:#c62828;background:#fdecec}.banner p{margin:4px 0}
.banner-verdict{font-size:1.25em;font-weight:700}.banner-link{font-weight:600}
.scroll{overflow-x:auto}table.heatmap th.testcase{max-width:7em;font-size:.85em}
.charts{display:flex;flex-wrap:wrap;gap:12px}
.finding{border-left:5px solid #aaa;padding:4px 12px;margin:12px 0;background:#fafafa}
.sev-error{border-color:#c62828}.sev-warning{border-color:#e69a00}.sev-info{border-color:#1f5fa8}
.badge{text-transform:uppercase;font-size:.75em;font-weight:700;padding:1px 6px;border-radius:3px;background:#ddd}
.sev-error .badge{background:#c62828;color:#fff}.sev-warning .badge{background:#e69a00;color:#fff}
.sev-info .badge{background:#1f5fa8;color:#fff}.rule,.rate{color:#666;font-size:.9em}
pre{background:#f3f3f6;padding:6px 8px;overflow-x:auto;white-space:pre-wrap}
.kb{margin-left:12px}footer{margin-top:40px;color:#666;font-size:.85em;border-top:1px solid #dde;padding-top:8px}
)css";

// Runs after everything above it was parsed. Counts the drawn GPU nodes and matrix cells and
// checks each SVG has a size, so a page that parsed into nothing is told apart; the counts go
// into attributes, not onto the page.
constexpr const char* kScript = R"js(
(function () {
  var gpus = document.querySelectorAll('svg.topology .gpu-node').length;
  var cells = document.querySelectorAll('td.p2p').length;
  var drawings = document.querySelectorAll('svg').length;
  var empty = 0;
  document.querySelectorAll('svg').forEach(function (s) {
    var box = s.getBoundingClientRect();
    if (!(box.width > 0 && box.height > 0)) empty++;
  });
  var page = document.documentElement;
  page.setAttribute('data-gpu-nodes', gpus);
  page.setAttribute('data-p2p-cells', cells);
  page.setAttribute('data-drawings', drawings);
  page.setAttribute('data-report-rendered', empty ? 'empty-drawing' : 'ok');
})();
)js";

std::string factsTable(const Snapshot& s) {
  auto row = [](const char* name, const std::string& value) {
    return fmt::format("<tr><th>{}</th><td>{}</td></tr>", name, htmlEscape(value));
  };
  auto known = [](const auto& k, auto show) { return k.known() ? show(k.value()) : "unknown (" + k.reason() + ")"; };
  std::string html = "<table class=\"facts\">";
  html += row("Host", s.hostname.empty() ? "unknown" : s.hostname);
  html += row("Captured", s.capturedAt);
  if (!s.description.empty()) html += row("Source", s.description);
  html += row("GPUs", s.gpus.empty() ? "none" : fmt::format("{} x {}", s.gpus.size(), s.gpus[0].name));
  html += row("Driver", known(s.driverVersion, [](const std::string& v) { return v; }));
  html += row("CUDA driver API", known(s.cudaDriverVersion, cudaVersionText));
  html += row("NCCL", known(s.ncclVersion, ncclVersionText));
  html += row("IOMMU", known(s.platform.iommu, [](const std::string& v) { return v; }));
  if (!s.environment.empty()) {
    std::string env;
    for (const auto& [k, v] : s.environment) env += (env.empty() ? "" : ", ") + k + "=" + v;
    html += row("Environment", env);
  }
  return html + "</table>\n";
}

}  // namespace

std::string renderHtmlReport(const ReportInput& in) {
  const Snapshot& s = *in.snapshot;
  static const ReportResults kNoResults;
  const ReportResults& results = in.results ? *in.results : kNoResults;
  // Without a diagnosis given, the page diagnoses the snapshot, with the bandwidth the results
  // measured on this machine where they have it: the verdict then states it, and a slow or
  // lopsided pair is a finding, as `gpupeer doctor` on the machine would say.
  DoctorReport diagnosed;
  if (!in.doctor) {
    const std::optional<Measurements> measured = report::measuredFromResults(s, results);
    diagnosed = diagnose(s, measured ? &*measured : nullptr);
  }
  const DoctorReport& doctor = in.doctor ? *in.doctor : diagnosed;
  const KnowledgeBase& kb = in.kb ? *in.kb : builtinKnowledgeBase();
  const std::string title = in.title.empty()
                                ? "gpupeer report: " + (s.hostname.empty() ? std::string("this machine") : s.hostname)
                                : in.title;

  std::string html = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  // No request leaves the page: the policy forbids every fetch and allows only inline style/script.
  html +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src 'unsafe-inline'; img-src data:\">\n";
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += fmt::format("<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n", htmlEscape(title), kStyle);
  const report::LinkStates states = report::linkStates(s);
  html += report::verdictBannerHtml(doctor, states, s.gpus.size());
  html += fmt::format("<h1>{}</h1>\n", htmlEscape(title));
  html += factsTable(s);

  html += "<h2 id=\"topology\">Topology</h2>\n";
  if (s.gpus.empty())
    html += "<p class=\"none\">No GPU in this snapshot.</p>\n";
  else
    html += report::topologySvg(s, states) + report::linkLegendHtml(states);
  html += "<h2 id=\"p2p\">Peer-to-peer status</h2>\n";
  html +=
      "<p class=\"what\">Each cell: the P2P status code (OK, or nvidia-smi's reason code) and the path "
      "class; an amber frame marks a pair whose links are degraded.</p>\n";
  html +=
      s.gpus.size() < 2 ? "<p class=\"none\">Fewer than two GPUs: no pair.</p>\n" : report::p2pMatrixHtml(s, states);
  html += "<h2 id=\"findings\">Doctor's findings</h2>\n" + report::findingsHtml(doctor, kb, report::p2pReasonLines(s));
  html += "<h2 id=\"bandwidth\">Bandwidth and latency</h2>\n";
  if (const std::vector<std::string> others = report::otherBenchMachines(s, results); !others.empty())
    html += fmt::format(
        "<p class=\"what other-machine\">Some figures below were measured on {}, not on this snapshot's machine "
        "({}): shown as given, not used in the diagnosis.</p>\n",
        htmlEscape(fmt::format("{}", fmt::join(others, ", "))),
        htmlEscape(s.hostname + (s.gpus.empty() ? "" : ", " + benchGpusLabel(s))));
  html += report::benchSectionHtml(s, results);
  html += "<h2 id=\"collectives\">Collectives</h2>\n" + report::collectivesSectionHtml(results);
  if (!results.warnings.empty()) {
    html += "<h2>Skipped input</h2><ul>";
    for (const std::string& w : results.warnings) html += "<li>" + htmlEscape(w) + "</li>";
    html += "</ul>\n";
  }
  html += fmt::format("<footer><p>{}</p></footer>\n",
                      htmlEscape(in.generatedBy.empty() ? std::string("gpupeer report") : in.generatedBy));
  html += fmt::format("<script>{}</script>\n</body>\n</html>\n", kScript);
  return html;
}

}  // namespace gpupeer
