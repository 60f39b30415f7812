// Every collective by every algorithm against the host reference (odd counts, unaligned
// buffers, in place, roots), a CUDA graph over both GPUs, and the copies staged through host
// memory when P2P is disabled.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "collective_gpu_support.hpp"
#include "gpu_test_support.hpp"

namespace gpupeer {
namespace {

using testing::Ranks;

using testing::kAllOps;

using testing::options;

TEST(CollectivesGpu, EveryOperationByEveryAlgorithm) {
  GPUPEER_REQUIRE_GPUS(2);
  Ranks ranks(4u << 20);
  for (const char* algo : {"oneshot", "ce", "ring", "split", "chain", "relay"}) {
    SCOPED_TRACE(algo);
    auto comm = Communicator::create({0, 1}, options(algo));
    ASSERT_TRUE(comm.isOk()) << comm.status().toString();
    for (CollOp op : kAllOps) {
      if (!testing::serves(algo, op)) continue;
      for (DataType t : {DataType::kFloat32, DataType::kBFloat16, DataType::kInt8})
        // On 2 GPUs 16 and 8192 elements go in 128-byte lines, 1 and 4097 are not a multiple of
        // 8 bytes (16-byte lines where a chunk is 8-byte aligned, else the regular variant),
        // 100003 floats exceed a scratch slot.
        for (std::size_t count :
             {std::size_t{1}, std::size_t{16}, std::size_t{4097}, std::size_t{8192}, std::size_t{100003}})
          for (int root : {0, 1}) {
            if (root && op != CollOp::kBroadcast && op != CollOp::kReduce) continue;
            testing::runAndCheckArrangements(*comm.value(), ranks, op, t, root, count);
          }
    }
  }
}

TEST(CollectivesGpu, PullAndSplitInTilesDealtToTheBlocks) {
  GPUPEER_REQUIRE_GPUS(2);
  // On every visible GPU: 4 KiB tiles dealt to the blocks in turn (pullTileBytes) and a
  // block per 16 KiB, so each block takes many tiles, the last one partly; odd counts and
  // offsets leave elements after the last whole 16-byte unit.
  const std::vector<int> devices = testing::firstGpus(testing::machine().gpus.size());
  const int n = static_cast<int>(devices.size());
  Ranks ranks(8u << 20, devices);
  for (const char* algo : {"pull", "split"}) {
    SCOPED_TRACE(algo);
    CommunicatorOptions o = options(algo);
    o.pullTileBytes = 4u << 10;
    o.pullBlockBytes = 16u << 10;
    auto comm = Communicator::create(devices, o);
    ASSERT_TRUE(comm.isOk()) << comm.status().toString();
    for (CollOp op : kAllOps) {
      if (!testing::serves(algo, op)) continue;
      for (std::size_t count : {std::size_t{1}, std::size_t{4097}, std::size_t{(1u << 20) / n + 3}}) {
        testing::runAndCheck(*comm.value(), ranks, op, DataType::kFloat32, RedOp::kSum, n - 1, count, 0, false);
        testing::runAndCheck(*comm.value(), ranks, op, DataType::kInt8, RedOp::kMax, 0, count, 3, true);
      }
    }
  }
}

TEST(CollectivesGpu, LowLatencyLinesInBlocksOfEveryShape) {
  GPUPEER_REQUIRE_GPUS(2);
  // The one-shot kernel's lines in blocks of 32, 96 and 512 lines (lineBlockLines) and by the
  // launch's rule (0): shares of whole warps, a last block that holds a partial unit (4097
  // floats), pieces that would need more than 264 blocks (65536 floats in blocks of 32 or 96
  // lines), and operations of different grids back to back (each block adds its share to the
  // operation counter).
  Ranks ranks(4u << 20);
  for (int lines : {32, 96, 512, 0}) {
    SCOPED_TRACE(::testing::Message() << "lines per block: " << lines);
    CommunicatorOptions o = options("oneshot");
    o.lineBlockLines = lines;
    auto comm = Communicator::create({0, 1}, o);
    ASSERT_TRUE(comm.isOk()) << comm.status().toString();
    for (CollOp op : kAllOps) {
      if (!testing::serves("oneshot", op)) continue;
      for (std::size_t count : {std::size_t{1}, std::size_t{4097}, std::size_t{8192}, std::size_t{65536}}) {
        testing::runAndCheck(*comm.value(), ranks, op, DataType::kFloat32, RedOp::kSum, 1, count, 0, false);
        testing::runAndCheck(*comm.value(), ranks, op, DataType::kInt32, RedOp::kMax, 0, count, 0, true);
      }
    }
  }
}

TEST(CollectivesGpu, PullReadsThePeersBuffersAndStepsAsideWhereItCannot) {
  GPUPEER_REQUIRE_GPUS(2);
  Ranks ranks(16u << 20);
  auto comm = Communicator::create({0, 1}, options("pull"));
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  for (CollOp op : {CollOp::kAllReduce, CollOp::kReduceScatter, CollOp::kReduce})
    for (DataType t : {DataType::kFloat32, DataType::kBFloat16, DataType::kInt8})
      // 1 and 4097 are not a multiple of 16 bytes; 2^20 + 3 floats spread over every block.
      for (std::size_t count :
           {std::size_t{1}, std::size_t{16}, std::size_t{4097}, std::size_t{100003}, std::size_t{(1u << 20) + 3}})
        for (int root : {0, 1}) {
          if (root && op != CollOp::kReduce) continue;
          testing::runAndCheck(*comm.value(), ranks, op, t, RedOp::kSum, root, count, 0, false);
          // In place: reduce-scatter and reduce pull, all-reduce takes the table's next choice.
          testing::runAndCheck(*comm.value(), ranks, op, t, RedOp::kMax, root, count, 0, true);
          testing::runAndCheck(*comm.value(), ranks, op, t, RedOp::kMin, root, count, dataTypeSize(t), false);
        }
}

TEST(CollectivesGpu, PullAndSplitLeavePoolMemoryToTheOtherAlgorithms) {
  GPUPEER_REQUIRE_GPUS(2);
  // Memory from cudaMallocAsync's pool is not mapped into the peer by peer access: reading it
  // from GPU1 would fault. The communicator sees that and neither pulls nor splits.
  for (const char* algo : {"pull", "split"}) {
    SCOPED_TRACE(algo);
    auto comm = Communicator::create({0, 1}, options(algo));
    ASSERT_TRUE(comm.isOk()) << comm.status().toString();
    const std::size_t count = 1u << 16, bytes = count * sizeof(float);
    std::vector<Stream> streams(2);
    std::vector<cudaStream_t> raw(2);
    std::vector<const void*> send(2);
    std::vector<void*> recv(2);
    for (int r = 0; r < 2; ++r) {
      ASSERT_TRUE(streams[r].create(r).isOk());
      raw[r] = streams[r].get();
      cudaSetDevice(r);
      void *s = nullptr, *d = nullptr;
      ASSERT_EQ(cudaMallocAsync(&s, bytes, raw[r]), cudaSuccess);
      ASSERT_EQ(cudaMallocAsync(&d, bytes, raw[r]), cudaSuccess);
      const std::vector<float> input(count, static_cast<float>(r + 1));
      ASSERT_EQ(cudaMemcpyAsync(s, input.data(), bytes, cudaMemcpyHostToDevice, raw[r]), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(raw[r]), cudaSuccess);
      send[r] = s;
      recv[r] = d;
    }
    Status st = comm.value()->allReduce(send, recv, count, DataType::kFloat32, RedOp::kSum, raw);
    ASSERT_TRUE(st.isOk()) << st.toString();
    for (int r = 0; r < 2; ++r) {
      cudaSetDevice(r);
      ASSERT_EQ(cudaStreamSynchronize(raw[r]), cudaSuccess);
      std::vector<float> got(count);
      ASSERT_EQ(cudaMemcpy(got.data(), recv[r], bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(std::count(got.begin(), got.end(), 3.0f), static_cast<std::ptrdiff_t>(count)) << "rank " << r;
      cudaFreeAsync(const_cast<void*>(send[r]), raw[r]);
      cudaFreeAsync(recv[r], raw[r]);
      ASSERT_EQ(cudaStreamSynchronize(raw[r]), cudaSuccess);
    }
    EXPECT_TRUE(comm.value()->checkBarriers().isOk());
  }
}

TEST(CollectivesGpu, SplitDoesNotWriteOutputsPeersCannotMap) {
  GPUPEER_REQUIRE_GPUS(2);
  // Inputs from cudaMalloc (peers may read them), outputs from cudaMallocAsync's pool (peers
  // may not write them): split would store into the peer's output, so another algorithm runs.
  auto comm = Communicator::create({0, 1}, options("split"));
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  const std::size_t count = (1u << 20) + 1, bytes = count * sizeof(float);
  Ranks ranks(bytes);
  std::vector<const void*> send(2);
  std::vector<void*> recv(2);
  for (int r = 0; r < 2; ++r) {
    cudaSetDevice(r);
    const std::vector<float> input(count, static_cast<float>(r + 1));
    ASSERT_EQ(cudaMemcpy(ranks.send[r].get(), input.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaMallocAsync(&recv[r], bytes, ranks.raw[r]), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(ranks.raw[r]), cudaSuccess);
    send[r] = ranks.send[r].get();
  }
  for (CollOp op : {CollOp::kAllReduce, CollOp::kBroadcast}) {
    Status st = comm.value()->run(op, send, recv, count, DataType::kFloat32, RedOp::kSum, 0, ranks.raw);
    ASSERT_TRUE(st.isOk()) << st.toString();
    const float want = op == CollOp::kAllReduce ? 3.0f : 1.0f;
    for (int r = 0; r < 2; ++r) {
      cudaSetDevice(r);
      ASSERT_EQ(cudaStreamSynchronize(ranks.raw[r]), cudaSuccess);
      std::vector<float> got(count);
      ASSERT_EQ(cudaMemcpy(got.data(), recv[r], bytes, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(std::count(got.begin(), got.end(), want), static_cast<std::ptrdiff_t>(count))
          << collOpName(op) << " rank " << r;
    }
  }
  for (int r = 0; r < 2; ++r) {
    cudaSetDevice(r);
    cudaFreeAsync(recv[r], ranks.raw[r]);
    ASSERT_EQ(cudaStreamSynchronize(ranks.raw[r]), cudaSuccess);
  }
  EXPECT_TRUE(comm.value()->checkBarriers().isOk());
}

TEST(CollectivesGpu, MixedOperationsBackToBack) {
  GPUPEER_REQUIRE_GPUS(2);
  // Default options: sizes on both sides of the one-shot / copy-engine crossover, one after
  // the other without synchronising, each checked at the end in its own buffers.
  auto comm = Communicator::create({0, 1});
  ASSERT_TRUE(comm.isOk());
  struct Case {
    CollOp op;
    std::size_t count;
  };
  const Case cases[] = {{CollOp::kAllReduce, 3},       {CollOp::kAllGather, 10u << 20}, {CollOp::kAllReduce, 12u << 20},
                        {CollOp::kReduceScatter, 5},   {CollOp::kAllToAll, 4u << 20},   {CollOp::kBroadcast, 17},
                        {CollOp::kAllReduce, 1u << 16}};
  std::vector<std::unique_ptr<Ranks>> buffers;
  std::vector<std::vector<std::vector<std::uint8_t>>> inputs;
  std::vector<testing::Placement> places;
  Ranks streams(16);
  for (const Case& c : cases) {
    buffers.push_back(std::make_unique<Ranks>(c.count * 2 * 4 + 64));
    places.push_back(testing::place(*buffers.back(), c.op, c.count, DataType::kFloat32, 0, false));
    inputs.emplace_back();
    for (int r = 0; r < 2; ++r) {
      inputs.back().push_back(knownAnswerInput(DataType::kFloat32, r, collectiveInputElements(c.op, c.count, 2)));
      cudaSetDevice(r);
      ASSERT_EQ(cudaMemcpy(const_cast<void*>(places.back().send[r]), inputs.back()[r].data(), inputs.back()[r].size(),
                           cudaMemcpyHostToDevice),
                cudaSuccess);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the DMA of a pageable cudaMemcpy may outlive the call
    }
  }
  for (std::size_t i = 0; i < std::size(cases); ++i)
    ASSERT_TRUE(comm.value()
                    ->run(cases[i].op, places[i].send, places[i].recv, cases[i].count, DataType::kFloat32, RedOp::kSum,
                          0, streams.raw)
                    .isOk());
  streams.sync();
  ASSERT_TRUE(comm.value()->checkBarriers().isOk());
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    SCOPED_TRACE(collOpName(cases[i].op));
    std::vector<const void*> in;
    for (auto& v : inputs[i]) in.push_back(v.data());
    std::vector<std::uint8_t> got(collectiveOutputElements(cases[i].op, cases[i].count, 2) * 4);
    for (int r = 0; r < 2; ++r) {
      cudaSetDevice(r);
      ASSERT_EQ(cudaMemcpy(got.data(), places[i].recv[r], got.size(), cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(
          checkCollective(cases[i].op, DataType::kFloat32, RedOp::kSum, 0, in, r, got.data(), cases[i].count).wrong, 0u)
          << "rank " << r;
    }
  }
}

TEST(CollectivesGpu, OneGraphOverBothGpusReplays) {
  GPUPEER_REQUIRE_GPUS(2);
  testing::checkAllReduceGraphs({0, 1});
  testing::checkSplitChainAndRelayGraphs({0, 1});
}

TEST(CollectivesGpu, CopyEnginesCarryLongMessagesThroughReusedPositions) {
  GPUPEER_REQUIRE_GPUS(2);
  // On every visible GPU, 8 MiB copy-engine slots: messages of 16 MiB go in 2 MiB chunks through
  // four scratch positions (a sender refills one only after the receiver's "freed" signal for
  // what it held). In place, a rank's output overwrites the input its own copies read: in-place
  // sums back to back from ones end at n^k only if no reduction overtook a copy.
  const std::vector<int> devices = testing::firstGpus(testing::machine().gpus.size());
  const int n = static_cast<int>(devices.size());
  const std::size_t count = (4u << 20) + 5;  // 16 MiB of floats and 20 bytes
  CommunicatorOptions o = options("ce");
  o.ceSlotBytes = 8u << 20;
  auto comm = Communicator::create(devices, o);
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  Ranks ranks(count * 4 + 64, devices);
  for (CollOp op : kAllOps) {
    const bool shares = op == CollOp::kAllGather || op == CollOp::kReduceScatter || op == CollOp::kAllToAll;
    const std::size_t c = shares ? count / n : count;
    testing::runAndCheck(*comm.value(), ranks, op, DataType::kFloat32, RedOp::kSum, n - 1, c, 0, false);
    testing::runAndCheck(*comm.value(), ranks, op, DataType::kInt32, RedOp::kMin, 0, c, 4, true);
  }
  // Each sum multiplies every element by n: as many as stay below 2^31, at most 20.
  testing::checkBackToBackInPlaceSums(*comm.value(), ranks, count, 20);
  EXPECT_TRUE(comm.value()->checkBarriers().isOk());
}

TEST(CollectivesGpu, CopyEnginesOfTheSendersOrOfTheReceivers) {
  GPUPEER_REQUIRE_GPUS(2);
  // ceIssue: the senders' engines push the copying operations' pieces, or the
  // receivers' pull them (the reductions always push), with 8 MiB slots so that 16 MiB messages
  // refill positions; odd counts and offsets, in place, both roots, reduces back to back with
  // the root moving, and in-place sums back to back (each would see a copy overtaken).
  const std::vector<int> devices = testing::firstGpus(2);
  const std::size_t count = (4u << 20) + 5;
  Ranks ranks(count * 4 + 64, devices);
  for (auto issue : {CommunicatorOptions::CeIssue::kSender, CommunicatorOptions::CeIssue::kReceiver}) {
    SCOPED_TRACE(issue == CommunicatorOptions::CeIssue::kSender ? "sender" : "receiver");
    CommunicatorOptions o = options("ce");
    o.ceSlotBytes = 8u << 20;
    o.ceIssue = issue;
    auto comm = Communicator::create(devices, o);
    ASSERT_TRUE(comm.isOk()) << comm.status().toString();
    for (CollOp op : kAllOps) {
      const bool shares = op == CollOp::kAllGather || op == CollOp::kReduceScatter || op == CollOp::kAllToAll;
      const std::size_t c = shares ? count / 2 : count;
      for (int root : {0, 1}) {
        testing::runAndCheck(*comm.value(), ranks, op, DataType::kFloat32, RedOp::kSum, root, c, 0, false);
        testing::runAndCheck(*comm.value(), ranks, op, DataType::kInt32, RedOp::kMin, root, 4097, 4, true);
        testing::runAndCheck(*comm.value(), ranks, op, DataType::kInt8, RedOp::kMax, root, 3, 1, false);
      }
    }
    const testing::Placement p = testing::place(ranks, CollOp::kReduce, 4099, DataType::kFloat32, 0, false);
    for (int i = 0; i < 20; ++i)
      ASSERT_TRUE(comm.value()
                      ->run(CollOp::kReduce, p.send, p.recv, 4099, DataType::kFloat32, RedOp::kSum, i % 2, ranks.raw)
                      .isOk());
    testing::checkBackToBackInPlaceSums(*comm.value(), ranks, count, 20);
    EXPECT_TRUE(comm.value()->checkBarriers().isOk());
  }
}

TEST(CollectivesGpu, CopyEngineAndOneKernelOperationsBackToBack) {
  GPUPEER_REQUIRE_GPUS(2);
  // The table's choices on two GPUs, back to back without a host sync: in-place all-gathers of
  // 24 MiB go by copy engine, each followed by an in-place one-kernel sum (in lines) of the
  // first 1 KiB or 64 KiB of the gathered ints. An all-gather whose copies started before the
  // sum before it had ended on both GPUs would copy rank 0's first chunk unsummed, and a sum
  // that started before the copies had landed would add stale values: the counts below would
  // differ.
  const std::vector<int> devices = testing::firstGpus(2);
  const int n = static_cast<int>(devices.size());
  auto comm = Communicator::create(devices, options(""));
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  const std::size_t gather = (24u << 20) / 4 / n, total = gather * n;  // ints per rank, in all
  ASSERT_EQ(comm.value()->algorithmFor(CollOp::kAllGather, total * 4).value(), CollAlgo::kCopyEngine);
  Ranks ranks(total * 4, devices);
  std::vector<std::int32_t> host(total, 1);
  std::vector<const void*> gatherSend;
  std::vector<void*> recv;
  for (int r = 0; r < n; ++r) {
    cudaSetDevice(devices[r]);
    ASSERT_EQ(cudaMemcpy(ranks.recv[r].get(), host.data(), total * 4, cudaMemcpyHostToDevice), cudaSuccess);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    gatherSend.push_back(ranks.recv[r].bytes() + r * gather * 4);
    recv.push_back(ranks.recv[r].get());
  }
  const std::vector<const void*> sumSend(recv.begin(), recv.end());
  std::int64_t wantSmall = 1, wantLarge = 1;
  for (int i = 0; i < 20; ++i) {
    const std::size_t small = i % 2 ? 256 : 16384;
    ASSERT_TRUE(comm.value()->allGather(gatherSend, recv, gather, DataType::kInt32, ranks.raw).isOk());
    ASSERT_TRUE(comm.value()->allReduce(sumSend, recv, small, DataType::kInt32, RedOp::kSum, ranks.raw).isOk());
    wantSmall *= n;
    if (small == 16384) wantLarge *= n;
  }
  ranks.sync();
  ASSERT_TRUE(comm.value()->checkBarriers().isOk());
  for (int r = 0; r < n; ++r) {
    SCOPED_TRACE(::testing::Message() << "rank " << r);
    cudaSetDevice(devices[r]);
    ASSERT_EQ(cudaMemcpy(host.data(), ranks.recv[r].get(), total * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(std::count(host.begin(), host.begin() + 256, wantSmall), 256);
    EXPECT_EQ(std::count(host.begin() + 256, host.begin() + 16384, wantLarge), 16384 - 256);
    EXPECT_EQ(std::count(host.begin() + 16384, host.end(), 1), static_cast<long>(total - 16384));
  }
}

TEST(CollectivesGpu, ChainInManySmallStepsBackToBackWithAMovingRoot) {
  GPUPEER_REQUIRE_GPUS(2);
  // On every visible GPU: 16-byte steps, so each block takes hundreds of them, a reduce cycles
  // through its scratch positions many times (each reuse waiting for the next rank's word),
  // and a large message needs more than the kernel's 4000 steps per block (the step grows);
  // odd lengths and offsets copy bytes or single elements; roots move between back-to-back
  // operations, each flag value of one operation above every value of the one before.
  const std::vector<int> devices = testing::firstGpus(testing::machine().gpus.size());
  const int n = static_cast<int>(devices.size());
  CommunicatorOptions o = options("chain");
  o.chainStepBytes = o.chainReduceStepBytes = 16;
  auto comm = Communicator::create(devices, o);
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  Ranks ranks(20u << 20, devices);
  for (CollOp op : {CollOp::kBroadcast, CollOp::kReduce})
    for (std::size_t count : {std::size_t{1}, std::size_t{100003}, std::size_t{(4u << 20) + 5}})
      for (int root = 0; root < n; ++root) {
        testing::runAndCheck(*comm.value(), ranks, op, DataType::kFloat32, RedOp::kSum, root, count, 0, false);
        testing::runAndCheck(*comm.value(), ranks, op, DataType::kInt8, RedOp::kSum, root, count, 3, root % 2 == 0);
        if (op == CollOp::kReduce)
          testing::runAndCheck(*comm.value(), ranks, op, DataType::kBFloat16, RedOp::kAvg, root, count, 2, false);
      }
  const testing::Placement p = testing::place(ranks, CollOp::kBroadcast, 300001, DataType::kFloat32, 0, false);
  for (int i = 0; i < 12; ++i) {
    const CollOp op = i % 2 ? CollOp::kReduce : CollOp::kBroadcast;
    ASSERT_TRUE(
        comm.value()->run(op, p.send, p.recv, 300001, DataType::kFloat32, RedOp::kSum, i % n, ranks.raw).isOk());
  }
  for (CollOp op : {CollOp::kBroadcast, CollOp::kReduce})
    testing::runAndCheck(*comm.value(), ranks, op, DataType::kFloat32, RedOp::kSum, n - 1, 300001, 0, false);
  EXPECT_TRUE(comm.value()->checkBarriers().isOk());
}

TEST(CollectivesGpu, RingInLongPipelines) {
  GPUPEER_REQUIRE_GPUS(2);
  // On every visible GPU: chunks of 4 KiB, so a link carries several hundred of them and the
  // reduce legs go round their 64 scratch positions many times, each reuse waiting for its
  // "freed" signal.
  const std::vector<int> devices = testing::firstGpus(testing::machine().gpus.size());
  const int n = static_cast<int>(devices.size());
  CommunicatorOptions o = options("ring");
  o.ringChunkBytes = o.ringSpreadChunkBytes = 4096;
  auto comm = Communicator::create(devices, o);
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  Ranks ranks(8u << 20, devices);
  const std::size_t count = (1u << 20) + 3;  // 4 MiB of floats and three more: uneven segments
  for (CollOp op : kAllOps) {
    if (!testing::serves("ring", op)) continue;
    const std::size_t c = op == CollOp::kAllGather || op == CollOp::kReduceScatter ? count / n : count;
    testing::runAndCheck(*comm.value(), ranks, op, DataType::kFloat32, RedOp::kSum, n - 1, c, 0, false);
    testing::runAndCheck(*comm.value(), ranks, op, DataType::kBFloat16, RedOp::kAvg, 0, c, 2, true);
  }
  // Back to back with the root moving: no signal of one operation is taken by the next.
  // Out of place at the buffers' starts: every operation's arrangement is the same.
  const testing::Placement p = testing::place(ranks, CollOp::kAllReduce, 300001, DataType::kFloat32, 0, false);
  for (int i = 0; i < 12; ++i) {
    const CollOp op = i % 3 == 0 ? CollOp::kReduce : i % 3 == 1 ? CollOp::kBroadcast : CollOp::kAllReduce;
    ASSERT_TRUE(
        comm.value()->run(op, p.send, p.recv, 300001, DataType::kFloat32, RedOp::kSum, i % n, ranks.raw).isOk());
  }
  testing::runAndCheck(*comm.value(), ranks, CollOp::kReduceScatter, DataType::kInt32, RedOp::kSum, 0, 70001, 0, false);
}

TEST(CollectivesGpu, WithoutP2pTheCopiesGoThroughHostMemory) {
  GPUPEER_REQUIRE_GPUS(2);
  CommunicatorOptions staged;
  staged.disableP2p = true;
  auto comm = Communicator::create({0, 1}, staged);
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  EXPECT_FALSE(comm.value()->p2p());
  EXPECT_NE(comm.value()->transport().find("disableP2p"), std::string::npos) << comm.value()->transport();
  EXPECT_NE(comm.value()->transport().find("gpupeer's pipeline"), std::string::npos) << comm.value()->transport();
  EXPECT_EQ(comm.value()->algorithmFor(CollOp::kAllReduce, 8).value(), CollAlgo::kCopyEngine);
  Ranks ranks(1u << 20);
  for (CollOp op : kAllOps)
    testing::runAndCheck(*comm.value(), ranks, op, DataType::kFloat32, RedOp::kSum, 1, 4099, 4, false);
  {
    // Copies of 5 MB (the all-reduce's chunks: CUDA's staging) and 16 MB (the all-gather's:
    // four of the pipeline's 4 MiB chunks through its three pinned buffers).
    Ranks large(40u << 20);
    testing::runAndCheck(*comm.value(), large, CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 0, 5000001, 0,
                         false);
    testing::runAndCheck(*comm.value(), large, CollOp::kAllGather, DataType::kInt32, RedOp::kSum, 0, 4000001, 0, true);
  }
  // in-place alltoall would need P2P (see Communicator::run): refused, not wrong
  testing::Placement p = testing::place(ranks, CollOp::kAllToAll, 16, DataType::kFloat32, 0, true);
  EXPECT_EQ(
      comm.value()->run(CollOp::kAllToAll, p.send, p.recv, 16, DataType::kFloat32, RedOp::kSum, 0, ranks.raw).code(),
      ErrorCode::kUnsupported);
  CommunicatorOptions forced = staged;
  forced.algorithm = "oneshot";
  auto oneShot = Communicator::create({0, 1}, forced);
  ASSERT_TRUE(oneShot.isOk());
  EXPECT_EQ(oneShot.value()->algorithmFor(CollOp::kAllReduce, 8).status().code(), ErrorCode::kUnsupported);
  // CUDA's own staging instead of the pipeline (stagedPipeline off), which pins no host memory.
  CommunicatorOptions byCudaOptions = staged;
  byCudaOptions.stagedPipeline = false;
  auto byCuda = Communicator::create({0, 1}, byCudaOptions);
  ASSERT_TRUE(byCuda.isOk()) << byCuda.status().toString();
  EXPECT_NE(byCuda.value()->transport().find("CUDA's own staging"), std::string::npos) << byCuda.value()->transport();
  testing::runAndCheck(*byCuda.value(), ranks, CollOp::kAllReduce, DataType::kFloat32, RedOp::kSum, 0, 4099, 4, false);
  // The ring only copies and reduces locally: it works with its copies staged.
  forced.algorithm = "ring";
  forced.ringChunkBytes = forced.ringSpreadChunkBytes = 64u << 10;
  auto ring = Communicator::create({0, 1}, forced);
  ASSERT_TRUE(ring.isOk()) << ring.status().toString();
  for (CollOp op : kAllOps)
    if (testing::serves("ring", op)) {
      EXPECT_EQ(ring.value()->algorithmFor(op, 8).value(),
                op == CollOp::kSendRecv ? CollAlgo::kCopyEngine : CollAlgo::kRing);
      testing::runAndCheck(*ring.value(), ranks, op, DataType::kFloat32, RedOp::kSum, 1, 100003, 0, false);
    }
}

}  // namespace
}  // namespace gpupeer
