// Platform facts that change P2P: IOMMU mode and CPU vendor, ACS on bridges, CPU affinity,
// environment.
#include <dlfcn.h>
#include <sched.h>

#include <cstdlib>
#include <set>

#include "core/cpulist.hpp"
#include "probe/probe_parts.hpp"
#include "probe/sysfs.hpp"

namespace gpupeer::probe {

void readPlatform(Snapshot& s, const std::string& root) {
  s.platform.kernelCmdline = sysfs::readLine(root, "/proc/cmdline");
  // The vendor decides which kernel options set the IOMMU up (intel_iommu=, amd_iommu=).
  Known<std::string> cpuinfo = sysfs::readBytes(root, "/proc/cpuinfo");
  if (!cpuinfo.known())
    s.platform.cpuVendor = Known<std::string>::unknown(cpuinfo.reason());
  else if (auto vendor = sysfs::cpuVendorFromCpuinfo(cpuinfo.value()))
    s.platform.cpuVendor = *vendor;
  else
    s.platform.cpuVendor = Known<std::string>::unknown("/proc/cpuinfo: no vendor_id or CPU implementer line");
  Known<std::vector<std::string>> units = sysfs::list(root, "/sys/class/iommu");
  if (!units.known() || units.value().empty()) {
    s.platform.iommu = std::string("off");
  } else {
    // Translated mode maps every DMA through the IOMMU; peer BAR addresses may be missing
    // from those maps, and posted peer writes then vanish without an error.
    bool anyKnown = false, allIdentity = true;
    for (const Gpu& g : s.gpus) {
      if (!g.iommuGroupType.known()) continue;
      anyKnown = true;
      if (g.iommuGroupType.value() != "identity") allIdentity = false;
    }
    if (anyKnown)
      s.platform.iommu = std::string(allIdentity ? "passthrough" : "translated");
    else
      s.platform.iommu = Known<std::string>::unknown("IOMMU present but GPU group types unreadable");
  }

  std::vector<BridgeAcs> bridges;
  std::set<std::string> seen;
  std::string acsProblem;
  for (const Gpu& g : s.gpus) {
    if (!g.sysfsPath.known()) continue;
    for (const std::string& bdf : sysfs::bridgesOnPath(g.sysfsPath.value())) {
      if (!seen.insert(bdf).second) continue;
      Known<std::string> config = sysfs::readBytes(root, "/sys/bus/pci/devices/" + bdf + "/config");
      BridgeAcs b{bdf, Known<int>::unknown("")};
      if (!config.known()) {
        b.acsControl = Known<int>::unknown(config.reason());
      } else if (auto ctl = sysfs::acsControlFromConfig(config.value())) {
        b.acsControl = *ctl;
      } else {
        b.acsControl = Known<int>::unknown(
            config.value().size() <= 256 ? "extended config space not readable (needs root)" : "no ACS capability");
      }
      bridges.push_back(std::move(b));
    }
  }
  s.platform.acs = bridges;

  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    std::set<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.insert(c);
    s.platform.processCpuAffinity = formatCpuList(cpus);
  } else {
    s.platform.processCpuAffinity = Known<std::string>::unknown("sched_getaffinity failed");
  }
}

void readEnvironment(Snapshot& s) {
  for (const std::string& name : p2pRelevantEnvironmentVariables())
    if (const char* v = std::getenv(name.c_str())) s.environment[name] = v;
  void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* err = dlerror();
    s.ncclVersion = Known<int>::unknown(std::string("libnccl.so.2 not loadable: ") + (err ? err : "?"));
    return;
  }
  using GetVersion = int (*)(int*);
  auto fn = reinterpret_cast<GetVersion>(dlsym(lib, "ncclGetVersion"));
  int version = 0;
  if (fn && fn(&version) == 0)
    s.ncclVersion = version;
  else
    s.ncclVersion = Known<int>::unknown("ncclGetVersion failed");
  // Left open: NCCL may be used again later in this process (baselines).
}

}  // namespace gpupeer::probe
