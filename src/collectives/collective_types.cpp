#include "gpupeer/collective_types.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <utility>

namespace gpupeer {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
  return s;
}

template <class E, std::size_t N>
Result<E> lookup(const std::pair<const char*, E> (&table)[N], const std::string& text, const char* what,
                 const char* valid) {
  std::string key = lower(text);
  for (const auto& [name, value] : table)
    if (key == name) return value;
  return GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("unknown {} '{}': use {}", what, text, valid));
}

}  // namespace

const char* collOpName(CollOp op) {
  switch (op) {
    case CollOp::kAllReduce: return "all_reduce";
    case CollOp::kAllGather: return "all_gather";
    case CollOp::kReduceScatter: return "reduce_scatter";
    case CollOp::kBroadcast: return "broadcast";
    case CollOp::kReduce: return "reduce";
    case CollOp::kAllToAll: return "alltoall";
    case CollOp::kSendRecv: return "sendrecv";
  }
  return "?";
}

const char* dataTypeName(DataType t) {
  switch (t) {
    case DataType::kFloat32: return "float";
    case DataType::kFloat16: return "half";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kFloat64: return "double";
    case DataType::kInt8: return "int8";
    case DataType::kUInt8: return "uint8";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kFloat8E4M3: return "f8e4m3";
    case DataType::kFloat8E5M2: return "f8e5m2";
  }
  return "?";
}

const char* redOpName(RedOp op) {
  switch (op) {
    case RedOp::kSum: return "sum";
    case RedOp::kProd: return "prod";
    case RedOp::kMin: return "min";
    case RedOp::kMax: return "max";
    case RedOp::kAvg: return "avg";
  }
  return "?";
}

std::size_t dataTypeSize(DataType t) {
  switch (t) {
    case DataType::kInt8:
    case DataType::kUInt8:
    case DataType::kFloat8E4M3:
    case DataType::kFloat8E5M2: return 1;
    case DataType::kFloat16:
    case DataType::kBFloat16: return 2;
    case DataType::kFloat32:
    case DataType::kInt32: return 4;
    case DataType::kFloat64:
    case DataType::kInt64: return 8;
  }
  return 0;
}

bool isFloatingPoint(DataType t) {
  return t == DataType::kFloat32 || t == DataType::kFloat16 || t == DataType::kBFloat16 || t == DataType::kFloat64 ||
         t == DataType::kFloat8E4M3 || t == DataType::kFloat8E5M2;
}

Result<CollOp> parseCollOp(const std::string& text) {
  static const std::pair<const char*, CollOp> kNames[] = {
      {"allreduce", CollOp::kAllReduce}, {"allgather", CollOp::kAllGather}, {"reducescatter", CollOp::kReduceScatter},
      {"broadcast", CollOp::kBroadcast}, {"reduce", CollOp::kReduce},       {"alltoall", CollOp::kAllToAll},
      {"sendrecv", CollOp::kSendRecv}};
  return lookup(kNames, text, "collective",
                "all_reduce, all_gather, reduce_scatter, broadcast, reduce, alltoall, sendrecv");
}

Result<DataType> parseDataType(const std::string& text) {
  static const std::pair<const char*, DataType> kNames[] = {
      {"float", DataType::kFloat32},     {"float32", DataType::kFloat32},    {"fp32", DataType::kFloat32},
      {"half", DataType::kFloat16},      {"float16", DataType::kFloat16},    {"fp16", DataType::kFloat16},
      {"bfloat16", DataType::kBFloat16}, {"bf16", DataType::kBFloat16},      {"double", DataType::kFloat64},
      {"float64", DataType::kFloat64},   {"int8", DataType::kInt8},          {"uint8", DataType::kUInt8},
      {"int32", DataType::kInt32},       {"int", DataType::kInt32},          {"int64", DataType::kInt64},
      {"f8e4m3", DataType::kFloat8E4M3}, {"fp8e4m3", DataType::kFloat8E4M3}, {"e4m3", DataType::kFloat8E4M3},
      {"f8e5m2", DataType::kFloat8E5M2}, {"fp8e5m2", DataType::kFloat8E5M2}, {"e5m2", DataType::kFloat8E5M2}};
  return lookup(kNames, text, "data type", "float, half, bfloat16, double, int8, uint8, int32, int64, f8e4m3, f8e5m2");
}

Result<RedOp> parseRedOp(const std::string& text) {
  static const std::pair<const char*, RedOp> kNames[] = {
      {"sum", RedOp::kSum}, {"prod", RedOp::kProd}, {"min", RedOp::kMin}, {"max", RedOp::kMax}, {"avg", RedOp::kAvg}};
  return lookup(kNames, text, "reduction", "sum, prod, min, max, avg");
}

Status checkRedOpForType(RedOp op, DataType type) {
  if (op == RedOp::kAvg && !isFloatingPoint(type))
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("avg is not offered for {}: integer averages round differently depending on "
                                     "where the division happens; use sum and divide",
                                     dataTypeName(type)));
  return Status::ok();
}

std::size_t collectiveInputElements(CollOp op, std::size_t count, int ranks) {
  return op == CollOp::kReduceScatter || op == CollOp::kAllToAll ? count * ranks : count;
}

std::size_t collectiveOutputElements(CollOp op, std::size_t count, int ranks) {
  return op == CollOp::kAllGather || op == CollOp::kAllToAll ? count * ranks : count;
}

InPlacePointers inPlacePointers(CollOp op, void* sendBuffer, void* recvBuffer, std::size_t count, DataType type,
                                int rank) {
  const std::size_t shift = rank * count * dataTypeSize(type);
  switch (op) {
    case CollOp::kAllGather: return {static_cast<char*>(recvBuffer) + shift, recvBuffer};
    case CollOp::kReduceScatter: return {sendBuffer, static_cast<char*>(sendBuffer) + shift};
    default: return {sendBuffer, sendBuffer};
  }
}

std::size_t collectiveBytes(CollOp op, std::size_t count, DataType type, int ranks) {
  std::size_t elements = count;
  if (op == CollOp::kAllGather || op == CollOp::kReduceScatter || op == CollOp::kAllToAll)
    elements = count * static_cast<std::size_t>(ranks);
  return elements * dataTypeSize(type);
}

double busBandwidthFactor(CollOp op, int ranks) {
  double n = ranks;
  switch (op) {
    case CollOp::kAllReduce: return 2 * (n - 1) / n;
    case CollOp::kAllGather:
    case CollOp::kReduceScatter:
    case CollOp::kAllToAll: return (n - 1) / n;
    case CollOp::kBroadcast:
    case CollOp::kReduce:
    case CollOp::kSendRecv: return 1;
  }
  return 1;
}

Bandwidth collectiveBandwidth(CollOp op, std::size_t bytes, double seconds, int ranks) {
  Bandwidth b;
  if (seconds <= 0 || ranks < 1) return b;
  b.algbw = bytes / seconds / 1e9;
  b.busbw = b.algbw * busBandwidthFactor(op, ranks);
  return b;
}

}  // namespace gpupeer
