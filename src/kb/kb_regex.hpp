#pragma once
// RE2 settings shared by the loader (which rejects what the matcher could not use) and the
// matcher, so that a regex accepted at load time always compiles into the matcher's set.
#include <re2/re2.h>

#include <cstddef>

namespace gpupeer::kb_detail {

/// Longest KB regex taken, in bytes (the longest in kb/ is about 500).
inline constexpr std::size_t kMaxKbRegexBytes = 4096;
/// Largest compiled KB regex taken, in RE2 instructions (the largest in kb/ is about 2,500).
/// Where RE2's DFA gives up (`(?s).{1,1000}x`, 8,004 instructions), it matches a line in time
/// proportional to this size times the line's length; the cap keeps that product bounded.
inline constexpr int kMaxKbRegexProgram = 4000;

inline RE2::Options kbRegexOptions() {
  RE2::Options o;
  o.set_log_errors(false);  // errors are returned to the caller, not printed by RE2
  o.set_encoding(RE2::Options::EncodingUTF8);
  return o;
}

}  // namespace gpupeer::kb_detail
