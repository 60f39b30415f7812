// What both communicators' C entries share: the element counts of each operation, for callers
// that size or check buffers before a call (the Python package and its C readers of tensors).
#include <fmt/format.h>

#include <cstdint>

#include "c_api_enums.hpp"
#include "c_api_error.hpp"

using namespace gpupeer;
using capi::fail;

extern "C" {

int gpupeer_collective_elements(int op, size_t count, int ranks, size_t* in, size_t* out, gpupeer_error** error) {
  return capi::guarded(error, [&] {
    Result<CollOp> o = capi::collOpFromC(op);
    if (!o.isOk()) return fail(o.status(), error);
    if (!in || !out) return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, "in and out must not be null"), error);
    if (ranks < 1) return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument, fmt::format("ranks: {}", ranks)), error);
    if (count > SIZE_MAX / static_cast<size_t>(ranks))
      return fail(GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                                fmt::format("count: {} elements x {} ranks is past SIZE_MAX", count, ranks)),
                  error);
    *in = collectiveInputElements(o.value(), count, ranks);
    *out = collectiveOutputElements(o.value(), count, ranks);
    return static_cast<int>(GPUPEER_OK);
  });
}

}  // extern "C"
