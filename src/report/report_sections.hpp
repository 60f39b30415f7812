#pragma once
// The sections of the HTML report, each a pure function returning escaped markup.

#include <string>

#include "gpupeer/doctor.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "gpupeer/report.hpp"
#include "gpupeer/snapshot.hpp"

namespace gpupeer::report {

/// The machine as a drawing: NUMA nodes, PCIe switches, one <g class="gpu-node"> per GPU,
/// NVLinks (to an NVSwitch bar, or arcs between GPUs) labelled with their counts.
std::string topologySvg(const Snapshot& s);

/// The P2P matrix: per ordered pair the status code and the topology class, with the reason
/// when P2P is not available. One <td class="p2p ..."> per cell, the diagonal included.
std::string p2pMatrixHtml(const Snapshot& s);

/// Each bandwidth testcase as a heatmap (GB/s and % of the link's limit), each latency
/// testcase as a matrix, each sweep as a chart.
std::string benchSectionHtml(const Snapshot& s, const ReportResults& results);

/// Time and bus bandwidth against size for each collective table, gpupeer against each
/// baseline, and the results-format records as a table (and charts where they carry sizes).
std::string collectivesSectionHtml(const ReportResults& results);

/// The doctor's findings, worst first, each with its KB entry's root cause and workarounds.
std::string findingsHtml(const DoctorReport& report, const KnowledgeBase& kb);

/// Background colour of a heatmap cell for a share in [0, 1] of the best possible (red to green).
std::string heatColour(double share);

}  // namespace gpupeer::report
