#pragma once
// Input gpupeer reads from files and text it did not write: read with a size limit (a file
// that never ends, /dev/zero, is refused once past it; a FIFO at once) and parsed as JSON without
// letting the JSON library's exceptions, or nesting deep enough to exhaust the stack in its
// recursive parts (copy, compare, dump), escape. And JSON written from such strings (or from
// the environment), which need not be valid UTF-8.
#include <fmt/format.h>

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gpupeer/status.hpp"

namespace gpupeer {

/// Largest snapshot file read (a 64-GPU snapshot is about 1 MiB).
inline constexpr std::size_t kMaxSnapshotBytes = 64u << 20;
/// Largest `report --results` file read (the largest results file in bench/results is about
/// 1.2 MiB).
inline constexpr std::size_t kMaxResultsBytes = 64u << 20;
/// Largest KB entry file read (the largest entry of kb/ is a few KiB).
inline constexpr std::size_t kMaxKbEntryBytes = 4u << 20;
/// Deepest nesting of arrays and objects accepted in JSON input (snapshots and KB entries
/// nest 5 levels).
inline constexpr int kMaxJsonDepth = 64;

/// The whole file, or kNotFound (cannot open), kSystem (read error, a folder) or
/// kInvalidArgument (more than `maxBytes`; a FIFO or socket, which may never end, refused
/// without waiting for its writer), named with `what`: "snapshot file".
Result<std::string> readFileBounded(const std::string& path, std::size_t maxBytes, std::string_view what);

/// Most keys read in one JSON object. The largest a gpupeer file holds is a snapshot's
/// environment, a few dozen; the JSON library's ordered objects search their keys on every
/// insert, so an object of 150,000 keys would take time quadratic in them.
inline constexpr std::size_t kMaxJsonObjectKeys = 10000;

/// The offset in `text` of the first key past `limit` keys in one object (a key is counted at
/// its ':', outside strings), or npos where every object has at most `limit`. Linear.
std::size_t jsonKeyPastLimit(std::string_view text, std::size_t limit);

/// "source:line: a JSON object with more than kMaxJsonObjectKeys keys; refused", the line that of
/// byte `offset` of `text`.
std::string jsonTooManyKeysMessage(std::string_view text, std::string_view sourceName, std::size_t offset);

/// The depth of the deepest array or object in `text` (brackets inside strings not counted),
/// stopping early once past `limit`.
int jsonNestingDepth(std::string_view text, int limit);

/// The message for a syntax error at byte `errorByte` of `text` (1-based, as the JSON library
/// counts): "source:line:column: not valid JSON ...: <the library's reason>".
std::string jsonSyntaxMessage(std::string_view text, std::string_view sourceName, std::size_t errorByte,
                              const std::string& what);

/// `text` parsed as JSON (nlohmann::json or nlohmann::ordered_json), or kParse naming
/// `sourceName`, the line and column, and the problem: syntax, invalid UTF-8, a number out of
/// range, nesting deeper than kMaxJsonDepth, an object of more than kMaxJsonObjectKeys keys.
template <class Json>
Result<Json> parseJsonText(std::string_view text, std::string_view sourceName) {
  if (jsonNestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth)
    return GPUPEER_ERROR(ErrorCode::kParse,
                         fmt::format("{}: JSON nested more than {} levels deep; refused", sourceName, kMaxJsonDepth));
  if (std::size_t past = jsonKeyPastLimit(text, kMaxJsonObjectKeys); past != std::string_view::npos)
    return GPUPEER_ERROR(ErrorCode::kParse, jsonTooManyKeysMessage(text, sourceName, past));
  try {
    return Json::parse(text);
  } catch (const typename Json::parse_error& e) {
    return GPUPEER_ERROR(ErrorCode::kParse, jsonSyntaxMessage(text, sourceName, e.byte, e.what()));
  } catch (const typename Json::exception& e) {  // out_of_range: a number that fits no type
    return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("{}: not valid JSON: {}", sourceName, e.what()));
  }
}

/// JSON text of `j` for output; any string that is not valid UTF-8 has its bad bytes replaced
/// by U+FFFD instead of throwing.
template <class Json>
std::string dumpJson(const Json& j, int indent) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace gpupeer
