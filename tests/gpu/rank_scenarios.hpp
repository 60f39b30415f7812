#pragma once
// Scenarios of the rank worker (rank_worker.cpp) that move large data between processes:
// many-piece calls on fresh inputs (rank_large_calls.cpp), the random soak against NCCL
// (rank_soak.cpp) and point-to-point groups and faults (rank_p2p.cpp). Each counts its failures in
// rank_worker_checks.hpp.

#include <cuda_runtime_api.h>

#include "gpupeer/rank_communicator.hpp"

namespace gpupeer {

/// One collective of this rank (send/recv: to the next rank, from the previous, grouped, as
/// nccl-tests' sendrecv).
Status runCollective(RankCommunicator& comm, CollOp op, const void* send, void* recv, std::size_t count, DataType type,
                     RedOp redop, int root, cudaStream_t stream);

/// Back-to-back all-reduces of many pieces of the default slots, each call on inputs of its
/// own salt into its own output, eagerly and replayed from a graph; every element checked.
void manyPieceSumsOnFreshInputs(RankCommunicator& comm, cudaStream_t stream);

/// Every collective at sizes of many pieces, odd counts and a misaligned offset, in place and
/// out of place, each call on a salt the call before it did not use, eagerly and from a graph;
/// with `registered` the buffers are registered first; with `cuMem` they are cuMem memory of
/// several segments (shared as POSIX descriptors), else cudaMalloc's. Then an all-reduce of
/// 256 MiB.
void largeCallsOnFreshInputs(RankCommunicator& comm, cudaStream_t stream, bool registered, bool cuMem = false);

/// `calls` collectives of random operation, type, operator, root, size and alignment, each
/// run by this communicator and by NCCL (one communicator per process) on the same inputs;
/// the results must agree element by element. Prints "soak skipped: ..." where NCCL cannot
/// be opened.
void soakAgainstNccl(RankCommunicator& comm, cudaStream_t stream, int calls);

/// `rounds` all-to-alls by grouped sends and receives of `bytes` per pair, itself included, in an
/// order that puts each rank's nearest peers first and its peers' view of it last; every byte
/// checked. On 8 ranks with messages of several slots the group needs more blocks than a GPU
/// holds at once (p2pBlocksPerTask).
void allToAllBySends(RankCommunicator& comm, cudaStream_t stream, std::size_t bytes, int rounds);

/// Rank 0 sends `sent` bytes to rank 1, which receives `received`: rank 1 must report both
/// lengths at once and refuse more work; rank 0 must name rank 1 where its send waits for it.
void sendRecvLengthsDiffer(RankCommunicator& comm, cudaStream_t stream, std::size_t sent, std::size_t received);

}  // namespace gpupeer
