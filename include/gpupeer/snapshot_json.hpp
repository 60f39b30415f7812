#pragma once
/// \file snapshot_json.hpp
/// Versioned JSON form of a Snapshot. Writing then reading gives back an equal Snapshot.

#include <string>
#include <string_view>

#include "gpupeer/snapshot.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// The snapshot as JSON text ("schema": "gpupeer.snapshot", "version": N).
/// An unknown fact is written as {"unknown": "reason"} in place of its value.
std::string snapshotToJson(const Snapshot& snapshot);

/// Parses JSON text. `sourceName` (a file name) is used in error messages, which name the
/// line and column of a syntax error or the field path of a wrong value ("gpus[1].smCount").
Result<Snapshot> snapshotFromJson(std::string_view text, std::string_view sourceName = "<text>");

/// Reads and parses a snapshot file.
Result<Snapshot> loadSnapshotFile(const std::string& path);

}  // namespace gpupeer
