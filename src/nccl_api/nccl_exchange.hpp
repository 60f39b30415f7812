#pragma once
// Start-up exchanges of a gpupeer communicator carried by the NCCL communicator it sits beside
// (two all-gathers through the real NCCL: the sizes, then the bytes), so gpupeer starts wherever
// NCCL started, with no socket or store of its own.

#include <optional>
#include <string>
#include <vector>

#include "gpupeer/status.hpp"
#include "nccl_api/comm_state.hpp"

namespace gpupeer::nccl_api {

/// Every rank's bytes in rank order; a rank that said `failed` has no part (nullopt), so that a
/// rank that cannot go on still takes part in the exchange its peers are waiting in.
Result<std::vector<std::optional<std::string>>> gatherOverNccl(CommState& state, const std::string& mine, bool failed);

}  // namespace gpupeer::nccl_api
