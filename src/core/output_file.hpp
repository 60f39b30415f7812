#pragma once
// The one way gpupeer writes a file a user named (`snapshot -o`, `report -o`): what the shell's
// `>` would do, without its damage. Internal.
#include <string>
#include <string_view>

#include "gpupeer/status.hpp"

namespace gpupeer {

/// Writes `content` to `path`:
/// * a regular file, new or existing (also through a symbolic link, which stays a link), is
///   written to a temporary file in the same folder and renamed over it: a reader sees the old
///   file or the whole new one, and a failure (a full disk) leaves the old one as it was and no
///   temporary file behind. An existing file keeps its mode, and its owner and group where this
///   process may set them; a new one gets 0666 less the umask, as with `>`;
/// * anything else (a FIFO, /dev/null, a terminal) is opened and written where it is, never
///   replaced by a regular file; a FIFO waits for its reader, as with `>`;
/// * a file `>` would refuse (no write permission, a read-only file system) is refused the same,
///   before anything is written. Root may write a read-only file, as with `>`.
/// Errors name `path`: kInvalidArgument for an empty name or a folder, kSystem for the rest.
/// Thread-safe for different paths.
Status writeOutputFile(const std::string& path, std::string_view content);

}  // namespace gpupeer
