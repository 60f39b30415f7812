#pragma once
/// \file snapshot.hpp
/// Plain data describing a machine's multi-GPU state. Everything that can be decided from
/// facts about the machine is a pure function of a Snapshot, so a snapshot captured on one
/// machine (`gpupeer snapshot --json`) can be analysed anywhere (`--snapshot FILE`).
/// Plain values: each object is used by one thread at a time (const use from several is fine).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpupeer/known.hpp"

namespace gpupeer {

/// Version of the JSON layout written by toJson(); readers refuse newer versions.
inline constexpr int kSnapshotSchemaVersion = 1;

/// The reason an optional field has when the snapshot file does not hold it (written by an
/// older gpupeer, or a fixture that does not model it). Such fields are left out on writing,
/// so older files read and write back unchanged.
inline constexpr const char* kNotRecorded = "not recorded in this snapshot";

/// What NVML says about an NVLink's far end.
enum class LinkRemote { kGpu, kSwitch, kCpu, kUnknown };

/// One NVLink of a GPU, as NVML reports it.
struct NvLink {
  int link = 0;                                    ///< link index on this GPU
  bool active = false;                             ///< nvmlDeviceGetNvLinkState == enabled
  Known<int> version;                              ///< nvmlDeviceGetNvLinkVersion, raw value
  LinkRemote remoteType = LinkRemote::kUnknown;    ///< nvmlDeviceGetNvLinkRemoteDeviceType
  Known<std::string> remoteBusId;                  ///< PCI bus id of the far end (a GPU or an NVSwitch)
  bool operator==(const NvLink&) const = default;  ///< field by field
};

/// A GPU's own PCIe link: generation and lane count, as trained now and at most.
struct PcieLink {
  Known<int> currentGen, maxGen, currentWidth, maxWidth;  ///< from NVML, else sysfs
  bool operator==(const PcieLink&) const = default;       ///< field by field
};

/// One GPU as CUDA, NVML and sysfs describe it.
struct Gpu {
  int index = 0;                                ///< CUDA device ordinal in this process
  std::string name;                             ///< "NVIDIA H100 80GB HBM3"
  Known<std::string> uuid;                      ///< "GPU-..." from NVML
  std::string pciBusId;                         ///< "0000:18:00.0", lower case, as sysfs names it
  int ccMajor = 0, ccMinor = 0;                 ///< compute capability
  std::uint64_t memoryBytes = 0;                ///< total device memory
  int smCount = 0;                              ///< streaming multiprocessors
  Known<bool> migEnabled;                       ///< MIG mode (P2P does not work across MIG instances)
  Known<std::string> computeMode;               ///< "default", "exclusive-process", "prohibited"
  Known<int> numaNode;                          ///< sysfs numa_node; -1 is stored as unknown
  Known<std::string> cpuAffinity;               ///< sysfs local_cpulist, e.g. "0-47,96-143"
  Known<std::string> sysfsPath;                 ///< resolved /sys/devices/... path, used to classify PCIe paths
  Known<std::string> iommuGroupType;            ///< "DMA", "DMA-FQ", "identity", ... from sysfs
  PcieLink pcie;                                ///< its own PCIe link
  Known<std::string> fabricState;               ///< NVSwitch fabric: "not-supported", "completed", ...
  Known<bool> persistenceMode;                  ///< nvmlDeviceGetPersistenceMode; optional in files
  Known<std::vector<NvLink>> nvlinks;           ///< unknown when NVML is missing
  bool operator==(const Gpu&) const = default;  ///< field by field
};

/// Facts about one ordered pair (src accesses or sends to dst).
struct PeerPair {
  int src = 0, dst = 0;                              ///< CUDA ordinals
  Known<bool> canAccessPeer;                         ///< cudaDeviceCanAccessPeer(src, dst)
  Known<int> performanceRank;                        ///< cudaDevP2PAttrPerformanceRank
  Known<bool> accessSupported;                       ///< cudaDevP2PAttrAccessSupported
  Known<bool> nativeAtomics;                         ///< cudaDevP2PAttrNativeAtomicSupported
  Known<bool> arrayAccess;                           ///< cudaDevP2PAttrCudaArrayAccessSupported
  Known<std::string> nvmlP2pRead;                    ///< nvidia-smi topo -p2p r code: OK, CNS, GNS, TNS, NS, DR, U
  Known<std::string> nvmlP2pWrite;                   ///< the same for writes
  Known<std::string> pciPath;                        ///< PIX, PXB, PHB, NODE, SYS (from NVML, else sysfs)
  bool operator==(const PeerPair&) const = default;  ///< field by field
};

/// ACS control of one PCIe bridge on the way between a GPU and its root port.
struct BridgeAcs {
  std::string busId;                                  ///< the bridge's PCI address
  Known<int> acsControl;                              ///< ACS Control register; bit 2 = request redirect
  bool operator==(const BridgeAcs&) const = default;  ///< field by field
};

/// A character device of the NVIDIA driver as this process can open it.
struct DeviceNode {
  std::string path;    ///< "/dev/nvidia0", "/dev/nvidiactl", "/dev/nvidia-uvm"
  std::string access;  ///< "ok", or why open(O_RDWR) failed: "missing", "EPERM", "EACCES", ...
  bool operator==(const DeviceNode&) const = default;
};

/// The IOMMU driver family a CPU vendor implies: Intel's VT-d (intel_iommu=), AMD's AMD-Vi
/// (amd_iommu=, Hygon too), Arm's SMMU (iommu.passthrough=); kUnknown when the vendor is.
enum class IommuVendor { kIntel, kAmd, kArm, kUnknown };
/// The family of a Platform::cpuVendor value.
IommuVendor iommuVendorOf(const Known<std::string>& cpuVendor);

/// Value of `memlockBytes` when RLIMIT_MEMLOCK is unlimited.
inline constexpr std::int64_t kUnlimited = -1;

/// Facts about the host that change P2P: IOMMU, kernel command line, ACS on the bridges, and the
/// process's environment.
struct Platform {
  Known<std::string> iommu;               ///< "off", "passthrough", "translated"
  Known<std::string> kernelCmdline;       ///< /proc/cmdline
  Known<std::vector<BridgeAcs>> acs;      ///< every bridge above a GPU
  Known<std::string> processCpuAffinity;  ///< this process's allowed CPUs, as a cpulist
  /// Who made the CPUs, as /proc/cpuinfo names them: x86's vendor_id ("GenuineIntel",
  /// "AuthenticAMD", "HygonGenuine") or, on Arm, "ARM implementer 0x41" (the "CPU implementer"
  /// line). The kernel's IOMMU options differ by vendor. Optional in files: kNotRecorded when absent.
  Known<std::string> cpuVendor;
  // What multi-process P2P and NCCL need from the process's environment (containers, VMs).
  // Optional in files: kNotRecorded when absent.
  Known<std::string> container;                      ///< "docker", "podman", "kubernetes", "lxc", "none"
  Known<std::string> ipcNamespace;                   ///< readlink /proc/self/ns/ipc: "ipc:[4026531839]"
  Known<std::string> pidNamespace;                   ///< readlink /proc/self/ns/pid: "pid:[4026531836]"
  Known<std::int64_t> devShmBytes;                   ///< size of the /dev/shm file system (statvfs)
  Known<std::int64_t> memlockBytes;                  ///< RLIMIT_MEMLOCK soft limit; kUnlimited when unlimited
  Known<int> ptraceScope;                            ///< /proc/sys/kernel/yama/ptrace_scope
  Known<std::string> capEff;                         ///< effective capabilities, hex as /proc/self/status prints them
  Known<std::vector<DeviceNode>> deviceNodes;        ///< /dev/nvidia* nodes and whether they open
  bool operator==(const Platform&) const = default;  ///< field by field

