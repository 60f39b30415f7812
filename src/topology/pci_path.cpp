// PCIe path classification from sysfs paths, used when NVML cannot tell (and tested on CPU).
#include <sstream>

#include "gpupeer/topology.hpp"

namespace gpupeer {
namespace {

// "/sys/devices/pci0000:17/0000:17:01.0/0000:18:00.0" -> {"pci0000:17", "0000:17:01.0", ...}
std::vector<std::string> components(const std::string& path) {
  const std::string kPrefix = "/sys/devices/";
  if (path.rfind(kPrefix, 0) != 0) return {};
  std::vector<std::string> parts;
  std::stringstream in(path.substr(kPrefix.size()));
  for (std::string part; std::getline(in, part, '/');)
    if (!part.empty()) parts.push_back(part);
  if (parts.size() < 2 || parts[0].rfind("pci", 0) != 0) return {};
  return parts;
}

}  // namespace

std::string pcieSwitchOf(const std::string& sysfsPath) {
  std::vector<std::string> parts = components(sysfsPath);
  // host bridge, root port, switch upstream port, switch downstream port, device: a switch
  // needs at least three bridges between the host bridge and the device.
  if (parts.size() < 5) return "";
  return parts[parts.size() - 3];
}

std::string classifyPciPath(const std::string& sysfsA, const std::string& sysfsB, const Known<int>& numaA,
                            const Known<int>& numaB) {
  std::vector<std::string> a = components(sysfsA), b = components(sysfsB);
  if (a.empty() || b.empty()) return "";
  if (a[0] != b[0]) {
    // Different host bridges. sysfs gives -1 (stored as unknown) on machines without NUMA,
    // so two unknown nodes mean one node.
    bool sameNode = numaA.known() == numaB.known() && (!numaA.known() || numaA.value() == numaB.value());
    return sameNode ? "NODE" : "SYS";
  }
  // Bridges are the components between the host bridge and the device itself.
  size_t bridgesA = a.size() - 2, bridgesB = b.size() - 2;
  size_t common = 0;
  while (common < bridgesA && common < bridgesB && a[1 + common] == b[1 + common]) ++common;
  if (common == 0) return "PHB";
  // Below the deepest shared bridge each side has its own downstream port. One port each
  // means both hang off the same switch: a single switch between them.
  if (bridgesA - common <= 1 && bridgesB - common <= 1) return "PIX";
  return "PXB";
}

}  // namespace gpupeer
