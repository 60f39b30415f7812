// NVML facts: what only the driver's management library knows (links, MIG, fabric, P2P codes).
#include <fmt/format.h>

#include <map>

#include "probe/nvml_api.hpp"
#include "probe/probe_parts.hpp"
#include "probe/sysfs.hpp"

namespace gpupeer::probe {
namespace {

constexpr unsigned kMaxNvLinks = 18;  // NVML_NVLINK_MAX_LINKS in driver 580

template <class T>
Known<T> unknownFrom(const nvml::Api& api, const char* call, nvml::Return r) {
  return Known<T>::unknown(fmt::format("{}: {}", call, api.describe(r)));
}

Known<int> readUnsigned(const nvml::Api& api, nvml::Return (*fn)(nvml::Device, unsigned*), const char* call,
                        nvml::Device dev) {
  if (!fn) return Known<int>::unknown(fmt::format("{} not in this NVML", call));
  unsigned value = 0;
  nvml::Return r = fn(dev, &value);
  if (r != nvml::kSuccess) return unknownFrom<int>(api, call, r);
  return static_cast<int>(value);
}

std::vector<NvLink> readLinks(const nvml::Api& api, nvml::Device dev) {
  std::vector<NvLink> links;
  if (!api.deviceGetNvLinkState) return links;
  for (unsigned l = 0; l < kMaxNvLinks; ++l) {
    int state = 0;
    nvml::Return r = api.deviceGetNvLinkState(dev, l, &state);
    if (r != nvml::kSuccess) continue;  // link index not present on this GPU
    NvLink link;
    link.link = static_cast<int>(l);
    link.active = state == 1;
    unsigned version = 0;
    if (api.deviceGetNvLinkVersion && api.deviceGetNvLinkVersion(dev, l, &version) == nvml::kSuccess)
      link.version = static_cast<int>(version);
    else
      link.version = Known<int>::unknown("nvmlDeviceGetNvLinkVersion failed");
    nvml::PciInfo pci{};
    if (api.deviceGetNvLinkRemotePciInfo && (r = api.deviceGetNvLinkRemotePciInfo(dev, l, &pci)) == nvml::kSuccess)
      link.remoteBusId = sysfs::normalizeBusId(pci.busId);
    else
      link.remoteBusId = Known<std::string>::unknown("nvmlDeviceGetNvLinkRemotePciInfo failed");
    int type = -1;
    if (api.deviceGetNvLinkRemoteDeviceType && api.deviceGetNvLinkRemoteDeviceType(dev, l, &type) == nvml::kSuccess) {
      link.remoteType = type == 0   ? LinkRemote::kGpu
                        : type == 2 ? LinkRemote::kSwitch
                        : type == 1 ? LinkRemote::kCpu
                                    : LinkRemote::kUnknown;
    }
    links.push_back(std::move(link));
  }
  return links;
}

std::string p2pCode(int status) {
  static const char* kCodes[] = {"OK", "CNS", "GNS", "TNS", "DR", "NS", "U"};
  return status >= 0 && status <= 6 ? kCodes[status] : "U";
}

std::string pathFromLevel(int level) {
  switch (level) {
    case 0: return "PIX";  // same board (dual-GPU cards): at most one bridge
    case 10: return "PIX";
    case 20: return "PXB";
    case 30: return "PHB";
    case 40: return "NODE";
    case 50: return "SYS";
  }
  return "";
}

}  // namespace

void readNvml(Snapshot& s) {
  std::string why;
  const nvml::Api* api = nvml::load(why);
  if (!api) {
    s.nvmlVersion = Known<std::string>::unknown(why);
    for (Gpu& g : s.gpus) {
      g.nvlinks = Known<std::vector<NvLink>>::unknown("NVML unavailable: " + why);
      g.migEnabled = Known<bool>::unknown("NVML unavailable");
      g.fabricState = Known<std::string>::unknown("NVML unavailable");
      g.persistenceMode = Known<bool>::unknown("NVML unavailable");
    }
    return;
  }
  char text[96] = {0};
  if (api->systemGetNvmlVersion && api->systemGetNvmlVersion(text, sizeof text) == nvml::kSuccess)
    s.nvmlVersion = std::string(text);
  if (api->systemGetDriverVersion && api->systemGetDriverVersion(text, sizeof text) == nvml::kSuccess)
    s.driverVersion = std::string(text);

  std::map<int, nvml::Device> handles;
  for (Gpu& g : s.gpus) {
    nvml::Device dev = nullptr;
    nvml::Return r = api->deviceGetHandleByPciBusId(g.pciBusId.c_str(), &dev);
    if (r != nvml::kSuccess) {
      std::string reason = fmt::format("nvmlDeviceGetHandleByPciBusId({}): {}", g.pciBusId, api->describe(r));
      g.nvlinks = Known<std::vector<NvLink>>::unknown(reason);
      g.migEnabled = Known<bool>::unknown(reason);
      g.fabricState = Known<std::string>::unknown(reason);
      g.persistenceMode = Known<bool>::unknown(reason);
      continue;
    }
    handles[g.index] = dev;
    g.nvlinks = readLinks(*api, dev);
    unsigned current = 0, pending = 0;
    if (api->deviceGetMigMode && (r = api->deviceGetMigMode(dev, &current, &pending)) == nvml::kSuccess)
      g.migEnabled = current == 1;
    else if (r == nvml::kErrorNotSupported)
      g.migEnabled = false;  // GPUs without MIG support cannot have it on
    else
      g.migEnabled = unknownFrom<bool>(*api, "nvmlDeviceGetMigMode", r);
    g.pcie.currentGen =
        readUnsigned(*api, api->deviceGetCurrPcieLinkGeneration, "nvmlDeviceGetCurrPcieLinkGeneration", dev);
    g.pcie.maxGen = readUnsigned(*api, api->deviceGetMaxPcieLinkGeneration, "nvmlDeviceGetMaxPcieLinkGeneration", dev);
    g.pcie.currentWidth = readUnsigned(*api, api->deviceGetCurrPcieLinkWidth, "nvmlDeviceGetCurrPcieLinkWidth", dev);
    g.pcie.maxWidth = readUnsigned(*api, api->deviceGetMaxPcieLinkWidth, "nvmlDeviceGetMaxPcieLinkWidth", dev);
    int persistence = 0;
    if (!api->deviceGetPersistenceMode)
      g.persistenceMode = Known<bool>::unknown("nvmlDeviceGetPersistenceMode not in this NVML");
    else if ((r = api->deviceGetPersistenceMode(dev, &persistence)) == nvml::kSuccess)
      g.persistenceMode = persistence == 1;
    else
      g.persistenceMode = unknownFrom<bool>(*api, "nvmlDeviceGetPersistenceMode", r);
    nvml::GpuFabricInfo fabric{};
    if (!api->deviceGetGpuFabricInfo) {
      g.fabricState = Known<std::string>::unknown("nvmlDeviceGetGpuFabricInfo not in this NVML");
    } else if ((r = api->deviceGetGpuFabricInfo(dev, &fabric)) == nvml::kSuccess) {
      static const char* kStates[] = {"not-supported", "not-started", "in-progress", "completed"};
      std::string state = fabric.state < 4 ? kStates[fabric.state] : "unknown";
      if (fabric.state == 3 && fabric.status != nvml::kSuccess)
        state = "completed-with-error: " + api->describe(fabric.status);
      g.fabricState = state;
    } else if (r == nvml::kErrorNotSupported) {
      g.fabricState = std::string("not-supported");
    } else {
      g.fabricState = unknownFrom<std::string>(*api, "nvmlDeviceGetGpuFabricInfo", r);
    }
  }
  for (PeerPair& p : s.pairs) {
    auto a = handles.find(p.src), b = handles.find(p.dst);
    if (a == handles.end() || b == handles.end()) continue;
    int status = 0, level = 0;
    nvml::Return r;
    if (api->deviceGetP2PStatus) {
      if ((r = api->deviceGetP2PStatus(a->second, b->second, nvml::kP2pCapsRead, &status)) == nvml::kSuccess)
        p.nvmlP2pRead = p2pCode(status);
      else
        p.nvmlP2pRead = unknownFrom<std::string>(*api, "nvmlDeviceGetP2PStatus(read)", r);
      if ((r = api->deviceGetP2PStatus(a->second, b->second, nvml::kP2pCapsWrite, &status)) == nvml::kSuccess)
        p.nvmlP2pWrite = p2pCode(status);
      else
        p.nvmlP2pWrite = unknownFrom<std::string>(*api, "nvmlDeviceGetP2PStatus(write)", r);
    }
    if (api->deviceGetTopologyCommonAncestor &&
        (r = api->deviceGetTopologyCommonAncestor(a->second, b->second, &level)) == nvml::kSuccess &&
        !pathFromLevel(level).empty())
      p.pciPath = pathFromLevel(level);
  }
}

}  // namespace gpupeer::probe
