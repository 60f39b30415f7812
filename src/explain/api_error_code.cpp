// Error codes as people type them, read against each family's table of names and numbers.
#include "gpupeer/api_error_code.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <utility>

namespace gpupeer {
namespace {

struct NamedCode {
  std::string name;
  int number;
};

// cudaError_t as the CUDA runtime names and numbers it (cuda_error_names.inc, its list written
// out so that a build without CUDA reads the same codes). Codes run from 0 to 999
// (cudaErrorUnknown), with gaps, which answer "unrecognized error code".
const std::vector<NamedCode>& cudaTable() {
  static const std::vector<NamedCode> table = {
#include "cuda_error_names.inc"
  };
  return table;
}

// ncclResult_t as nccl.h (NCCL 2.28) numbers it; tests/unit/api_error_code_test.cpp compares
// it with nccl.h where the header is installed. ncclNumResults is a count, not a code.
const std::vector<NamedCode>& ncclTable() {
  static const std::vector<NamedCode> table = {
      {"ncclSuccess", 0},         {"ncclUnhandledCudaError", 1}, {"ncclSystemError", 2}, {"ncclInternalError", 3},
      {"ncclInvalidArgument", 4}, {"ncclInvalidUsage", 5},       {"ncclRemoteError", 6}, {"ncclInProgress", 7},
  };
  return table;
}

// nvmlReturn_t as nvml.h numbers it (the toolkit here ships no nvml.h, and NVML is opened at run
// time, so the list is written out; codes newer than NVML_ERROR_DEPRECATED are left out).
const std::vector<NamedCode>& nvmlTable() {
  static const std::vector<NamedCode> table = {
      {"NVML_SUCCESS", 0},
      {"NVML_ERROR_UNINITIALIZED", 1},
      {"NVML_ERROR_INVALID_ARGUMENT", 2},
      {"NVML_ERROR_NOT_SUPPORTED", 3},
      {"NVML_ERROR_NO_PERMISSION", 4},
      {"NVML_ERROR_ALREADY_INITIALIZED", 5},
      {"NVML_ERROR_NOT_FOUND", 6},
      {"NVML_ERROR_INSUFFICIENT_SIZE", 7},
      {"NVML_ERROR_INSUFFICIENT_POWER", 8},
      {"NVML_ERROR_DRIVER_NOT_LOADED", 9},
      {"NVML_ERROR_TIMEOUT", 10},
      {"NVML_ERROR_IRQ_ISSUE", 11},
      {"NVML_ERROR_LIBRARY_NOT_FOUND", 12},
      {"NVML_ERROR_FUNCTION_NOT_FOUND", 13},
      {"NVML_ERROR_CORRUPTED_INFOROM", 14},
      {"NVML_ERROR_GPU_IS_LOST", 15},
      {"NVML_ERROR_RESET_REQUIRED", 16},
      {"NVML_ERROR_OPERATING_SYSTEM", 17},
      {"NVML_ERROR_LIB_RM_VERSION_MISMATCH", 18},
      {"NVML_ERROR_IN_USE", 19},
      {"NVML_ERROR_MEMORY", 20},
      {"NVML_ERROR_NO_DATA", 21},
      {"NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", 22},
      {"NVML_ERROR_INSUFFICIENT_RESOURCES", 23},
      {"NVML_ERROR_FREQ_NOT_SUPPORTED", 24},
      {"NVML_ERROR_ARGUMENT_VERSION_MISMATCH", 25},
      {"NVML_ERROR_DEPRECATED", 26},
      {"NVML_ERROR_UNKNOWN", 999},
  };
  return table;
}

constexpr std::array kFamilies = {ApiErrorFamily::kCuda, ApiErrorFamily::kNccl, ApiErrorFamily::kNvml};

const std::vector<NamedCode>& tableOf(ApiErrorFamily family) {
  switch (family) {
    case ApiErrorFamily::kNccl: return ncclTable();
    case ApiErrorFamily::kNvml: return nvmlTable();
    case ApiErrorFamily::kCuda: break;
  }
  return cudaTable();
}

// A name with spelling set aside: lower case, no underscores. The runtime's cudaErrorNotPermitted
// and the driver's CUDA_ERROR_NOT_PERMITTED both become "cudaerrornotpermitted".
std::string nameKey(std::string_view name) {
  std::string key;
  for (char c : name)
    if (c != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

std::optional<ApiErrorFamily> familyOfName(std::string_view name) {
  if (name.starts_with("cuda") || name.starts_with("CUDA_")) return ApiErrorFamily::kCuda;
  if (name.starts_with("nccl")) return ApiErrorFamily::kNccl;
  if (name.starts_with("NVML_")) return ApiErrorFamily::kNvml;
  return std::nullopt;
}

// A name the family's table knows (or, for the driver's CUDA_ERROR_ names, one the runtime has
// no twin for: the driver's own table is in libcuda, absent where no driver is installed).
std::optional<ApiErrorCode> codeOfName(std::string_view name) {
  std::optional<ApiErrorFamily> family = familyOfName(name);
  if (!family) return std::nullopt;
  std::string key = nameKey(name);
  for (const NamedCode& c : tableOf(*family))
    if (nameKey(c.name) == key) return ApiErrorCode{*family, c.name, c.number};  // the table's spelling
  if (name.starts_with("CUDA_ERROR_")) return ApiErrorCode{*family, std::string(name), std::nullopt};
  return std::nullopt;
}

std::optional<ApiErrorCode> codeOfNumber(ApiErrorFamily family, int number) {
  for (const NamedCode& c : tableOf(family))
    if (c.number == number) return ApiErrorCode{family, c.name, number};
  return std::nullopt;
}

int toInt(const std::string& digits) {
  int n = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return n;
}

std::string_view trimmed(std::string_view text) {
  auto junk = [](char c) { return std::isspace(static_cast<unsigned char>(c)) || c == '"' || c == '\'' || c == '`'; };
  while (!text.empty() && junk(text.front())) text.remove_prefix(1);
  while (!text.empty() && (junk(text.back()) || text.back() == '.')) text.remove_suffix(1);
  return text;
}

// readApiErrorCodes; `bareNumbers`: whether a number without family is read in every family.
std::vector<ApiErrorCode> readCodes(std::string_view text, bool bareNumbers);

}  // namespace

std::string_view apiErrorFamilyName(ApiErrorFamily family) {
  switch (family) {
    case ApiErrorFamily::kNccl: return "NCCL";
    case ApiErrorFamily::kNvml: return "NVML";
    case ApiErrorFamily::kCuda: break;
  }
  return "CUDA";
}

std::string_view apiErrorTypeName(ApiErrorFamily family) {
  switch (family) {
    case ApiErrorFamily::kNccl: return "ncclResult_t";
    case ApiErrorFamily::kNvml: return "nvmlReturn_t";
    case ApiErrorFamily::kCuda: break;
  }
  return "cudaError_t";
}

bool sameApiError(const ApiErrorCode& a, const ApiErrorCode& b) {
  if (a.family != b.family) return false;
  if (a.number && b.number) return *a.number == *b.number;
  return !a.name.empty() && nameKey(a.name) == nameKey(b.name);
}

std::string describeApiError(const ApiErrorCode& code) {
  std::string type(apiErrorTypeName(code.family));
  if (!code.number) return fmt::format("{} ({})", code.name, apiErrorFamilyName(code.family));
  if (code.name.empty()) return fmt::format("{} {}", type, *code.number);
  return fmt::format("{} ({} {})", code.name, type, *code.number);
}

std::vector<ApiErrorCode> readApiErrorCodes(std::string_view text) { return readCodes(text, true); }

std::vector<ApiErrorCode> apiErrorCodesCarried(std::string_view errorCodeField) {
  std::vector<ApiErrorCode> carried;
  while (!errorCodeField.empty()) {
    std::size_t slash = errorCodeField.find('/');
    std::string_view part = errorCodeField.substr(0, slash);
    errorCodeField = slash == std::string_view::npos ? std::string_view{} : errorCodeField.substr(slash + 1);
    // A number alone in an entry's field says nothing of its family: only names and family
    // words count there.
    std::vector<ApiErrorCode> codes = readCodes(part, false);
    carried.insert(carried.end(), codes.begin(), codes.end());
  }
  return carried;
}

namespace {

std::vector<ApiErrorCode> readCodes(std::string_view text, bool bareNumbers) {
  // Family words as the APIs and the programs around them print them: "CUDA error 217",
  // "Cuda failure 217" (NCCL), "CUresult 217", "NCCL error 2", "nvmlReturn_t 4".
  static const RE2 kFamilyNumber(
      R"((?i)^(cuda|cudaerror_t|cuda_error|curesult|nccl|ncclresult_t|nvml|nvmlreturn_t)(?:[\s_-]*(?:runtime|driver))?)"
      R"((?:[\s_-]*(?:error|failure|result|return|status))?(?:[\s_-]*code)?\s*[:=#]?\s*(\d{1,5})$)");
  static const RE2 kBareNumber(R"((?i)^(?:(?:error|return|result|status)(?:\s+code)?\s*[:=#]?\s*)?(\d{1,5})$)");
  static const RE2 kName(R"(^([A-Za-z][A-Za-z0-9_]*)(?:\s*[:=]?\s*\(?\s*(\d{1,5})\s*\)?)?$)");
  std::string_view t = trimmed(text);
  if (t.empty() || t.size() > 120) return {};
  re2::StringPiece input(t.data(), t.size());
  std::string word, digits;
  if (RE2::FullMatch(input, kFamilyNumber, &word, &digits)) {
    std::string w = nameKey(word);
    ApiErrorFamily family = w.starts_with("nccl")   ? ApiErrorFamily::kNccl
                            : w.starts_with("nvml") ? ApiErrorFamily::kNvml
                                                    : ApiErrorFamily::kCuda;
    int number = toInt(digits);
    return {codeOfNumber(family, number).value_or(ApiErrorCode{family, "", number})};
  }
  if (bareNumbers && RE2::FullMatch(input, kBareNumber, &digits)) {
    std::vector<ApiErrorCode> readings;
    for (ApiErrorFamily family : kFamilies)
      if (std::optional<ApiErrorCode> c = codeOfNumber(family, toInt(digits))) readings.push_back(*c);
    return readings;
  }
  if (RE2::FullMatch(input, kName, &word, &digits)) {
    std::optional<ApiErrorCode> c = codeOfName(word);
    if (!c) return {};
    if (!c->number && !digits.empty()) c->number = toInt(digits);
    return {*c};
  }
  return {};
}

}  // namespace

}  // namespace gpupeer
