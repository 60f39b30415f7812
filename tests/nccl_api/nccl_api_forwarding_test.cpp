// libgpupeer_nccl.so in front of a stand-in NCCL that records every call: each function of
// nccl.h reaches it with the program's arguments unchanged where gpupeer does not take the call
// (no gpupeer communicator beside the stand-in's, so none is taken), and the library exports
// every function of nccl.h and its pnccl twin.

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <nccl.h>

// ncclResetDebugInit is deprecated in nccl.h but still part of it: it is exported (and tested) too.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

#include <cstdlib>
#include <string>
#include <tuple>
#include <vector>

#include "standin_record.hpp"

namespace {

// Writable memory for the output pointers the library itself reads back (a new communicator,
// an async error); every other pointer is a distinct address nobody dereferences.
alignas(64) unsigned char scratch[1 << 16];

template <typename T>
T distinctArgument(std::size_t index) {
  if constexpr (std::is_pointer_v<T>) {
    return reinterpret_cast<T>(scratch + 256 * (index + 1));
  } else if constexpr (std::is_same_v<T, ncclUniqueId>) {
    ncclUniqueId id{};
    for (std::size_t i = 0; i < sizeof id.internal; ++i) id.internal[i] = static_cast<char>(0x40 + index + i);
    return id;
  } else {
    return static_cast<T>(2 + index);  // a valid enum value and a positive count
  }
}

template <typename R, typename... A, std::size_t... I>
std::vector<std::uint64_t> callWithDistinctArguments(R (*fn)(A...), std::index_sequence<I...>) {
  std::tuple<A...> args{distinctArgument<A>(I)...};
  std::apply(fn, args);
  return {argumentBits(std::get<I>(args))...};
}

template <typename R, typename... A>
std::vector<std::uint64_t> callWithDistinctArguments(R (*fn)(A...)) {
  return callWithDistinctArguments(fn, std::index_sequence_for<A...>{});
}

const std::vector<StandinCall>& standinCalls() {
  // Not loaded before the library's first call: nothing recorded yet.
  void* standin = dlopen(GPUPEER_STANDIN_NCCL_PATH, RTLD_NOW | RTLD_NOLOAD);
  static std::vector<StandinCall> none;
  if (standin == nullptr) return none;
  auto fn = reinterpret_cast<StandinCallsFn>(dlsym(standin, "standinCalls"));
  return fn != nullptr ? *fn() : none;
}

class NcclApiForwarding : public ::testing::Test {
 protected:
  // The library finds the real NCCL at its first call (and asks it its version then).
  static void SetUpTestSuite() {
    setenv("GPUPEER_NCCL_REAL_LIBRARY", GPUPEER_STANDIN_NCCL_PATH, 1);
    int version = 0;
    ncclGetVersion(&version);
  }
};

#define NCCL_API_FN(ret, fn, params, args)                                                      \
  TEST_F(NcclApiForwarding, fn) {                                                               \
    const std::size_t before = standinCalls().size();                                           \
    std::vector<std::uint64_t> sent = callWithDistinctArguments(&::fn);                         \
    const std::vector<StandinCall>& after = standinCalls();                                     \
    bool reached = false;                                                                       \
    for (std::size_t i = before; i < after.size() && !reached; ++i)                             \
      reached = after[i].name == #fn && after[i].arguments == sent;                             \
    EXPECT_TRUE(reached) << #fn " did not reach the stand-in NCCL with the caller's arguments"; \
  }
#include "nccl_api/nccl_functions.def"
#undef NCCL_API_FN

TEST_F(NcclApiForwarding, GroupedCallsReachNcclInsideItsGroup) {
  const std::size_t before = standinCalls().size();
  ncclComm_t comm = reinterpret_cast<ncclComm_t>(scratch + 64);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclAllReduce(scratch, scratch + 128, 5, ncclFloat32, ncclSum, comm, nullptr), ncclSuccess);
  ASSERT_EQ(ncclSend(scratch, 7, ncclInt8, 1, comm, nullptr), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  const std::vector<StandinCall>& after = standinCalls();
  std::vector<std::string> names;
  for (std::size_t i = before; i < after.size(); ++i) names.push_back(after[i].name);
  EXPECT_EQ(names, (std::vector<std::string>{"ncclGroupStart", "ncclAllReduce", "ncclSend", "ncclGroupEnd"}));
}

// Where one thread makes several ranks, gpupeer takes their eager calls, so NCCL's first call
// may be captured: the library asks NCCL to connect at start-up, unless the program chose.
TEST_F(NcclApiForwarding, RanksOneThreadMakesConnectAtStartUnlessTheProgramChose) {
  ncclComm_t comms[2] = {};
  int devices[2] = {0, 1};
  unsetenv("NCCL_RUNTIME_CONNECT");
  ASSERT_EQ(ncclCommInitAll(comms, 1, devices), ncclSuccess);
  EXPECT_EQ(std::getenv("NCCL_RUNTIME_CONNECT"), nullptr) << "one rank: nothing to connect ahead";
  ASSERT_EQ(ncclCommInitAll(comms, 2, devices), ncclSuccess);
  ASSERT_NE(std::getenv("NCCL_RUNTIME_CONNECT"), nullptr);
  EXPECT_STREQ(std::getenv("NCCL_RUNTIME_CONNECT"), "0");

  setenv("NCCL_RUNTIME_CONNECT", "1", 1);
  ASSERT_EQ(ncclCommInitAll(comms, 2, devices), ncclSuccess);
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclCommInitRank(comms, 2, distinctArgument<ncclUniqueId>(0), 0), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_STREQ(std::getenv("NCCL_RUNTIME_CONNECT"), "1") << "the program's own value is kept";

  unsetenv("NCCL_RUNTIME_CONNECT");
  ASSERT_EQ(ncclCommInitRank(comms, 2, distinctArgument<ncclUniqueId>(0), 0), ncclSuccess);
  EXPECT_EQ(std::getenv("NCCL_RUNTIME_CONNECT"), nullptr) << "a rank made alone is driven by its own thread";
  ASSERT_EQ(ncclGroupStart(), ncclSuccess);
  ASSERT_EQ(ncclCommInitRank(comms, 2, distinctArgument<ncclUniqueId>(0), 0), ncclSuccess);
  ASSERT_EQ(ncclGroupEnd(), ncclSuccess);
  EXPECT_STREQ(std::getenv("NCCL_RUNTIME_CONNECT"), "0");
  unsetenv("NCCL_RUNTIME_CONNECT");
}

TEST(NcclApiExports, EveryFunctionAndItsProfilingTwinComeFromTheLibrary) {
  void* library = dlopen(GPUPEER_NCCL_API_PATH, RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(library, nullptr) << "the test is not linked against libgpupeer_nccl.so";
  Dl_info own{};
  ASSERT_NE(dladdr(dlsym(library, "ncclGetVersion"), &own), 0);
  for (const char* name : {
#define NCCL_API_FN(ret, name, params, args) #name, "p" #name,
#include "nccl_api/nccl_functions.def"
#undef NCCL_API_FN
       }) {
    void* symbol = dlsym(library, name);
    ASSERT_NE(symbol, nullptr) << name << " is not exported";
    Dl_info info{};
    ASSERT_NE(dladdr(symbol, &info), 0);
    EXPECT_STREQ(info.dli_fname, own.dli_fname) << name << " resolves outside libgpupeer_nccl.so";
  }
}

}  // namespace
