// The topology drawing: CPU sockets (NUMA nodes) at the top, PCIe switches below them, a row
// of GPUs, and the NVLinks underneath, either to one NVSwitch bar or as arcs between GPUs.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "gpupeer/topology.hpp"
#include "report/link_states.hpp"
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

// A GPU's own PCIe link, from its switch or socket down to it, in its state; a link trained
// narrow names what it trained to beside the line.
std::string gpuUplink(const Column& c, double top, const GpuLinkState* st) {
  const double x = c.x + kGpuW / 2;
  const bool low = st && st->pcieDowntrained;
  std::string tip = fmt::format("GPU{} PCIe link", c.gpu->index);
  if (st && !st->pcieTrained.empty())
    tip += low ? fmt::format(": trained at {} where {} is possible (its own top or its peers')", st->pcieTrained,
                             st->pcieExpected)
           : st->pcieSlowerNow ? fmt::format(
                                     ": {} now, {} possible (GPUs slow the link when idle: look again "
                                     "under load, e.g. during gpupeer bench)",
                                     st->pcieTrained, st->pcieExpected)
                               : ": " + st->pcieTrained;
  std::string html = fmt::format("<g class=\"pcie-link {}\" data-gpu=\"{}\"><title>{}</title>{}",
                                 linkStateClass(low ? LinkState::kPcieDowntrained : LinkState::kOk), c.gpu->index,
                                 htmlEscape(tip), line(x, top, x, kGpuY, "pcie"));
  if (low)
    html += fmt::format("<text class=\"link-note\" x=\"{:.0f}\" y=\"{:.0f}\">{}</text>", x + 5, kGpuY - 8,
                        htmlEscape(st->pcieTrained));
  return html + "</g>\n";
}

// The most pairs without P2P drawn as arcs, one per pair (noP2pArcs; more: noP2pStubs), and
// how far beside a GPU's middle their lines start, clear of its NVLinks.
constexpr std::size_t kMostNoP2pArcs = 6;
constexpr double kNoP2pShift = 26;

// A quadratic arc below the GPU row from column a to column b, `depth` deep at its middle.
std::string arc(double xa, double xb, double y, double depth, const char* cls) {
  return fmt::format("<path class=\"{}\" d=\"M {:.0f} {:.0f} Q {:.0f} {:.0f} {:.0f} {:.0f}\" fill=\"none\"/>", cls, xa,
                     y, (xa + xb) / 2, y + 2 * depth, xb, y);
}

// The label of a pair's arc, in the pair's state.
std::string label(LinkState state, int a, int b, const char* cls, double x, double y, const std::string& text) {
  return fmt::format(
      "<g class=\"arc-label {}\" data-pair=\"{}-{}\"><text class=\"{}\" x=\"{:.0f}\" y=\"{:.0f}\" "
      "text-anchor=\"middle\">{}</text></g>\n",
      linkStateClass(state), a, b, cls, x, y, htmlEscape(text));
}

// NVLinks of a GPU that no bond accounts for: a short broken stub under it, labelled on its left.
std::string downStub(const Column& c, double top, int down, double dx) {
  if (down <= 0) return "";
  const double x = c.x + kGpuW / 2 + dx;
  return fmt::format(
      "<g class=\"nvlink {}\" data-gpu=\"{}\"><title>GPU{}: {} NVLink(s) down</title>{}"
      "<text class=\"link-note\" x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"end\">{} down</text></g>\n",
      linkStateClass(LinkState::kDown), c.gpu->index, c.gpu->index, down, line(x, top, x, top + 26, "nvlink-line"),
      x - 5, top + 20, down);
}

// The pairs without P2P as drawn: their shapes, their labels (drawn last, over every line) and
// how far down they reach.
struct NoP2pDrawing {
  std::string shapes, labels;
  double deepest = 0;
};

// Red dotted arcs, one per pair, from beside each GPU's NVLinks, below `bottom` (where the
// NVLinks end).
NoP2pDrawing noP2pArcs(const std::vector<NoP2pPair>& pairs, const std::map<int, const Column*>& colOf, double bottom) {
  NoP2pDrawing d;
  const double top = kGpuY + kGpuH;
  for (const NoP2pPair& pair : pairs) {
    const Column *ca = colOf.at(pair.a), *cb = colOf.at(pair.b);
    if (ca->x > cb->x) std::swap(ca, cb);
    const double xa = ca->x + kGpuW / 2 + kNoP2pShift, xb = cb->x + kGpuW / 2 - kNoP2pShift;
    const double depth = bottom - top + 14 + 18 * (cb->x - ca->x) / (kGpuW + kGap);
    d.shapes += fmt::format(
        "<g class=\"no-p2p {}\" data-pair=\"{}-{}\"><title>GPU{} - GPU{}: no P2P ({}); the P2P section says "
        "why</title>{}</g>\n",
        linkStateClass(LinkState::kNoP2p), pair.a, pair.b, pair.a, pair.b,
        htmlEscape(pair.code.empty() ? std::string("no code") : pair.code), arc(xa, xb, top, depth, "no-p2p-line"));
    d.labels += label(LinkState::kNoP2p, pair.a, pair.b, "link-note", (xa + xb) / 2, top + depth + 14, "no P2P");
    d.deepest = std::max(d.deepest, top + depth + 20);
  }
  return d;
}

