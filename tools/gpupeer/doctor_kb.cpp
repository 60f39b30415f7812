#include "doctor_kb.hpp"

#include "gpupeer/kb.hpp"

namespace gpupeer::cli {

KbAdvice kbAdviceFor(const std::string& kbId) {
  KbAdvice advice;
  if (kbId.empty()) return advice;
  const KbEntry* entry = builtinKnowledgeBase().find(kbId);
  if (!entry) return advice;
  advice.found = true;
  advice.firstWorkaround = firstWorkaround(*entry);
  return advice;
}

}  // namespace gpupeer::cli
