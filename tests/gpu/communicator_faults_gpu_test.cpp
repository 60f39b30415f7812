// Faults injected into the one-process Communicator: a rank that never arrives at a barrier
// (its stream held by a host function; a watchdog's poll sees it while it is held), scratch that
// does not fit at create(), buffers that are freed or not GPU memory, and hostile options and
// GPUPEER_* settings. Each must end in a Status that names the problem, within the barrier
// bound, with nothing leaked or enqueued.
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "collective_gpu_support.hpp"
#include "gpu_memory_support.hpp"
#include "gpu_test_support.hpp"
#include "stream_gate.hpp"

namespace gpupeer {
namespace {

using testing::Ranks;
using testing::StreamGate;
using Clock = std::chrono::steady_clock;

struct MemoryInfo {
  std::size_t freeBytes = 0, totalBytes = 0;
};

// Free and total memory of `device` once its work is done.
MemoryInfo memoryOf(int device) {
  MemoryInfo m;
  cudaSetDevice(device);
  cudaDeviceSynchronize();
  cudaMemGetInfo(&m.freeBytes, &m.totalBytes);
  return m;
}

// Contexts, peer mappings and modules made once, so that later free-memory readings compare
// only what create() allocates.
void warmUp() {
  auto comm = Communicator::create({0, 1});
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
}

TEST(CommunicatorFaults, PeerThatNeverArrivesIsNamedAndTheCommunicatorRecovers) {
  GPUPEER_REQUIRE_GPUS(2);
  CommunicatorOptions oneShot;
  oneShot.algorithm = "oneshot";  // a kernel barrier between the ranks
  oneShot.barrierTimeoutMs = 2000;
  auto comm = Communicator::create({0, 1}, oneShot);
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  if (!comm.value()->p2p()) GTEST_SKIP() << "no P2P between GPU0 and GPU1: " << comm.value()->transport();
  Ranks ranks(1 << 20);
  std::vector<const void*> send = {ranks.send[0].get(), ranks.send[1].get()};
  std::vector<void*> recv = {ranks.recv[0].get(), ranks.recv[1].get()};
  StreamGate gate;
  cudaSetDevice(1);
  ASSERT_EQ(gate.hold(ranks.raw[1]), cudaSuccess);
  auto start = Clock::now();
  Status st = comm.value()->allReduce(send, recv, 1024, DataType::kFloat32, RedOp::kSum, ranks.raw);
  ASSERT_TRUE(st.isOk()) << st.toString();
  // Rank 0's kernel waits for rank 1 at the barrier and gives up after 2 s. A watchdog's poll
  // says so while rank 1's stream is still held (it waits for no stream).
  Status polled = Status::ok();
  while (polled.isOk() && Clock::now() - start < std::chrono::seconds(30)) {
    polled = comm.value()->pollBarriers();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  double waited = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_FALSE(gate.open.load());
  EXPECT_EQ(polled.code(), ErrorCode::kTimeout) << polled.toString();
  EXPECT_NE(polled.message().find("rank 0 (GPU0) waited more than 2 s at a barrier for rank 1 (GPU1)"),
            std::string::npos)
      << polled.message();
  cudaSetDevice(0);
  EXPECT_EQ(cudaStreamSynchronize(ranks.raw[0]), cudaSuccess);
  gate.open = true;
  cudaSetDevice(1);
  EXPECT_EQ(cudaStreamSynchronize(ranks.raw[1]), cudaSuccess);
  EXPECT_GE(waited, 1.9);
  EXPECT_LT(waited, 30.0);
  Status barriers = comm.value()->checkBarriers();
  EXPECT_EQ(barriers.code(), ErrorCode::kTimeout) << barriers.toString();
  EXPECT_NE(barriers.message().find("for rank 1 (GPU1)"), std::string::npos) << barriers.message();
  // checkBarriers cleared the record; polling reads it without clearing.
  Status cleared = comm.value()->pollBarriers();
  EXPECT_TRUE(cleared.isOk()) << cleared.toString();
  // Destroyed without hanging; a new communicator on the same GPUs gives right answers.
  start = Clock::now();
  comm.value().reset();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 15.0);
  auto fresh = Communicator::create({0, 1}, oneShot);
  ASSERT_TRUE(fresh.isOk()) << fresh.status().toString();
  testing::runAndCheck(*fresh.value(), ranks, CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 0, 100003, 0, false);
}

TEST(CommunicatorFaults, ScratchLargerThanTheGpuIsAClearErrorAndLeaksNothing) {
  GPUPEER_REQUIRE_GPUS(2);
  warmUp();
  std::vector<std::size_t> before = testing::settledFreeBytes({0, 1});
  CommunicatorOptions huge;
  // Two senders' slots: twice the GPU's memory.
  huge.ceSlotBytes = (memoryOf(0).totalBytes / 4096 + 1) * 4096;
  auto comm = Communicator::create({0, 1}, huge);
  ASSERT_FALSE(comm.isOk());
  EXPECT_EQ(comm.status().code(), ErrorCode::kCuda) << comm.status().toString();
  EXPECT_NE(comm.status().message().find("cannot allocate"), std::string::npos) << comm.status().message();
  EXPECT_EQ(testing::settledFreeBytes({0, 1}), before) << "create() left memory allocated";
}

TEST(CommunicatorFaults, AllocationFailingOnTheSecondGpuLeaksNothingOnTheFirst) {
  GPUPEER_REQUIRE_GPUS(2);
  warmUp();
  // GPU1 filled but for 64 MiB: rank 0 gets all of its scratch, rank 1 runs out part way.
  DeviceBuffer hog;
  ASSERT_TRUE(hog.allocate(1, memoryOf(1).freeBytes - (64u << 20)).isOk());
  std::vector<std::size_t> before = testing::settledFreeBytes({0, 1});
  auto comm = Communicator::create({0, 1});
  ASSERT_FALSE(comm.isOk()) << "create() fit in 64 MiB of GPU1";
  EXPECT_NE(comm.status().message().find("cannot allocate"), std::string::npos) << comm.status().toString();
  EXPECT_EQ(testing::settledFreeBytes({0, 1}), before) << "create() left memory allocated";
  hog.release();
  auto after = Communicator::create({0, 1});
  EXPECT_TRUE(after.isOk()) << after.status().toString();
}

TEST(CommunicatorFaults, FreedOrForeignMemoryIsRefusedBeforeAnythingIsEnqueued) {
  GPUPEER_REQUIRE_GPUS(2);
  auto comm = Communicator::create({0, 1});
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  Ranks ranks(1 << 16);
  void* freed = nullptr;
  cudaSetDevice(1);
  ASSERT_EQ(cudaMalloc(&freed, 1 << 16), cudaSuccess);
  ASSERT_EQ(cudaFree(freed), cudaSuccess);
  std::vector<std::uint8_t> host(1 << 16);
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, 1 << 16), cudaSuccess);
  const std::vector<std::pair<const char*, void*>> bad = {
      {"freed", freed},
      {"pageable host", host.data()},
      {"pinned host", pinned},
      {"stack", &host},
  };
  for (const auto& [what, p] : bad) {
    for (CollOp op : testing::kAllOps) {
      // Rank 1 is not the root (0): a broadcast never reads its send buffer and a reduce never
      // writes its receive buffer, so those are not checked (the header says so).
      std::vector<const void*> send = {ranks.send[0].get(), p};
      std::vector<void*> recv = {ranks.recv[0].get(), ranks.recv[1].get()};
      if (op != CollOp::kBroadcast) {
        Status st = comm.value()->run(op, send, recv, 256, DataType::kFloat32, RedOp::kSum, 0, ranks.raw);
        EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << what << " send buffer, " << collOpName(op);
      }
      send[1] = ranks.send[1].get();
      recv[1] = p;
      if (op != CollOp::kReduce) {
        Status st = comm.value()->run(op, send, recv, 256, DataType::kFloat32, RedOp::kSum, 0, ranks.raw);
        EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << what << " receive buffer, " << collOpName(op);
      }
    }
  }
  for (int r = 0; r < 2; ++r) {
    cudaSetDevice(r);
    EXPECT_EQ(cudaStreamQuery(ranks.raw[r]), cudaSuccess) << "work was enqueued on rank " << r;
  }
  cudaFreeHost(pinned);
}

