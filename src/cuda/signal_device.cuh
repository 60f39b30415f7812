#pragma once
// Signalling between GPUs: a 32-bit flag in one GPU's memory (or in mapped host memory) that
// a kernel elsewhere raises and a kernel here waits for. Every flag protocol of the kernels is
// written with these primitives, so each ordering rule is stated once, here. Internal to the
// library.

#include <cstdint>

#include "cuda/error_word.hpp"

namespace gpupeer {

// The GPU's nanosecond clock, on which every wait's bound is measured.
__device__ __forceinline__ unsigned long long globalTimerNs() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Release at system scope: every load and store this thread made before the store is
// performed before `value` can be seen, by a thread of any GPU or of the host that reads the
// flag with acquire. Release is cumulative, so this also raises a flag for what the thread's
// block (or role) did before a barrier that ordered it before this thread: stores into a peer's
// memory, or loads of memory that the peer may now overwrite (in the PTX memory model, program
// order, the barrier and release-acquire compose into one causality order). No fence is needed
// before it and one would only add time: 4x H200, 4 processes, a 256 MiB broadcast by the chain
// kernel took 871 us with a system-scope fence before each flag (fence.sc or fence.acq_rel
// alike) and 802 without.
__device__ __forceinline__ void releaseStore(volatile std::uint32_t* flag, std::uint32_t value) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
}

// Acquire at system scope: no load or store this thread makes after it is performed before
// it, so once it returns a value, everything the releaser made visible before that value is
// visible here too.
__device__ __forceinline__ std::uint32_t acquireLoad(const volatile std::uint32_t* flag) {
  std::uint32_t value;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

// The whole block calls it after storing into a peer's memory: the barrier orders every
// thread's stores before thread 0, whose release store raises *flag for them.
__device__ __forceinline__ void publishToPeers(volatile std::uint32_t* flag, std::uint32_t value) {
  __syncthreads();
  if (threadIdx.x == 0) releaseStore(flag, value);
}

// Waits shorter than this never read the abort word. It lies in mapped host memory: a read
// crosses PCIe, and every polling thread of every rank reading it every few polls (hundreds
// of threads per GPU in the one-shot kernel's regular variant) kept the waits themselves
// slow. An abort is noticed within this much of a wait's start.
inline constexpr unsigned long long kAbortPollAfterNs = 200'000;

// Whether a wait that has lasted `waited` ns was aborted (RankCommunicator::abort() from
// another thread wrote the host word).
__device__ __forceinline__ bool abortRequested(const volatile std::uint32_t* abortWord, unsigned long long waited) {
  return abortWord && waited > kAbortPollAfterNs && *abortWord != 0;
}

// Whether a wait that began at `start` gives up: the peer did not arrive within `timeoutNs`,
// or the communicator was aborted (abortRequested), or an earlier wait gave up. Records why
// in *error, the rank's error word (the first reason wins): 1 + the sender waited for, or
// kAbortedError.
__device__ __forceinline__ bool waitGivesUp(std::uint32_t* error, unsigned long long timeoutNs,
                                            const volatile std::uint32_t* abortWord, unsigned long long start,
                                            int sender) {
  // An earlier wait of this rank gave up already: its peers are out of step, so this one gives
  // up at once too (a dead peer costs one bound, not one per operation queued behind it).
  if (*static_cast<volatile std::uint32_t*>(error) != 0) return true;
  const unsigned long long waited = globalTimerNs() - start;
  const bool aborted = abortRequested(abortWord, waited);
  if (!aborted && waited <= timeoutNs) return false;
  atomicCAS(error, 0u, aborted ? kAbortedError : static_cast<std::uint32_t>(sender + 1));
  return true;
}

// Records `code` in the rank's error word where no error came first, with four words beside it
// for the host to name (the two calls of a mismatch, or a send's and its receive's lengths).
// Every later wait of the rank then gives up at once (waitGivesUp).
__device__ __forceinline__ void recordError(std::uint32_t* error, std::uint32_t code, std::uint32_t w0,
                                            std::uint32_t w1, std::uint32_t w2, std::uint32_t w3) {
  if (atomicCAS(error, 0u, code) != 0) return;
  error[2] = w0;
  error[3] = w1;
  error[4] = w2;
  error[5] = w3;
}

// Polls *flag (acquire) until `done(value)`, leaving the value in `value`; false, with `sender`
// recorded, once the wait gives up (waitGivesUp). The bound and the abort word are looked at
// every 64 polls only. `bound` is the kernel's arguments (OneShotArgs, P2pArgs,
// AwaitSignalsArgs): their error word, timeoutNs and abortWord.
template <class Bound, class Done>
__device__ __forceinline__ bool awaitValue(const volatile std::uint32_t* flag, const Bound& bound, int sender,
                                           Done done, std::uint32_t& value) {
  const unsigned long long start = globalTimerNs();
  for (int spins = 0;; ++spins) {
    value = acquireLoad(flag);
    if (done(value)) return true;
    if ((spins & 63) == 63 && waitGivesUp(bound.error, bound.timeoutNs, bound.abortWord, start, sender)) return false;
  }
}

// Waits until *flag reaches `want`, comparing by signed difference so that flags may wrap
// around 2^32 (awaitValue).
template <class Bound>
__device__ __forceinline__ bool awaitAtLeast(const volatile std::uint32_t* flag, std::uint32_t want, const Bound& bound,
                                             int sender) {
  std::uint32_t value;
  return awaitValue(
      flag, bound, sender, [want](std::uint32_t v) { return static_cast<int>(v - want) >= 0; }, value);
}

}  // namespace gpupeer