// Past a few pairs the arcs and their labels pile into a knot (8 GPUs without P2P: 28 of them):
// each GPU gets one dotted stub saying how many peers it lacks P2P with; its tooltip names them,
// and the P2P section gives each pair's reason.
NoP2pDrawing noP2pStubs(const std::vector<NoP2pPair>& pairs, const std::vector<Column>& cols, double bottom) {
  std::map<int, std::vector<int>> without;
  for (const NoP2pPair& pair : pairs) {
    without[pair.a].push_back(pair.b);
    without[pair.b].push_back(pair.a);
  }
  NoP2pDrawing d;
  const double top = kGpuY + kGpuH, stubBottom = bottom + 30;
  for (const Column& c : cols) {
    auto it = without.find(c.gpu->index);
    if (it == without.end()) continue;
    std::vector<int>& peers = it->second;
    std::sort(peers.begin(), peers.end());
    const double x = c.x + kGpuW / 2 + kNoP2pShift;
    d.shapes += fmt::format(
        "<g class=\"no-p2p {}\" data-gpu=\"{}\"><title>GPU{}: no P2P to GPU{}; the P2P section says why</title>{}"
        "<text class=\"link-note\" x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">no P2P to {} GPU{}</text></g>\n",
        linkStateClass(LinkState::kNoP2p), c.gpu->index, c.gpu->index, fmt::join(peers, ", GPU"),
        line(x, top, x, stubBottom, "no-p2p-line"), x, stubBottom + 14, peers.size(), peers.size() == 1 ? "" : "s");
  }
  d.deepest = stubBottom + 22;
  return d;
}

}  // namespace

