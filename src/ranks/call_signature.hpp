#pragma once
// A collective call folded into the two 32-bit words that every rank's kernel shows its peers
// (RankCommunicator: the call line, collectives/call_line.cuh), so that a rank whose peer made a
// different call reports it instead of exchanging data shaped for another call. Pure, so
// tests/unit/call_signature_test.cpp checks it. Internal.

#include <cstddef>
#include <cstdint>
#include <string>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

/// word0: bit 31 set (so that no call is all zero), bit 30 where the call reads and writes
/// registered buffers directly (RankCommunicator::registerBuffer), op in bits 0-3, type in
/// 4-7, reduction operator in 8-11 and root in 12-15 (each only where the op uses it, else 0),
/// bits 32-45 of the count in 16-29; word1: bits 0-31 of the count. The count is the whole
/// call's per-rank count, not a piece's.
struct CallSignature {
  std::uint32_t word0 = 0, word1 = 0;
  friend bool operator==(const CallSignature&, const CallSignature&) = default;
};

/// Counts of 2^46 elements and more differ from each other only in their low 46 bits.
CallSignature callSignatureOf(CollOp op, DataType type, RedOp redop, int root, std::size_t count,
                              bool registered = false);

/// "all_reduce of 1000 float (sum)", "all_gather of 8 int32 on registered buffers", "broadcast of 12 int8 (root 1)",
/// "reduce of 5 half (max, root 0)", or the raw words where they are not a call's.
std::string describeCall(const CallSignature& s);

}  // namespace gpupeer
