#pragma once
// Small text helpers the tool-output parsers share: whitespace fields, numbers, GPU labels.
// Every function is linear in its input and never throws.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpupeer::tool_output {

/// Most fields read from one line; the rest of a longer line is ignored (a 64 KiB line of
/// single characters would otherwise make 32 K fields).
inline constexpr std::size_t kMaxFields = 512;
/// Most GPUs (matrix rows, ranks) a parser keeps; tables beyond are cut, with a note.
inline constexpr int kMaxDevices = 256;

/// Fields separated by spaces and tabs, at most kMaxFields.
std::vector<std::string_view> splitFields(std::string_view line);
/// splitFields into `out` (cleared first), reusing its storage: for parsers that split many
/// lines.
void splitFieldsInto(std::string_view line, std::vector<std::string_view>& out);
/// splitFields(line)[0] without splitting the rest ("" for a blank line): lets a parser skip a
/// line whose first field rules it out.
std::string_view firstField(std::string_view line);

/// A non-negative decimal integer that is the whole of `text` (at most 18 digits).
std::optional<long long> parseCount(std::string_view text);
/// A decimal number ("12.5", "3", "1e-07") that is the whole of `text`.
std::optional<double> parseNumber(std::string_view text);

/// "GPU12" -> 12 (prefix given, digits after it, the whole field).
std::optional<int> parseIndexed(std::string_view field, std::string_view prefix);

bool startsWith(std::string_view s, std::string_view prefix);
std::string_view trim(std::string_view s);

/// "GPU0-GPU1, GPU2-GPU3" style lists cut to `max` items with "and N more".
std::string joinLimited(const std::vector<std::string>& items, std::size_t max);

/// Bytes as nccl-tests sizes read: "8 B", "64 KiB", "1 GiB".
std::string sizeText(long long bytes);

}  // namespace gpupeer::tool_output
