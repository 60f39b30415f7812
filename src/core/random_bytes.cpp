#include "core/random_bytes.hpp"

#include <fmt/format.h>
#include <sys/random.h>

#include <cerrno>
#include <cstring>

namespace gpupeer {

Status fillRandom(void* into, std::size_t bytes) {
  auto* at = static_cast<unsigned char*>(into);
  // Reads of more than 256 bytes may return fewer; a signal may interrupt one.
  while (bytes > 0) {
    const ssize_t got = getrandom(at, bytes, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("getrandom failed: {}", std::strerror(errno)));
    at += got;
    bytes -= static_cast<std::size_t>(got);
  }
  return Status::ok();
}

}  // namespace gpupeer
