// The stand-in's functions that answer through pointers (see standin_nccl.cpp): a
// communicator of one rank, rank 0, on GPU0.

#include <nccl.h>

#include "standin_record.hpp"

void recordStandinCall(const char* name, std::vector<std::uint64_t> arguments);

extern "C" {

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  recordStandinCall("ncclCommCount", {argumentBits(comm), argumentBits(count)});
  *count = 1;
  return ncclSuccess;
}
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  recordStandinCall("ncclCommUserRank", {argumentBits(comm), argumentBits(rank)});
  *rank = 0;
  return ncclSuccess;
}
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  recordStandinCall("ncclCommCuDevice", {argumentBits(comm), argumentBits(device)});
  *device = 0;
  return ncclSuccess;
}

}  // extern "C"
