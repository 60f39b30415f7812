// Driver, runtime, NVML and NCCL versions that do not fit together or are too old.
#include "doctor/rules.hpp"
#include "gpupeer/version_text.hpp"

namespace gpupeer::rules {
namespace {

struct NcclFloor {
  int ccMajor, ccMinor;
  int minVersion;  // ncclGetVersion encoding: major*10000 + minor*100 + patch
  const char* source;
};
// The first NCCL release that runs on an architecture. Only rows with a public source.
constexpr NcclFloor kNcclFloors[] = {
    {12, 0, 22602, "NVIDIA/nccl#1637: NCCL 2.25.1 fails on RTX 5090 (sm_120); fixed in 2.26.2"},
};

// The oldest Linux driver a runtime of each CUDA major version starts on (minor version
// compatibility; features of a newer minor may need a newer driver still). From the CUDA
// release notes' table of toolkit and driver versions.
struct DriverFloor {
  int cudaMajor;
  const char* minDriver;
};
constexpr DriverFloor kDriverFloors[] = {{11, "450.80.02"}, {12, "525.60.13"}, {13, "580"}};

// "driver 570.86.15 (supports up to CUDA 12.8), runtime CUDA 13.0, which needs driver 580 or
// newer": both versions the snapshot has, and what the runtime asks for.
std::string versionsEvidence(const Snapshot& s) {
  std::string driver = s.driverVersion.known() ? "driver " + s.driverVersion.value() : "driver (version unknown)";
  if (s.cudaDriverVersion.known())
    driver += fmt::format(" (supports up to CUDA {})", cudaVersionText(s.cudaDriverVersion.value()));
  if (!s.cudaRuntimeVersion.known()) return driver;
  int runtime = s.cudaRuntimeVersion.value();
  std::string out = fmt::format("{}, runtime CUDA {}", driver, cudaVersionText(runtime));
  for (const DriverFloor& f : kDriverFloors)
    if (f.cudaMajor == runtime / 1000) out += fmt::format(", which needs driver {} or newer", f.minDriver);
  return out;
}

}  // namespace

void driverTooOld(const Snapshot& s, const Measurements*, Findings& out) {
  // The runtime names the mismatch itself when it cannot start (the driver's CUDA version may
  // then be unknown, e.g. inside a container that brought its own runtime).
  // Without a driver at all (no kernel module, no libcuda) the runtime says the same: that is
  // "no GPU", not an old driver.
  const std::string& why = s.deviceCount.reason();
  bool driverPresent = s.driverVersion.known() || s.cudaDriverVersion.known();
  if (!s.deviceCount.known() && driverPresent &&
      (why.find("InsufficientDriver") != std::string::npos ||
       why.find("driver version is insufficient") != std::string::npos)) {
    out.push_back({"driver-too-old", Severity::kError, "The driver is older than the CUDA runtime",
                   versionsEvidence(s) + "\n  " + why, "driver/cuda-driver-too-old", "", allGpus(s)});
    return;
  }
  if (!s.cudaDriverVersion.known() || !s.cudaRuntimeVersion.known()) return;
  if (s.cudaDriverVersion.value() >= s.cudaRuntimeVersion.value()) return;
  out.push_back({"driver-too-old", Severity::kError, "The driver is older than the CUDA runtime", versionsEvidence(s),
                 "driver/cuda-driver-too-old", "", allGpus(s)});
}

void nvmlMismatch(const Snapshot& s, const Measurements*, Findings& out) {
  if (!s.nvmlVersion.known()) {
    const std::string& why = s.nvmlVersion.reason();
    if (why.find("mismatch") != std::string::npos)
      out.push_back({"nvml-mismatch", Severity::kError, "NVML and the kernel driver are different versions", why,
                     "driver/nvml-driver-mismatch", "", allGpus(s)});
    return;
  }
  // NVML reports "<cuda major>.<driver version>", e.g. 13.580.159.04 for driver 580.159.04.
  if (!s.driverVersion.known()) return;
  const std::string& nvml = s.nvmlVersion.value();
  const std::string& driver = s.driverVersion.value();
  if (nvml.size() >= driver.size() && nvml.compare(nvml.size() - driver.size(), driver.size(), driver) == 0) return;
  out.push_back({"nvml-mismatch", Severity::kError, "NVML and the kernel driver are different versions",
                 fmt::format("NVML {} with driver {}", nvml, driver), "driver/nvml-driver-mismatch", "", allGpus(s)});
}

void ncclOlderThanGpu(const Snapshot& s, const Measurements*, Findings& out) {
  if (!s.ncclVersion.known()) return;
  for (const NcclFloor& f : kNcclFloors) {
    if (s.ncclVersion.value() >= f.minVersion) continue;
    // One finding per architecture, naming every GPU of it.
    std::vector<int> gpus;
    const Gpu* first = nullptr;
    for (const Gpu& g : s.gpus) {
      if (g.ccMajor != f.ccMajor || g.ccMinor != f.ccMinor) continue;
      gpus.push_back(g.index);
      if (!first) first = &g;
    }
    if (!first) continue;
    out.push_back({"nccl-too-old", Severity::kError,
                   fmt::format("NCCL {} predates {} (sm_{}{})", ncclVersionText(s.ncclVersion.value()), first->name,
                               first->ccMajor, first->ccMinor),
                   fmt::format("needs NCCL >= {} ({})", ncclVersionText(f.minVersion), f.source),
                   "nccl/nccl-older-than-gpu", "", gpusOf(s, gpus)});
  }
}

}  // namespace gpupeer::rules
