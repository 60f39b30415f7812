#pragma once
// The probe's steps; probe.cpp runs them in order. Each fills what it can read and marks the
// rest unknown with the reason.

#include "gpupeer/probe.hpp"

namespace gpupeer::probe {

/// Versions, device count, per-GPU properties and per-pair CUDA P2P attributes.
void readCuda(Snapshot& s);
/// Driver version, MIG, PCIe link, NVLinks, fabric state, NVML's path class and P2P codes.
void readNvml(Snapshot& s);
/// Per-GPU sysfs facts (path, NUMA, CPUs, PCIe link fallback, IOMMU group) and sysfs path
/// classes for pairs NVML did not classify.
void readSysfs(Snapshot& s, const std::string& fsRoot);
/// IOMMU, CPU vendor, kernel command line, ACS on bridges above the GPUs, this process's CPUs.
void readPlatform(Snapshot& s, const std::string& fsRoot);
/// What multi-process P2P and NCCL need from this process's surroundings: container kind, IPC
/// and PID namespaces, /dev/shm size, RLIMIT_MEMLOCK, Yama ptrace scope, effective
/// capabilities, and whether the driver's /dev/nvidia* nodes open.
void readProcessLimits(Snapshot& s, const std::string& fsRoot);
/// P2P-relevant environment variables and the NCCL version (libnccl.so.2 via dlopen).
void readEnvironment(Snapshot& s);

}  // namespace gpupeer::probe
