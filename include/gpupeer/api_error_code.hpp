#pragma once
/// \file api_error_code.hpp
/// Error codes of the APIs gpupeer meets (CUDA, NCCL, NVML) as people type them: a name
/// ("cudaErrorPeerAccessUnsupported", "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "ncclSystemError",
/// "NVML_ERROR_NO_PERMISSION"), a number with its family ("CUDA error 217", "NCCL error 2",
/// "nvmlReturn_t 4") or a bare number ("217"). Used by `explain` to find the KB entries whose
/// error_code carries the code. Pure functions; any thread.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpupeer {

/// Which API's numbering a code belongs to.
enum class ApiErrorFamily {
  kCuda,  ///< cudaError_t numbers; names of the runtime (cudaError…) and the driver (CUDA_ERROR_…)
  kNccl,  ///< ncclResult_t
  kNvml,  ///< nvmlReturn_t
};

/// "CUDA", "NCCL", "NVML".
std::string_view apiErrorFamilyName(ApiErrorFamily family);
/// The C type of the family's numbers: "cudaError_t", "ncclResult_t", "nvmlReturn_t".
std::string_view apiErrorTypeName(ApiErrorFamily family);

/// One error code, with what is known of it: a code read from text has its name, its number or
/// both filled from the family's table where the table knows them.
struct ApiErrorCode {
  ApiErrorFamily family = ApiErrorFamily::kCuda;
  std::string name;           ///< as the API spells it; "" when the number has no known name
  std::optional<int> number;  ///< unset when the name has no known number (some CUDA_ERROR_ names)
};

/// Whether two codes are the same error: same family, and the same number where both have one,
/// else the same name once spelling is set aside (cudaErrorNotPermitted = CUDA_ERROR_NOT_PERMITTED).
bool sameApiError(const ApiErrorCode& a, const ApiErrorCode& b);

/// "cudaErrorPeerAccessUnsupported (cudaError_t 217)"; "ncclResult_t 42" without a name.
std::string describeApiError(const ApiErrorCode& code);

/// Reads `text` as error codes, whole: one name (optionally followed by its number, "(217)"),
/// a family word and a number ("CUDA error 217", "cuda failure: 217", "ncclResult_t 2",
/// "NVML error 4"), or a bare number ("217", "error 217"), read in every family that defines it.
/// Returns one code per reading; empty when the text is not a code or a name no table knows.
/// Surrounding spaces and quotes are ignored; family words are case-insensitive.
std::vector<ApiErrorCode> readApiErrorCodes(std::string_view text);

/// The codes a KB entry's error_code field carries: each of its " / "-separated parts read with
/// readApiErrorCodes ("cudaErrorPeerAccessUnsupported (217) / cudaErrorInvalidResourceHandle"
/// carries two; "none (hang)" and "Xid 79" none).
std::vector<ApiErrorCode> apiErrorCodesCarried(std::string_view errorCodeField);

}  // namespace gpupeer
