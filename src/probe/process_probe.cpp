// The process's surroundings that decide whether several processes can share GPU memory:
// containers and namespaces, /dev/shm, locked-memory limit, ptrace rules and the driver's
// device nodes. Everything is read under fsRoot, except the rlimit (a fact of this process).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "probe/probe_parts.hpp"
#include "probe/sysfs.hpp"

namespace gpupeer::probe {
namespace {

bool exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::string containerKind(const std::string& root) {
  if (exists(root + "/.dockerenv")) return "docker";
  if (exists(root + "/run/.containerenv")) return "podman";
  Known<std::string> cgroup = sysfs::readBytes(root, "/proc/1/cgroup");
  if (cgroup.known()) {
    const std::string& c = cgroup.value();
    if (c.find("kubepods") != std::string::npos) return "kubernetes";
    if (c.find("docker") != std::string::npos) return "docker";
    if (c.find("lxc") != std::string::npos) return "lxc";
  }
  if (std::getenv("KUBERNETES_SERVICE_HOST")) return "kubernetes";
  return "none";
}

Known<std::string> namespaceLink(const std::string& root, const char* name) {
  std::string path = root + "/proc/self/ns/" + name;
  char buf[128];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return Known<std::string>::unknown(path + ": " + std::strerror(errno));
  return std::string(buf, static_cast<std::size_t>(n));
}

Known<std::string> effectiveCapabilities(const std::string& root) {
  Known<std::string> status = sysfs::readBytes(root, "/proc/self/status");
  if (!status.known()) return Known<std::string>::unknown(status.reason());
  std::size_t at = status.value().find("CapEff:");
  if (at == std::string::npos) return Known<std::string>::unknown("no CapEff line in /proc/self/status");
  std::size_t b = status.value().find_first_not_of(" \t", at + 7);
  std::size_t e = status.value().find('\n', b);
  return status.value().substr(b, e == std::string::npos ? std::string::npos : e - b);
}

std::string openResult(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd >= 0) {
    ::close(fd);
    return "ok";
  }
  switch (errno) {
    case ENOENT: return "missing";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    default: return std::strerror(errno);
  }
}

// /dev/nvidiactl and /dev/nvidia-uvm (every CUDA process opens them) and each /dev/nvidiaN.
std::vector<DeviceNode> deviceNodes(const std::string& root) {
  std::vector<std::string> names = {"nvidiactl", "nvidia-uvm"};
  Known<std::vector<std::string>> dev = sysfs::list(root, "/dev");
  if (dev.known())
    for (const std::string& n : dev.value())
      if (n.size() > 6 && n.compare(0, 6, "nvidia") == 0 &&
          std::all_of(n.begin() + 6, n.end(), [](char c) { return c >= '0' && c <= '9'; }))
        names.push_back(n);
  std::sort(names.begin() + 2, names.end());
  std::vector<DeviceNode> out;
  for (const std::string& n : names) out.push_back({"/dev/" + n, openResult(root + "/dev/" + n)});
  return out;
}

}  // namespace

void readProcessLimits(Snapshot& s, const std::string& root) {
  Platform& p = s.platform;
  p.container = containerKind(root);
  p.ipcNamespace = namespaceLink(root, "ipc");
  p.pidNamespace = namespaceLink(root, "pid");
  struct statvfs shm {};
  if (::statvfs((root + "/dev/shm").c_str(), &shm) == 0)
    p.devShmBytes = static_cast<std::int64_t>(shm.f_blocks) * static_cast<std::int64_t>(shm.f_frsize);
  else
    p.devShmBytes = Known<std::int64_t>::unknown(std::string("/dev/shm: ") + std::strerror(errno));
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_MEMLOCK, &lim) == 0)
    p.memlockBytes = lim.rlim_cur == RLIM_INFINITY ? kUnlimited : static_cast<std::int64_t>(lim.rlim_cur);
  else
    p.memlockBytes = Known<std::int64_t>::unknown(std::string("getrlimit: ") + std::strerror(errno));
  p.ptraceScope = sysfs::readInt(root, "/proc/sys/kernel/yama/ptrace_scope");
  p.capEff = effectiveCapabilities(root);
  p.deviceNodes = deviceNodes(root);
}

}  // namespace gpupeer::probe
