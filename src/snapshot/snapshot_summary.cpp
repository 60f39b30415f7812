#include "snapshot/snapshot_summary.hpp"

#include <fmt/format.h>

#include <iterator>

#include "gpupeer/probe.hpp"
#include "gpupeer/version_text.hpp"

namespace gpupeer {
namespace {

std::string knownText(const Known<std::string>& k) { return k.known() ? k.value() : "unknown (" + k.reason() + ")"; }
std::string knownText(const Known<int>& k) {
  return k.known() ? std::to_string(k.value()) : "unknown (" + k.reason() + ")";
}
// A version code as people write it ("2.28.3", "13.0"), else why it is unknown.
std::string versionText(const Known<int>& k, std::string (*text)(int)) {
  return k.known() ? text(k.value()) : "unknown (" + k.reason() + ")";
}

}  // namespace

std::string renderSnapshotSummary(const Snapshot& s) {
  std::string out;
  auto line = std::back_inserter(out);
  fmt::format_to(line, "host {} at {}\n", s.hostname, s.capturedAt);
  fmt::format_to(line, "driver {}; CUDA driver {}, runtime {}; NVML {}; NCCL {}\n", knownText(s.driverVersion),
                 versionText(s.cudaDriverVersion, cudaVersionText), versionText(s.cudaRuntimeVersion, cudaVersionText),
                 knownText(s.nvmlVersion), versionText(s.ncclVersion, ncclVersionText));
  if (s.gpus.empty()) fmt::format_to(line, "no GPU visible: {}\n", whyNoGpu(s));
  for (const Gpu& g : s.gpus) {
    fmt::format_to(line, "GPU{} {} {} cc {}.{} {:.1f} GiB {} SMs, PCIe Gen{} x{} (max Gen{} x{}), NUMA {}, MIG {}\n",
                   g.index, g.name, g.pciBusId, g.ccMajor, g.ccMinor, g.memoryBytes / 1073741824.0, g.smCount,
                   knownText(g.pcie.currentGen), knownText(g.pcie.currentWidth), knownText(g.pcie.maxGen),
                   knownText(g.pcie.maxWidth), knownText(g.numaNode),
                   g.migEnabled.known() ? (g.migEnabled.value() ? "on" : "off") : "unknown");
  }
  fmt::format_to(line, "IOMMU: {}\n", knownText(s.platform.iommu));
  for (const auto& [k, v] : s.environment) fmt::format_to(line, "env {}={}\n", k, v);
  fmt::format_to(line, "(use --json for the full snapshot)\n");
  return out;
}

}  // namespace gpupeer
