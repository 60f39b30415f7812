#pragma once
// Bytes as lower-case hex text and back: how opaque binary blobs (memory handles, communicator
// ids) travel through JSON and command lines. Internal.

#include <cstddef>
#include <string>
#include <string_view>

namespace gpupeer {

/// Two lower-case hex digits per byte.
std::string toHex(const void* data, std::size_t bytes);
/// Fills `bytes` bytes from exactly 2 x `bytes` hex digits; false (nothing promised about
/// `data`) for text of another length or with another character.
bool fromHex(std::string_view text, void* data, std::size_t bytes);

}  // namespace gpupeer
