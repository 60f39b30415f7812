// KnowledgeBase: entries with unique ids whose regexes compile, and the small helpers other
// code (doctor, explain) uses to present an entry.
#include "gpupeer/knowledge_base.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kb_regex.hpp"

namespace gpupeer {

Status KnowledgeBase::add(KbEntry entry) {
  if (entry.id.empty()) return GPUPEER_ERROR(ErrorCode::kInvalidArgument, "entry has no id");
  if (indexById_.count(entry.id)) {
    const KbEntry& first = entries_[indexById_.at(entry.id)];
    return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                         fmt::format("duplicate id '{}' (already loaded from {})", entry.id,
                                     first.sourceFile.empty() ? "code" : first.sourceFile));
  }
  // Bounded before compiling: a regex of 150,000 alternatives took a minute in the literal scan.
  if (entry.regex.size() > kb_detail::kMaxKbRegexBytes)
    return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("regex of '{}' is {} bytes long; at most {} are taken",
                                                        entry.id, entry.regex.size(), kb_detail::kMaxKbRegexBytes));
  RE2 re(entry.regex, kb_detail::kbRegexOptions());
  if (!re.ok())
    return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("regex of '{}' does not compile with RE2: {} (regex: {})",
                                                        entry.id, re.error(), entry.regex));
  if (re.ProgramSize() > kb_detail::kMaxKbRegexProgram)
    return GPUPEER_ERROR(ErrorCode::kParse,
                         fmt::format("regex of '{}' compiles to {} RE2 instructions (at most {}): its repeats or "
                                     "alternatives are too large to match long lines in bounded time (regex: {})",
                                     entry.id, re.ProgramSize(), kb_detail::kMaxKbRegexProgram, entry.regex));
  // A regex that matches an empty line would match every line of every log.
  if (RE2::PartialMatch("", re))
    return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("regex of '{}' matches an empty line, so it would match "
                                                        "every line (regex: {})",
                                                        entry.id, entry.regex));
  indexById_.emplace(entry.id, entries_.size());
  entries_.push_back(std::move(entry));
  return Status::ok();
}

const KbEntry* KnowledgeBase::find(std::string_view id) const {
  auto it = indexById_.find(std::string(id));
  return it == indexById_.end() ? nullptr : &entries_[it->second];
}

std::vector<const KbWorkaround*> workaroundsBySuccess(const KbEntry& entry) {
  std::vector<const KbWorkaround*> out;
  for (const KbWorkaround& w : entry.workarounds) out.push_back(&w);
  std::stable_sort(out.begin(), out.end(),
                   [](const KbWorkaround* a, const KbWorkaround* b) { return a->successRate > b->successRate; });
  return out;
}

std::string firstWorkaround(const KbEntry& entry) {
  std::vector<const KbWorkaround*> sorted = workaroundsBySuccess(entry);
  if (sorted.empty()) return {};
  return sorted.front()->how.empty() ? sorted.front()->action : sorted.front()->how;
}

}  // namespace gpupeer
