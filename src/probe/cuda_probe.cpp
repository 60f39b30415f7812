// CUDA runtime facts. The runtime is linked statically; only the driver must be present.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "cuda/cuda_status.hpp"
#include "gpupeer/log.hpp"
#include "probe/probe_parts.hpp"
#include "probe/sysfs.hpp"

namespace gpupeer::probe {
namespace {

std::string describe(cudaError_t err) { return fmt::format("{} ({})", cudaGetErrorName(err), cudaGetErrorString(err)); }

std::string formatUuid(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  return fmt::format(
      "GPU-{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
      "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

template <class T>
Known<T> p2pAttribute(cudaDeviceP2PAttr attr, int src, int dst) {
  int value = 0;
  cudaError_t err = cudaDeviceGetP2PAttribute(&value, attr, src, dst);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return Known<T>::unknown("cudaDeviceGetP2PAttribute: " + describe(err));
  }
  return static_cast<T>(value);
}

}  // namespace

void readCuda(Snapshot& s) {
  int version = 0;
  if (cudaError_t err = cudaRuntimeGetVersion(&version); err == cudaSuccess)
    s.cudaRuntimeVersion = version;
  else
    s.cudaRuntimeVersion = Known<int>::unknown(describe(err));
  if (cudaError_t err = cudaDriverGetVersion(&version); err == cudaSuccess && version > 0)
    s.cudaDriverVersion = version;
  else
    s.cudaDriverVersion = Known<int>::unknown("no CUDA driver (libcuda.so.1) found");

  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    s.deviceCount = Known<int>::unknown("cudaGetDeviceCount: " + describe(err));
    GPUPEER_INFO("no GPU visible: {}", s.deviceCount.reason());
    return;
  }
  s.deviceCount = count;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    if (cudaError_t e = cudaGetDeviceProperties(&prop, d); e != cudaSuccess) {
      (void)cudaGetLastError();
      GPUPEER_WARN("cudaGetDeviceProperties on device {}: {}", d, describe(e));
      continue;
    }
    Gpu g;
    g.index = d;
    g.name = prop.name;
    g.uuid = formatUuid(prop.uuid);
    g.pciBusId = busIdOf(d);
    g.ccMajor = prop.major;
    g.ccMinor = prop.minor;
    g.memoryBytes = prop.totalGlobalMem;
    g.smCount = prop.multiProcessorCount;
    int mode = 0;
    if (cudaDeviceGetAttribute(&mode, cudaDevAttrComputeMode, d) == cudaSuccess) {
      static const char* kModes[] = {"default", "exclusive-thread", "prohibited", "exclusive-process"};
      g.computeMode = mode >= 0 && mode < 4 ? std::string(kModes[mode]) : fmt::format("mode {}", mode);
    }
    s.gpus.push_back(std::move(g));
  }
  for (const Gpu& a : s.gpus) {
    for (const Gpu& b : s.gpus) {
      if (a.index == b.index) continue;
      PeerPair p;
      p.src = a.index;
      p.dst = b.index;
      int can = 0;
      if (cudaError_t e = cudaDeviceCanAccessPeer(&can, a.index, b.index); e == cudaSuccess)
        p.canAccessPeer = can != 0;
      else
        p.canAccessPeer = Known<bool>::unknown("cudaDeviceCanAccessPeer: " + describe(e));
      (void)cudaGetLastError();
      p.performanceRank = p2pAttribute<int>(cudaDevP2PAttrPerformanceRank, a.index, b.index);
      p.accessSupported = p2pAttribute<bool>(cudaDevP2PAttrAccessSupported, a.index, b.index);
      p.nativeAtomics = p2pAttribute<bool>(cudaDevP2PAttrNativeAtomicSupported, a.index, b.index);
      p.arrayAccess = p2pAttribute<bool>(cudaDevP2PAttrCudaArrayAccessSupported, a.index, b.index);
      p.nvmlP2pRead = Known<std::string>::unknown("NVML not read");
      p.nvmlP2pWrite = Known<std::string>::unknown("NVML not read");
      p.pciPath = Known<std::string>::unknown("not classified");
      s.pairs.push_back(std::move(p));
    }
  }
}

}  // namespace gpupeer::probe
