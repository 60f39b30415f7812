// The one-shot all-reduce against the host reference: every type and op, odd and unaligned
// counts, pieces larger than the scratch, in place, back to back; and refused bad input.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cuda/device_memory.hpp"
#include "gpu_test_support.hpp"
#include "gpupeer/collective_reference.hpp"
#include "gpupeer/communicator.hpp"

namespace gpupeer {
namespace {

struct Ranks {
  std::vector<int> devices;
  std::vector<DeviceBuffer> send, recv;
  std::vector<Stream> streams;
  std::vector<cudaStream_t> raw;
  /// Buffers of `bytes` and a stream on GPUs 0 and 1.
  explicit Ranks(std::size_t bytes) {
    devices = {0, 1};
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

// Runs one all-reduce of `count` elements starting `offset` bytes into the buffers and checks
// every rank against the reference and against rank 0's bits.
void runAndCheck(Communicator& comm, Ranks& ranks, DataType type, RedOp op, std::size_t count, std::size_t offset,
                 bool inPlace) {
  SCOPED_TRACE(::testing::Message() << dataTypeName(type) << " " << redOpName(op) << " count " << count << " +"
                                    << offset << (inPlace ? " in place" : ""));
  const std::size_t n = ranks.devices.size(), bytes = count * dataTypeSize(type);
  std::vector<std::vector<std::uint8_t>> inputs;
  std::vector<const void*> in, send;
  std::vector<void*> recv;
  for (std::size_t r = 0; r < n; ++r) {
    inputs.push_back(knownAnswerInput(type, static_cast<int>(r), count));
    cudaSetDevice(ranks.devices[r]);
    ASSERT_EQ(cudaMemcpy(ranks.send[r].bytes() + offset, inputs[r].data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    send.push_back(ranks.send[r].bytes() + offset);
    recv.push_back(inPlace ? ranks.send[r].bytes() + offset : ranks.recv[r].bytes() + offset);
  }
  for (auto& v : inputs) in.push_back(v.data());
  Status st = comm.allReduce(send, recv, count, type, op, ranks.raw);
  ASSERT_TRUE(st.isOk()) << st.toString();
  ranks.sync();
  ASSERT_TRUE(comm.checkBarriers().isOk());
  std::vector<std::uint8_t> first, got(bytes);
  for (std::size_t r = 0; r < n; ++r) {
    cudaSetDevice(ranks.devices[r]);
    ASSERT_EQ(cudaMemcpy(got.data(), recv[r], bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    ReductionCheck c = checkReduction(type, op, in, got.data(), count);
    EXPECT_EQ(c.wrong, 0u) << "rank " << r << ", first wrong element " << c.firstWrong;
    if (r == 0)
      first = got;
    else
      EXPECT_TRUE(first == got) << "rank " << r << " differs from rank 0";
  }
}

TEST(CommunicatorGpu, EveryTypeAndOpMatchesTheReference) {
  GPUPEER_REQUIRE_GPUS(2);
  // 1 MiB of scratch, so 300001 floats (1.2 MB) are reduced in two pieces.
  auto comm = Communicator::create({0, 1}, 1u << 20);
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  Ranks ranks(4u << 20);
  for (DataType t : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kFloat64, DataType::kInt8,
                     DataType::kUInt8, DataType::kInt32, DataType::kInt64})
    for (RedOp op : {RedOp::kSum, RedOp::kProd, RedOp::kMin, RedOp::kMax, RedOp::kAvg}) {
      if (!checkRedOpForType(op, t).isOk()) continue;
      for (std::size_t count : {std::size_t{1}, std::size_t{4099}, std::size_t{300001}}) {
        runAndCheck(*comm.value(), ranks, t, op, count, 0, false);
        runAndCheck(*comm.value(), ranks, t, op, count, dataTypeSize(t), true);  // unaligned to 16, in place
      }
    }
}

TEST(CommunicatorGpu, BackToBackOperationsNeedNoHostSync) {
  GPUPEER_REQUIRE_GPUS(2);
  auto comm = Communicator::create({0, 1});
  ASSERT_TRUE(comm.isOk());
  const std::size_t count = 1u << 20;
  Ranks ranks(count * 4);
  // 30 in-place sums starting from ones, with no synchronisation in between: each doubles
  // every element, so all end at 2^30 only if no operation overtook another.
  std::vector<std::int32_t> ones(count, 1);
  for (int r = 0; r < 2; ++r) {
    cudaSetDevice(r);
    cudaMemcpy(ranks.send[r].get(), ones.data(), count * 4, cudaMemcpyHostToDevice);
  }
  std::vector<const void*> send = {ranks.send[0].get(), ranks.send[1].get()};
  std::vector<void*> same = {ranks.send[0].get(), ranks.send[1].get()};
  for (int i = 0; i < 30; ++i)
    ASSERT_TRUE(comm.value()->allReduce(send, same, count, DataType::kInt32, RedOp::kSum, ranks.raw).isOk());
  ranks.sync();
  ASSERT_TRUE(comm.value()->checkBarriers().isOk());
  std::vector<std::int32_t> got(count);
  for (int r = 0; r < 2; ++r) {
    cudaSetDevice(r);
    cudaMemcpy(got.data(), ranks.send[r].get(), count * 4, cudaMemcpyDeviceToHost);
    EXPECT_EQ(std::count(got.begin(), got.end(), 1 << 30), static_cast<long>(count)) << "rank " << r;
  }
}

TEST(CommunicatorGpu, BadInputIsRefusedBeforeLaunch) {
  GPUPEER_REQUIRE_GPUS(2);
  auto comm = Communicator::create({0, 1});
  ASSERT_TRUE(comm.isOk());
  Ranks ranks(4096);
  std::vector<const void*> send = {ranks.send[0].get(), ranks.send[1].get()};
  std::vector<void*> recv = {ranks.recv[0].get(), ranks.recv[1].get()};
  auto code = [&](std::vector<const void*> s, std::vector<void*> r, std::size_t count, DataType t, RedOp op) {
    return comm.value()->allReduce(s, r, count, t, op, ranks.raw).code();
  };
  EXPECT_EQ(code({send[0]}, recv, 16, DataType::kFloat32, RedOp::kSum), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code({send[0], nullptr}, recv, 16, DataType::kFloat32, RedOp::kSum), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code({send[1], send[0]}, recv, 16, DataType::kFloat32, RedOp::kSum), ErrorCode::kInvalidArgument);
  EXPECT_EQ(code(send, recv, 2048, DataType::kFloat32, RedOp::kSum), ErrorCode::kInvalidArgument);  // 8 KiB > 4 KiB
  EXPECT_EQ(code(send, recv, 16, DataType::kInt8, RedOp::kAvg), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Communicator::create({0, 0}).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(Communicator::create({0}).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpupeer
