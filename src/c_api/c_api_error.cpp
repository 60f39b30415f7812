// The error record of the C API and the conversions every entry shares.
#include "c_api_error.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "gpupeer/version.hpp"

namespace gpupeer::capi {

int fail(const Status& status, gpupeer_error** error) {
  int code = static_cast<int>(status.code());
  if (code == GPUPEER_OK) code = GPUPEER_INTERNAL;  // a failure path must never report success
  if (!error) return code;
  auto* record = new (std::nothrow) gpupeer_error;
  if (!record) {
    *error = nullptr;
    return code;
  }
  record->code = code;
  record->codeName = errorCodeName(status.code());
  record->message = status.message();
  record->text = status.toString();
  record->apiName = status.apiErrorName();
  record->apiText = status.apiErrorText();
  record->kbId = status.kbId();
  record->call = status.call();
  record->location = status.location();
  *error = record;
  return code;
}

int giveString(const std::string& text, char** out, gpupeer_error** error) {
  if (!out) return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "out must not be null"), error);
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (!copy) return fail(GPUPEER_ERROR(ErrorCode::kSystem, "out of memory for the result"), error);
  std::memcpy(copy, text.c_str(), text.size() + 1);
  *out = copy;
  return GPUPEER_OK;
}

Status nullComm() { return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "comm: the communicator is null (destroyed?)"); }

}  // namespace gpupeer::capi

extern "C" {

int gpupeer_error_code(const gpupeer_error* e) { return e ? e->code : GPUPEER_OK; }
const char* gpupeer_error_code_name(const gpupeer_error* e) { return e ? e->codeName.c_str() : "ok"; }
const char* gpupeer_error_message(const gpupeer_error* e) { return e ? e->message.c_str() : ""; }
const char* gpupeer_error_text(const gpupeer_error* e) { return e ? e->text.c_str() : ""; }
const char* gpupeer_error_api_name(const gpupeer_error* e) { return e ? e->apiName.c_str() : ""; }
const char* gpupeer_error_api_text(const gpupeer_error* e) { return e ? e->apiText.c_str() : ""; }
const char* gpupeer_error_kb_id(const gpupeer_error* e) { return e ? e->kbId.c_str() : ""; }
const char* gpupeer_error_call(const gpupeer_error* e) { return e ? e->call.c_str() : ""; }
const char* gpupeer_error_location(const gpupeer_error* e) { return e ? e->location.c_str() : ""; }
void gpupeer_error_free(gpupeer_error* e) { delete e; }

void gpupeer_string_free(char* text) { std::free(text); }
int gpupeer_c_api_version(void) { return GPUPEER_C_API_VERSION; }
const char* gpupeer_version(void) { return gpupeer::kVersion; }

}  // extern "C"
