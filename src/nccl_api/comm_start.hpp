#pragma once
// Starting the gpupeer communicator beside a new NCCL communicator.

#include <memory>
#include <vector>

#include "nccl_api/comm_state.hpp"

namespace gpupeer::nccl_api {

/// Whether a communicator made with `config` (may be null) blocks in its calls, as NCCL
/// decides it: config->blocking, else NCCL_COMM_BLOCKING, else yes. Only blocking ones get
/// gpupeer (the start-up exchange waits for its all-gathers).
bool blockingComm(const ncclConfig_t* config);

/// Collective over the communicator's ranks: reads its rank, size and device from NCCL, and
/// where every rank runs on one host, gpupeer may be used and each rank's gpupeer communicator
/// started, keeps it; else state.why says why not. Every rank takes part in the same number of
/// exchanges whatever fails where, so no rank is left waiting. Never fails the NCCL
/// communicator: without gpupeer every call goes to NCCL.
void startGpupeer(CommState& state);

/// Starts gpupeer beside communicators this process just made, then adds them all. Where they
/// hold every rank of one communicator (by their clique), gpupeer's one-process communicator
/// for them all (CommState::oneProcess); the others each get startGpupeer, together (one thread
/// each: their exchanges wait for one another, as ncclCommInitAll's ranks do).
void startAndAdd(std::vector<std::shared_ptr<CommState>> states);

/// A state for a communicator NCCL just made (or whose making was started inside a group);
/// `clique` names the communicator it is a rank of, where known (CommState::clique).
std::shared_ptr<CommState> newState(ncclComm_t real, std::string clique = {});

}  // namespace gpupeer::nccl_api
