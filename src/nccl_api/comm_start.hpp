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

/// Starts gpupeer beside communicators this process just made, then adds them all. Each rank's
/// size, rank and GPU are read from NCCL. Where they hold every rank of one communicator (by
/// their clique), gpupeer's one-process communicator for them all (CommState::oneProcess); the
/// others each get a RankCommunicator, started together (one thread each: their exchanges wait
/// for one another, as ncclCommInitAll's ranks do). Never fails the NCCL communicators: without
/// gpupeer every call goes to NCCL, and CommState::why says why.
void startAndAdd(std::vector<std::shared_ptr<CommState>> states);

/// A state for a communicator NCCL just made (or whose making was started inside a group);
/// `clique` names the communicator it is a rank of, where known (CommState::clique).
std::shared_ptr<CommState> newState(ncclComm_t real, std::string clique = {});

}  // namespace gpupeer::nccl_api
