#pragma once
/// \file communicator.hpp
/// Collectives over P2P between the GPUs of one process (one stream per GPU). First
/// operation: all-reduce by the one-shot algorithm (every GPU reads every peer's input from
/// a registered scratch buffer and reduces locally, one kernel, a barrier of flags in peer
/// memory). Other collectives and algorithms are to come (issue 6).

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "gpupeer/collective_types.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

class Communicator {
 public:
  /// A communicator over `devices` (rank i is devices[i]; 2 to 8 GPUs, all pairs with P2P).
  /// Allocates 2 x `scratchBytes` of scratch and the flag arrays on each GPU.
  static Result<std::unique_ptr<Communicator>> create(const std::vector<int>& devices,
                                                      std::size_t scratchBytes = 64u << 20);
  ~Communicator();

  int ranks() const;
  int device(int rank) const;

  /// Sums (or prod/min/max/avg) `count` elements of send[r] over all ranks into recv[r], on
  /// streams[r]. In place when send[r] == recv[r]. Everything is checked before anything is
  /// enqueued. Larger messages than the scratch are reduced in pieces.
  Status allReduce(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                   DataType type, RedOp op, const std::vector<cudaStream_t>& streams);

  /// After synchronising the streams: kTimeout naming the rank that did not arrive at a
  /// barrier within 10 s, else ok. Clears the record.
  Status checkBarriers();

 private:
  struct Impl;
  explicit Communicator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpupeer
