// c_api.h's constants against the C++ enums they stand for, one static_assert per enumerator,
// so that a value changed on one side alone fails the build; and the checked conversions from
// the ints C passes in.
#include "c_api_enums.hpp"

#include <fmt/format.h>

#include <iterator>

#include "gpupeer/doctor.hpp"

namespace gpupeer::capi {
namespace {

template <class Enum>
constexpr int asC(Enum value) {
  return static_cast<int>(value);
}

static_assert(asC(ErrorCode::kOk) == GPUPEER_OK);
static_assert(asC(ErrorCode::kInvalidArgument) == GPUPEER_INVALID_ARGUMENT);
static_assert(asC(ErrorCode::kNotFound) == GPUPEER_NOT_FOUND);
static_assert(asC(ErrorCode::kParse) == GPUPEER_PARSE);
static_assert(asC(ErrorCode::kUnsupported) == GPUPEER_UNSUPPORTED);
static_assert(asC(ErrorCode::kCuda) == GPUPEER_CUDA);
static_assert(asC(ErrorCode::kNvml) == GPUPEER_NVML);
static_assert(asC(ErrorCode::kNccl) == GPUPEER_NCCL);
static_assert(asC(ErrorCode::kSystem) == GPUPEER_SYSTEM);
static_assert(asC(ErrorCode::kDataMismatch) == GPUPEER_DATA_MISMATCH);
static_assert(asC(ErrorCode::kTimeout) == GPUPEER_TIMEOUT);
static_assert(asC(ErrorCode::kInternal) == GPUPEER_INTERNAL);

static_assert(asC(CollOp::kAllReduce) == GPUPEER_ALL_REDUCE);
static_assert(asC(CollOp::kAllGather) == GPUPEER_ALL_GATHER);
static_assert(asC(CollOp::kReduceScatter) == GPUPEER_REDUCE_SCATTER);
static_assert(asC(CollOp::kBroadcast) == GPUPEER_BROADCAST);
static_assert(asC(CollOp::kReduce) == GPUPEER_REDUCE);
static_assert(asC(CollOp::kAllToAll) == GPUPEER_ALL_TO_ALL);
static_assert(asC(CollOp::kSendRecv) == GPUPEER_SEND_RECV);

static_assert(asC(DataType::kFloat32) == GPUPEER_FLOAT32);
static_assert(asC(DataType::kFloat16) == GPUPEER_FLOAT16);
static_assert(asC(DataType::kBFloat16) == GPUPEER_BFLOAT16);
static_assert(asC(DataType::kFloat64) == GPUPEER_FLOAT64);
static_assert(asC(DataType::kInt8) == GPUPEER_INT8);
static_assert(asC(DataType::kUInt8) == GPUPEER_UINT8);
static_assert(asC(DataType::kInt32) == GPUPEER_INT32);
static_assert(asC(DataType::kInt64) == GPUPEER_INT64);
static_assert(asC(DataType::kFloat8E4M3) == GPUPEER_FLOAT8_E4M3);
static_assert(asC(DataType::kFloat8E5M2) == GPUPEER_FLOAT8_E5M2);
// dataTypeFromC takes every value up to the last: a type added to the C++ enum (and to
// kAllDataTypes) needs its constant here first.
static_assert(std::size(kAllDataTypes) == GPUPEER_FLOAT8_E5M2 + 1);

static_assert(asC(RedOp::kSum) == GPUPEER_SUM);
static_assert(asC(RedOp::kProd) == GPUPEER_PROD);
static_assert(asC(RedOp::kMin) == GPUPEER_MIN);
static_assert(asC(RedOp::kMax) == GPUPEER_MAX);
static_assert(asC(RedOp::kAvg) == GPUPEER_AVG);

static_assert(asC(Severity::kInfo) == GPUPEER_SEVERITY_INFO);
static_assert(asC(Severity::kWarning) == GPUPEER_SEVERITY_WARNING);
static_assert(asC(Severity::kError) == GPUPEER_SEVERITY_ERROR);

static_assert(kMaxCommRanks == GPUPEER_MAX_COMM_RANKS);

}  // namespace

// Each range check below takes the first to the last constant: the enums run from 0 without
// gaps, which the asserts above hold for every value.
Result<CollOp> collOpFromC(int op) {
  if (op < GPUPEER_ALL_REDUCE || op > GPUPEER_SEND_RECV)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("op: {} is not a collective operation", op));
  return static_cast<CollOp>(op);
}

Result<DataType> dataTypeFromC(int type) {
  if (type < GPUPEER_FLOAT32 || type > GPUPEER_FLOAT8_E5M2)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("type: {} is not a data type", type));
  return static_cast<DataType>(type);
}

Result<RedOp> redOpFromC(int op) {
  if (op < GPUPEER_SUM || op > GPUPEER_AVG)
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("redop: {} is not a reduction operator", op));
  return static_cast<RedOp>(op);
}

}  // namespace gpupeer::capi
