#pragma once
/// \file probe.hpp
/// The only code that reads the machine: CUDA runtime, NVML (opened at run time), sysfs,
/// /proc and the environment. Anything it cannot read becomes an unknown with the reason.
/// probeMachine may be called from any thread (CUDA and NVML calls are thread-safe); each call
/// returns its own Snapshot.

#include <string>

#include "gpupeer/snapshot.hpp"

namespace gpupeer {

/// What to read; the defaults read the real machine.
struct ProbeOptions {
  /// Prefix for every /sys and /proc read ("" on a real machine; a fake tree in tests).
  std::string fsRoot;
  /// Set false to skip NVML (tests, or a machine where loading it misbehaves).
  bool useNvml = true;
  /// Set false to skip CUDA entirely (tests of the sysfs and platform parts).
  bool useCuda = true;
};

/// Reads the machine. Never fails: what cannot be read is recorded as unknown, with why.
Snapshot probeMachine(const ProbeOptions& options = {});

/// Explains, in one line, why no GPU is visible to CUDA (no driver, no device, or hidden by
/// CUDA_VISIBLE_DEVICES). Used when deviceCount is unknown or zero.
std::string whyNoGpu(const Snapshot& s);

}  // namespace gpupeer
