// Descriptors handed between ranks (ranks/fd_exchange.hpp), with ordinary files standing in
// for cuMem descriptors: every client gets every descriptor in order, a client with the wrong
// token gets nothing and does not count, and a missing client ends in a timeout, not a hang.

#include "ranks/fd_exchange.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>
#include <vector>

namespace gpupeer {
namespace {

SocketDeadline in(int ms) { return std::chrono::steady_clock::now() + std::chrono::milliseconds(ms); }

// A descriptor of an unlinked temporary file holding `text`.
UniqueFd fileWith(const std::string& text) {
  std::FILE* f = std::tmpfile();
  std::fputs(text.c_str(), f);
  std::fflush(f);
  UniqueFd fd(::dup(fileno(f)));
  std::fclose(f);
  return fd;
}

std::string contentOf(int fd) {
  char buffer[64] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

TEST(FdExchange, EveryClientGetsEveryDescriptorInOrder) {
  Result<FdOffer> offer = FdOffer::open();
  ASSERT_TRUE(offer.isOk()) << offer.status().toString();
  std::vector<UniqueFd> files;
  for (const char* text : {"segment 0", "segment 1", "segment 2"}) files.push_back(fileWith(text));
  // Clients connect before the offer serves, as ranks do.
  std::vector<UniqueFd> clients;
  for (int k = 0; k < 2; ++k) {
    Result<UniqueFd> c = connectToOffer(offer.value().name(), offer.value().token(), in(5000));
    ASSERT_TRUE(c.isOk()) << c.status().toString();
    clients.push_back(std::move(c.value()));
  }
  std::vector<int> fds;
  for (const UniqueFd& f : files) fds.push_back(f.get());
  Status served = offer.value().serve(2, fds, in(5000));
  ASSERT_TRUE(served.isOk()) << served.toString();
  for (const UniqueFd& c : clients) {
    Result<std::vector<UniqueFd>> got = receiveOffered(c.get(), 3, in(5000));
    ASSERT_TRUE(got.isOk()) << got.status().toString();
    ASSERT_EQ(got.value().size(), 3u);
    for (int k = 0; k < 3; ++k) {
      EXPECT_NE(got.value()[k].get(), fds[k]) << "a new descriptor in this process, not the number sent";
      EXPECT_EQ(contentOf(got.value()[k].get()), "segment " + std::to_string(k));
    }
  }
}

TEST(FdExchange, AClientWithoutTheTokenIsDroppedAndDoesNotCount) {
  Result<FdOffer> offer = FdOffer::open();
  ASSERT_TRUE(offer.isOk()) << offer.status().toString();
  UniqueFd file = fileWith("secret");
  Result<UniqueFd> stranger = connectToOffer(offer.value().name(), std::string(32, '0'), in(5000));
  ASSERT_TRUE(stranger.isOk()) << stranger.status().toString();
  Result<UniqueFd> rank = connectToOffer(offer.value().name(), offer.value().token(), in(5000));
  ASSERT_TRUE(rank.isOk()) << rank.status().toString();
  ASSERT_TRUE(offer.value().serve(1, {file.get()}, in(5000)).isOk());
  Result<std::vector<UniqueFd>> got = receiveOffered(rank.value().get(), 1, in(5000));
  ASSERT_TRUE(got.isOk()) << got.status().toString();
  EXPECT_EQ(contentOf(got.value()[0].get()), "secret");
  Result<std::vector<UniqueFd>> refused = receiveOffered(stranger.value().get(), 1, in(1000));
  EXPECT_FALSE(refused.isOk()) << "the stranger got a descriptor";
}

TEST(FdExchange, AClientThatNeverComesIsATimeoutNamingHowManyCame) {
  Result<FdOffer> offer = FdOffer::open();
  ASSERT_TRUE(offer.isOk()) << offer.status().toString();
  UniqueFd file = fileWith("x");
  Result<UniqueFd> one = connectToOffer(offer.value().name(), offer.value().token(), in(5000));
  ASSERT_TRUE(one.isOk());
  const auto start = std::chrono::steady_clock::now();
  Status st = offer.value().serve(2, {file.get()}, in(300));
  EXPECT_EQ(st.code(), ErrorCode::kTimeout) << st.toString();
  EXPECT_NE(st.message().find("1 of 2 ranks came"), std::string::npos) << st.message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST(FdExchange, AnOfferThatIsGoneIsAClearError) {
  std::string name;
  {
    Result<FdOffer> offer = FdOffer::open();
    ASSERT_TRUE(offer.isOk());
    name = offer.value().name();
  }
  Result<UniqueFd> c = connectToOffer(name, "token", in(1000));
  ASSERT_FALSE(c.isOk());
  EXPECT_NE(c.status().message().find("cannot connect to a peer's socket"), std::string::npos) << c.status().message();
}

}  // namespace
}  // namespace gpupeer
