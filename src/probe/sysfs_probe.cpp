// Per-GPU facts from /sys/bus/pci, readable without the driver's libraries.
#include <fmt/format.h>

#include <cctype>
#include <cstdlib>

#include "gpupeer/topology.hpp"
#include "probe/probe_parts.hpp"
#include "probe/sysfs.hpp"

namespace gpupeer::probe {
namespace {

Known<int> readGen(const std::string& root, const std::string& path) {
  Known<std::string> line = sysfs::readLine(root, path);
  if (!line.known()) return Known<int>::unknown(line.reason());
  if (auto gen = sysfs::pcieGenFromSpeed(line.value())) return *gen;
  return Known<int>::unknown(fmt::format("{}: unrecognised speed '{}'", path, line.value()));
}

Known<int> singleNumaNode(const std::string& root) {
  Known<std::vector<std::string>> nodes = sysfs::list(root, "/sys/devices/system/node");
  if (!nodes.known()) return Known<int>::unknown("sysfs numa_node is -1 and " + nodes.reason());
  std::vector<int> ids;
  for (const std::string& n : nodes.value())
    if (n.size() > 4 && n.rfind("node", 0) == 0 && std::isdigit(static_cast<unsigned char>(n[4])))
      ids.push_back(std::atoi(n.c_str() + 4));
  if (ids.size() == 1) return ids[0];
  return Known<int>::unknown(fmt::format("sysfs numa_node is -1 on a machine with {} NUMA nodes", ids.size()));
}

}  // namespace

void readSysfs(Snapshot& s, const std::string& root) {
  for (Gpu& g : s.gpus) {
    const std::string dev = "/sys/bus/pci/devices/" + g.pciBusId;
    g.sysfsPath = sysfs::resolve(root, dev);
    Known<int> numa = sysfs::readInt(root, dev + "/numa_node");
    // sysfs says -1 when the platform gives no NUMA information for the device. With a
    // single memory node that node is the answer (nvidia-smi topo -m prints it too).
    if (numa.known() && numa.value() < 0) {
      numa = singleNumaNode(root);
    }
    g.numaNode = numa;
    g.cpuAffinity = sysfs::readLine(root, dev + "/local_cpulist");
    Known<std::string> group = sysfs::resolve(root, dev + "/iommu_group");
    g.iommuGroupType = group.known() ? sysfs::readLine(root, group.value() + "/type")
                                     : Known<std::string>::unknown("no IOMMU group: " + group.reason());
    // NVML knows the link best; fall back to sysfs when NVML could not say.
    if (!g.pcie.currentGen.known()) g.pcie.currentGen = readGen(root, dev + "/current_link_speed");
    if (!g.pcie.maxGen.known()) g.pcie.maxGen = readGen(root, dev + "/max_link_speed");
    if (!g.pcie.currentWidth.known()) g.pcie.currentWidth = sysfs::readInt(root, dev + "/current_link_width");
    if (!g.pcie.maxWidth.known()) g.pcie.maxWidth = sysfs::readInt(root, dev + "/max_link_width");
  }
  for (PeerPair& p : s.pairs) {
    if (p.pciPath.known()) continue;
    const Gpu* a = s.findGpu(p.src);
    const Gpu* b = s.findGpu(p.dst);
    if (!a || !b || !a->sysfsPath.known() || !b->sysfsPath.known()) {
      p.pciPath = Known<std::string>::unknown("NVML could not classify and sysfs paths are unreadable");
      continue;
    }
    std::string cls = classifyPciPath(a->sysfsPath.value(), b->sysfsPath.value(), a->numaNode, b->numaNode);
    p.pciPath =
        cls.empty() ? Known<std::string>::unknown("sysfs path not under /sys/devices/pci*") : Known<std::string>(cls);
  }
}

}  // namespace gpupeer::probe
