// Matching logs against the whole KB at once. Each pattern's required literals (see
// regex_literals.hpp) go into one LiteralScan; a line is scanned once for all of them, and only
// the patterns whose literal it holds (a few of 140, on most lines none) run their own RE2 on
// it. Every step is linear in the line: a literal scan, then at most one linear-time RE2 search
// per pattern (no backtracking, so `(a+)+$` is harmless); memory is one line piece plus RE2's
// caches. One RE2::Set DFA over all patterns cost 2.5-3 ns a byte on ordinary log lines (its
// states spill out of the CPU caches); the literal scan costs about 1.
#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "gpupeer/kb.hpp"
#include "kb_regex.hpp"
#include "literal_scan.hpp"
#include "log_lines.hpp"
#include "regex_literals.hpp"

namespace gpupeer {

namespace {

// Whether `text` holds `needle`: a plain loop, quicker than find() or memmem for the 2-byte
// needles it gets (their setup costs more than the search through one log line).
bool contains(std::string_view text, std::string_view needle) {
  if (needle.size() > text.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= text.size(); ++i)
    if (text[i] == needle[0] && text.compare(i, needle.size(), needle) == 0) return true;
  return false;
}

}  // namespace

struct KbMatcher::Impl {
  const KnowledgeBase* kb = nullptr;
  std::vector<std::unique_ptr<RE2>> regexes;  // the entries' then the extra patterns
  std::vector<std::string> plain;             // non-empty: the pattern is this literal
  std::vector<int> always;                    // patterns without a required literal
  // One gate per top-level branch of a pattern: the scan finds one of the literals that open
  // it, then the line must hold all of its other required literals before the regex runs.
  struct Gate {
    int pattern;
    std::vector<int> scannedAllOf;        // literal ids (the scan reports them too)
    std::vector<std::string> shortAllOf;  // too short to scan for: searched in the line
  };
  std::vector<Gate> gates;
  kb_detail::LiteralScan literals;      // owners are literal ids
  std::vector<std::vector<int>> opens;  // literal id -> gates it opens
  std::unordered_map<std::string, int> literalIds;

  int literalId(const std::string& literal) {
    auto [it, fresh] = literalIds.try_emplace(literal, static_cast<int>(opens.size()));
    if (fresh) {
      literals.add(literal, it->second);
      opens.emplace_back();
    }
    return it->second;
  }

  Status add(const std::string& pattern, const std::string& what) {
    auto re = std::make_unique<RE2>(pattern, kb_detail::kbRegexOptions());
    if (!re->ok()) return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("{} does not compile: {}", what, re->error()));
    int index = static_cast<int>(regexes.size());
    regexes.push_back(std::move(re));
    plain.push_back(kb_detail::plainLiteral(pattern).value_or(""));
    std::optional<std::vector<kb_detail::RequiredLiterals>> required = kb_detail::requiredLiterals(pattern);
    if (!required) {
      always.push_back(index);
      return Status::ok();
    }
    for (const kb_detail::RequiredLiterals& branch : *required) {
      Gate gate{index, {}, {}};
      for (const std::string& literal : branch.allOf) {
        if (literal.size() >= kb_detail::kMinRequiredLiteral)
          gate.scannedAllOf.push_back(literalId(literal));
        else
          gate.shortAllOf.push_back(literal);
      }
      for (const std::string& literal : branch.anyOf)
        opens[literalId(literal)].push_back(static_cast<int>(gates.size()));
      gates.push_back(std::move(gate));
    }
    return Status::ok();
  }

  // Buffers a scan reuses from line to line.
  struct Scratch {
    std::string lowered;
    std::vector<int> found;             // literal ids the line holds
    std::vector<std::uint64_t> seenAt;  // per literal id: the last line (count) that held it
    std::uint64_t line = 0;
    std::vector<int> candidates;  // patterns to run
  };
  Scratch scratch() const {
    Scratch s;
    s.seenAt.assign(opens.size(), 0);
    return s;
  }

  void matchIndices(std::string_view line, std::vector<int>& out, Scratch& s) const {
    out.clear();
    s.found.clear();
    ++s.line;
    kb_detail::lowerAsciiInto(line, s.lowered);
    std::string_view lowered = s.lowered;
    literals.scan(lowered, s.found);
    for (int id : s.found) s.seenAt[id] = s.line;
    s.candidates.assign(always.begin(), always.end());
    for (int id : s.found)
      for (int g : opens[id]) {
        const Gate& gate = gates[g];
        bool holds = std::all_of(gate.scannedAllOf.begin(), gate.scannedAllOf.end(),
                                 [&s](int other) { return s.seenAt[other] == s.line; }) &&
                     std::all_of(gate.shortAllOf.begin(), gate.shortAllOf.end(),
                                 [lowered](const std::string& literal) { return contains(lowered, literal); });
        if (holds) s.candidates.push_back(gate.pattern);
      }
    if (s.candidates.empty()) return;
    std::sort(s.candidates.begin(), s.candidates.end());
    s.candidates.erase(std::unique(s.candidates.begin(), s.candidates.end()), s.candidates.end());
    for (int i : s.candidates) {
      bool hit =
          plain[i].empty() ? RE2::PartialMatch(line, *regexes[i]) : line.find(plain[i]) != std::string_view::npos;
      if (hit) out.push_back(i);
    }
  }
};

KbMatcher::KbMatcher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KbMatcher::KbMatcher(KbMatcher&&) noexcept = default;
KbMatcher& KbMatcher::operator=(KbMatcher&&) noexcept = default;
KbMatcher::~KbMatcher() = default;

Result<KbMatcher> KbMatcher::build(const KnowledgeBase& kb, const std::vector<std::string>& extraPatterns) {
  auto impl = std::make_unique<Impl>();
  impl->kb = &kb;
  for (const KbEntry& e : kb.entries()) GPUPEER_RETURN_IF_ERROR(impl->add(e.regex, fmt::format("regex of '{}'", e.id)));
  // Indices past the KB's entries are the extra patterns.
  for (const std::string& extra : extraPatterns)
    GPUPEER_RETURN_IF_ERROR(impl->add(extra, fmt::format("extra pattern '{}'", extra)));
  return KbMatcher(std::move(impl));
}

std::vector<const KbEntry*> KbMatcher::matchLine(std::string_view line) const {
  std::vector<int> indices;
  Impl::Scratch scratch = impl_->scratch();
  impl_->matchIndices(line, indices, scratch);
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
  std::string piece, normalised;
  std::vector<int> indices, extras;
  Impl::Scratch scratch = impl_->scratch();
  std::uint64_t lineNumber = 0;
  while (reader.next(piece, lineNumber)) {
    // Most lines hold no escape sequence and end without '\r': matched as read, not copied.
    std::string_view line = piece;
    if (piece.find('\x1b') != std::string::npos || (!piece.empty() && piece.back() == '\r')) {
      kb_detail::normaliseLogLineInto(piece, normalised);
      line = normalised;
    }
    impl_->matchIndices(line, indices, scratch);
    if (onLine) {
      // Indices are sorted: the extra patterns, past the entries, come last.
      extras.clear();
      for (auto i = indices.rbegin(); i != indices.rend() && static_cast<std::size_t>(*i) >= entries.size(); ++i)
        extras.push_back(*i - static_cast<int>(entries.size()));
      std::reverse(extras.begin(), extras.end());
      onLine(line, lineNumber, extras);
    }
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
