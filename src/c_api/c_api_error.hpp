#pragma once
// What every C API entry shares: the error record, the conversion of a Status into it, and the
// guard that keeps C++ exceptions (allocation failures, JSON errors) from crossing into C.

#include <exception>
#include <string>

#include "gpupeer/c_api.h"
#include "gpupeer/status.hpp"

struct gpupeer_error {
  int code = 0;
  std::string codeName, message, text, apiName, apiText, kbId, call, location;
};

namespace gpupeer::capi {

/// Stores `status` in *error (when error is non-null) and returns its code.
int fail(const Status& status, gpupeer_error** error);

/// GPUPEER_OK for a successful `status`, else fail(status, error).
inline int finish(const Status& status, gpupeer_error** error) {
  return status.isOk() ? static_cast<int>(GPUPEER_OK) : fail(status, error);
}

/// The error for a null communicator handle.
Status nullComm();

/// A malloc'ed copy of `text` in *out (the caller frees it with gpupeer_string_free).
int giveString(const std::string& text, char** out, gpupeer_error** error);

/// Runs `body` (returning a gpupeer_code) and turns any exception into GPUPEER_INTERNAL.
template <class Body>
int guarded(gpupeer_error** error, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::exception& e) {
    return fail(GPUPEER_ERROR(ErrorCode::kInternal, std::string("unexpected C++ exception: ") + e.what()), error);
  } catch (...) {
    return fail(GPUPEER_ERROR(ErrorCode::kInternal, "unexpected C++ exception"), error);
  }
}

}  // namespace gpupeer::capi
