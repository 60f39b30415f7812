#include "gpupeer/probe.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <ctime>

#include "probe/probe_parts.hpp"
#include "probe/sysfs.hpp"

namespace gpupeer {

bool builtWithCuda() { return true; }

Snapshot probeMachine(const ProbeOptions& options) {
  Snapshot s;
  s.description = "probed by gpupeer";
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) s.hostname = host;
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  s.capturedAt = stamp;

  probe::readEnvironment(s);
  if (options.useCuda) {
    probe::readCuda(s);
  } else {
    s.deviceCount = Known<int>::unknown("CUDA not probed (disabled by option)");
    s.cudaDriverVersion = Known<int>::unknown("CUDA not probed");
    s.cudaRuntimeVersion = Known<int>::unknown("CUDA not probed");
  }
  if (options.useNvml) {
    probe::readNvml(s);
  } else {
    s.nvmlVersion = Known<std::string>::unknown("NVML not probed (disabled by option)");
  }
  if (!s.driverVersion.known()) {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." names the driver.
    Known<std::string> line = sysfs::readLine(options.fsRoot, "/proc/driver/nvidia/version");
    std::string version;
    if (line.known()) {
      auto pos = line.value().find("Kernel Module");
      if (pos != std::string::npos) {
        std::string rest = line.value().substr(pos + 13);
        size_t b = rest.find_first_not_of(' ');
        if (b != std::string::npos) version = rest.substr(b, rest.find(' ', b) - b);
      }
    }
    s.driverVersion = version.empty()
                          ? Known<std::string>::unknown("no NVIDIA kernel module: " +
                                                        (line.known() ? "unrecognised version line" : line.reason()))
                          : Known<std::string>(version);
  }
  probe::readSysfs(s, options.fsRoot);
  probe::readPlatform(s, options.fsRoot);
  probe::readProcessLimits(s, options.fsRoot);
  return s;
}

}  // namespace gpupeer
