#pragma once
// Buffers and streams on a set of GPUs (0 and 1 by default), one collective run and checked
// against the host reference on every rank, and all-reduces replayed in a CUDA graph: shared by
// the communicator's GPU tests.

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "cuda/device_memory.hpp"
#include "gpupeer/communicator.hpp"
#include "harness/collective_reference.hpp"

namespace gpupeer::testing {

inline constexpr CollOp kAllOps[] = {CollOp::kAllReduce, CollOp::kAllGather, CollOp::kReduceScatter, CollOp::kBroadcast,
                                     CollOp::kReduce,    CollOp::kAllToAll,  CollOp::kSendRecv};

/// Whether a forced algorithm serves `op` (chooseAlgorithm refuses the others).
inline bool serves(const char* algo, CollOp op) { return chooseAlgorithm(op, 8, 2, true, algo).isOk(); }

/// GPUs 0..n-1, at most as many as a communicator takes.
inline std::vector<int> firstGpus(std::size_t n) {
  std::vector<int> devices;
  for (int d = 0; d < static_cast<int>(std::min<std::size_t>(n, kMaxCommRanks)); ++d) devices.push_back(d);
  return devices;
}

/// The collectives tests' communicator: small scratch, so that test sizes go in pieces, and
/// `algorithm` forced ("" for the table's choice).
inline CommunicatorOptions options(const char* algorithm) {
  CommunicatorOptions o;
  o.oneShotSlotBytes = 256u << 10;                        // 100003 floats go in pieces
  o.ceSlotBytes = 4u << 20;                               // 1 MiB chunks, four positions
  o.ringChunkBytes = o.ringSpreadChunkBytes = 64u << 10;  // 100003 floats: seven ring chunks
  o.algorithm = algorithm;
  return o;
}

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

/// In-place int32 sums back to back from ones, no host sync between them, in ranks.send: each
/// multiplies every element by the rank count, so all end at n^k only if no operation (or no
/// piece of one) overtook another. k: as many as int32 holds, at most `mostSums`.
inline void checkBackToBackInPlaceSums(Communicator& comm, Ranks& ranks, std::size_t count, int mostSums) {
  const int n = static_cast<int>(ranks.devices.size());
  std::vector<std::int32_t> ones(count, 1);
  std::vector<const void*> send;
  std::vector<void*> same;
  for (int r = 0; r < n; ++r) {
    cudaSetDevice(ranks.devices[r]);
    ASSERT_EQ(cudaMemcpy(ranks.send[r].get(), ones.data(), count * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the DMA of a pageable cudaMemcpy may outlive the call
    send.push_back(ranks.send[r].get());
    same.push_back(ranks.send[r].get());
  }
  int k = 0;
  std::int64_t want = 1;
  for (; k < mostSums && want * n < (std::int64_t{1} << 31); ++k) {
    ASSERT_TRUE(comm.allReduce(send, same, count, DataType::kInt32, RedOp::kSum, ranks.raw).isOk());
    want *= n;
  }
  ranks.sync();
  ASSERT_TRUE(comm.checkBarriers().isOk());
  std::vector<std::int32_t> got(count);
  for (int r = 0; r < n; ++r) {
    cudaSetDevice(ranks.devices[r]);
    ASSERT_EQ(cudaMemcpy(got.data(), ranks.send[r].get(), count * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(std::count(got.begin(), got.end(), static_cast<std::int32_t>(want)), static_cast<long>(count))
        << "rank " << r << " after " << k << " sums";
  }
}

/// An operation in the three arrangements the GPU tests check: out of place (sum), in place
/// (max), and in place one element off the 16-byte alignment (min).
inline void runAndCheckArrangements(Communicator& comm, Ranks& ranks, CollOp op, DataType type, int root,
                                    std::size_t count) {
  runAndCheck(comm, ranks, op, type, RedOp::kSum, root, count, 0, false);
  runAndCheck(comm, ranks, op, type, RedOp::kMax, root, count, 0, true);
  runAndCheck(comm, ranks, op, type, RedOp::kMin, root, count, dataTypeSize(type), true);
}

/// Three operations `op` (sums of `count` floats from `root`; all-reduce unless said) captured
/// in one CUDA graph over every rank's stream (forked from rank 0's and joined back into it),
/// then the graph launched three times: the first launch runs the capture, the next two replay
/// it, and the device-side operation counters carry the barriers from one replay to the next.
/// A launch for runAndCheck.
class GraphReplay {
 public:
  GraphReplay(Communicator& comm, Ranks& ranks, std::size_t count, CollOp op = CollOp::kAllReduce, int root = 0)
      : comm_(comm), ranks_(ranks), count_(count), op_(op), root_(root) {
    const int n = static_cast<int>(ranks.devices.size());
    joins_.resize(n);
    EXPECT_TRUE(fork_.create(ranks.devices[0]).isOk());
    for (int r = 0; r < n; ++r) EXPECT_TRUE(joins_[r].create(ranks.devices[r]).isOk());
  }
  ~GraphReplay() {
    if (exec_) cudaGraphExecDestroy(exec_);
  }
  Status operator()(const std::vector<const void*>& send, const std::vector<void*>& recv) {
    const std::vector<int>& dev = ranks_.devices;
    const int n = static_cast<int>(dev.size());
    cudaSetDevice(dev[0]);
    if (cudaStreamBeginCapture(ranks_.raw[0], cudaStreamCaptureModeRelaxed) != cudaSuccess)
      return Status(ErrorCode::kCuda, "begin capture");
    cudaEventRecord(fork_.get(), ranks_.raw[0]);
    for (int r = 1; r < n; ++r) {
      cudaSetDevice(dev[r]);
      cudaStreamWaitEvent(ranks_.raw[r], fork_.get(), 0);
    }
    Status st;
    for (int i = 0; i < 3 && st.isOk(); ++i)
      st = comm_.run(op_, send, recv, count_, DataType::kFloat32, RedOp::kSum, root_, ranks_.raw);
    for (int r = 1; r < n; ++r) {
      cudaSetDevice(dev[r]);
      cudaEventRecord(joins_[r].get(), ranks_.raw[r]);
      cudaSetDevice(dev[0]);
      cudaStreamWaitEvent(ranks_.raw[0], joins_[r].get(), 0);
    }
    cudaSetDevice(dev[0]);
    cudaGraph_t graph = nullptr;
    cudaError_t end = cudaStreamEndCapture(ranks_.raw[0], &graph);
    if (!st.isOk()) return st;
    if (end != cudaSuccess) return Status(ErrorCode::kCuda, cudaGetErrorString(end));
    if (cudaGraphInstantiate(&exec_, graph, 0) != cudaSuccess) return Status(ErrorCode::kCuda, "instantiate");
    cudaGraphDestroy(graph);
    for (int i = 0; i < 3; ++i)
      if (cudaGraphLaunch(exec_, ranks_.raw[0]) != cudaSuccess) return Status(ErrorCode::kCuda, "graph launch");
    return Status::ok();
  }

 private:
  Communicator& comm_;
  Ranks& ranks_;
  std::size_t count_;
  CollOp op_;
  int root_;
  Event fork_;
  std::vector<Event> joins_;
  cudaGraphExec_t exec_ = nullptr;
};

/// Three all-reduces in one graph over `devices`, replayed (GraphReplay), by every algorithm
/// that serves an all-reduce, checked on every rank.
inline void checkAllReduceGraphs(const std::vector<int>& devices) {
  for (const char* algo : {"oneshot", "ce", "twoshot", "pull", "split", "ring"}) {
    SCOPED_TRACE(algo);
    auto comm = Communicator::create(devices, options(algo));
    ASSERT_TRUE(comm.isOk()) << comm.status().toString();
    Ranks ranks(8u << 20, devices);
    const std::size_t count = 300001;
    GraphReplay launch(*comm.value(), ranks, count);
    runAndCheck(*comm.value(), ranks, CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 0, count, 0, false,
                std::ref(launch));
  }
}

/// Every operation that split, the chain and the relay kernel serve, three of them in one graph over
/// `devices` replayed (GraphReplay), from the last rank where there is a root, checked on
/// every rank.
inline void checkSplitChainAndRelayGraphs(const std::vector<int>& devices) {
  const int n = static_cast<int>(devices.size());
  Ranks ranks(8u << 20, devices);
  for (const char* algo : {"split", "chain", "relay"}) {
    SCOPED_TRACE(algo);
    auto comm = Communicator::create(devices, options(algo));
    ASSERT_TRUE(comm.isOk()) << comm.status().toString();
    for (CollOp op : kAllOps) {
      if (!serves(algo, op)) continue;
      const std::size_t count = op == CollOp::kAllGather || op == CollOp::kReduceScatter ? 100003 : 300001;
      const int root = op == CollOp::kBroadcast || op == CollOp::kReduce ? n - 1 : 0;
      GraphReplay launch(*comm.value(), ranks, count, op, root);
      runAndCheck(*comm.value(), ranks, op, DataType::kFloat32, RedOp::kSum, root, count, 0, false, std::ref(launch));
    }
  }
}

}  // namespace gpupeer::testing
