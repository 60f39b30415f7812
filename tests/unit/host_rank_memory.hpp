#pragma once
// A rank's send and receive buffers as one array of 32-bit words on the host, for the tests that
// run a collective's plan on host memory (ring_plan_test.cpp, pull_plan_test.cpp): in place they
// overlap as inPlacePointers arranges them (all-gather's input inside its output,
// reduce-scatter's output inside its input, the others on the same elements).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpupeer/collective_types.hpp"

namespace gpupeer::testing {

using Word = std::uint32_t;  // int32 arithmetic with wrap-around, as the device's

/// Element i of rank r's input: distinct across ranks and elements, so a wrong source shows.
inline Word hostInput(int rank, std::size_t i) { return static_cast<Word>((rank + 1) * 1000003u + i * 7919u); }

struct HostRankMemory {
  std::vector<Word> mem;
  std::size_t sendAt = 0, recvAt = 0;
};

/// Rank r's buffers for `op` of `count` elements on n ranks, filled with 0xdeadbeef and then
/// its input (hostInput) unless `withInput` is false.
inline HostRankMemory hostRankMemory(CollOp op, int n, int r, std::size_t count, bool inPlace, bool withInput = true) {
  const std::size_t in = collectiveInputElements(op, count, n), out = collectiveOutputElements(op, count, n);
  HostRankMemory m;
  m.mem.assign(in + out, 0xdeadbeef);
  m.recvAt = in;
  if (inPlace) {
    m.recvAt = op == CollOp::kReduceScatter ? r * count : 0;
    m.sendAt = op == CollOp::kAllGather ? r * count : 0;
  }
  if (withInput)
    for (std::size_t i = 0; i < in; ++i) m.mem[m.sendAt + i] = hostInput(r, i);
  return m;
}

}  // namespace gpupeer::testing