std::string topologySvg(const Snapshot& s, const LinkStates& states) {
  std::vector<Column> cols;
  for (const Gpu& g : s.gpus)
    cols.push_back({&g, g.numaNode.known() ? g.numaNode.value() : -1,
                    g.sysfsPath.known() ? pcieSwitchOf(g.sysfsPath.value()) : "", 0});
  // Unknown NUMA nodes last; GPUs behind one switch side by side.
  std::stable_sort(cols.begin(), cols.end(), [](const Column& a, const Column& b) {
    auto key = [](const Column& c) { return std::make_tuple(c.numa < 0, c.numa, c.pcieSwitch, c.gpu->index); };
    return key(a) < key(b);
  });
  std::map<int, const Column*> colOf;
  for (size_t i = 0; i < cols.size(); ++i) {
    cols[i].x = kMargin + static_cast<double>(i) * (kGpuW + kGap);
    colOf[cols[i].gpu->index] = &cols[i];
  }
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
      const bool switched = !cols[k].pcieSwitch.empty();
      if (switched) {
        body += line(mid, kNumaY + kNumaH, mid, kSwitchY, "pcie");
        body += spanBox(cols, k, m, kSwitchY, kSwitchH, "pcie-switch", "PCIe switch",
                        "PCIe switch, upstream port " + cols[k].pcieSwitch);
      }
      for (size_t q = k; q <= m; ++q)
        body += gpuUplink(cols[q], switched ? kSwitchY + kSwitchH : kNumaY + kNumaH, states.gpu(cols[q].gpu->index));
      k = m + 1;
    }
    i = j + 1;
  }
  for (const Column& c : cols) body += gpuNode(c);

  // NVLinks below the GPU row, each in its state. The labels of the arcs go last, over every
  // line, so that no later arc crosses out an earlier label.
  double bottom = kGpuY + kGpuH;
  std::string links, labels;
  if (states.nvswitch) {
    const double barY = bottom + 70;
    for (const Column& c : cols) {
      const GpuLinkState* st = states.gpu(c.gpu->index);
      const int n = st ? st->switchLinks : 0;
      const double x = c.x + kGpuW / 2;
      if (n > 0) {
        const bool fewer = n < st->bestSwitchLinks;
        std::string tip = fmt::format("GPU{} to the NVSwitch fabric: {} active NVLinks", c.gpu->index, n);
        if (fewer) tip += fmt::format(", fewer than the {} of its peers", st->bestSwitchLinks);
        links += fmt::format(
            "<g class=\"nvlink {}\" data-gpu=\"{}\"><title>{}</title>{}"
            "<text class=\"link-count\" x=\"{:.0f}\" y=\"{:.0f}\">NV{}</text></g>\n",
            linkStateClass(fewer ? LinkState::kFewer : LinkState::kOk), c.gpu->index, htmlEscape(tip),
            line(x, bottom, x, barY, "nvlink-line"), x + 6, bottom + 38, n);
      }
      if (st) links += downStub(c, bottom, st->downUnplaced, -22);
    }
    links += spanBox(cols, 0, cols.size() - 1, barY, 30, "nvswitch", "NVSwitch fabric",
                     "GPUs reach each other through NVSwitches; fabric state " +
                         (cols.empty() ? std::string("unknown") : cols[0].gpu->fabricState.valueOr("unknown")));
    bottom = barY + 30;
  } else {
    double deepest = bottom;
    for (const NvLinkBond& bond : states.bonds) {
      const Column *ca = colOf[bond.a], *cb = colOf[bond.b];
      if (ca->x > cb->x) std::swap(ca, cb);
      const double xa = ca->x + kGpuW / 2, xb = cb->x + kGpuW / 2;
      const double depth = 30 + 22 * (cb->x - ca->x) / (kGpuW + kGap);
      const bool fewer = bond.state() == LinkState::kFewer;
      std::string tip = fmt::format("GPU{} - GPU{}: {} NVLinks", bond.a, bond.b, bond.active);
      if (fewer) tip += fmt::format(", fewer than the {} of the best pair", bond.best);
      links += fmt::format("<g class=\"nvlink {}\" data-pair=\"{}-{}\"><title>{}</title>{}</g>\n",
                           linkStateClass(bond.state()), bond.a, bond.b, htmlEscape(tip),
                           arc(xa, xb, bottom, depth, "nvlink-line"));
      labels += label(bond.state(), bond.a, bond.b, "link-count", (xa + xb) / 2, bottom + depth + 4,
                      fmt::format("NV{}{}", bond.active, fewer ? fmt::format(" of {}", bond.best) : ""));
      if (bond.down > 0) {
        // The missing links as a broken arc inside the bond's, labelled just above its middle.
        const double inner = depth - 14;
        links += fmt::format(
            "<g class=\"nvlink {}\" data-pair=\"{}-{}\"><title>GPU{} - GPU{}: {} NVLink(s) down</title>{}</g>\n",
            linkStateClass(LinkState::kDown), bond.a, bond.b, bond.a, bond.b, bond.down,
            arc(xa, xb, bottom, inner, "nvlink-line"));
        labels += label(LinkState::kDown, bond.a, bond.b, "link-note", (xa + xb) / 2, bottom + inner - 5,
                        fmt::format("{} down", bond.down));
      }
      deepest = std::max(deepest, bottom + depth + 8);
    }
    for (const Column& c : cols)
      if (const GpuLinkState* st = states.gpu(c.gpu->index)) links += downStub(c, bottom, st->downUnplaced, -40);
    bottom = std::max(deepest, bottom + 30);
  }

  // Pairs without P2P, under everything else.
  const NoP2pDrawing noP2p = states.noP2p.size() <= kMostNoP2pArcs ? noP2pArcs(states.noP2p, colOf, bottom)
                                                                   : noP2pStubs(states.noP2p, cols, bottom);
  labels += noP2p.labels;
  const double deepest = std::max(bottom, noP2p.deepest);
  const double height = deepest + 12;
  return fmt::format(
      "<svg class=\"topology\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {0:.0f} {1:.0f}\" width=\"{0:.0f}\" "
      "height=\"{1:.0f}\" role=\"img\"><title>Topology of {2}</title>\n{3}{4}{5}{6}</svg>\n",
      width, height, htmlEscape(s.hostname.empty() ? std::string("this machine") : s.hostname), links, noP2p.shapes,
      body, labels);
}

std::string linkLegendHtml(const LinkStates& states) {
  struct Entry {
    const char* key;  // data-legend: what the entry stands for
    const char* cls;
    const char* swatch;
    std::string text;
    int count;  // -1: not counted (the healthy kinds)
  };
  const std::vector<Entry> entries = {
      {"nvlink", "state-ok", "nvlink", "NVLink (NV# = active links)", -1},
      {"nvlink-fewer", "state-fewer", "nvlink", "NVLink with fewer links than its peers", states.fewerBonds()},
      {"nvlink-down", "state-down", "nvlink", "NVLink down", states.linksDown()},
      {"pcie", "state-ok", "pcie", "PCIe", -1},
      {"pcie-downtrained", "state-downtrained", "pcie", "PCIe trained narrower than its own or its peers' width",
       states.pcieDowntrained()},
      {"no-p2p", "state-no-p2p", "no-p2p", "GPU pair without P2P", static_cast<int>(states.noP2p.size())},
  };
  std::string html = "<ul class=\"link-legend\">";
  for (const Entry& e : entries) {
    html += fmt::format("<li class=\"legend-entry {} {}\" data-legend=\"{}\"><span class=\"swatch\"></span>{}", e.cls,
                        e.swatch, e.key, htmlEscape(e.text));
    if (e.count >= 0) html += fmt::format(" <b>({})</b>", e.count);
    html += "</li>";
  }
  return html + "</ul>\n";
}

}  // namespace gpupeer::report
