#pragma once
// Where one thread drives every rank of a communicator (ncclCommInitAll, nccl-tests' -g N), NCCL
// takes each rank's call separately inside one group; gpupeer's one-process communicator takes
// one call for all ranks. This pairs the calls of a group up: the k-th collective of every rank
// of a communicator forms one gpupeer call where all agree, and its sends and receives form one
// where they are the shift nccl-tests' sendrecv makes (every rank to the next). Whatever does not
// pair up goes to NCCL whole. Pure, so that tests/nccl_api/one_process_calls_test.cpp checks it.

#include <cstddef>
#include <vector>

#include "gpupeer/collective_types.hpp"

namespace gpupeer::nccl_api {

/// What the pairing needs of one deferred call of a group.
struct GroupedCall {
  const void* set = nullptr;  ///< the communicator's ranks together; null: not one process's
  int ranks = 0;              ///< of that communicator
  int rank = 0;
  CollOp op = CollOp::kAllReduce;
  bool receive = false;  ///< ncclRecv (op kSendRecv)
  std::size_t count = 0;
  DataType type = DataType::kFloat32;
  RedOp redop = RedOp::kSum;
  int root = -1;  ///< a broadcast's or reduce's root; a send's or receive's peer
  const void* stream = nullptr;
};

/// Calls of one communicator's ranks that were paired up, by index into the group's calls.
struct PairedCalls {
  const void* set = nullptr;
  bool sendRecv = false;
  /// Collectives: rank r's call. Sends and receives: rank r's send.
  std::vector<int> byRank;
  /// Sends and receives: rank r's receive.
  std::vector<int> receiveByRank;
  /// Every call, in the group's order (where `whole` is false, each goes to NCCL).
  std::vector<int> members;
  /// One call per rank that agree (and for sends and receives, make the shift): one gpupeer call.
  bool whole = false;
};

/// The pairings of the calls of `calls` that have a set, every such call in exactly one:
/// collectives in the order of their first call, then each set's sends and receives.
std::vector<PairedCalls> pairGroupedCalls(const std::vector<GroupedCall>& calls);

}  // namespace gpupeer::nccl_api