TEST(CommunicatorFaults, HostileOptionsAreRefusedByName) {
  GPUPEER_REQUIRE_GPUS(2);
  // Each option out of its range, refused before anything is allocated, naming the option (the
  // environment's texts are checked on the CPU: tuning_variables_test.cpp).
  using Set = void (*)(CommunicatorOptions&);
  const std::vector<std::pair<const char*, Set>> settings = {
      {"ceSlotBytes", [](CommunicatorOptions& o) { o.ceSlotBytes = 4096; }},
      {"oneShotSlotBytes", [](CommunicatorOptions& o) { o.oneShotSlotBytes = 12; }},
      {"oneShotBlocks", [](CommunicatorOptions& o) { o.oneShotBlocks = 100000; }},
      {"oneShotBlocks", [](CommunicatorOptions& o) { o.oneShotBlocks = -1; }},
      {"lineBlockLines", [](CommunicatorOptions& o) { o.lineBlockLines = 33; }},
      {"lineSlotBytes", [](CommunicatorOptions& o) { o.lineSlotBytes = 1; }},
      {"line128SlotBytes", [](CommunicatorOptions& o) { o.line128SlotBytes = 100; }},
      {"ringChunkBytes", [](CommunicatorOptions& o) { o.ringChunkBytes = 1; }},
      {"chainStepBytes", [](CommunicatorOptions& o) { o.chainStepBytes = 15; }},
      {"pullTileBytes", [](CommunicatorOptions& o) { o.pullTileBytes = 17; }},
      {"pullBlockBytes", [](CommunicatorOptions& o) { o.pullBlockBytes = 1; }},
      {"barrierTimeoutMs", [](CommunicatorOptions& o) { o.barrierTimeoutMs = 0; }},
      {"barrierTimeoutMs", [](CommunicatorOptions& o) { o.barrierTimeoutMs = -5; }},
      {"fastest", [](CommunicatorOptions& o) { o.algorithm = "fastest"; }},
      {"algorithm", [](CommunicatorOptions& o) { o.algorithm = "\x1b[2J"; }},
  };
  for (const auto& [name, set] : settings) {
    CommunicatorOptions o;
    set(o);
    auto comm = Communicator::create({0, 1}, o);
    ASSERT_FALSE(comm.isOk()) << name << " was accepted";
    EXPECT_EQ(comm.status().code(), ErrorCode::kInvalidArgument) << comm.status().toString();
    EXPECT_NE(comm.status().message().find(name), std::string::npos) << comm.status().toString();
  }
}

}  // namespace
}  // namespace gpupeer
