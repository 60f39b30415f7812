#pragma once
/// \file version_text.hpp
/// The version codes a Snapshot records (ncclVersion, cudaDriverVersion, cudaRuntimeVersion),
/// as people write them. Pure functions; thread-safe.
#include <string>

namespace gpupeer {

/// "2.28.3" for NCCL's version code as ncclGetVersion gives it (22803; 2708 for 2.7.8, the
/// encoding before 2.9).
std::string ncclVersionText(int code);

/// "13.0" for CUDA's version code as cudaDriverGetVersion gives it (13000).
std::string cudaVersionText(int code);

}  // namespace gpupeer
