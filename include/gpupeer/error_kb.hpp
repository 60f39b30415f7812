#pragma once
/// \file error_kb.hpp
/// Where an API error name meets the knowledge base: the KB entry that explains a CUDA,
/// NVML or NCCL error, so every failure report can point at its explanation.

#include <string>
#include <string_view>

namespace gpupeer {

/// KB id for an API error name ("cudaErrorPeerAccessUnsupported"), or "" if none is known.
std::string kbIdForApiError(std::string_view errorName);

}  // namespace gpupeer
