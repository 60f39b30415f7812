// The topology drawing: CPU sockets (NUMA nodes) at the top, PCIe switches below them, a row
// of GPUs, and the NVLinks underneath, either to one NVSwitch bar or as arcs between GPUs.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "gpupeer/topology.hpp"
#include "report/report_sections.hpp"

namespace gpupeer::report {
namespace {

constexpr double kMargin = 20, kGpuW = 128, kGpuH = 66, kGap = 22;
constexpr double kNumaY = 10, kNumaH = 40, kSwitchY = 86, kSwitchH = 30, kGpuY = 152;

struct Column {
  const Gpu* gpu;
  int numa;                // -1: unknown
  std::string pcieSwitch;  // "" when the GPU hangs off a root port
  double x;
};

int activeLinks(const Gpu& g, bool toSwitch) {
  if (!g.nvlinks.known()) return 0;
  int n = 0;
  for (const NvLink& l : g.nvlinks.value())
    if (l.active && (l.remoteType == LinkRemote::kSwitch) == toSwitch) ++n;
  return n;
}

// A horizontal box spanning columns [first, last] with a label; `cls` names what it is.
std::string spanBox(const std::vector<Column>& cols, size_t first, size_t last, double y, double h,
                    const std::string& cls, const std::string& label, const std::string& tooltip) {
  double x0 = cols[first].x - 6, x1 = cols[last].x + kGpuW + 6;
  return fmt::format(
      "<g class=\"{}\"><title>{}</title><rect x=\"{:.0f}\" y=\"{:.0f}\" width=\"{:.0f}\" height=\"{:.0f}\" rx=\"6\"/>"
      "<text x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text></g>\n",
      cls, htmlEscape(tooltip), x0, y, x1 - x0, h, (x0 + x1) / 2, y + h / 2 + 5, htmlEscape(label));
}

std::string gpuNode(const Column& c) {
  const Gpu& g = *c.gpu;
  int links = g.nvlinks.known() ? static_cast<int>(g.nvlinks.value().size()) : 0;
  std::string tooltip =
      fmt::format("GPU{} {}\nbus {}\ncompute capability {}.{}, {} SMs, {:.0f} GiB", g.index, g.name, g.pciBusId,
                  g.ccMajor, g.ccMinor, g.smCount, static_cast<double>(g.memoryBytes) / (1ull << 30));
  if (g.nvlinks.known())
    tooltip += fmt::format("\nNVLinks active: {} of {}", activeLinks(g, true) + activeLinks(g, false), links);
  else
    tooltip += "\nNVLinks unknown: " + g.nvlinks.reason();
  if (g.pcie.currentGen.known() && g.pcie.currentWidth.known())
    tooltip += fmt::format("\nPCIe gen{} x{}", g.pcie.currentGen.value(), g.pcie.currentWidth.value());
  std::string name = g.name.rfind("NVIDIA ", 0) == 0 ? g.name.substr(7) : g.name;
  if (name.size() > 18) name = name.substr(0, 17) + "\u2026";
  return fmt::format(
      "<g class=\"gpu-node\" data-gpu=\"{0}\"><title>{1}</title>"
      "<rect x=\"{2:.0f}\" y=\"{3:.0f}\" width=\"{4:.0f}\" height=\"{5:.0f}\" rx=\"8\"/>"
      "<text class=\"gpu-label\" x=\"{6:.0f}\" y=\"{7:.0f}\" text-anchor=\"middle\">GPU{0}</text>"
      "<text x=\"{6:.0f}\" y=\"{8:.0f}\" text-anchor=\"middle\">{9}</text>"
      "<text class=\"bus\" x=\"{6:.0f}\" y=\"{10:.0f}\" text-anchor=\"middle\">{11}</text></g>\n",
      g.index, htmlEscape(tooltip), c.x, kGpuY, kGpuW, kGpuH, c.x + kGpuW / 2, kGpuY + 20, kGpuY + 38, htmlEscape(name),
      kGpuY + 55, htmlEscape(g.pciBusId));
}

std::string line(double x1, double y1, double x2, double y2, const char* cls) {
  return fmt::format("<line class=\"{}\" x1=\"{:.0f}\" y1=\"{:.0f}\" x2=\"{:.0f}\" y2=\"{:.0f}\"/>\n", cls, x1, y1, x2,
                     y2);
}

}  // namespace

std::string topologySvg(const Snapshot& s) {
  std::vector<Column> cols;
  for (const Gpu& g : s.gpus)
    cols.push_back({&g, g.numaNode.known() ? g.numaNode.value() : -1,
                    g.sysfsPath.known() ? pcieSwitchOf(g.sysfsPath.value()) : "", 0});
  // Unknown NUMA nodes last; GPUs behind one switch side by side.
  std::stable_sort(cols.begin(), cols.end(), [](const Column& a, const Column& b) {
    auto key = [](const Column& c) { return std::make_tuple(c.numa < 0, c.numa, c.pcieSwitch, c.gpu->index); };
    return key(a) < key(b);
  });
  for (size_t i = 0; i < cols.size(); ++i) cols[i].x = kMargin + static_cast<double>(i) * (kGpuW + kGap);
  const double width = std::max(2 * kMargin + static_cast<double>(cols.size()) * (kGpuW + kGap) - kGap, 320.0);

  std::string body;
  // Sockets and switches: runs of equal keys in the sorted columns.
  for (size_t i = 0; i < cols.size();) {
    size_t j = i;
    while (j + 1 < cols.size() && cols[j + 1].numa == cols[i].numa) ++j;
    const Gpu& first = *cols[i].gpu;
    std::string label = cols[i].numa >= 0 ? fmt::format("CPU / NUMA node {}", cols[i].numa) : "NUMA node unknown";
    std::string tip = cols[i].numa >= 0 ? "CPUs " + first.cpuAffinity.valueOr("unknown")
                                        : "NUMA node unknown: " + first.numaNode.reason();
    body += spanBox(cols, i, j, kNumaY, kNumaH, "numa-node", label, tip);
    for (size_t k = i; k <= j;) {
      size_t m = k;
      while (m + 1 <= j && cols[m + 1].pcieSwitch == cols[k].pcieSwitch) ++m;
      double mid = (cols[k].x + cols[m].x + kGpuW) / 2;
      if (cols[k].pcieSwitch.empty()) {
        for (size_t q = k; q <= m; ++q)
          body += line(cols[q].x + kGpuW / 2, kNumaY + kNumaH, cols[q].x + kGpuW / 2, kGpuY, "pcie");
      } else {
        body += line(mid, kNumaY + kNumaH, mid, kSwitchY, "pcie");
        body += spanBox(cols, k, m, kSwitchY, kSwitchH, "pcie-switch", "PCIe switch",
                        "PCIe switch, upstream port " + cols[k].pcieSwitch);
        for (size_t q = k; q <= m; ++q)
          body += line(cols[q].x + kGpuW / 2, kSwitchY + kSwitchH, cols[q].x + kGpuW / 2, kGpuY, "pcie");
      }
      k = m + 1;
    }
    i = j + 1;
  }
  for (const Column& c : cols) body += gpuNode(c);

  // NVLinks below the GPU row.
  double bottom = kGpuY + kGpuH;
  bool nvswitch = std::any_of(cols.begin(), cols.end(), [](const Column& c) { return activeLinks(*c.gpu, true) > 0; });
  std::string links;
  if (nvswitch) {
    const double barY = bottom + 70;
    for (const Column& c : cols) {
      int n = activeLinks(*c.gpu, true);
      if (n == 0) continue;
      double x = c.x + kGpuW / 2;
      links += fmt::format(
          "<g class=\"nvlink\"><title>GPU{} to the NVSwitch fabric: {} active NVLinks</title>{}"
          "<text class=\"link-count\" x=\"{:.0f}\" y=\"{:.0f}\">NV{}</text></g>\n",
          c.gpu->index, n, line(x, bottom, x, barY, "nvlink-line"), x + 6, bottom + 38, n);
    }
    links += spanBox(cols, 0, cols.size() - 1, barY, 30, "nvswitch", "NVSwitch fabric",
                     "GPUs reach each other through NVSwitches; fabric state " +
                         (cols.empty() ? std::string("unknown") : cols[0].gpu->fabricState.valueOr("unknown")));
    bottom = barY + 30;
  } else {
    double deepest = bottom;
    for (size_t a = 0; a < cols.size(); ++a)
      for (size_t b = a + 1; b < cols.size(); ++b) {
        int n = nvlinkCountBetween(s, cols[a].gpu->index, cols[b].gpu->index);
        if (n == 0) continue;
        double xa = cols[a].x + kGpuW / 2, xb = cols[b].x + kGpuW / 2;
        double depth = 30 + 22 * static_cast<double>(b - a);
        links += fmt::format(
            "<g class=\"nvlink\"><title>GPU{} - GPU{}: {} NVLinks</title>"
            "<path class=\"nvlink-line\" d=\"M {:.0f} {:.0f} Q {:.0f} {:.0f} {:.0f} {:.0f}\" fill=\"none\"/>"
            "<text class=\"link-count\" x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">NV{}</text></g>\n",
            cols[a].gpu->index, cols[b].gpu->index, n, xa, bottom, (xa + xb) / 2, bottom + 2 * depth, xb, bottom,
            (xa + xb) / 2, bottom + depth + 4, n);
        deepest = std::max(deepest, bottom + depth + 8);
      }
    bottom = deepest;
  }
  const double height = bottom + 34;
  std::string legend = fmt::format(
      "<g class=\"legend\"><line class=\"pcie\" x1=\"{0}\" y1=\"{1:.0f}\" x2=\"{2}\" y2=\"{1:.0f}\"/>"
      "<text x=\"{3}\" y=\"{4:.0f}\">PCIe</text><line class=\"nvlink-line\" x1=\"{5}\" y1=\"{1:.0f}\" x2=\"{6}\" "
      "y2=\"{1:.0f}\"/><text x=\"{7}\" y=\"{4:.0f}\">NVLink (NV# = active links)</text></g>\n",
      kMargin, height - 14, kMargin + 30, kMargin + 36, height - 10, kMargin + 90, kMargin + 120, kMargin + 126);
  return fmt::format(
      "<svg class=\"topology\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {0:.0f} {1:.0f}\" width=\"{0:.0f}\" "
      "height=\"{1:.0f}\" role=\"img\"><title>Topology of {2}</title>\n{3}{4}{5}</svg>\n",
      width, height, htmlEscape(s.hostname.empty() ? std::string("this machine") : s.hostname), links, body, legend);
}

}  // namespace gpupeer::report
