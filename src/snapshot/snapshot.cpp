#include "gpupeer/snapshot.hpp"

namespace gpupeer {

const PeerPair* Snapshot::findPair(int src, int dst) const {
  for (const PeerPair& p : pairs)
    if (p.src == src && p.dst == dst) return &p;
  return nullptr;
}

const Gpu* Snapshot::findGpu(int index) const {
  for (const Gpu& g : gpus)
    if (g.index == index) return &g;
  return nullptr;
}

const std::string* Snapshot::env(const std::string& name) const {
  auto it = environment.find(name);
  return it == environment.end() ? nullptr : &it->second;
}

Known<bool> Platform::hasCapability(int bit) const {
  if (!capEff.known()) return Known<bool>::unknown(capEff.reason());
  // /proc/self/status prints CapEff as 16 hex digits; parsed by hand so that no malformed
  // value can throw.
  std::uint64_t mask = 0;
  for (char c : capEff.value()) {
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (v < 0) return Known<bool>::unknown("capEff is not hexadecimal: " + capEff.value());
    mask = (mask << 4) | static_cast<std::uint64_t>(v);
  }
  return bit >= 0 && bit < 64 && ((mask >> bit) & 1) != 0;
}

IommuVendor iommuVendorOf(const Known<std::string>& cpuVendor) {
  if (!cpuVendor.known()) return IommuVendor::kUnknown;
  const std::string& v = cpuVendor.value();
  if (v == "GenuineIntel") return IommuVendor::kIntel;
  // Hygon's Dhyana is AMD's Zen under licence, with AMD's IOMMU driver.
  if (v == "AuthenticAMD" || v == "HygonGenuine") return IommuVendor::kAmd;
  if (v.rfind("ARM implementer ", 0) == 0) return IommuVendor::kArm;
  return IommuVendor::kUnknown;
}

bool Snapshot::envFlag(const std::string& name) const {
  const std::string* v = env(name);
  return v && !v->empty() && *v != "0" && *v != "false";
}

const std::vector<std::string>& p2pRelevantEnvironmentVariables() {
  static const std::vector<std::string> kNames = {"CUDA_VISIBLE_DEVICES",
                                                  "CUDA_DEVICE_ORDER",
                                                  "CUDA_LAUNCH_BLOCKING",
                                                  "CUDA_MODULE_LOADING",
                                                  "GPUPEER_P2P_DISABLE",
                                                  "NCCL_P2P_DISABLE",
                                                  "NCCL_P2P_LEVEL",
                                                  "NCCL_P2P_DIRECT_DISABLE",
                                                  "NCCL_P2P_USE_CUDA_MEMCPY",
                                                  "NCCL_SHM_DISABLE",
                                                  "NCCL_NVLS_ENABLE",
                                                  "NCCL_CUMEM_ENABLE",
                                                  "NCCL_CUMEM_HOST_ENABLE",
                                                  "NCCL_IB_DISABLE",
                                                  "NCCL_ALGO",
                                                  "NCCL_PROTO",
                                                  "NCCL_DEBUG",
                                                  "NCCL_IGNORE_DISABLED_P2P",
                                                  "NCCL_TOPO_FILE",
                                                  "NVIDIA_VISIBLE_DEVICES"};
  return kNames;
}

}  // namespace gpupeer
