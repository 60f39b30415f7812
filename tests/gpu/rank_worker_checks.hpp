#pragma once
// The rank worker's checks (rank_worker.cpp and the scenarios beside it): each prints one line
// per failure and counts it; the worker's exit code says whether any failed.

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <vector>

#include "gpupeer/rank_communicator.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

inline int failures = 0;

#define WORKER_CHECK(cond, ...)        \
  do {                                 \
    if (!(cond)) {                     \
      std::printf("FAIL %s: ", #cond); \
      std::printf(__VA_ARGS__);        \
      std::printf("\n");               \
      ++failures;                      \
    }                                  \
  } while (0)

inline bool ok(const Status& st, const char* what) {
  if (!st.isOk()) {
    std::printf("FAIL %s: %s\n", what, st.toString().c_str());
    ++failures;
  }
  return st.isOk();
}

/// The stream synchronised and the communicator's error word clear; false (reported) where not.
bool synced(RankCommunicator& comm, cudaStream_t stream, const char* what);

/// Every rank's known-answer input of `salt` for `op` (each rank computes them all for the
/// reference).
std::vector<std::vector<std::uint8_t>> inputsOf(CollOp op, DataType type, std::size_t count, int n, unsigned salt);

/// This rank's result at `out` against the reference over `inputs` (nothing to check on a
/// reduce's other ranks); false (reported) where it is wrong.
bool checked(RankCommunicator& comm, CollOp op, DataType type, RedOp redop, int root, std::size_t count,
             const std::vector<std::vector<std::uint8_t>>& inputs, const void* out, const char* what);

/// Whether `input` still holds `expected` (reported where not): an out-of-place call leaves its
/// input as it was, and so does a reduce on the ranks that are not its root.
bool inputKept(const void* input, const std::vector<std::uint8_t>& expected, const char* what);

/// A graph of `launch`'s calls on `stream` (null where capture failed, reported).
template <class Launch>
cudaGraphExec_t captured(cudaStream_t stream, Launch launch) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  WORKER_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) == cudaSuccess, "begin capture");
  launch();
  WORKER_CHECK(cudaStreamEndCapture(stream, &graph) == cudaSuccess, "end capture");
  WORKER_CHECK(graph && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess, "instantiate");
  if (graph) cudaGraphDestroy(graph);
  return exec;
}

}  // namespace gpupeer
