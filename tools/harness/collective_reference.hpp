#pragma once
/// \file collective_reference.hpp
/// Host reference for reductions and the check of a device result against it: integers must
/// match bit for bit (with the type's wrap-around, as the device computes in the type),
/// min/max exactly, and floating-point sums, products and averages within the error that any
/// summation order can produce. Pure host code; any thread.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpupeer/collective_types.hpp"

namespace gpupeer {

/// IEEE half and bfloat16 <-> float, round to nearest even (host side).
float halfToFloat(std::uint16_t h);      ///< IEEE binary16 bits to float (exact)
std::uint16_t floatToHalf(float f);      ///< float to binary16 bits, round to nearest even
float bfloat16ToFloat(std::uint16_t b);  ///< bfloat16 bits to float (exact)
std::uint16_t floatToBfloat16(float f);  ///< float to bfloat16 bits, round to nearest even
/// OCP 8-bit floats <-> float (host side); `format` is kFloat8E4M3 or kFloat8E5M2. Rounds to
/// nearest even and saturates to the largest finite value (448 and 57344), as CUDA's
/// conversions with __NV_SATFINITE do; NaN stays NaN.
float fp8ToFloat(std::uint8_t v, DataType format);  ///< fp8 bits to float (exact)
std::uint8_t floatToFp8(float f, DataType format);  ///< float to fp8 bits, rounded and saturated

/// Known-answer input of `rank`: small integers (quarters for floating types) that every type
/// holds exactly; int8/uint8 values are scaled so that sums over two ranks wrap, int64 values
/// shifted so that products wrap, exercising the type's own arithmetic. Another `salt` gives
/// other values at every index: a call checked on inputs of a salt that the calls before it
/// did not use shows data left over from them.
std::vector<std::uint8_t> knownAnswerInput(DataType type, int rank, std::size_t count, unsigned salt = 0);

/// Element i of a buffer of `type`, as double.
double elementAsDouble(DataType type, const void* data, std::size_t i);
/// Element i of a buffer of `type` set to `value`, converted as the type's own conversions do
/// (integers truncated and wrapped, floating types rounded to nearest even).
void storeElement(DataType type, void* data, std::size_t i, double value);

/// How far a collective's output is from the reference.
struct ReductionCheck {
  std::size_t wrong = 0;       ///< elements outside the bound (#wrong in nccl-tests' table)
  std::size_t firstWrong = 0;  ///< index of the first, when wrong > 0
  double maxError = 0;         ///< largest |result - exact| seen, for floating types
};

/// Checks `result` (count elements of `type`) against `op` applied elementwise over `inputs`
/// (one buffer per rank, each count elements). Averages divide the sum by the rank count.
ReductionCheck checkReduction(DataType type, RedOp op, const std::vector<const void*>& inputs, const void* result,
                              std::size_t count);

/// Checks rank `rank`'s output of any collective (`count` as in Communicator: all-gather:
/// elements each rank sends; reduce-scatter: elements each rank receives; alltoall: elements
/// per peer) against every rank's input. Reductions as checkReduction; moves must match the
/// input bytes exactly; a non-root rank of reduce has no output (nothing wrong).
ReductionCheck checkCollective(CollOp op, DataType type, RedOp redop, int root, const std::vector<const void*>& inputs,
                               int rank, const void* result, std::size_t count);

}  // namespace gpupeer
