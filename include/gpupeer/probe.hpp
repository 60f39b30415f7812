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

/// Whether this library was built with CUDA and so can read the machine. False in the build
/// without CUDA (CMake option GPUPEER_WITH_CUDA=OFF), which analyses snapshot files only: there
/// probeMachine returns no GPU, measureForDoctor measures nothing and runPeerCheck fails as
/// kUnsupported, each saying so.
bool builtWithCuda();

/// The reason a build without CUDA gives for not reading the machine (one line).
inline constexpr const char* kBuiltWithoutCuda = "this gpupeer was built without CUDA";

/// Explains, in one line, why no GPU is visible to CUDA (no driver, no device, or hidden by
/// CUDA_VISIBLE_DEVICES). Used when deviceCount is unknown or zero.
std::string whyNoGpu(const Snapshot& s);

}  // namespace gpupeer
