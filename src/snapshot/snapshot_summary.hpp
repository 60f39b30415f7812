#pragma once
// The short text `gpupeer snapshot` prints without --json (and `python -m gpupeer snapshot`,
// through the C API): host, versions, each GPU's PCIe and NUMA, IOMMU, the P2P-relevant
// environment. Internal.
#include <string>

#include "gpupeer/snapshot.hpp"

namespace gpupeer {

/// A few lines for people; facts that could not be read show their reason. The snapshot's
/// strings are copied as they are: a caller that prints to a terminal makes them safe.
std::string renderSnapshotSummary(const Snapshot& s);

}  // namespace gpupeer
