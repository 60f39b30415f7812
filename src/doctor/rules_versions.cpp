// Driver, runtime, NVML and NCCL versions that do not fit together or are too old.
#include "doctor/rules.hpp"

namespace gpupeer::rules {
namespace {

std::string cudaVersionText(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

struct NcclFloor {
  int ccMajor, ccMinor;
  int minVersion;  // ncclGetVersion encoding: major*10000 + minor*100 + patch
  const char* source;
};
// The first NCCL release that runs on an architecture. Only rows with a public source.
constexpr NcclFloor kNcclFloors[] = {
    {12, 0, 22602, "NVIDIA/nccl#1637: NCCL 2.25.1 fails on RTX 5090 (sm_120); fixed in 2.26.2"},
};

std::string ncclVersionText(int v) { return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100); }

}  // namespace

void driverTooOld(const Snapshot& s, const Measurements*, Findings& out) {
  // The runtime names the mismatch itself when it cannot start (the driver's CUDA version may
  // then be unknown, e.g. inside a container that brought its own runtime).
  const std::string& why = s.deviceCount.reason();
  if (!s.deviceCount.known() && (why.find("InsufficientDriver") != std::string::npos ||
                                 why.find("driver version is insufficient") != std::string::npos)) {
    out.push_back({"driver-too-old", Severity::kError, "The driver is older than the CUDA runtime", why,
                   "driver/cuda-driver-too-old"});
    return;
  }
  if (!s.cudaDriverVersion.known() || !s.cudaRuntimeVersion.known()) return;
  if (s.cudaDriverVersion.value() >= s.cudaRuntimeVersion.value()) return;
  out.push_back(
      {"driver-too-old", Severity::kError, "The driver is older than the CUDA runtime",
       fmt::format("driver supports CUDA {}, runtime is CUDA {}", cudaVersionText(s.cudaDriverVersion.value()),
                   cudaVersionText(s.cudaRuntimeVersion.value())),
       "driver/cuda-driver-too-old"});
}

void nvmlMismatch(const Snapshot& s, const Measurements*, Findings& out) {
  if (!s.nvmlVersion.known()) {
    const std::string& why = s.nvmlVersion.reason();
    if (why.find("mismatch") != std::string::npos)
      out.push_back({"nvml-mismatch", Severity::kError, "NVML and the kernel driver are different versions", why,
                     "driver/nvml-driver-mismatch"});
    return;
  }
  // NVML reports "<cuda major>.<driver version>", e.g. 13.580.159.04 for driver 580.159.04.
  if (!s.driverVersion.known()) return;
  const std::string& nvml = s.nvmlVersion.value();
  const std::string& driver = s.driverVersion.value();
  if (nvml.size() >= driver.size() && nvml.compare(nvml.size() - driver.size(), driver.size(), driver) == 0) return;
  out.push_back({"nvml-mismatch", Severity::kError, "NVML and the kernel driver are different versions",
                 fmt::format("NVML {} with driver {}", nvml, driver), "driver/nvml-driver-mismatch"});
}

void ncclOlderThanGpu(const Snapshot& s, const Measurements*, Findings& out) {
  if (!s.ncclVersion.known()) return;
  for (const NcclFloor& f : kNcclFloors) {
    for (const Gpu& g : s.gpus) {
      if (g.ccMajor != f.ccMajor || g.ccMinor != f.ccMinor || s.ncclVersion.value() >= f.minVersion) continue;
      out.push_back({"nccl-too-old", Severity::kError,
                     fmt::format("NCCL {} predates {} (sm_{}{})", ncclVersionText(s.ncclVersion.value()), g.name,
                                 g.ccMajor, g.ccMinor),
                     fmt::format("needs NCCL >= {} ({})", ncclVersionText(f.minVersion), f.source),
                     "nccl/nccl-older-than-gpu"});
      break;
    }
  }
}

}  // namespace gpupeer::rules
