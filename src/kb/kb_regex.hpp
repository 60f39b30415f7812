#pragma once
// RE2 settings shared by the loader (which rejects what the matcher could not use) and the
// matcher, so that a regex accepted at load time always compiles into the matcher's set.
#include <re2/re2.h>

namespace gpupeer::kb_detail {

inline RE2::Options kbRegexOptions() {
  RE2::Options o;
  o.set_log_errors(false);  // errors are returned to the caller, not printed by RE2
  o.set_encoding(RE2::Options::EncodingUTF8);
  return o;
}

}  // namespace gpupeer::kb_detail
