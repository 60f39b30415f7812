#pragma once
/// \file kb_render.hpp
/// A scan's matches as text and JSON, as `explain` prints them.

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "gpupeer/kb_matcher.hpp"

namespace gpupeer {

/// Human-readable report of the first `top` matches (0 = all): per match the id, the line,
/// root cause, "Do not try:" dead ends with fail rates, "Try:" workarounds by success rate
/// with their exact commands, and the related ids of the transition graph.
std::string renderKbScanText(const KbScan& scan, std::size_t top);

/// The same as JSON text ({"linesRead":…, "totalMatches":…, "matches":[…]}), for scripts.
std::string kbScanToJson(const KbScan& scan, std::size_t top);
/// The same as a JSON value, for callers that add their own keys before printing.
nlohmann::ordered_json kbScanToJsonValue(const KbScan& scan, std::size_t top);

}  // namespace gpupeer
