// RankCommunicator with one process per rank: the ranks are gpupeer_rank_worker processes,
// spread over the visible GPUs (several per GPU where there are fewer GPUs than ranks: ranks
// on one GPU map each other's memory through the same handles; correct, not fast). Every
// process's run is bounded; its output is shown when it fails.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <initializer_list>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cuda/device_memory.hpp"
#include "gpu_memory_support.hpp"
#include "gpu_test_support.hpp"
#include "gpupeer/rank_communicator.hpp"
#include "gpupeer/shareable_memory.hpp"
#include "stream_gate.hpp"

extern char** environ;

namespace gpupeer {
namespace {

struct Outcome {
  int exitCode = -1;  // -1: killed at the bound
  std::string output;
};

// Starts ranks `started` of `nranks` as workers of `scenario` and waits for all (at most
// `boundSeconds`, then kills the rest).
std::vector<Outcome> runWorkers(const std::string& scenario, int nranks, const std::vector<int>& started, int timeoutMs,
                                int boundSeconds) {
  Result<UniqueId> id = makeUniqueId();
  EXPECT_TRUE(id.isOk());
  const std::string hex = uniqueIdToHex(id.value());
  std::vector<pid_t> pids;
  std::vector<std::string> logs;
  for (int rank : started) {
    logs.push_back(::testing::TempDir() + "rank_worker_" + scenario + "_" + std::to_string(rank) + "_" +
                   std::to_string(getpid()) + ".log");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, logs.back().c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    const std::string n = std::to_string(nranks), r = std::to_string(rank), t = std::to_string(timeoutMs);
    std::vector<char*> argv = {const_cast<char*>(GPUPEER_RANK_WORKER_PATH),
                               const_cast<char*>(scenario.c_str()),
                               const_cast<char*>(n.c_str()),
                               const_cast<char*>(r.c_str()),
                               const_cast<char*>(hex.c_str()),
                               const_cast<char*>(t.c_str()),
                               nullptr};
    pid_t pid = -1;
    EXPECT_EQ(posix_spawn(&pid, GPUPEER_RANK_WORKER_PATH, &actions, nullptr, argv.data(), environ), 0);
    posix_spawn_file_actions_destroy(&actions);
    pids.push_back(pid);
  }
  std::vector<Outcome> out(pids.size());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(boundSeconds);
  for (std::size_t left = pids.size(); left > 0;) {
    for (std::size_t i = 0; i < pids.size(); ++i) {
      if (pids[i] <= 0) continue;
      int status = 0;
      if (waitpid(pids[i], &status, WNOHANG) == pids[i]) {
        out[i].exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pids[i] = -1;
        --left;
      }
    }
    if (left > 0 && std::chrono::steady_clock::now() > deadline) {
      for (pid_t p : pids)
        if (p > 0) kill(p, SIGKILL), waitpid(p, nullptr, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (std::size_t i = 0; i < logs.size(); ++i) {
    std::ifstream f(logs[i]);
    std::stringstream s;
    s << f.rdbuf();
    out[i].output = s.str();
    std::remove(logs[i].c_str());
  }
  return out;
}

std::vector<int> allRanks(int n) {
  std::vector<int> r;
  for (int i = 0; i < n; ++i) r.push_back(i);
  return r;
}

// The worker's exit code when init failed (rank_worker.cpp).
constexpr int kInitFailed = 3;

// Every rank exited with `exitCode` and printed every one of `lines`.
void expectEveryRankPrinted(const std::vector<Outcome>& out, std::initializer_list<std::string> lines,
                            int exitCode = 0) {
  for (std::size_t r = 0; r < out.size(); ++r) {
    EXPECT_EQ(out[r].exitCode, exitCode) << "rank " << r << ":\n" << out[r].output;
    for (const std::string& line : lines) EXPECT_NE(out[r].output.find(line), std::string::npos) << out[r].output;
  }
}

class RankCommunicatorProcesses : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { GPUPEER_REQUIRE_GPUS(1); }
};

TEST_P(RankCommunicatorProcesses, EveryCollectiveAgainstTheReferenceAndInGraphs) {
  const int n = GetParam();
  expectEveryRankPrinted(runWorkers("collectives", n, allRanks(n), 20000, 280), {"ok graphs: 0 failure(s)"});
}

TEST_P(RankCommunicatorProcesses, SendRecvBetweenEveryPairAndInAGroupedCycle) {
  const int n = GetParam();
  expectEveryRankPrinted(runWorkers("p2p", n, allRanks(n), 20000, 200), {"ok cycle and self"});
}

// Eight ranks (several per GPU where fewer are lent) each send to and receive from every rank
// in one group, 8 MiB and more per pair: 16 sends and receives of 64 lanes would need 1024
// blocks where an H200 holds 264, and each rank's nearest peers come first in its group and
// last in theirs, so blocks that wait for peers' blocks not yet resident hung until the bound.
TEST(RankCommunicatorSends, AllToAllOfEightRanksNeedsNoMoreBlocksThanTheGpuHolds) {
  GPUPEER_REQUIRE_GPUS(1);
  expectEveryRankPrinted(runWorkers("p2p-all-to-all", 8, allRanks(8), 20000, 240), {"0 wrong"});
}

// A receive longer than its send (one chunk), and a shorter one of several chunks whose send
// waits for the receiver: the receiver names both lengths at once, the sender names the
// receiver at its 3 s bound.
TEST(RankCommunicatorSends, ReceiveOfAnotherLengthThanItsSendIsReported) {
  GPUPEER_REQUIRE_GPUS(1);
  expectEveryRankPrinted(runWorkers("p2p-length-longer", 2, allRanks(2), 3000, 60), {"ok lengths differ"});
  expectEveryRankPrinted(runWorkers("p2p-length-shorter", 2, allRanks(2), 3000, 60), {"ok lengths differ"});
}

// Ranks whose kernels would take different grids or steps would wait for each other's flags
// until the bound: init compares the tuning variables and names the one that differs.
TEST_P(RankCommunicatorProcesses, RanksGivenDifferentTuningFailInitNamingTheVariable) {
  const int n = GetParam();
  expectEveryRankPrinted(runWorkers("tuning-differs", n, allRanks(n), 20000, 60),
                         {"GPUPEER_CHAIN_STEP is ", "every rank of a communicator must be given the same value"},
                         kInitFailed);
}

// Ranks on several hosts cannot map each other's memory: every rank's init names both hosts
// and the NCCL library that runs such communicators, and ends within the bound.
TEST_P(RankCommunicatorProcesses, RanksOnSeveralHostsFailInitNamingTheHosts) {
  const int n = GetParam();
  expectEveryRankPrinted(runWorkers("hosts-differ", n, allRanks(n), 20000, 60),
                         {"on host worker-host-a", "on host worker-host-b", "libgpupeer_nccl.so"}, kInitFailed);
}

TEST_P(RankCommunicatorProcesses, KilledRankIsNamedBySurvivorsWithinTheBound) {
  const int n = GetParam();
  const auto start = std::chrono::steady_clock::now();
  std::vector<Outcome> out = runWorkers("killed", n, allRanks(n), 3000, 120);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(out[n - 1].exitCode, 128 + SIGKILL) << out[n - 1].output;
  for (int r = 0; r + 1 < n; ++r) {
    EXPECT_EQ(out[r].exitCode, 0) << "survivor " << r << ":\n" << out[r].output;
    EXPECT_NE(out[r].output.find("ok survivor"), std::string::npos) << out[r].output;
  }
  std::printf("%d ranks, one killed: every process ended after %.1f s\n", n, seconds);
}

// Killed in the middle of large calls (the many pieces of 64 and 256 MiB all-reduces), eager
// and replayed from a graph, by the kernels or (-ce) the copy engines through the scratch:
// every survivor names the dead rank within the bound.
TEST_P(RankCommunicatorProcesses, KilledDuringLargeCallsIsNamedBySurvivorsWithinTheBound) {
  const int n = GetParam();
  for (const char* scenario : {"killed-during-64-eager", "killed-during-64-graph", "killed-during-256-eager",
                               "killed-during-256-graph", "killed-during-64-eager-ce", "killed-during-256-graph-ce"}) {
    SCOPED_TRACE(scenario);
    std::vector<Outcome> out = runWorkers(scenario, n, allRanks(n), 3000, 120);
    EXPECT_EQ(out[n - 1].exitCode, 128 + SIGKILL) << out[n - 1].output;
    for (int r = 0; r + 1 < n; ++r) {
      EXPECT_EQ(out[r].exitCode, 0) << "survivor " << r << ":\n" << out[r].output;
      EXPECT_NE(out[r].output.find("ok survivor"), std::string::npos) << out[r].output;
    }
  }
}

TEST_P(RankCommunicatorProcesses, RankThatNeverJoinsFailsInitWithinTheBound) {
  const int n = GetParam();
  std::vector<int> started = allRanks(n);
  started.pop_back();
  const auto start = std::chrono::steady_clock::now();
  std::vector<Outcome> out = runWorkers("collectives", n, started, 2000, 60);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (std::size_t r = 0; r < started.size(); ++r) {
    EXPECT_EQ(out[r].exitCode, 3) << out[r].output;
    EXPECT_NE(out[r].output.find("rank(s) " + std::to_string(n - 1) + " of " + std::to_string(n) + " did not join"),
              std::string::npos)
        << out[r].output;
  }
  EXPECT_LT(seconds, 20.0);
}

TEST_P(RankCommunicatorProcesses, RegisteredBuffersReadDirectlyAgainstTheReferenceAndInGraphs) {
  const int n = GetParam();
  expectEveryRankPrinted(
      runWorkers("registered", n, allRanks(n), 20000, 280),
      {"ok registered collectives: 0 failure(s)", "ok graphs: 0 failure(s)", "ok deregistered: 0 failure(s)"});
}

TEST_P(RankCommunicatorProcesses, GraphWithDeregisteredBuffersIsReportedNotAFault) {
  const int n = GetParam();
  expectEveryRankPrinted(runWorkers("registered-stale", n, allRanks(n), 20000, 90), {"ok stale graph"});
}

// The regression test of a line of the 128-byte variant stored in two instructions: after the
// call check, where one lane of a warp waits for a peer's call line, the warp went on diverged,
// the eight stores of a line were no longer one instruction, and a peer could see the line's
// flag before one lane's 16 bytes (4 floats of another piece's data in the sum; 2x H200: 12-24
// wrong elements per 32 MiB all-reduce). Pieces two apart share scratch, so the stale bytes
// differ from the right ones only when the inputs change from call to call.
TEST_P(RankCommunicatorProcesses, ManyPieceSumsOnFreshInputs_LineStoresNotSplitByADivergedWarp) {
  const int n = GetParam();
  expectEveryRankPrinted(
      runWorkers("many-piece-sums", n, allRanks(n), 20000, 280),
      {"ok many-piece sums eager: 0 of", "ok many-piece sums graph: 0 of", "ok many-piece sums graph again: 0 of"});
}

TEST_P(RankCommunicatorProcesses, EveryCollectiveAtLargeAndOddSizesOnFreshInputs) {
  const int n = GetParam();
  expectEveryRankPrinted(runWorkers("large-calls", n, allRanks(n), 20000, 280), {"ok large calls: 0 of"});
}

// The same with GPUPEER_ALGO=ce: all-reduce, reduce-scatter and reduce by the copy engines
// through the peers' scratch (the others ignore it).
TEST_P(RankCommunicatorProcesses, EveryCollectiveAtLargeAndOddSizesThroughTheCopyEngines) {
  const int n = GetParam();
  expectEveryRankPrinted(runWorkers("large-calls-ce", n, allRanks(n), 20000, 280), {"ok large calls: 0 of"});
}

// The same with GPUPEER_ALGO=relay and 1 MiB slots: broadcast and reduce by the relay kernel,
// parts over many slots, ranks of different alignment, in place, odd tails.
TEST_P(RankCommunicatorProcesses, EveryCollectiveAtLargeAndOddSizesByTheRelay) {
  const int n = GetParam();
  expectEveryRankPrinted(runWorkers("large-calls-relay", n, allRanks(n), 20000, 280), {"ok large calls: 0 of"});
}

TEST_P(RankCommunicatorProcesses, RegisteredCollectivesAtLargeAndOddSizesOnFreshInputs) {
  const int n = GetParam();
  expectEveryRankPrinted(runWorkers("large-calls-registered", n, allRanks(n), 20000, 280),
                         {"ok large calls registered: 0 of"});
}

// The same on cuMem memory of several segments (PyTorch's expandable segments, gpupeer_mem_alloc):
// registered by passing each segment's POSIX descriptor over a Unix socket.
TEST_P(RankCommunicatorProcesses, RegisteredCuMemBuffersOfSeveralSegmentsAtLargeAndOddSizes) {
  const int n = GetParam();
  std::vector<Outcome> out = runWorkers("large-calls-registered-cumem", n, allRanks(n), 20000, 280);
  expectEveryRankPrinted(out, {"registered by cumem-fd", "ok large calls registered in cuMem: 0 of"});
}

// 10,000 collectives of random operation, type, operator, root, size and alignment, each
// against NCCL's result on the same inputs in the same shape (one process per rank).
TEST_P(RankCommunicatorProcesses, RandomSoakAgreesWithNccl) {
  const int n = GetParam();
  std::vector<Outcome> out = runWorkers("soak", n, allRanks(n), 20000, 290);
  const std::string skipped = "soak skipped: ";
  if (std::size_t at = out[0].output.find(skipped); at != std::string::npos && out[0].exitCode == 0)
    GTEST_SKIP() << out[0].output.substr(at, out[0].output.find('\n', at) - at);
  expectEveryRankPrinted(out, {"calls differ"});
  for (const Outcome& o : out) EXPECT_NE(o.output.find(", 0 calls differ"), std::string::npos) << o.output;
}

INSTANTIATE_TEST_SUITE_P(Ranks, RankCommunicatorProcesses, ::testing::Values(2, 3, 4));

// The last rank's call differs from the others' in one thing; the bound is long (20 s), so
// that a report by the call lines (well under 5 s) is told apart from a timeout.
class RankCommunicatorMismatch : public ::testing::TestWithParam<std::tuple<std::string, int>> {
 protected:
  void SetUp() override { GPUPEER_REQUIRE_GPUS(1); }
};

TEST_P(RankCommunicatorMismatch, EveryRankReportsTheCallsAndRefusesMoreWork) {
  const auto& [kind, n] = GetParam();
  expectEveryRankPrinted(runWorkers("mismatch-" + kind, n, allRanks(n), 20000, 90), {"ok mismatch " + kind});
}

INSTANTIATE_TEST_SUITE_P(Calls, RankCommunicatorMismatch,
                         ::testing::Values(std::make_tuple("count", 2), std::make_tuple("count-ce", 2),
                                           std::make_tuple("variant", 2), std::make_tuple("op", 2),
                                           std::make_tuple("type", 2), std::make_tuple("redop", 2),
                                           std::make_tuple("root", 2), std::make_tuple("registered", 2),
                                           std::make_tuple("count", 3), std::make_tuple("variant", 3)),
                         [](const auto& info) {
                           std::string kind = std::get<0>(info.param);
                           std::replace(kind.begin(), kind.end(), '-', '_');
                           return kind + "_" + std::to_string(std::get<1>(info.param)) + "ranks";
                         });

TEST(RankCommunicatorAbort, AbortFromAnotherThreadEndsAWaitAtOnce) {
  GPUPEER_REQUIRE_GPUS(1);
  std::vector<Outcome> out = runWorkers("abort", 2, allRanks(2), 60000, 60);
  EXPECT_EQ(out[0].exitCode, 0) << out[0].output;
  EXPECT_NE(out[0].output.find("ok aborted"), std::string::npos) << out[0].output;
}

TEST(RankCommunicatorOneRank, EveryOperationIsALocalCopy) {
  GPUPEER_REQUIRE_GPUS(1);
  Result<UniqueId> id = makeUniqueId();
  ASSERT_TRUE(id.isOk());
  RankCommOptions onGpu0;
  onGpu0.device = 0;  // not the calling thread's current device, which an earlier test may have set
  auto comm = RankCommunicator::init(1, id.value(), 0, onGpu0);
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  DeviceBuffer a, b;
  ASSERT_TRUE(a.allocate(0, 4096).isOk());
  ASSERT_TRUE(b.allocate(0, 4096).isOk());
  std::vector<float> in(1000), got(1000);
  for (int i = 0; i < 1000; ++i) in[i] = i * 0.5f;
  ASSERT_EQ(cudaMemcpy(a.get(), in.data(), 4000, cudaMemcpyHostToDevice), cudaSuccess);
  RankCommunicator& c = *comm.value();
  Status reduced = c.allReduce(a.get(), b.get(), 1000, DataType::kFloat32, RedOp::kAvg, nullptr);
  ASSERT_TRUE(reduced.isOk()) << reduced.toString();
  ASSERT_EQ(cudaMemcpy(got.data(), b.get(), 4000, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, in);
  ASSERT_TRUE(c.groupStart().isOk());
  ASSERT_TRUE(c.send(b.get(), 1000, DataType::kFloat32, 0, nullptr).isOk());
  ASSERT_TRUE(c.recv(a.bytes() + 0, 1000, DataType::kFloat32, 0, nullptr).isOk());
  ASSERT_TRUE(c.groupEnd().isOk());
  EXPECT_EQ(c.broadcast(a.get(), b.get(), 1000, DataType::kFloat32, 1, nullptr).code(),
            ErrorCode::kInvalidArgument);  // root 1 of 1 rank
  EXPECT_EQ(c.send(a.get(), 1, DataType::kFloat32, 1, nullptr).code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(c.checkError().isOk());
}

}  // namespace
}  // namespace gpupeer

namespace gpupeer {
namespace {

// Ranks as threads of one process on one GPU (they use each other's pointers directly).
template <class PerRank>
std::vector<Result<std::unique_ptr<RankCommunicator>>> initThreads(int n, const RankCommOptions& options,
                                                                   PerRank perRank) {
  Result<UniqueId> id = makeUniqueId();
  EXPECT_TRUE(id.isOk());
  std::vector<std::future<Result<std::unique_ptr<RankCommunicator>>>> ranks;
  for (int r = 0; r < n; ++r)
    ranks.push_back(std::async(std::launch::async, [&, r] {
      cudaSetDevice(0);
      return RankCommunicator::init(n, id.value(), r, perRank(r, options));
    }));
  std::vector<Result<std::unique_ptr<RankCommunicator>>> out;
  for (auto& f : ranks) out.push_back(f.get());
  return out;
}

// Two ranks as threads on GPU 0 with a bound of timeoutMs, a stream and a 1000-float buffer
// each; `ranks` empty where start-up failed (the test has failed then).
struct ThreadRanks {
  std::vector<Result<std::unique_ptr<RankCommunicator>>> ranks;
  Stream s0, s1;
  DeviceBuffer a, b;
  void start(int timeoutMs) {
    RankCommOptions options;
    options.device = 0;
    options.timeoutMs = timeoutMs;
    ranks = initThreads(2, options, [](int, RankCommOptions o) { return o; });
    for (int r = 0; r < 2; ++r) ASSERT_TRUE(ranks[r].isOk()) << ranks[r].status().toString();
    ASSERT_TRUE(s0.create(0).isOk());
    ASSERT_TRUE(s1.create(0).isOk());
    ASSERT_TRUE(a.allocate(0, 4000).isOk());
    ASSERT_TRUE(b.allocate(0, 4000).isOk());
  }
  RankCommunicator& rank(int r) { return *ranks[r].value(); }
};

// Two ranks as threads on GPU 0, each on its own stream (on the legacy default stream the two
// kernels would run one after the other and each wait for the other until the bound): every
// element of a (rank 0's) is the sum of both ranks' ones. a and b hold 1000 floats.
void expectThreadRanksSumOnes(RankCommunicator& rank0, RankCommunicator& rank1, cudaStream_t s0, cudaStream_t s1,
                              void* a, void* b) {
  std::vector<float> ones(1000, 1.0f), got(1000);
  ASSERT_EQ(cudaMemcpy(a, ones.data(), 4000, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(b, ones.data(), 4000, cudaMemcpyHostToDevice), cudaSuccess);
  auto other = std::async(std::launch::async, [&] {
    cudaSetDevice(0);
    return rank1.allReduce(b, b, 1000, DataType::kFloat32, RedOp::kSum, s1);
  });
  ASSERT_TRUE(rank0.allReduce(a, a, 1000, DataType::kFloat32, RedOp::kSum, s0).isOk());
  ASSERT_TRUE(other.get().isOk());
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_TRUE(rank0.checkError().isOk());
  ASSERT_TRUE(rank1.checkError().isOk());
  ASSERT_EQ(cudaMemcpy(got.data(), a, 4000, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got, std::vector<float>(1000, 2.0f));
}

TEST(RankCommunicatorFaults, ScratchThatDoesNotFitIsAClearErrorAndLeaksNothing) {
  GPUPEER_REQUIRE_GPUS(1);
  cudaSetDevice(0);
  RankCommOptions options;
  options.device = 0;
  options.timeoutMs = 3000;
  {
    // The context and the kernels that start-up loads exist before the first measurement.
    auto warm = initThreads(2, options, [](int, RankCommOptions o) { return o; });
    for (auto& r : warm) ASSERT_TRUE(r.isOk()) << r.status().toString();
  }
  const std::size_t before = testing::settledFreeBytes(0);
  // Each rank's scratch takes 2 x 2 slots: with slots of a sixth of the free memory the first
  // rank to allocate fits and the other cannot. Which rank that is, is a race: the one whose
  // allocation failed says so, the other names the rank that left the start-up.
  auto ranks = initThreads(2, options, [before](int, RankCommOptions o) {
    o.slotBytes = before / 6 / 256 * 256;
    return o;
  });
  int cannotAllocate = 0;
  for (int r = 0; r < 2; ++r) {
    ASSERT_FALSE(ranks[r].isOk()) << "rank " << r;
    const std::string message = ranks[r].status().message();
    if (message.find("cannot allocate") != std::string::npos) {
      ++cannotAllocate;
    } else {
      EXPECT_NE(message.find("rank " + std::to_string(1 - r)), std::string::npos) << ranks[r].status().toString();
    }
  }
  EXPECT_GE(cannotAllocate, 1) << "no rank said which allocation failed";
  ranks.clear();
  EXPECT_EQ(testing::settledFreeBytes(0), before) << "GPU memory before and after a failed start-up";
}

TEST(RankCommunicatorFaults, ThreadsOfOneProcessShareACommunicatorAndForeignBuffersAreRefused) {
  GPUPEER_REQUIRE_GPUS(1);
  ThreadRanks t;
  ASSERT_NO_FATAL_FAILURE(t.start(10000));
  float host[64] = {};
  void* freed = nullptr;
  ASSERT_EQ(cudaMalloc(&freed, 256), cudaSuccess);
  ASSERT_EQ(cudaFree(freed), cudaSuccess);
  for (const void* bad : {static_cast<const void*>(host), static_cast<const void*>(freed)}) {
    Status st = t.rank(0).allReduce(bad, freed, 64, DataType::kFloat32, RedOp::kSum, nullptr);
    EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument) << st.toString();
  }
  expectThreadRanksSumOnes(t.rank(0), t.rank(1), t.s0.get(), t.s1.get(), t.a.get(), t.b.get());
}

// The one-process fault: two ranks in one process, rank 1's stream held by a host-side wait so
// its kernel never reaches the barrier. Rank 0 gives up at the bound naming rank 1; both are
// destroyed without hanging, and a new communicator gives right answers.
TEST(RankCommunicatorFaults, PeerWhoseStreamIsHeldIsNamedAndANewCommunicatorWorks) {
  GPUPEER_REQUIRE_GPUS(1);
  ThreadRanks t;
  ASSERT_NO_FATAL_FAILURE(t.start(3000));
  testing::StreamGate gate;
  ASSERT_EQ(gate.hold(t.s1.get()), cudaSuccess);
  ASSERT_TRUE(t.rank(1).allReduce(t.b.get(), t.b.get(), 1000, DataType::kFloat32, RedOp::kSum, t.s1.get()).isOk());
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(t.rank(0).allReduce(t.a.get(), t.a.get(), 1000, DataType::kFloat32, RedOp::kSum, t.s0.get()).isOk());
  EXPECT_EQ(cudaStreamSynchronize(t.s0.get()), cudaSuccess);
  double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  gate.open = true;
  EXPECT_EQ(cudaStreamSynchronize(t.s1.get()), cudaSuccess);
  EXPECT_GE(waited, 2.5);
  EXPECT_LT(waited, 20.0);
  Status st = t.rank(0).checkError();
  EXPECT_EQ(st.code(), ErrorCode::kTimeout) << st.toString();
  EXPECT_NE(st.message().find("for rank 1 (pid " + std::to_string(getpid())), std::string::npos) << st.message();
  EXPECT_EQ(t.rank(0).allReduce(t.a.get(), t.a.get(), 1000, DataType::kFloat32, RedOp::kSum, t.s0.get()).code(),
            ErrorCode::kTimeout)
      << "a failed communicator refuses further work";
  start = std::chrono::steady_clock::now();
  t.ranks.clear();
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0);
  // A new communicator on the same GPU: every element is the sum of both ranks' ones.
  ThreadRanks fresh;
  ASSERT_NO_FATAL_FAILURE(fresh.start(3000));
  expectThreadRanksSumOnes(fresh.rank(0), fresh.rank(1), fresh.s0.get(), fresh.s1.get(), fresh.a.get(), fresh.b.get());
}

// Ranks that are threads of one process register cuMem memory (allocateShareable) by pointer:
// the owner opens it to the peer's GPU (GPUs 0 and 1 where two are visible), and the registered
// all-reduce reads the peer's memory directly. Then the memory is freed, and freeing it twice
// is an error.
TEST(RankCommunicatorThreads, CuMemBuffersRegisterAndAreReadDirectly) {
  GPUPEER_REQUIRE_GPUS(1);
  const int gpus = static_cast<int>(testing::machine().gpus.size());
  RankCommOptions options;
  options.timeoutMs = 10000;
  options.zeroCopyFromBytes = 0;
  auto ranks = initThreads(2, options, [gpus](int r, RankCommOptions o) {
    o.device = r % std::min(gpus, 2);
    return o;
  });
  for (int r = 0; r < 2; ++r) ASSERT_TRUE(ranks[r].isOk()) << ranks[r].status().toString();
  constexpr std::size_t kCount = 1u << 20;
  std::vector<void*> send(2), recv(2);
  for (int r = 0; r < 2; ++r) {
    const int device = ranks[r].value()->device();
    Result<void*> s = allocateShareable(device, kCount * 4), d = allocateShareable(device, kCount * 4);
    ASSERT_TRUE(s.isOk() && d.isOk()) << s.status().toString() << d.status().toString();
    send[r] = s.value();
    recv[r] = d.value();
    std::vector<float> mine(kCount, static_cast<float>(r + 1));
    // Until it is registered, only its own GPU has access to cuMem memory, and allocateShareable
    // leaves the caller's current device as it was.
    ASSERT_EQ(cudaSetDevice(device), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(send[r], mine.data(), kCount * 4, cudaMemcpyHostToDevice), cudaSuccess);
  }
  auto onEveryRank = [&](auto call) {
    auto other = std::async(std::launch::async, [&] { return call(1); });
    Status mine = call(0);
    Status theirs = other.get();
    EXPECT_TRUE(mine.isOk()) << mine.toString();
    EXPECT_TRUE(theirs.isOk()) << theirs.toString();
  };
  onEveryRank([&](int r) {
    cudaSetDevice(ranks[r].value()->device());
    Status st = ranks[r].value()->registerBuffer(send[r], kCount * 4);
    return st.isOk() ? ranks[r].value()->registerBuffer(recv[r], kCount * 4) : st;
  });
  for (int r = 0; r < 2; ++r) {
    const char* how = ranks[r].value()->registrationMechanism(send[r]);
    EXPECT_STREQ(how, "same-process");
  }
  onEveryRank([&](int r) {
    cudaSetDevice(ranks[r].value()->device());
    Stream s;
    Status st = s.create(ranks[r].value()->device());
    if (st.isOk()) st = ranks[r].value()->allReduce(send[r], recv[r], kCount, DataType::kFloat32, RedOp::kSum, s.get());
    if (st.isOk() && cudaStreamSynchronize(s.get()) != cudaSuccess) st = Status(ErrorCode::kCuda, "synchronize");
    return st.isOk() ? ranks[r].value()->checkError() : st;
  });
  for (int r = 0; r < 2; ++r) {
    std::vector<float> got(kCount);
    ASSERT_EQ(cudaMemcpy(got.data(), recv[r], kCount * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(got, std::vector<float>(kCount, 3.0f)) << "rank " << r;
  }
  onEveryRank([&](int r) {
    Status st = ranks[r].value()->deregisterBuffer(send[r]);
    return st.isOk() ? ranks[r].value()->deregisterBuffer(recv[r]) : st;
  });
  ranks.clear();
  for (int r = 0; r < 2; ++r) {
    EXPECT_TRUE(freeShareable(send[r]).isOk());
    EXPECT_TRUE(freeShareable(recv[r]).isOk());
  }
  Status twice = freeShareable(send[0]);
  EXPECT_EQ(twice.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(twice.message().find("not allocated by allocateShareable"), std::string::npos) << twice.message();
}

// Registration is collective: memory no process can export (a stream-ordered pool's) on one
// rank makes it fail on every rank, with the reason on the rank that has it.
TEST(RankCommunicatorFaults, PoolMemoryCannotBeRegisteredOnAnyRank) {
  GPUPEER_REQUIRE_GPUS(1);
  ThreadRanks t;
  ASSERT_NO_FATAL_FAILURE(t.start(10000));
  void* pooled = nullptr;
  ASSERT_EQ(cudaMallocAsync(&pooled, 1 << 20, nullptr), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
  DeviceBuffer plain;
  ASSERT_TRUE(plain.allocate(0, 1 << 20).isOk());
  auto other = std::async(std::launch::async, [&] {
    cudaSetDevice(0);
    return t.rank(1).registerBuffer(plain.get(), 1 << 20);
  });
  Status mine = t.rank(0).registerBuffer(pooled, 1 << 20);
  Status theirs = other.get();
  EXPECT_EQ(mine.code(), ErrorCode::kInvalidArgument) << mine.toString();
  EXPECT_NE(mine.message().find("no other process can map it"), std::string::npos) << mine.message();
  EXPECT_EQ(theirs.code(), ErrorCode::kInvalidArgument) << theirs.toString();
  EXPECT_EQ(cudaFreeAsync(pooled, nullptr), cudaSuccess);
  EXPECT_EQ(cudaStreamSynchronize(nullptr), cudaSuccess);
}

}  // namespace
}  // namespace gpupeer
