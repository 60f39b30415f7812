#pragma once
// Buffers and streams on GPUs 0 and 1, and one collective run and checked against the host
// reference on every rank: shared by the communicator's GPU tests.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "cuda/device_memory.hpp"
#include "gpupeer/collective_reference.hpp"
#include "gpupeer/communicator.hpp"

namespace gpupeer::testing {

struct Ranks {
  std::vector<int> devices;
  std::vector<DeviceBuffer> send, recv;
  std::vector<Stream> streams;
  std::vector<cudaStream_t> raw;
  /// Buffers of `bytes` and a stream on each GPU of `devs`.
  explicit Ranks(std::size_t bytes, std::vector<int> devs = {0, 1}) : devices(std::move(devs)) {
    send.resize(devices.size());
    recv.resize(devices.size());
    streams.resize(devices.size());
    for (std::size_t r = 0; r < devices.size(); ++r) {
      EXPECT_TRUE(send[r].allocate(devices[r], bytes).isOk());
      EXPECT_TRUE(recv[r].allocate(devices[r], bytes).isOk());
      EXPECT_TRUE(streams[r].create(devices[r]).isOk());
      raw.push_back(streams[r].get());
    }
  }
  void sync() {
    for (std::size_t r = 0; r < devices.size(); ++r) {
      cudaSetDevice(devices[r]);
      ASSERT_EQ(cudaStreamSynchronize(raw[r]), cudaSuccess);
    }
  }
};

/// Send and receive pointers of rank r, `offset` bytes into the buffers, out of place or in
/// the in-place arrangement of `op`.
struct Placement {
  std::vector<const void*> send;
  std::vector<void*> recv;
};
inline Placement place(Ranks& ranks, CollOp op, std::size_t count, DataType type, std::size_t offset, bool inPlace) {
  Placement p;
  for (std::size_t r = 0; r < ranks.devices.size(); ++r) {
    InPlacePointers at = {ranks.send[r].bytes() + offset, ranks.recv[r].bytes() + offset};
    if (inPlace) at = inPlacePointers(op, at.send, at.recv, count, type, static_cast<int>(r));
    p.send.push_back(at.send);
    p.recv.push_back(at.recv);
  }
  return p;
}

/// Uploads known-answer inputs where `p` says, after `prepare` (if any) the collective is
/// enqueued by `launch`; then every rank's output is checked.
template <class Launch>
void runAndCheck(Communicator& comm, Ranks& ranks, CollOp op, DataType type, RedOp redop, int root, std::size_t count,
                 std::size_t offset, bool inPlace, Launch launch) {
  SCOPED_TRACE(::testing::Message() << collOpName(op) << " " << dataTypeName(type) << " " << redOpName(redop)
                                    << " count " << count << " +" << offset << (inPlace ? " in place" : ""));
  const int n = static_cast<int>(ranks.devices.size());
  const std::size_t es = dataTypeSize(type);
  Placement p = place(ranks, op, count, type, offset, inPlace);
  std::vector<std::vector<std::uint8_t>> inputs;
  std::vector<const void*> in;
  for (int r = 0; r < n; ++r) {
    inputs.push_back(knownAnswerInput(type, r, collectiveInputElements(op, count, n)));
    cudaSetDevice(ranks.devices[r]);
    ASSERT_EQ(cudaMemcpy(const_cast<void*>(p.send[r]), inputs[r].data(), inputs[r].size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    // cudaMemcpy from pageable memory may return before its DMA ends, and the collective runs
    // on a non-blocking stream: wait for the upload.
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  }
  for (auto& v : inputs) in.push_back(v.data());
  Status st = launch(p.send, p.recv);
  ASSERT_TRUE(st.isOk()) << st.toString();
  ranks.sync();
  ASSERT_TRUE(comm.checkBarriers().isOk());
  const std::size_t bytes = collectiveOutputElements(op, count, n) * es;
  std::vector<std::uint8_t> first, got(bytes);
  for (int r = 0; r < n; ++r) {
    if (op == CollOp::kReduce && r != root) continue;
    cudaSetDevice(ranks.devices[r]);
    ASSERT_EQ(cudaMemcpy(got.data(), p.recv[r], bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    ReductionCheck c = checkCollective(op, type, redop, root, in, r, got.data(), count);
    EXPECT_EQ(c.wrong, 0u) << "rank " << r << ", first wrong element " << c.firstWrong;
    if (op == CollOp::kAllReduce) {
      if (first.empty())
        first = got;
      else
        EXPECT_TRUE(first == got) << "rank " << r << " differs from rank 0";
    }
  }
}

inline void runAndCheck(Communicator& comm, Ranks& ranks, CollOp op, DataType type, RedOp redop, int root,
                        std::size_t count, std::size_t offset, bool inPlace) {
  runAndCheck(comm, ranks, op, type, redop, root, count, offset, inPlace,
              [&](const std::vector<const void*>& s, const std::vector<void*>& r) {
                return comm.run(op, s, r, count, type, redop, root, ranks.raw);
              });
}

}  // namespace gpupeer::testing
