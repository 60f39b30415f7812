#pragma once
// Device pieces of the 16-byte lines that carry their own epoch (NCCL's LL idea), shared by the
// one-shot kernel's low-latency variant (one_shot_lines.cu) and the token lines of its
// 128-byte variant (one_shot_lines128.cu). Internal to the library.

#include <cstdint>

#include "collectives/one_shot_device.cuh"

namespace gpupeer {
namespace oneshot {

// 8 bytes of data per 16-byte line {d0, epoch, d1, epoch}. Each 8-byte half is written and
// read whole, so a half that shows the epoch holds its data.
__device__ __forceinline__ void storeLine(uint4* p, uint2 d, std::uint32_t epoch) {
  asm volatile("st.volatile.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(d.x), "r"(epoch), "r"(d.y), "r"(epoch)
               : "memory");
}

// Polls a line until both halves carry `epoch`; gives up (recording `sender`) after the
// barrier timeout so a missing peer is reported, not waited for forever.
__device__ __forceinline__ uint2 awaitLine(const OneShotArgs& a, const uint4* p, std::uint32_t epoch, int sender) {
  unsigned long long start = 0;
  for (int spins = 0;; ++spins) {
    std::uint32_t x, fx, y, fy;
    asm volatile("ld.volatile.global.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(x), "=r"(fx), "=r"(y), "=r"(fy)
                 : "l"(p)
                 : "memory");
    if (fx == epoch && fy == epoch) return make_uint2(x, y);
    if (spins == 64) start = globalTimerNs();
    if (spins > 64 && (spins & 1023) == 0 && gaveUp(a, start, sender)) return make_uint2(0, 0);
  }
}

__device__ __forceinline__ uint4* lines(const OneShotArgs& a, int owner, std::uint32_t parity, int sender) {
  char* base = static_cast<char*>(a.llScratch[owner]) + (parity * a.ranks + sender) * a.llSlotBytes;
  return reinterpret_cast<uint4*>(base);
}
__device__ __forceinline__ uint4* token(const OneShotArgs& a, int owner, std::uint32_t parity, int sender) {
  char* base = static_cast<char*>(a.llScratch[owner]) + 2 * a.ranks * a.llSlotBytes;
  return reinterpret_cast<uint4*>(base) + parity * a.ranks + sender;
}

}  // namespace oneshot
}  // namespace gpupeer
