// Theoretical per-direction bandwidth of the link between two GPUs.
#include <fmt/format.h>

#include <algorithm>

#include "gpupeer/topology.hpp"

namespace gpupeer {

int nvlinkCountBetween(const Snapshot& s, int a, int b) {
  const Gpu* ga = s.findGpu(a);
  const Gpu* gb = s.findGpu(b);
  if (!ga || !gb || !ga->nvlinks.known() || !gb->nvlinks.known()) return 0;
  int direct = 0, switchA = 0, switchB = 0;
  for (const NvLink& l : ga->nvlinks.value()) {
    if (!l.active) continue;
    if (l.remoteType == LinkRemote::kSwitch)
      ++switchA;
    else if (l.remoteBusId.known() && l.remoteBusId.value() == gb->pciBusId)
      ++direct;
  }
  for (const NvLink& l : gb->nvlinks.value())
    if (l.active && l.remoteType == LinkRemote::kSwitch) ++switchB;
  if (direct > 0) return direct;
  return std::min(switchA, switchB);
}

std::optional<double> nvlinkLinkRateGBps(const Gpu& gpu) {
  // Per link and direction, by generation (NVIDIA's product pages; nvidia-smi nvlink -s
  // prints 26.562 GB/s per link on H100/H200). GA10x parts (sm_86) use a slower NVLink3.
  if (gpu.ccMajor == 6 && gpu.ccMinor == 0) return 20.0;
  if (gpu.ccMajor == 7) return 25.0;
  if (gpu.ccMajor == 8 && gpu.ccMinor == 0) return 25.0;
  if (gpu.ccMajor == 8 && gpu.ccMinor == 6) return 14.0625;
  if (gpu.ccMajor == 9) return 26.5625;
  if (gpu.ccMajor == 10) return 53.125;
  return std::nullopt;
}

std::string nvlinkGenerationName(const Gpu& gpu) {
  if (gpu.ccMajor == 6) return "NVLink1";
  if (gpu.ccMajor == 7) return "NVLink2";
  if (gpu.ccMajor == 8) return "NVLink3";
  if (gpu.ccMajor == 9) return "NVLink4";
  if (gpu.ccMajor == 10) return "NVLink5";
  return "NVLink";
}

std::optional<double> pcieRateGBps(int gen, int width) {
  // GT/s per lane times line-code efficiency (8b/10b to Gen2, 128b/130b from Gen3), / 8 bits.
  static const double kPerLane[] = {0, 0.25, 0.5, 0.984615, 1.969231, 3.938462, 7.876923};
  if (gen < 1 || gen > 6 || width <= 0) return std::nullopt;
  return kPerLane[gen] * width;
}

std::optional<double> pcieLinkGBps(const Gpu& g) {
  if (!g.pcie.maxGen.known() || !g.pcie.maxWidth.known()) return std::nullopt;
  return pcieRateGBps(g.pcie.maxGen.value(), g.pcie.maxWidth.value());
}

LinkLimit theoreticalLinkLimit(const Snapshot& s, int a, int b) {
  LinkLimit out;
  const Gpu* ga = s.findGpu(a);
  const Gpu* gb = s.findGpu(b);
  if (!ga || !gb) return out;
  if (int links = nvlinkCountBetween(s, a, b); links > 0) {
    auto rate = nvlinkLinkRateGBps(*ga);
    if (rate) {
      out.medium = "NVLink";
      out.gbps = links * *rate;
      out.description = fmt::format("{} x {} at {:.2f} GB/s", links, nvlinkGenerationName(*ga), *rate);
      return out;
    }
  }
  // PCIe: the slower end limits the path (idle links drop speed to save power, so the
  // maximum they train to is the limit).
  auto ra = pcieLinkGBps(*ga), rb = pcieLinkGBps(*gb);
  if (ra && rb) {
    const Gpu& slow = *ra <= *rb ? *ga : *gb;
    out.medium = "PCIe";
    out.gbps = std::min(*ra, *rb);
    out.description = fmt::format("PCIe Gen{} x{}", slow.pcie.maxGen.value(), slow.pcie.maxWidth.value());
  }
  return out;
}

}  // namespace gpupeer
