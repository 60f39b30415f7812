#pragma once
/// \file nccl_baseline.hpp
/// NCCL, opened at run time (libnccl.so.2), as the baseline of `gpupeer coll`: the same
/// buffers and streams, one process driving all GPUs (ncclCommInitAll).

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "gpupeer/collective_types.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

class NcclBaseline {
 public:
  /// kUnsupported with the dlopen reason when libnccl.so.2 is missing.
  static Result<std::unique_ptr<NcclBaseline>> open(const std::vector<int>& devices);
  ~NcclBaseline();
  Status allReduce(const std::vector<const void*>& send, const std::vector<void*>& recv, std::size_t count,
                   DataType type, RedOp op, const std::vector<cudaStream_t>& streams);
  std::string version() const;

 private:
  struct Impl;
  explicit NcclBaseline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpupeer
