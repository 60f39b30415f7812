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

const std::string& Status::noText() {
  static const std::string empty;
  return empty;
}

const std::vector<int>& Status::noDevices() {
  static const std::vector<int> empty;
  return empty;
}

const std::vector<std::string>& Status::noBusIds() {
  static const std::vector<std::string> empty;
  return empty;
}

Status& Status::withDevice(int ordinal, std::string busId) {
  details().devices.push_back(ordinal);
  details().busIds.push_back(std::move(busId));
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
  details().location = fmt::format("{}:{}", shown, line);
  return *this;
}

std::string Status::toString() const {
  if (isOk()) return "ok";
  std::string out = errorCodeName(code_);
  out += ": ";
  if (!call().empty()) {
    out += call();
    if (!devices().empty()) {
      out += " on ";
      for (size_t i = 0; i < devices().size(); ++i) {
        if (i) out += " -> ";
        out += fmt::format("device {}", devices()[i]);
        if (!busIds()[i].empty()) out += fmt::format(" ({})", busIds()[i]);
      }
    }
    out += ": ";
  }
  out += message();
  if (!apiErrorName().empty()) out += fmt::format(" [{}: {}]", apiErrorName(), apiErrorText());
  if (!kbId().empty()) out += fmt::format(" (explained by KB entry {})", kbId());
  if (!location().empty()) out += fmt::format(" at {}", location());
  return out;
}

}  // namespace gpupeer
