#pragma once
/// \file nccl_baseline.hpp
/// NCCL, opened at run time (libnccl.so.2), as the baseline of `gpupeer coll`: the same
/// buffers and streams, one process driving all GPUs (ncclCommInitAll). Every collective that
/// gpupeer offers, with the same count conventions as `Communicator`, and NCCL's symmetric
/// registered windows (ncclMemAlloc + ncclCommWindowRegister) so NCCL can be measured at its best.
/// One thread at a time may call an NcclBaseline, as for a Communicator.

#include <cuda_runtime_api.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "gpupeer/collective_types.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// NCCL communicators over a set of GPUs of this process (one per GPU), owned and destroyed
/// with the object; the library handle stays open for the process.
class NcclBaseline {
 public:
  /// kUnsupported with the dlopen reason when libnccl.so.2 is missing.
  static Result<std::unique_ptr<NcclBaseline>> open(const std::vector<int>& devices);

  /// ncclUniqueId's bytes: made by uniqueId() on one process, handed to every rank.
  using Id = std::array<char, 128>;
  static Result<Id> uniqueId();
  /// One rank of a communicator whose ranks are separate processes (ncclCommInitRank), on
  /// `device`; run() then takes this rank's buffer and stream alone (vectors of one).
  static Result<std::unique_ptr<NcclBaseline>> openRank(int nranks, const Id& id, int rank, int device);
  ~NcclBaseline();  ///< releases the windows and destroys the communicators

  /// One collective over all ranks in one NCCL group. `count` as in Communicator: all-reduce,
  /// broadcast, reduce, sendrecv: elements per rank; all-gather: elements each rank sends;
  /// reduce-scatter: elements each rank receives; alltoall: elements per peer. sendrecv sends
  /// to rank+1 and receives from rank-1 (nccl-tests' sendrecv). `root` for broadcast/reduce.
  Status run(CollOp op, const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
             DataType type, RedOp redop, int root, const std::vector<cudaStream_t>& streams);

  /// `bytes` on every rank from ncclMemAlloc, registered as a symmetric window
  /// (NCCL_WIN_COLL_SYMMETRIC) on every communicator; freed and deregistered with the object
  /// or by releaseWindows(). One set at a time: a second call releases the first.
  /// kUnsupported when this NCCL lacks the calls (before 2.27).
  Result<std::vector<void*>> allocateWindows(std::size_t bytes);
  void releaseWindows();  ///< deregisters and frees the windows of allocateWindows()

  std::string version() const;  ///< "2.28.3", from ncclGetVersion

  struct Impl;

 private:
  explicit NcclBaseline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpupeer
