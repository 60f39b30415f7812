#pragma once
// The sections of the HTML report, each a pure function returning escaped markup.

#include <set>
#include <string>

#include "gpupeer/doctor.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "gpupeer/report.hpp"
#include "gpupeer/snapshot.hpp"
#include "report/link_states.hpp"

namespace gpupeer::report {

/// The first thing on the page: the doctor's verdict, the links that are not healthy (by state,
/// counted) and the findings by severity. A <header class="banner sev-..." id="verdict">.
std::string verdictBannerHtml(const DoctorReport& doctor, const LinkStates& states, std::size_t gpus);

/// The machine as a drawing: NUMA nodes, PCIe switches, one <g class="gpu-node"> per GPU, each
/// GPU's PCIe link, NVLinks (to an NVSwitch bar, or arcs between GPUs) labelled with their
/// counts, and arcs for pairs without P2P; every link a <g> with its state's class
/// ("state-ok", "state-fewer", "state-down", "state-downtrained", "state-no-p2p").
std::string topologySvg(const Snapshot& s, const LinkStates& states);

/// The drawing's legend: one <li class="legend-entry ..." data-legend="..."> per kind of link and
/// state, with the count of links in each state that is not healthy.
std::string linkLegendHtml(const LinkStates& states);

/// The P2P matrix: per ordered pair the status code and the topology class, coloured by P2P
/// and marked with the pair's link state. One <td class="p2p ..."> per cell, the diagonal
/// included. Below it each reason P2P is missing, once, with the pairs it holds for.
std::string p2pMatrixHtml(const Snapshot& s, const LinkStates& states);

/// Bandwidth testcases as one heatmap of pair (row) x testcase (column), GB/s and % of the
/// link's limit; latency testcases as a second; each sweep as a chart.
std::string benchSectionHtml(const Snapshot& s, const ReportResults& results);

/// Time and bus bandwidth against size for each collective table, gpupeer against each
/// baseline, and the results-format records as a table (and charts where they carry sizes).
std::string collectivesSectionHtml(const ReportResults& results);

/// The doctor's findings, worst first, each with its KB entry's root cause and workarounds; an
/// entry two findings share is written out once and pointed to after. Evidence lines in
/// `shownElsewhere` (a pair's P2P reason, which the P2P section gives) are left out.
std::string findingsHtml(const DoctorReport& report, const KnowledgeBase& kb,
                         const std::set<std::string>& shownElsewhere = {});

/// The evidence lines ("GPU0->GPU2: <reason>") the P2P section already explains.
std::set<std::string> p2pReasonLines(const Snapshot& s);

/// Background colour of a heatmap cell for a share in [0, 1] of the best possible (red to green).
std::string heatColour(double share);

}  // namespace gpupeer::report
