#include "rank_worker_checks.hpp"

#include "harness/collective_reference.hpp"

namespace gpupeer {

bool synced(RankCommunicator& comm, cudaStream_t stream, const char* what) {
  if (cudaStreamSynchronize(stream) != cudaSuccess) {
    std::printf("FAIL %s: %s\n", what, cudaGetErrorString(cudaGetLastError()));
    ++failures;
    return false;
  }
  return ok(comm.checkError(), what);
}

std::vector<std::vector<std::uint8_t>> inputsOf(CollOp op, DataType type, std::size_t count, int n, unsigned salt) {
  std::vector<std::vector<std::uint8_t>> in;
  for (int r = 0; r < n; ++r) in.push_back(knownAnswerInput(type, r, collectiveInputElements(op, count, n), salt));
  return in;
}

bool checked(RankCommunicator& comm, CollOp op, DataType type, RedOp redop, int root, std::size_t count,
             const std::vector<std::vector<std::uint8_t>>& inputs, const void* out, const char* what) {
  if (op == CollOp::kReduce && comm.rank() != root) return true;
  std::vector<std::uint8_t> got(collectiveOutputElements(op, count, comm.ranks()) * dataTypeSize(type));
  if (cudaMemcpy(got.data(), out, got.size(), cudaMemcpyDeviceToHost) != cudaSuccess) {
    WORKER_CHECK(false, "%s: download failed", what);
    return false;
  }
  std::vector<const void*> in;
  for (const auto& v : inputs) in.push_back(v.data());
  ReductionCheck c = checkCollective(op, type, redop, root, in, comm.rank(), got.data(), count);
  WORKER_CHECK(c.wrong == 0, "%s: %zu of %zu elements wrong, first at %zu", what, c.wrong,
               collectiveOutputElements(op, count, comm.ranks()), c.firstWrong);
  return c.wrong == 0;
}

bool inputKept(const void* input, const std::vector<std::uint8_t>& expected, const char* what) {
  std::vector<std::uint8_t> kept(expected.size());
  cudaMemcpy(kept.data(), input, kept.size(), cudaMemcpyDeviceToHost);
  WORKER_CHECK(kept == expected, "%s: the input changed", what);
  return kept == expected;
}

}  // namespace gpupeer
