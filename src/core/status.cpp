#include "gpupeer/status.hpp"

#include <fmt/format.h>

#include <cstring>

namespace gpupeer {

const char* errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOk: return "ok";
    case ErrorCode::kInvalidArgument: return "invalid-argument";
    case ErrorCode::kNotFound: return "not-found";
    case ErrorCode::kParse: return "parse";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kCuda: return "cuda";
    case ErrorCode::kNvml: return "nvml";
    case ErrorCode::kNccl: return "nccl";
    case ErrorCode::kSystem: return "system";
    case ErrorCode::kDataMismatch: return "data-mismatch";
    case ErrorCode::kTimeout: return "timeout";
    case ErrorCode::kInternal: return "internal";
  }
  return "unknown";
}

Status& Status::withDevice(int ordinal, std::string busId) {
  devices_.push_back(ordinal);
  busIds_.push_back(std::move(busId));
  return *this;
}

Status& Status::withLocation(const char* file, int line) {
  // Keep the path from "src/" or "tools/" on so messages do not leak build directories.
  const char* shown = file;
  for (const char* marker : {"/src/", "/tools/", "/include/", "/tests/"}) {
    if (const char* p = std::strstr(file, marker)) {
      shown = p + 1;
      break;
    }
  }
  location_ = fmt::format("{}:{}", shown, line);
  return *this;
}

std::string Status::toString() const {
  if (isOk()) return "ok";
  std::string out = errorCodeName(code_);
  out += ": ";
  if (!call_.empty()) {
    out += call_;
    if (!devices_.empty()) {
      out += " on ";
      for (size_t i = 0; i < devices_.size(); ++i) {
        if (i) out += " -> ";
        out += fmt::format("device {}", devices_[i]);
        if (!busIds_[i].empty()) out += fmt::format(" ({})", busIds_[i]);
      }
    }
    out += ": ";
  }
  out += message_;
  if (!apiErrorName_.empty()) out += fmt::format(" [{}: {}]", apiErrorName_, apiErrorText_);
  if (!kbId_.empty()) out += fmt::format(" (explained by KB entry {})", kbId_);
  if (!location_.empty()) out += fmt::format(" at {}", location_);
  return out;
}

}  // namespace gpupeer
