// What breaks multi-process P2P and NCCL inside containers and VMs: shared memory, IPC and PID
// namespaces, the locked-memory limit, ptrace rules for passing handles by file descriptor,
// and device nodes the cgroup denies. Each rule is silent when its facts were not recorded.
#include <algorithm>

#include "doctor/rules.hpp"

namespace gpupeer::rules {
namespace {

// Inode numbers of the host's initial namespaces (PROC_IPC_INIT_INO, PROC_PID_INIT_INO in
// include/linux/proc_ns.h): any other number is a namespace of its own, i.e. a container.
constexpr const char* kHostIpcNamespace = "ipc:[4026531839]";
constexpr const char* kHostPidNamespace = "pid:[4026531836]";

// NVIDIA's containers are documented to run with --shm-size=1g --ulimit memlock=-1; Docker's
// default /dev/shm is 64 MiB, below what NCCL's SHM transport needs for a few GPUs.
constexpr std::int64_t kMinDevShmBytes = 1ll << 30;
// RDMA registration pins whole buffers; limits below this fail for NCCL's default buffers.
constexpr std::int64_t kMinMemlockBytes = 64ll << 20;
constexpr int kCapIpcLock = 14;
constexpr int kCapSysPtrace = 19;

std::string bytesText(std::int64_t b) {
  if (b >= (1ll << 30)) return fmt::format("{:.1f} GiB", b / double(1ll << 30));
  if (b >= (1ll << 20)) return fmt::format("{:.0f} MiB", b / double(1ll << 20));
  return fmt::format("{:.0f} KiB", b / 1024.0);
}

std::string inContainer(const Snapshot& s) {
  const Known<std::string>& c = s.platform.container;
  return c.known() && c.value() != "none" ? fmt::format(" (in a {} container)", c.value()) : "";
}

// N of "/dev/nvidiaN"; -1 for the control nodes (nvidiactl, nvidia-uvm).
int minorOf(const std::string& path) {
  const std::string prefix = "/dev/nvidia";
  if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return -1;
  int n = 0;
  for (std::size_t i = prefix.size(); i < path.size(); ++i) {
    if (path[i] < '0' || path[i] > '9' || n > 100000) return -1;
    n = n * 10 + (path[i] - '0');
  }
  return n;
}

// The GPUs served by the device nodes whose open() result `failed` picks. nvidiactl and nvidia-uvm serve every GPU.
// /dev/nvidiaN is the GPU of minor number N, which the driver hands out in PCI probe order: the
// N-th GPU by bus id, when the snapshot holds as many GPUs as there are such nodes (no GPU
// hidden by CUDA_VISIBLE_DEVICES); otherwise that GPU cannot be placed.
template <class Pick>
std::vector<FindingGpu> gpusOfFailedNodes(const Snapshot& s, const std::vector<DeviceNode>& nodes, Pick failed) {
  std::vector<const Gpu*> byBus;
  for (const Gpu& g : s.gpus) byBus.push_back(&g);
  std::sort(byBus.begin(), byBus.end(), [](const Gpu* a, const Gpu* b) { return a->pciBusId < b->pciBusId; });
  std::size_t gpuNodes = 0;
  for (const DeviceNode& n : nodes) gpuNodes += minorOf(n.path) >= 0;
  std::vector<int> concerned;
  for (const DeviceNode& n : nodes) {
    if (!failed(n.access)) continue;
    int minor = minorOf(n.path);
    if (minor < 0) return allGpus(s);
    if (gpuNodes == byBus.size() && minor < static_cast<int>(byBus.size())) concerned.push_back(byBus[minor]->index);
  }
  return gpusOf(s, concerned);
}

}  // namespace

void devShmTooSmall(const Snapshot& s, const Measurements*, Findings& out) {
  const Known<std::int64_t>& shm = s.platform.devShmBytes;
  if (!shm.known() || shm.value() >= kMinDevShmBytes || s.gpus.size() < 2) return;
  out.push_back({"dev-shm-small", Severity::kWarning,
                 fmt::format("/dev/shm is only {}{}: NCCL's shared-memory transport fails to create its segments",
                             bytesText(shm.value()), inContainer(s)),
                 fmt::format("/dev/shm: {} (at least {} recommended; Docker's default is 64 MiB); "
                             "pairs without P2P use SHM, and NCCL then stops with 'unhandled system error'",
                             bytesText(shm.value()), bytesText(kMinDevShmBytes)),
                 "nccl/devshm-exhausted", "", allGpus(s)});
}

void privateIpcNamespace(const Snapshot& s, const Measurements*, Findings& out) {
  const Platform& p = s.platform;
  bool ipcOwn = p.ipcNamespace.known() && p.ipcNamespace.value() != kHostIpcNamespace;
  bool pidOwn = p.pidNamespace.known() && p.pidNamespace.value() != kHostPidNamespace;
  if ((!ipcOwn && !pidOwn) || s.gpus.size() < 2) return;
  std::string evidence;
  if (ipcOwn) evidence += fmt::format("IPC namespace {} (the host's is {})", p.ipcNamespace.value(), kHostIpcNamespace);
  if (pidOwn)
    evidence += fmt::format("{}PID namespace {} (the host's is {})", evidence.empty() ? "" : "; ",
                            p.pidNamespace.value(), kHostPidNamespace);
  evidence +=
      "; ranks in this container share P2P as usual, processes in other containers cannot open its CUDA "
      "IPC handles or shared memory (NCCL then treats them as other hosts)";
  out.push_back({"ipc-namespace", Severity::kInfo,
                 fmt::format("This process has its own {} namespace{}: run every rank in one container, or use "
                             "--ipc=host --pid=host",
                             ipcOwn && pidOwn ? "IPC and PID"
                             : ipcOwn         ? "IPC"
                                              : "PID",
                             inContainer(s)),
                 evidence, "nccl/ipc-across-containers", "", allGpus(s)});
}

void memlockLimit(const Snapshot& s, const Measurements*, Findings& out) {
  const Known<std::int64_t>& lim = s.platform.memlockBytes;
  if (!lim.known() || lim.value() == kUnlimited || lim.value() >= kMinMemlockBytes || s.gpus.size() < 2) return;
  if (s.platform.hasCapability(kCapIpcLock).valueOr(false)) return;  // CAP_IPC_LOCK ignores the limit
  out.push_back({"memlock-limit", Severity::kInfo,
                 fmt::format("Locked-memory limit is {}{}: RDMA transports cannot register GPU or host buffers",
                             bytesText(lim.value()), inContainer(s)),
                 "RLIMIT_MEMLOCK soft limit " + bytesText(lim.value()) +
                     ", no CAP_IPC_LOCK; NCCL's InfiniBand/RoCE transport, GPUDirect RDMA and UCX fail to "
                     "register memory; P2P and SHM inside one host are not affected",
                 "platform/memlock-limit", "", allGpus(s)});
}

void ptraceBlocksFdPassing(const Snapshot& s, const Measurements*, Findings& out) {
  const Platform& p = s.platform;
  if (!p.ptraceScope.known() || s.gpus.size() < 2) return;
  int scope = p.ptraceScope.value();
  Known<bool> cap = p.hasCapability(kCapSysPtrace);
  if (scope == 0 || (scope < 3 && cap.valueOr(false))) return;
  // Scope 1 lets a process attach only to its descendants: sibling ranks cannot use
  // pidfd_getfd on each other. Scope 2 needs CAP_SYS_PTRACE, scope 3 forbids it entirely.
  Severity sev = scope >= 2 ? Severity::kWarning : Severity::kInfo;
  out.push_back({"ptrace-scope", sev,
                 fmt::format("Yama ptrace_scope={}{}: ranks cannot take each other's file descriptors with "
                             "pidfd_getfd",
                             scope, cap.known() ? " without CAP_SYS_PTRACE" : ""),
                 fmt::format("/proc/sys/kernel/yama/ptrace_scope = {}{}; cuMem (VMM) handles exported as POSIX file "
                             "descriptors and imported by pidfd_getfd (PyTorch expandable segments, some NCCL "
                             "versions with NCCL_CUMEM_ENABLE) fail with 'Operation not permitted'; handles passed "
                             "over a Unix socket (SCM_RIGHTS) and legacy cudaIpc handles are not affected",
                             scope, cap.known() ? fmt::format(", CapEff {}", p.capEff.value()) : ""),
                 "nccl/cumem-import-pidfd", "", allGpus(s)});
}

void ipcSharingFails(const Snapshot& s, const Measurements* m, Findings& out) {
  if (!m || !m->ipc) return;
  const IpcCheckReport& r = *m->ipc;
  for (const IpcMechanismResult& result : r.results) {
    if (result.outcome != CheckOutcome::kFail) continue;
    // cudaIpc handles carry gpupeer's communicators and custom all-reduce kernels: nothing works
    // without them. NCCL falls back from cuMem descriptors when told to (NCCL_CUMEM_ENABLE=0).
    bool cudaIpc = result.mechanism == IpcMechanism::kCudaIpc;
    // Yama scope 1 (the default of many distributions) refuses pidfd_getfd between siblings
    // while descriptors sent over a Unix socket still work: as ptrace-scope rates it, worth
    // knowing, not a warning, when the check proved the memory that way.
    Severity severity = cudaIpc                                                             ? Severity::kError
                        : result.onlyPidfdRefused && s.platform.ptraceScope.valueOr(0) <= 1 ? Severity::kInfo
                                                                                            : Severity::kWarning;
    out.push_back({"ipc-sharing", severity,
                   cudaIpc ? "A second process cannot open this process's CUDA IPC memory handles"
                           : "A second process cannot import this process's cuMem memory by file descriptor",
                   fmt::format("{}: {}", ipcMechanismName(result.mechanism), result.detail), result.kbId, "",
                   gpusOf(s, {r.device})});
  }
}

void deviceNodesDenied(const Snapshot& s, const Measurements*, Findings& out) {
  const Known<std::vector<DeviceNode>>& nodes = s.platform.deviceNodes;
  // Without a loaded driver no node is expected; the verdict already says why no GPU is seen.
  if (!nodes.known() || !s.driverVersion.known()) return;
  std::string denied, missing, noPermission;
  for (const DeviceNode& n : nodes.value()) {
    if (n.access == "EPERM")
      denied += ", " + n.path;
    else if (n.access == "missing")
      missing += ", " + n.path;
    else if (n.access != "ok")
      noPermission += fmt::format(", {} ({})", n.path, n.access);
  }
  auto gpusWhere = [&](auto failed) { return gpusOfFailedNodes(s, nodes.value(), failed); };
  if (!denied.empty())
    out.push_back({"device-nodes", Severity::kError,
                   "The cgroup's device rules deny GPU device nodes: CUDA and NVML fail in this container",
                   "open() returns EPERM for " + denied.substr(2) +
                       " (typical after `systemctl daemon-reload` on the host: systemd re-applies the container's "
                       "device rules without the GPUs the NVIDIA runtime added; NVML then says 'Unknown Error')",
                   "platform/container-nvml-unknown-error", "",
                   gpusWhere([](const std::string& a) { return a == "EPERM"; })});
  if (!missing.empty())
    out.push_back({"device-nodes", Severity::kError, "NVIDIA device nodes are missing although the driver is loaded",
                   "not present: " + missing.substr(2) +
                       " (a container started without the NVIDIA runtime, or nvidia-uvm not loaded)",
                   "platform/container-nvml-unknown-error", "",
                   gpusWhere([](const std::string& a) { return a == "missing"; })});
  if (!noPermission.empty())
    out.push_back({"device-nodes", Severity::kWarning, "Some NVIDIA device nodes cannot be opened by this user",
                   noPermission.substr(2), "platform/container-nvml-unknown-error", "",
                   gpusWhere([](const std::string& a) { return a != "ok" && a != "EPERM" && a != "missing"; })});
}

void persistenceModeOff(const Snapshot& s, const Measurements*, Findings& out) {
  std::vector<int> off;
  for (const Gpu& g : s.gpus)
    if (g.persistenceMode.known() && !g.persistenceMode.value()) off.push_back(g.index);
  if (off.empty()) return;
  out.push_back({"persistence-mode", Severity::kInfo,
                 "Persistence mode is off: the driver tears GPU state down whenever no process holds it",
                 fmt::format("off on GPU {}; each job then waits seconds for initialisation, and on NVSwitch "
                             "systems the fabric must be set up again; nvidia-persistenced keeps it",
                             fmt::join(off, ", ")),
                 "driver/persistence-mode-off", "", gpusOf(s, off)});
}

}  // namespace gpupeer::rules
