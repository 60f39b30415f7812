#pragma once
// What the doctor prints from a finding's KB entry.

#include <string>

namespace gpupeer::cli {

struct KbAdvice {
  bool found = false;
  std::string firstWorkaround;  ///< the best-rated workaround's command, "" if none
};

/// Looks the id up in the built-in knowledge base (and GPUPEER_KB_PATH).
KbAdvice kbAdviceFor(const std::string& kbId);

}  // namespace gpupeer::cli
