#pragma once
/// \file collective_types.hpp
/// The vocabulary of collectives (operations, element types, reduction operators) with the
/// names nccl-tests uses on its command line, and the bus-bandwidth definition of nccl-tests'
/// doc/PERFORMANCE.md, so gpupeer's tables compare one to one with nccl-tests'.
/// Everything here is pure; any thread.

#include <cstddef>
#include <string>

#include "gpupeer/status.hpp"

namespace gpupeer {

/// The most GPUs one communicator takes (one machine's NVSwitch domain).
inline constexpr int kMaxCommRanks = 8;

/// The collectives, as nccl-tests names its binaries.
enum class CollOp { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };
/// kFloat8E4M3 and kFloat8E5M2 are the OCP 8-bit floats (CUDA's __nv_fp8_e4m3 / __nv_fp8_e5m2,
/// NCCL's ncclFloat8e4m3 / ncclFloat8e5m2): reduced in float, rounded to nearest even once at
/// the end and saturated to the largest finite value, as CUDA's conversions with __NV_SATFINITE.
enum class DataType {
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat64,
  kInt8,
  kUInt8,
  kInt32,
  kInt64,
  kFloat8E4M3,
  kFloat8E5M2
};
/// Every DataType, for tests and tables that go through them all.
inline constexpr DataType kAllDataTypes[] = {
    DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16, DataType::kFloat64,    DataType::kInt8,
    DataType::kUInt8,   DataType::kInt32,   DataType::kInt64,    DataType::kFloat8E4M3, DataType::kFloat8E5M2};
/// Reduction operators; kAvg divides the sum by the rank count (floating types only).
enum class RedOp { kSum, kProd, kMin, kMax, kAvg };

/// Whether `op` combines the ranks' inputs with a RedOp (all-reduce, reduce-scatter, reduce).
constexpr bool collOpReduces(CollOp op) {
  return op == CollOp::kAllReduce || op == CollOp::kReduceScatter || op == CollOp::kReduce;
}
/// Whether `op` has a root rank (broadcast, reduce).
constexpr bool collOpRooted(CollOp op) { return op == CollOp::kBroadcast || op == CollOp::kReduce; }

const char* collOpName(CollOp op);     ///< "all_reduce", "all_gather", ... (nccl-tests binary names)
const char* dataTypeName(DataType t);  ///< "float", "half", "bfloat16", "double", "int8", "f8e4m3", ... (-d)
const char* redOpName(RedOp op);       ///< "sum", "prod", "min", "max", "avg" (-o)
std::size_t dataTypeSize(DataType t);  ///< bytes per element
bool isFloatingPoint(DataType t);      ///< float, half, bfloat16, double and the fp8 types

/// Accepts the nccl-tests names and common aliases ("allreduce", "fp32", "bf16", ...).
Result<CollOp> parseCollOp(const std::string& text);
/// "float", "fp32", "half", "bf16", "double", "int8", "f8e4m3", ...; kInvalidArgument naming the text.
Result<DataType> parseDataType(const std::string& text);
/// "sum", "prod", "min", "max", "avg"; kInvalidArgument naming the text.
Result<RedOp> parseRedOp(const std::string& text);

/// Whether `op` is defined on `type`. Averages of integers are refused: the rounding of an
/// integer division would differ from what users expect of NCCL's integer avg (which divides
/// each rank's share before summing), so the caller gets a clear error instead.
Status checkRedOpForType(RedOp op, DataType type);

/// Elements of one rank's send and receive buffers for `op` with `count` (as Communicator takes
/// it): reduce-scatter and alltoall send ranks x count, all-gather and alltoall receive ranks x
/// count, everything else count.
std::size_t collectiveInputElements(CollOp op, std::size_t count, int ranks);
/// The receive buffer's elements, as for collectiveInputElements.
std::size_t collectiveOutputElements(CollOp op, std::size_t count, int ranks);

/// NCCL's in-place arrangement for rank `rank`, built from the rank's buffers: all-gather sends
/// from inside its receive buffer (at rank x count), reduce-scatter receives into its send
/// buffer (at rank x count), the others use the send buffer for both.
struct InPlacePointers {
  void* send = nullptr;  ///< what to pass as the rank's send buffer (points into the caller's memory)
  void* recv = nullptr;  ///< what to pass as its receive buffer
};
/// The in-place pointers of `rank` (see InPlacePointers); pure.
InPlacePointers inPlacePointers(CollOp op, void* sendBuffer, void* recvBuffer, std::size_t count, DataType type,
                                int rank);

/// Bytes the nccl-tests "size" column shows for `count` elements per rank: the buffer every
/// rank ends with (all-gather: count x ranks elements; reduce-scatter: the input of count x
/// ranks; all-to-all: count x ranks; the rest: count).
std::size_t collectiveBytes(CollOp op, std::size_t count, DataType type, int ranks);

/// algbw = size / time; busbw = algbw x factor, with nccl-tests' factors: all-reduce
/// 2(n-1)/n, all-gather, reduce-scatter and all-to-all (n-1)/n, broadcast, reduce and
/// send/recv 1. GB/s with 1 GB = 1e9 bytes.
double busBandwidthFactor(CollOp op, int ranks);
/// nccl-tests' two figures of one measurement, GB/s.
struct Bandwidth {
  double algbw = 0, busbw = 0;  ///< size / time; algbw x busBandwidthFactor
};
/// algbw and busbw of `op` moving `bytes` (the size column) in `seconds` on `ranks` GPUs.
Bandwidth collectiveBandwidth(CollOp op, std::size_t bytes, double seconds, int ranks);

}  // namespace gpupeer
