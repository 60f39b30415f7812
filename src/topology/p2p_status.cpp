// Whether P2P is available for a pair, and the most specific reason when it is not.
#include <fmt/format.h>

#include "gpupeer/topology.hpp"

namespace gpupeer {

std::string p2pCodeMeaning(const std::string& code) {
  if (code == "OK") return "supported";
  if (code == "CNS") return "the chipset (PCIe root complex or hypervisor) does not allow P2P";
  if (code == "GNS") return "the GPU model does not allow P2P over this path (typical for GeForce over PCIe)";
  if (code == "TNS") return "the PCIe topology does not allow P2P (for example a path across CPU sockets)";
  if (code == "DR") return "P2P is disabled by a driver registry key";
  if (code == "NS") return "not supported";
  if (code == "U") return "unknown";
  return "status code " + code;
}

P2pStatus p2pStatus(const Snapshot& s, int src, int dst) {
  P2pStatus out;
  const PeerPair* p = s.findPair(src, dst);
  if (!p) {
    out.reason = fmt::format("pair {}->{} is not in the snapshot", src, dst);
    return out;
  }
  for (int dev : {src, dst}) {
    const Gpu* g = s.findGpu(dev);
    if (g && g->migEnabled.known() && g->migEnabled.value()) {
      out.state = P2pStatus::State::kUnsupported;
      out.code = p->nvmlP2pRead.valueOr("NS");
      out.reason = fmt::format("MIG is enabled on GPU{}: CUDA P2P is not available to MIG instances", dev);
      if (p->canAccessPeer.known() && p->canAccessPeer.value()) {
        out = P2pStatus{};  // driver disagrees: say OK (and leave no MIG reason behind)
        break;
      }
      return out;
    }
  }
  if (!p->canAccessPeer.known()) {
    out.reason = "cudaDeviceCanAccessPeer could not be asked: " + p->canAccessPeer.reason();
    out.code = p->nvmlP2pRead.valueOr("U");
    return out;
  }
  if (p->canAccessPeer.value()) {
    out.state = P2pStatus::State::kOk;
    out.code = "OK";
    return out;
  }
  out.state = P2pStatus::State::kUnsupported;
  out.code = p->nvmlP2pRead.valueOr("NS");
  std::string path = topoCell(s, src, dst);
  out.reason = fmt::format("cudaDeviceCanAccessPeer({}, {}) = 0", src, dst);
  if (p->nvmlP2pRead.known() && p->nvmlP2pRead.value() != "OK")
    out.reason += fmt::format("; NVML: {} ({})", p->nvmlP2pRead.value(), p2pCodeMeaning(p->nvmlP2pRead.value()));
  const Gpu* a = s.findGpu(src);
  const Gpu* b = s.findGpu(dst);
  if (a && b && a->name != b->name)
    out.reason += fmt::format("; different GPU models ({} and {}) rarely get P2P", a->name, b->name);
  if (path == "SYS") out.reason += "; the path crosses the link between CPU sockets";
  return out;
}

}  // namespace gpupeer
