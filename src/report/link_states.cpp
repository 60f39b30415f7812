// Link states from a snapshot; see link_states.hpp.
#include "report/link_states.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "gpupeer/topology.hpp"

namespace gpupeer::report {
namespace {

int countLinks(const Gpu& g, bool active, bool toSwitchOnly) {
  if (!g.nvlinks.known()) return 0;
  return static_cast<int>(std::count_if(g.nvlinks.value().begin(), g.nvlinks.value().end(), [&](const NvLink& l) {
    return l.active == active && (!toSwitchOnly || l.remoteType == LinkRemote::kSwitch);
  }));
}

std::string genWidth(int gen, int width) { return fmt::format("Gen{} x{}", gen, width); }

// Trained narrower than the GPU's own top, or than its peers of the same model trained to: a
// card whose own maximum reads low (a slot that caps it) still shows against its peers. A lower
// generation alone is not a fault: GPUs drop the link's speed when idle (doctor's pcie-speed
// finding says the same), so it is told, not counted.
void pcieState(const Snapshot& s, const Gpu& g, GpuLinkState& out) {
  const PcieLink& l = g.pcie;
  if (!l.currentGen.known() || !l.currentWidth.known()) return;
  int gen = l.maxGen.valueOr(l.currentGen.value()), width = l.maxWidth.valueOr(l.currentWidth.value());
  for (const Gpu& peer : s.gpus)
    if (peer.name == g.name && peer.pcie.currentGen.known() && peer.pcie.currentWidth.known()) {
      gen = std::max(gen, peer.pcie.currentGen.value());
      width = std::max(width, peer.pcie.currentWidth.value());
    }
  out.pcieTrained = genWidth(l.currentGen.value(), l.currentWidth.value());
  out.pcieExpected = genWidth(gen, width);
  out.pcieDowntrained = l.currentWidth.value() < width;
  out.pcieSlowerNow = l.currentGen.value() < gen;
}

}  // namespace

const char* linkStateClass(LinkState state) {
  switch (state) {
    case LinkState::kOk: return "state-ok";
    case LinkState::kFewer: return "state-fewer";
    case LinkState::kDown: return "state-down";
    case LinkState::kPcieDowntrained: return "state-downtrained";
    case LinkState::kNoP2p: return "state-no-p2p";
  }
  return "state-ok";
}

const GpuLinkState* LinkStates::gpu(int index) const {
  for (const GpuLinkState& g : gpus)
    if (g.gpu == index) return &g;
  return nullptr;
}

int LinkStates::fewerBonds() const {
  if (nvswitch)
    return static_cast<int>(std::count_if(gpus.begin(), gpus.end(), [](const GpuLinkState& g) {
      return g.bestSwitchLinks > 0 && g.switchLinks < g.bestSwitchLinks;
    }));
  return static_cast<int>(
      std::count_if(bonds.begin(), bonds.end(), [](const NvLinkBond& b) { return b.state() == LinkState::kFewer; }));
}

int LinkStates::linksDown() const {
  int n = 0;
  for (const NvLinkBond& b : bonds) n += b.down;
  for (const GpuLinkState& g : gpus) n += g.downUnplaced;
  return n;
}

int LinkStates::pcieDowntrained() const {
  return static_cast<int>(
      std::count_if(gpus.begin(), gpus.end(), [](const GpuLinkState& g) { return g.pcieDowntrained; }));
}

LinkState pairState(const LinkStates& states, int a, int b) {
  // Both lists are ordered by (a, b): a binary search each, so a matrix of 128 GPUs stays quick.
  const int lo = std::min(a, b), hi = std::max(a, b);
  auto p = std::lower_bound(states.noP2p.begin(), states.noP2p.end(), std::make_pair(lo, hi),
                            [](const NoP2pPair& x, const std::pair<int, int>& key) {
                              return std::tie(x.a, x.b) < std::tie(key.first, key.second);
                            });
  if (p != states.noP2p.end() && p->a == lo && p->b == hi) return LinkState::kNoP2p;
  const GpuLinkState *ga = states.gpu(a), *gb = states.gpu(b);
  if (states.nvswitch) {
    for (const GpuLinkState* g : {ga, gb})
      if (g && g->switchLinks < g->bestSwitchLinks) return g->switchLinks == 0 ? LinkState::kDown : LinkState::kFewer;
    if (ga && gb && ga->switchLinks > 0 && gb->switchLinks > 0) return LinkState::kOk;
  } else {
    auto bond = std::lower_bound(states.bonds.begin(), states.bonds.end(), std::make_pair(lo, hi),
                                 [](const NvLinkBond& x, const std::pair<int, int>& key) {
                                   return std::tie(x.a, x.b) < std::tie(key.first, key.second);
                                 });
    if (bond != states.bonds.end() && bond->a == lo && bond->b == hi) return bond->state();
  }
  for (const GpuLinkState* g : {ga, gb})
    if (g && g->pcieDowntrained) return LinkState::kPcieDowntrained;
  return LinkState::kOk;
}

LinkStates linkStates(const Snapshot& s) {
  LinkStates out;
  for (const Gpu& g : s.gpus)
    if (countLinks(g, true, true) > 0) out.nvswitch = true;
  int bestSwitch = 0;
  for (const Gpu& g : s.gpus) {
    GpuLinkState st;
    st.gpu = g.index;
    st.switchLinks = countLinks(g, true, true);
    st.inactive = countLinks(g, false, false);
    st.downUnplaced = st.inactive;
    bestSwitch = std::max(bestSwitch, st.switchLinks);
    pcieState(s, g, st);
    out.gpus.push_back(st);
  }
  for (GpuLinkState& g : out.gpus) g.bestSwitchLinks = out.nvswitch ? bestSwitch : 0;

  if (!out.nvswitch) {
    int best = 0;
    for (std::size_t i = 0; i < s.gpus.size(); ++i)
      for (std::size_t j = i + 1; j < s.gpus.size(); ++j) {
        int a = std::min(s.gpus[i].index, s.gpus[j].index), b = std::max(s.gpus[i].index, s.gpus[j].index);
        int n = nvlinkCountBetween(s, a, b);
        if (n > 0) out.bonds.push_back({a, b, n, 0, 0});
        best = std::max(best, n);
      }
    std::sort(out.bonds.begin(), out.bonds.end(),
              [](const NvLinkBond& x, const NvLinkBond& y) { return std::tie(x.a, x.b) < std::tie(y.a, y.b); });
    // An inactive link names no far end, so it is put on a bond that lacks links and whose two
    // GPUs both have links down: the only place it can have gone. What no bond explains stays
    // with its GPU.
    std::map<int, GpuLinkState*> byIndex;
    for (GpuLinkState& g : out.gpus) byIndex[g.gpu] = &g;
    for (NvLinkBond& bond : out.bonds) {
      bond.best = best;
      GpuLinkState *a = byIndex[bond.a], *b = byIndex[bond.b];
      bond.down = std::min({best - bond.active, a->downUnplaced, b->downUnplaced});
      a->downUnplaced -= bond.down, b->downUnplaced -= bond.down;
    }
  }

  for (std::size_t i = 0; i < s.gpus.size(); ++i)
    for (std::size_t j = i + 1; j < s.gpus.size(); ++j) {
      int a = std::min(s.gpus[i].index, s.gpus[j].index), b = std::max(s.gpus[i].index, s.gpus[j].index);
      P2pStatus ab = p2pStatus(s, a, b), ba = p2pStatus(s, b, a);
      const P2pStatus* no = ab.state == P2pStatus::State::kUnsupported   ? &ab
                            : ba.state == P2pStatus::State::kUnsupported ? &ba
                                                                         : nullptr;
      if (no) out.noP2p.push_back({a, b, no->code});
    }
  std::sort(out.noP2p.begin(), out.noP2p.end(),
            [](const NoP2pPair& x, const NoP2pPair& y) { return std::tie(x.a, x.b) < std::tie(y.a, y.b); });
  return out;
}

}  // namespace gpupeer::report