  /// Whether capability `bit` (CAP_SYS_PTRACE = 19, CAP_IPC_LOCK = 14) is effective; unknown
  /// when capEff is.
  Known<bool> hasCapability(int bit) const;
};

/// Everything gpupeer knows about a machine's GPUs at one moment.
struct Snapshot {
  int schemaVersion = kSnapshotSchemaVersion;        ///< of the JSON it came from
  std::string capturedAt;                            ///< ISO 8601 UTC
  std::string hostname;                              ///< gethostname()
  std::string description;                           ///< free text: "probed", or what a fixture models
  Known<std::string> driverVersion;                  ///< "580.159.04"
  Known<int> cudaDriverVersion;                      ///< 13000
  Known<int> cudaRuntimeVersion;                     ///< the runtime gpupeer was built with (static)
  Known<std::string> nvmlVersion;                    ///< unknown with the dlopen/init reason
  Known<int> ncclVersion;                            ///< 22803 from ncclGetVersion, via dlopen
  Known<int> deviceCount;                            ///< unknown: no driver / no device, with the reason
  std::vector<Gpu> gpus;                             ///< by CUDA ordinal
  std::vector<PeerPair> pairs;                       ///< every ordered pair, src != dst
  Platform platform;                                 ///< host facts
  std::map<std::string, std::string> environment;    ///< the P2P-relevant variables that are set
  bool operator==(const Snapshot&) const = default;  ///< field by field

  /// The pair (src, dst) or nullptr.
  const PeerPair* findPair(int src, int dst) const;
  /// The GPU with this CUDA ordinal or nullptr.
  const Gpu* findGpu(int index) const;
  /// The value of an environment variable recorded in the snapshot, or nullptr.
  const std::string* env(const std::string& name) const;
  /// Whether a recorded variable is set to something other than "", "0" or "false".
  bool envFlag(const std::string& name) const;
};

/// Environment variables that change how P2P or NCCL behave; the probe records those set.
const std::vector<std::string>& p2pRelevantEnvironmentVariables();

}  // namespace gpupeer
