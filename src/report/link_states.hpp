#pragma once
// The state of every link the report draws, told from the snapshot alone: NVLink bonds with
// fewer links than the best bond of the machine, NVLinks that are down, GPU PCIe links trained
// narrower than their own or their peers' width (a generation below theirs is shown, not counted:
// links slow down when idle), and GPU pairs without P2P. The drawing,
// its legend and the verdict banner all read this one view, so they cannot disagree.

#include <string>
#include <vector>

#include "gpupeer/snapshot.hpp"

namespace gpupeer::report {

enum class LinkState { kOk, kFewer, kDown, kPcieDowntrained, kNoP2p };

/// CSS class of a state ("state-ok", "state-fewer", "state-down", "state-downtrained",
/// "state-no-p2p"); the page's style gives each its colour and dash.
const char* linkStateClass(LinkState state);

/// NVLinks between two GPUs, when they are joined directly (no NVSwitch). a < b.
struct NvLinkBond {
  int a = 0, b = 0;
  int active = 0;  ///< links up between them
  int best = 0;    ///< links of the best bond on the machine
  int down = 0;    ///< inactive links of both GPUs put on this bond (best - active at most)
  LinkState state() const { return active < best ? LinkState::kFewer : LinkState::kOk; }
};

/// What one GPU's own links look like.
struct GpuLinkState {
  int gpu = 0;
  int switchLinks = 0;           ///< active NVLinks into an NVSwitch fabric
  int bestSwitchLinks = 0;       ///< the most any GPU of the machine has
  int inactive = 0;              ///< NVLinks down on this GPU
  int downUnplaced = 0;          ///< of those, the ones no direct bond accounts for
  bool pcieDowntrained = false;  ///< narrower than its own top or its peers': a fault at any load
  bool pcieSlowerNow = false;    ///< a lower generation than possible: normal when idle
  std::string pcieTrained;       ///< "Gen3 x8"; "" when unknown
  std::string pcieExpected;      ///< "Gen5 x16": its own top or its peers' (same model), whichever is higher
};

/// A GPU pair (a < b) where at least one direction has no P2P.
struct NoP2pPair {
  int a = 0, b = 0;
  std::string code;  ///< nvidia-smi's code of the first direction without P2P ("TNS", "CNS"); "" unknown
};

struct LinkStates {
  bool nvswitch = false;           ///< GPUs reach each other through NVSwitches
  std::vector<NvLinkBond> bonds;   ///< direct bonds, ordered by (a, b); empty on NVSwitch machines
  std::vector<GpuLinkState> gpus;  ///< in the snapshot's GPU order
  std::vector<NoP2pPair> noP2p;    ///< ordered by (a, b)

  const GpuLinkState* gpu(int index) const;
  int fewerBonds() const;       ///< bonds (or GPUs into an NVSwitch) with fewer links than the best
  int linksDown() const;        ///< NVLinks down, over all GPUs
  int pcieDowntrained() const;  ///< GPUs whose PCIe link trained narrow
};

/// The worst state on the path between GPUs a and b: no P2P, then links down or fewer on their
/// NVLink bond (or into the fabric), then a downtrained PCIe link where they have no NVLink.
LinkState pairState(const LinkStates& states, int a, int b);

/// Every link's state in `s`. Pure.
LinkStates linkStates(const Snapshot& s);

}  // namespace gpupeer::report
