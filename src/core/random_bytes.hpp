#pragma once
// Bytes from the kernel's random source, for the names and tokens that keep one communicator's
// sockets apart from another's (the start-up id, the descriptor offers).

#include <cstddef>

#include "gpupeer/status.hpp"

namespace gpupeer {

/// Fills `bytes` bytes at `into` from getrandom(2); kSystem naming it where that fails.
Status fillRandom(void* into, std::size_t bytes);

}  // namespace gpupeer
