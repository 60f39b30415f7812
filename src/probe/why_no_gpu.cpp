// Why a snapshot shows no GPU: decided from the snapshot alone, so it works on a file too.
#include <fmt/format.h>

#include "gpupeer/probe.hpp"

namespace gpupeer {

std::string whyNoGpu(const Snapshot& s) {
  if (const std::string* visible = s.env("CUDA_VISIBLE_DEVICES")) {
    if (visible->empty() || *visible == "-1" || *visible == "none" || *visible == "NoDevFiles")
      return fmt::format("hidden by CUDA_VISIBLE_DEVICES='{}': unset it or list the GPUs to use", *visible);
  }
  if (!s.driverVersion.known() && !s.cudaDriverVersion.known())
    return "no NVIDIA driver is loaded on this machine (" + s.driverVersion.reason() + ")";
  if (!s.deviceCount.known()) {
    std::string why = s.deviceCount.reason();
    if (s.env("CUDA_VISIBLE_DEVICES"))
      why += fmt::format("; CUDA_VISIBLE_DEVICES='{}' may hide or misname devices", *s.env("CUDA_VISIBLE_DEVICES"));
    return why;
  }
  if (s.deviceCount.value() == 0) return "the driver is loaded but reports no CUDA device";
  return fmt::format("{} GPU(s) visible", s.deviceCount.value());
}

}  // namespace gpupeer
