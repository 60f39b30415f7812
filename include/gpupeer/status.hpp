#pragma once
/// \file status.hpp
/// Errors as values. Every fallible library call returns a Status or a Result<T>;
/// nothing throws across the public API and nothing exits. Status and Result are values: each
/// object is used by one thread at a time, copies are independent.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace gpupeer {

/// What kind of failure a Status describes. The CLI maps these to exit codes.
enum class ErrorCode {
  kOk,
  kInvalidArgument,  ///< the caller passed something malformed (bad device, size, file)
  kNotFound,         ///< a file, device or entry does not exist
  kParse,            ///< input text could not be parsed
  kUnsupported,      ///< the machine cannot do this (no P2P, no GPU): not a failure of gpupeer
  kCuda,             ///< a CUDA runtime call failed
  kNvml,             ///< an NVML call failed
  kNccl,             ///< an NCCL call failed
  kSystem,           ///< an OS call (open, read, dlopen) failed
  kDataMismatch,     ///< data moved but arrived wrong
  kTimeout,          ///< a bounded wait ran out
  kInternal,         ///< a bug in gpupeer
};

/// Stable name of an ErrorCode ("invalid-argument", "cuda", ...), used in JSON.
const char* errorCodeName(ErrorCode code);

/// A failure with everything needed to act on it: what was called, on which devices,
/// the API's own error name and text, where in gpupeer, and the KB entry that explains it.
/// Success is one word (the details live on the heap only once something failed): an eager
/// collective passes a dozen of them up per call.
/// Cheap to move; copying is fine (errors are rare).
class Status {
 public:
  Status() = default;  ///< success
  /// A failure of kind `code`; `message` says what failed, in words.
  Status(ErrorCode code, std::string message) : code_(code) { details().message = std::move(message); }
  /// Copies the details (errors are rare, so the allocation does not matter).
  Status(const Status& other) : code_(other.code_), details_(copyOf(other.details_)) {}
  /// Copies the details.
  Status& operator=(const Status& other) {
    if (this != &other) {
      code_ = other.code_;
      details_ = copyOf(other.details_);
    }
    return *this;
  }
  Status(Status&&) noexcept = default;             ///< takes the details over
  Status& operator=(Status&&) noexcept = default;  ///< takes the details over
  ~Status() = default;

  static Status ok() { return {}; }                                                       ///< success
  bool isOk() const { return code_ == ErrorCode::kOk; }                                   ///< success?
  ErrorCode code() const { return code_; }                                                ///< the kind of failure
  const std::string& message() const { return details_ ? details_->message : noText(); }  ///< what failed

  // Context, added fluently at the failure site: Status(...).withCall("cudaMalloc").withDevice(0)
  /// The API function that failed ("cudaMalloc").
  Status& withCall(std::string call) {
    details().call = std::move(call);
    return *this;
  }
  /// A device involved, by ordinal and PCI bus id (may be called once per device).
  Status& withDevice(int ordinal, std::string busId = {});
  /// The API's own error name and text ("cudaErrorPeerAccessUnsupported", its message).
  Status& withApiError(std::string name, std::string text) {
    details().apiErrorName = std::move(name);
    details().apiErrorText = std::move(text);
    return *this;
  }
  /// Where in gpupeer the failure was seen (GPUPEER_ERROR adds it).
  Status& withLocation(const char* file, int line);
  /// The KB entry that explains the failure (`gpupeer explain` takes the id).
  Status& withKbId(std::string id) {
    details().kbId = std::move(id);
    return *this;
  }

  // The context added above; empty when none was. References into this Status.
  const std::string& call() const { return details_ ? details_->call : noText(); }  ///< see withCall
  /// Ordinals of the devices involved, in the order added.
  const std::vector<int>& devices() const { return details_ ? details_->devices : noDevices(); }
  /// Their bus ids, parallel to devices().
  const std::vector<std::string>& busIds() const { return details_ ? details_->busIds : noBusIds(); }
  /// The API's error name ("cudaErrorPeerAccessUnsupported").
  const std::string& apiErrorName() const { return details_ ? details_->apiErrorName : noText(); }
  /// The API's error text.
  const std::string& apiErrorText() const { return details_ ? details_->apiErrorText : noText(); }
  const std::string& location() const { return details_ ? details_->location : noText(); }  ///< "file:line"
  const std::string& kbId() const { return details_ ? details_->kbId : noText(); }          ///< see withKbId

  /// One line for humans: "cuda: cudaDeviceEnablePeerAccess on device 0 (0000:18:00.0):
  /// cudaErrorPeerAccessUnsupported (peer access is not supported ...) [kb: ...] at file:line".
  std::string toString() const;

 private:
  struct Details {
    std::string message;
    std::string call;
    std::vector<int> devices;
    std::vector<std::string> busIds;
    std::string apiErrorName;
    std::string apiErrorText;
    std::string location;
    std::string kbId;
  };
  Details& details() {
    if (!details_) details_ = std::make_unique<Details>();
    return *details_;
  }
  static std::unique_ptr<Details> copyOf(const std::unique_ptr<Details>& d) {
    return d ? std::make_unique<Details>(*d) : nullptr;
  }
  static const std::string& noText();
  static const std::vector<int>& noDevices();
  static const std::vector<std::string>& noBusIds();

  ErrorCode code_ = ErrorCode::kOk;
  std::unique_ptr<Details> details_;  // null until a message or context is added
};

/// A value or the Status that explains why there is none.
template <class T>
class Result {
 public:
  /// A value. Implicit, so a function returning Result<T> can `return value;`.
  Result(T value) : data_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  /// A failure (must not be ok). Implicit, so `return status;` works.
  Result(Status status) : data_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool isOk() const { return std::holds_alternative<T>(data_); }  ///< holds a value?
  /// The value; only when isOk() (std::bad_variant_access otherwise: a bug in the caller).
  const T& value() const& { return std::get<T>(data_); }
  T& value() & { return std::get<T>(data_); }               ///< as above, mutable
  T&& value() && { return std::get<T>(std::move(data_)); }  ///< as above, moved out
  /// The failure; Status::ok() when there is a value.
  Status status() const { return isOk() ? Status::ok() : std::get<Status>(data_); }

 private:
  std::variant<T, Status> data_;
};

/// Builds a Status carrying this file and line.
#define GPUPEER_ERROR(code, message) ::gpupeer::Status((code), (message)).withLocation(__FILE__, __LINE__)

/// The one macro that passes errors up.
#define GPUPEER_RETURN_IF_ERROR(expr)                    \
  do {                                                   \
    ::gpupeer::Status gpupeer_status_ = (expr);          \
    if (!gpupeer_status_.isOk()) return gpupeer_status_; \
  } while (0)

}  // namespace gpupeer
