#pragma once
// Latency kernels: a dependent pointer chase through (peer) memory and a flag ping-pong
// between two GPUs. Host launchers return the launch's cudaError_t.

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpupeer {

/// One thread follows `hops` links of the chain at `start` (each 8-byte word holds the address
/// of the next). The final address goes to *sink so the loads cannot be dropped.
cudaError_t launchPointerChase(const std::uint64_t* start, int hops, std::uint64_t* sink, cudaStream_t stream);

/// One side of a ping-pong. The initiator writes round i into `peerFlag` (the other GPU's
/// memory) and waits for i in `localFlag`; the responder waits, then answers. Every wait gives
/// up after `timeoutNs` and writes the round it stalled at into *stalledAt (0 = completed).
cudaError_t launchPingPong(volatile std::uint32_t* localFlag, volatile std::uint32_t* peerFlag, int rounds,
                           bool initiator, unsigned long long timeoutNs, std::uint32_t* stalledAt, cudaStream_t stream);

}  // namespace gpupeer
