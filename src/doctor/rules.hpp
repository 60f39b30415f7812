#pragma once
// The doctor's rules, one function each, grouped by family in rules_*.cpp.

#include <fmt/format.h>

#include <string>
#include <vector>

#include "gpupeer/doctor.hpp"

namespace gpupeer::rules {

using Findings = std::vector<Finding>;

// p2p
void p2pUnsupportedPairs(const Snapshot&, const Measurements*, Findings&);
void p2pCapabilityDisagrees(const Snapshot&, const Measurements*, Findings&);
void p2pCheckFailures(const Snapshot&, const Measurements*, Findings&);
// peers
void tooManyPeers(const Snapshot&, const Measurements*, Findings&);
void mixedGpuModels(const Snapshot&, const Measurements*, Findings&);
// links
void nvlinkInactive(const Snapshot&, const Measurements*, Findings&);
void nvlinkFewerThanPeers(const Snapshot&, const Measurements*, Findings&);
void fabricManager(const Snapshot&, const Measurements*, Findings&);
void pcieNarrow(const Snapshot&, const Measurements*, Findings&);
void pcieSlow(const Snapshot&, const Measurements*, Findings&);
// platform
void iommuTranslated(const Snapshot&, const Measurements*, Findings&);
void acsRedirect(const Snapshot&, const Measurements*, Findings&);
void numaRemoteAffinity(const Snapshot&, const Measurements*, Findings&);
void migEnabled(const Snapshot&, const Measurements*, Findings&);
void exclusiveComputeMode(const Snapshot&, const Measurements*, Findings&);
// versions
void driverTooOld(const Snapshot&, const Measurements*, Findings&);
void nvmlMismatch(const Snapshot&, const Measurements*, Findings&);
void ncclOlderThanGpu(const Snapshot&, const Measurements*, Findings&);
// environment
void p2pDisabledByEnvironment(const Snapshot&, const Measurements*, Findings&);
void ncclP2pLevel(const Snapshot&, const Measurements*, Findings&);
void visibleDevicesOrder(const Snapshot&, const Measurements*, Findings&);
// containers and VMs
void devShmTooSmall(const Snapshot&, const Measurements*, Findings&);
void privateIpcNamespace(const Snapshot&, const Measurements*, Findings&);
void memlockLimit(const Snapshot&, const Measurements*, Findings&);
void ptraceBlocksFdPassing(const Snapshot&, const Measurements*, Findings&);
void deviceNodesDenied(const Snapshot&, const Measurements*, Findings&);
void persistenceModeOff(const Snapshot&, const Measurements*, Findings&);
void ipcSharingFails(const Snapshot&, const Measurements*, Findings&);
// performance
void bandwidthBelowExpectation(const Snapshot&, const Measurements*, Findings&);
void bandwidthAsymmetric(const Snapshot&, const Measurements*, Findings&);

/// The GPUs with these CUDA ordinals with their bus ids, in order, each once.
std::vector<FindingGpu> gpusOf(const Snapshot& s, std::vector<int> indices);
/// Every GPU of the snapshot: for findings about what all processes on them share (/dev/shm,
/// namespaces, limits, the driver's control nodes).
std::vector<FindingGpu> allGpus(const Snapshot& s);
/// The GPUs at either end of these pairs.
std::vector<FindingGpu> gpusOfPairs(const Snapshot& s, const std::vector<std::pair<int, int>>& pairs);

/// Whether the GPU with this ordinal has MIG on (its pairs are the mig rule's).
bool isMig(const Snapshot& s, int index);

/// "GPU0->GPU1, GPU1->GPU0"
std::string pairList(const std::vector<std::pair<int, int>>& pairs);
/// Per-direction rate of the host-staged fallback for a pair: the slower GPU's PCIe link.
double stagedFallbackGBps(const Snapshot& s, int a, int b);

}  // namespace gpupeer::rules
