#pragma once
/// \file topology.hpp
/// Pure views of a Snapshot: how each pair of GPUs is connected (the `nvidia-smi topo -m`
/// classes), what that link can carry in theory, and whether P2P is available and why not.
/// Every function is pure over the Snapshot it is given; any thread.

#include <optional>
#include <string>
#include <vector>

#include "gpupeer/snapshot.hpp"

namespace gpupeer {

/// PCIe path class of two devices from their resolved sysfs paths
/// ("/sys/devices/pci0000:17/0000:17:01.0/.../0000:1a:00.0") and NUMA nodes:
/// PIX (at most one PCIe switch between them), PXB (several bridges, no host bridge),
/// PHB (through one host bridge), NODE (two host bridges of one NUMA node),
/// SYS (across NUMA nodes). Empty when a path cannot be parsed.
std::string classifyPciPath(const std::string& sysfsA, const std::string& sysfsB, const Known<int>& numaA,
                            const Known<int>& numaB);

/// The PCIe switch a device sits behind, named by the bus id of the switch's upstream port
/// ("0000:3b:00.0" for ".../0000:3a:02.0/0000:3b:00.0/0000:3c:08.0/0000:3d:00.0"): the bridge
/// above the device's own downstream port. "" when the device hangs off a root port directly
/// or the path cannot be parsed. Pure; used to draw the topology.
std::string pcieSwitchOf(const std::string& sysfsPath);

/// NVLinks that join GPUs a and b: direct links between them, or, on NVSwitch machines,
/// the smaller of the two GPUs' active switch links (as `nvidia-smi topo -m` counts them).
/// 0 when NVLink state is unknown or there is none.
int nvlinkCountBetween(const Snapshot& s, int a, int b);

/// Per-link, per-direction NVLink rate (GB/s) of a GPU's generation, as `nvidia-smi nvlink -s`
/// reports it (NVLink4 on Hopper: 26.5625). nullopt for an architecture without NVLink data.
std::optional<double> nvlinkLinkRateGBps(const Gpu& gpu);
/// "NVLink4" for Hopper, ...; "NVLink" when the generation is not known.
std::string nvlinkGenerationName(const Gpu& gpu);

/// Per-direction PCIe rate (GB/s) of `width` lanes at generation `gen` (line coding included,
/// protocol overhead not). nullopt for an unknown generation.
std::optional<double> pcieRateGBps(int gen, int width);

/// Per-direction rate of a GPU's own PCIe link at the generation and width it can train to;
/// nullopt when either is unknown. (A link trained lower is a separate finding.)
std::optional<double> pcieLinkGBps(const Gpu& gpu);

/// What the link between a pair can carry in one direction, in theory.
struct LinkLimit {
  std::string medium;                             ///< "NVLink", "PCIe" or "" when unknown
  double gbps = 0;                                ///< per direction
  std::string description;                        ///< "18 x NVLink4 at 26.56 GB/s"
  bool known() const { return !medium.empty(); }  ///< whether the medium could be told
};
/// The limit of the link between GPUs a and b: NVLink where they share links (count times the
/// per-link rate), else the slower of the two GPUs' PCIe links.
LinkLimit theoreticalLinkLimit(const Snapshot& s, int a, int b);

/// The cell of the topology matrix: "X", "NV18", "PIX", ..., or "?" when unknown.
std::string topoCell(const Snapshot& s, int a, int b);

/// P2P availability of an ordered pair and, when not OK, why.
struct P2pStatus {
  /// Available, known not to be, or not known (the probe could not tell).
  enum class State { kOk, kUnsupported, kUnknown } state = State::kUnknown;
  std::string code;    ///< "OK", or nvidia-smi's code when it is known (CNS, GNS, TNS, NS, ...)
  std::string reason;  ///< empty when OK
};
P2pStatus p2pStatus(const Snapshot& s, int src, int dst);

/// Meaning of an `nvidia-smi topo -p2p` status code, in our words.
std::string p2pCodeMeaning(const std::string& code);

/// The text report of `gpupeer topo`: matrix, affinity columns, legend, P2P per pair.
std::string renderTopology(const Snapshot& s);
/// The same as JSON text.
std::string topologyToJson(const Snapshot& s);

}  // namespace gpupeer
