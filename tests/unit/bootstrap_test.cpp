// The start-up exchange of RankCommunicator: ranks as threads (the socket is the same between
// processes), a rank that never joins, garbage on the socket, an id used twice.

#include "ranks/bootstrap.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "ranks/socket_io.hpp"

namespace gpupeer {
namespace {

using Clock = std::chrono::steady_clock;

UniqueId freshId() {
  Result<UniqueId> id = makeUniqueId();
  EXPECT_TRUE(id.isOk()) << id.status().message();
  return id.isOk() ? id.value() : UniqueId{};
}

// Every rank joins and all-gathers twice; each returns what it gathered, joined by '|'.
std::vector<std::string> runRanks(int nranks, const UniqueId& id) {
  std::vector<std::future<std::string>> ranks;
  for (int r = 0; r < nranks; ++r)
    ranks.push_back(std::async(std::launch::async, [=]() -> std::string {
      Result<Bootstrap> b = Bootstrap::join(nranks, id, r, 5000);
      if (!b.isOk()) return "error: " + b.status().message();
      std::string out;
      for (int round = 0; round < 2; ++round) {
        Result<std::vector<std::string>> all =
            b.value().allGather("r" + std::to_string(r) + "x" + std::string(r * 1000, 'a' + round));
        if (!all.isOk()) return "error: " + all.status().message();
        for (const std::string& s : all.value()) out += s.substr(0, 3) + std::to_string(s.size()) + "|";
      }
      return out;
    }));
  std::vector<std::string> results;
  for (auto& f : ranks) results.push_back(f.get());
  return results;
}

TEST(Bootstrap, EveryRankGathersEveryBlobInRankOrder) {
  for (int nranks : {1, 2, 4, 8}) {
    const std::vector<std::string> results = runRanks(nranks, freshId());
    std::string expected;
    for (int round = 0; round < 2; ++round)
      for (int r = 0; r < nranks; ++r)
        expected += "r" + std::to_string(r) + "x" + std::to_string(2 + std::to_string(r).size() + r * 1000) + "|";
    for (int r = 0; r < nranks; ++r) EXPECT_EQ(results[r], expected) << nranks << " ranks, rank " << r;
  }
}

TEST(Bootstrap, RankThatNeverJoinsIsNamedWithinTheBound) {
  const UniqueId id = freshId();
  const auto start = Clock::now();
  auto rank1 = std::async(std::launch::async, [&] { return Bootstrap::join(3, id, 1, 300); });
  Result<Bootstrap> root = Bootstrap::join(3, id, 0, 300);
  const auto waited = Clock::now() - start;
  ASSERT_FALSE(root.isOk());
  EXPECT_EQ(root.status().code(), ErrorCode::kTimeout);
  EXPECT_NE(root.status().message().find("rank(s) 2 of 3 did not join"), std::string::npos) << root.status().message();
  EXPECT_LT(waited, std::chrono::seconds(3));
  // The rank that did join hears rank 0's explanation, not a bare timeout.
  Result<Bootstrap> one = rank1.get();
  ASSERT_FALSE(one.isOk());
  EXPECT_NE(one.status().message().find("rank(s) 2 of 3 did not join"), std::string::npos) << one.status().message();
}

TEST(Bootstrap, MissingRootIsReportedWithinTheBound) {
  const auto start = Clock::now();
  Result<Bootstrap> alone = Bootstrap::join(2, freshId(), 1, 200);
  ASSERT_FALSE(alone.isOk());
  EXPECT_EQ(alone.status().code(), ErrorCode::kTimeout);
  EXPECT_NE(alone.status().message().find("rank 0 did not open the rendezvous"), std::string::npos)
      << alone.status().message();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(4));
}

// Connects to the rendezvous of `id` as a foreign program would.
int connectRaw(const UniqueId& id) {
  Result<std::string> name = rendezvousName(id);
  if (!name.isOk()) return -1;
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::memcpy(a.sun_path + 1, name.value().data(), name.value().size());
  const socklen_t length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.value().size());
  for (int attempt = 0; attempt < 400; ++attempt) {
    const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connect(fd, reinterpret_cast<const sockaddr*>(&a), length) == 0) return fd;
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return -1;
}

