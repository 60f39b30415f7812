// Matching logs against the whole KB at once. One RE2::Set holds every entry's regex, so each
// line is scanned once by one automaton: time is linear in the input whatever the patterns
// (no backtracking, so `(a+)+$` is harmless), and memory is one line piece plus RE2's caches.
#include <fmt/format.h>
#include <re2/set.h>

#include <algorithm>
#include <sstream>

#include "gpupeer/kb.hpp"
#include "kb_regex.hpp"
#include "log_lines.hpp"

namespace gpupeer {

struct KbMatcher::Impl {
  const KnowledgeBase* kb = nullptr;
  std::unique_ptr<RE2::Set> set;  // nullptr when the KB is empty
  // One RE2 per entry, used only for a line on which the set's DFA ran out of memory (RE2::Set
  // has no slower fallback of its own; RE2 alone falls back to its linear-time NFA).
  std::vector<std::unique_ptr<RE2>> single;

  void matchIndices(std::string_view line, std::vector<int>& out) const {
    out.clear();
    if (!set) return;
    RE2::Set::ErrorInfo info{};
    if (set->Match(line, &out, &info)) {
      std::sort(out.begin(), out.end());  // the set reports matches in no particular order
      return;
    }
    if (info.kind != RE2::Set::kOutOfMemory) return;  // kNoError: nothing matched
    out.clear();
    for (std::size_t i = 0; i < single.size(); ++i)
      if (RE2::PartialMatch(line, *single[i])) out.push_back(static_cast<int>(i));
  }
};

KbMatcher::KbMatcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KbMatcher::KbMatcher(KbMatcher&&) noexcept = default;
KbMatcher& KbMatcher::operator=(KbMatcher&&) noexcept = default;
KbMatcher::~KbMatcher() = default;

Result<KbMatcher> KbMatcher::build(const KnowledgeBase& kb, const std::vector<std::string>& extraPatterns) {
  auto impl = std::make_unique<Impl>();
  impl->kb = &kb;
  if (kb.size() == 0 && extraPatterns.empty()) return KbMatcher(std::move(impl));
  RE2::Options options = kb_detail::kbRegexOptions();
  // The set's DFA gets 2/3 of this. 64 MiB keeps a few hundred entries with ".*" alternations
  // from exhausting it on ordinary lines; when it still does, matchIndices falls back.
  options.set_max_mem(64 << 20);
  impl->set = std::make_unique<RE2::Set>(options, RE2::UNANCHORED);
  for (const KbEntry& e : kb.entries()) {
    std::string error;
    if (impl->set->Add(e.regex, &error) < 0)
      return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("regex of '{}' does not compile: {}", e.id, error));
    impl->single.push_back(std::make_unique<RE2>(e.regex, kb_detail::kbRegexOptions()));
  }
  // Indices past the KB's entries are the extra patterns.
  for (const std::string& extra : extraPatterns) {
    std::string error;
    if (impl->set->Add(extra, &error) < 0)
      return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("extra pattern '{}' does not compile: {}", extra, error));
    impl->single.push_back(std::make_unique<RE2>(extra, kb_detail::kbRegexOptions()));
  }
  if (!impl->set->Compile())
    return GPUPEER_ERROR(ErrorCode::kInternal, "RE2 could not compile the KB's regex set (out of memory)");
  return KbMatcher(std::move(impl));
}

std::vector<const KbEntry*> KbMatcher::matchLine(std::string_view line) const {
  std::vector<int> indices;
  impl_->matchIndices(line, indices);
  std::vector<const KbEntry*> out;
  for (int i : indices)
    if (static_cast<std::size_t>(i) < impl_->kb->size()) out.push_back(&impl_->kb->entries()[i]);
  return out;
}

bool kbMatchRanksBefore(const KbMatch& a, const KbMatch& b) {
  if (a.entry->wrapper != b.entry->wrapper) return !a.entry->wrapper;
  if (a.entry->regex.size() != b.entry->regex.size()) return a.entry->regex.size() > b.entry->regex.size();
  if (a.firstLine != b.firstLine) return a.firstLine < b.firstLine;
  return a.entry->id < b.entry->id;
}

Result<KbScan> KbMatcher::scan(std::istream& in) const { return scan(in, LineObserver{}); }

Result<KbScan> KbMatcher::scan(std::istream& in, const LineObserver& onLine) const {
  const std::vector<KbEntry>& entries = impl_->kb->entries();
  std::vector<KbMatch> found(entries.size());
  std::vector<std::uint64_t> lastCounted(entries.size(), 0);  // line numbers start at 1
  kb_detail::LogLineReader reader(in);
  std::string piece, line;
  std::vector<int> indices;
  std::uint64_t lineNumber = 0;
  while (reader.next(piece, lineNumber)) {
    kb_detail::normaliseLogLineInto(piece, line);
    impl_->matchIndices(line, indices);
    // Indices are sorted: the extra patterns, past the entries, come last.
    bool extraMatched = !indices.empty() && static_cast<std::size_t>(indices.back()) >= entries.size();
    if (onLine) onLine(line, lineNumber, extraMatched);
    for (int i : indices) {
      if (static_cast<std::size_t>(i) >= entries.size()) break;
      KbMatch& m = found[i];
      if (m.matchingLines == 0) {
        m.entry = &entries[i];
        m.firstLine = lineNumber;
        m.firstLineText = line;
      }
      if (lastCounted[i] != lineNumber) {  // pieces of one line count once
        lastCounted[i] = lineNumber;
        ++m.matchingLines;
      }
    }
  }
  if (reader.failed())
    return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("read error after {} lines", reader.linesRead()));
  KbScan scan;
  scan.linesRead = reader.linesRead();
  scan.bytesRead = reader.bytesRead();
  for (KbMatch& m : found)
    if (m.matchingLines > 0) scan.matches.push_back(std::move(m));
  std::sort(scan.matches.begin(), scan.matches.end(), kbMatchRanksBefore);
  return scan;
}

KbScan KbMatcher::scanText(std::string_view text) const { return scanText(text, LineObserver{}); }

KbScan KbMatcher::scanText(std::string_view text, const LineObserver& onLine) const {
  std::istringstream in{std::string(text)};
  Result<KbScan> scan = this->scan(in, onLine);
  return scan.isOk() ? std::move(scan).value() : KbScan{};  // a string stream does not fail
}

}  // namespace gpupeer