TEST(Bootstrap, GarbageOnTheSocketIsDroppedAndTheRanksStillJoin) {
  const UniqueId id = freshId();
  auto root = std::async(std::launch::async, [&] { return Bootstrap::join(2, id, 0, 5000); });
  const int junk = connectRaw(id);
  ASSERT_GE(junk, 0);
  const char garbage[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n and more bytes than a hello";
  ASSERT_GT(write(junk, garbage, sizeof garbage), 0);
  const int silent = connectRaw(id);  // connects and says nothing
  ASSERT_GE(silent, 0);
  Result<Bootstrap> one = Bootstrap::join(2, id, 1, 5000);
  Result<Bootstrap> zero = root.get();
  close(junk);
  close(silent);
  ASSERT_TRUE(one.isOk()) << one.status().message();
  ASSERT_TRUE(zero.isOk()) << zero.status().message();
  auto gathered = std::async(std::launch::async, [&] { return zero.value().allGather("zero"); });
  Result<std::vector<std::string>> all = one.value().allGather("one");
  ASSERT_TRUE(all.isOk()) << all.status().message();
  EXPECT_EQ(all.value(), (std::vector<std::string>{"zero", "one"}));
  ASSERT_TRUE(gathered.get().isOk());
}

TEST(Bootstrap, SecondCommunicatorOnTheSameIdIsRefused) {
  const UniqueId id = freshId();
  auto first = std::async(std::launch::async, [&] { return Bootstrap::join(2, id, 0, 3000); });
  // Wait until the first rank 0 listens.
  const int probe = connectRaw(id);
  ASSERT_GE(probe, 0);
  close(probe);
  Result<Bootstrap> second = Bootstrap::join(2, id, 0, 500);
  ASSERT_FALSE(second.isOk());
  EXPECT_EQ(second.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(second.status().message().find("in use"), std::string::npos) << second.status().message();
  Result<Bootstrap> one = Bootstrap::join(2, id, 1, 3000);
  EXPECT_TRUE(one.isOk()) << one.status().message();
  EXPECT_TRUE(first.get().isOk());
}

TEST(Bootstrap, RanksDisagreeingOnTheirNumberFailClearly) {
  const UniqueId id = freshId();
  auto root = std::async(std::launch::async, [&] { return Bootstrap::join(2, id, 0, 3000); });
  Result<Bootstrap> wrong = Bootstrap::join(3, id, 1, 3000);
  Result<Bootstrap> zero = root.get();
  ASSERT_FALSE(zero.isOk());
  EXPECT_NE(zero.status().message().find("joined as rank 1 of 3 ranks; this communicator has 2"), std::string::npos)
      << zero.status().message();
  ASSERT_FALSE(wrong.isOk());
  EXPECT_NE(wrong.status().message().find("every rank must give the same number of ranks"), std::string::npos)
      << wrong.status().message();
}

TEST(Bootstrap, BadIdsAndArgumentsAreRefused) {
  UniqueId junk;
  junk.bytes.fill('x');
  Result<Bootstrap> b = Bootstrap::join(2, junk, 0, 100);
  ASSERT_FALSE(b.isOk());
  EXPECT_NE(b.status().message().find("not made by gpupeer::makeUniqueId"), std::string::npos);
  for (auto [n, r] : {std::pair{0, 0}, std::pair{2, 2}, std::pair{2, -1}})
    EXPECT_EQ(Bootstrap::join(n, freshId(), r, 100).status().code(), ErrorCode::kInvalidArgument) << n << " " << r;
  EXPECT_NE(freshId().bytes, freshId().bytes);  // a fresh nonce each time
}

TEST(Bootstrap, IdsTravelAsHexText) {
  const UniqueId id = freshId();
  const std::string text = uniqueIdToHex(id);
  ASSERT_EQ(text.size(), 2 * UniqueId::kBytes);
  EXPECT_EQ(text.find_first_not_of("0123456789abcdef"), std::string::npos) << text;
  Result<UniqueId> back = uniqueIdFromHex(text);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(back.value().bytes, id.bytes);
  EXPECT_EQ(uniqueIdFromHex(text.substr(1)).status().code(), ErrorCode::kInvalidArgument);
  std::string bad = text;
  bad[7] = 'g';
  EXPECT_EQ(uniqueIdFromHex(bad).status().code(), ErrorCode::kInvalidArgument);
}

TEST(Bootstrap, AnnouncedMessageBeyondTheBoundIsRefusedWithoutAllocating) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  const std::uint32_t huge = 0xfffffff0u;
  ASSERT_EQ(write(fds[0], &huge, sizeof huge), static_cast<ssize_t>(sizeof huge));
  Result<std::string> got = recvMessage(fds[1], Clock::now() + std::chrono::seconds(1));
  ASSERT_FALSE(got.isOk());
  EXPECT_EQ(got.status().code(), ErrorCode::kParse);
  // A peer that closes mid-message is an error, not a hang.
  const std::uint32_t four = 4;
  ASSERT_EQ(write(fds[0], &four, sizeof four), static_cast<ssize_t>(sizeof four));
  close(fds[0]);
  got = recvMessage(fds[1], Clock::now() + std::chrono::seconds(1));
  ASSERT_FALSE(got.isOk());
  EXPECT_EQ(got.status().code(), ErrorCode::kSystem);
  close(fds[1]);
}

}  // namespace
}  // namespace gpupeer
