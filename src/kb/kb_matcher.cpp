// Matching logs against the whole KB at once. Each pattern's required literals (see
// regex_literals.hpp) go into one LiteralScan; a line is scanned once for all of them, and only
// the patterns whose literal it holds (a few of 140, on most lines none) run their own RE2 on
// it. Every step is linear in the line: a literal scan, then at most one linear-time RE2 search
// per pattern (no backtracking, so `(a+)+$` is harmless); memory is a few batches of lines
// (line_batches.hpp) plus RE2's caches. One RE2::Set DFA over all patterns cost 2.5-3 ns a
// byte on ordinary log lines (its states spill out of the CPU caches); the literal scan costs
// about 1.
#include "gpupeer/kb_matcher.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "kb_regex.hpp"
#include "line_batches.hpp"
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
    std::vector<int> indices;     // matchBatch: one line's matches
    std::string normalised;       // matchBatch: one line normalised
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

  void matchBatch(kb_detail::LineBatch& batch, Scratch& s) const;
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

namespace {

// What scan() keeps of the lines it has consumed, in order: each entry's first line and count.
struct ScanTally {
  const std::vector<KbEntry>& entries;
  const KbMatcher::LineObserver& onLine;
  std::vector<KbMatch> found;
  std::vector<std::uint64_t> lastCounted;  // line numbers start at 1
  std::vector<int> extras;

  ScanTally(const std::vector<KbEntry>& e, const KbMatcher::LineObserver& observer)
      : entries(e), onLine(observer), found(e.size()), lastCounted(e.size(), 0) {}

  void consume(const kb_detail::LineBatch& batch) {
    for (const kb_detail::LineBatch::Line& l : batch.lines) {
      std::string_view line = batch.view(l);
      std::span<const int> indices(batch.indices.data() + l.firstIndex, l.endIndex - l.firstIndex);
      if (onLine) {
        // Indices are sorted: the extra patterns, past the entries, come last.
        extras.clear();
        for (auto i = indices.rbegin(); i != indices.rend() && static_cast<std::size_t>(*i) >= entries.size(); ++i)
          extras.push_back(*i - static_cast<int>(entries.size()));
        std::reverse(extras.begin(), extras.end());
        onLine(line, l.number, extras);
      }
      for (int i : indices) {
        if (static_cast<std::size_t>(i) >= entries.size()) break;
        KbMatch& m = found[i];
        if (m.matchingLines == 0) {
          m.entry = &entries[i];
          m.firstLine = l.number;
          m.firstLineText = line;
        }
        if (lastCounted[i] != l.number) {  // pieces of one line count once
          lastCounted[i] = l.number;
          ++m.matchingLines;
        }
      }
    }
  }
};

// One core is left to the calling thread, which reads and consumes: about 40% of the work on
// a benign log (reading, the tool-output parsers), so it is the bound beyond 2-3 workers. Even
// on 2 cores one worker pays: 230 -> 370 MB/s on a 2-core VM (2026-11-25).
unsigned defaultMatchThreads() {
  unsigned cores = std::thread::hardware_concurrency();  // 0 when unknown
  return cores <= 1 ? 0 : std::min(4u, cores - 1);
}

}  // namespace

// Matches every line of a batch: normalised in place first where it holds an escape sequence
// or ends in '\r' (most lines do neither and are matched as read).
void KbMatcher::Impl::matchBatch(kb_detail::LineBatch& batch, Scratch& s) const {
  batch.indices.clear();
  for (kb_detail::LineBatch::Line& l : batch.lines) {
    std::string_view line = batch.view(l);
    if (line.find('\x1b') != std::string_view::npos || (!line.empty() && line.back() == '\r')) {
      kb_detail::normaliseLogLineInto(line, s.normalised);  // never longer than the line
      batch.text.replace(l.offset, s.normalised.size(), s.normalised);
      l.size = s.normalised.size();
      line = batch.view(l);
    }
    matchIndices(line, s.indices, s);
    l.firstIndex = batch.indices.size();
    batch.indices.insert(batch.indices.end(), s.indices.begin(), s.indices.end());
    l.endIndex = batch.indices.size();
  }
}

Result<KbScan> KbMatcher::scan(std::istream& in, const LineObserver& onLine, const KbScanOptions& options) const {
  ScanTally tally(impl_->kb->entries(), onLine);
  kb_detail::LogLineReader reader(in);
  std::string piece;
  bool failed = false;  // a batch's matching threw (out of memory)
  auto first = std::make_unique<kb_detail::LineBatch>();
  bool more = readLineBatch(reader, *first, options.batchBytes, piece);
  unsigned threads = more ? options.matchThreads.value_or(defaultMatchThreads()) : 0;
  std::vector<Impl::Scratch> scratch;
  for (unsigned w = 0; w < std::max(threads, 1u); ++w) scratch.push_back(impl_->scratch());
  // Worker threads match batches while this thread reads the next ones and consumes the
  // matched ones in the order read.
  std::optional<kb_detail::OrderedBatchPool> pool;
  if (threads > 0)
    pool.emplace(threads, 2 * threads,
                 [this, &scratch](kb_detail::LineBatch& b, unsigned w) { impl_->matchBatch(b, scratch[w]); });
  if (!pool || pool->started() == 0) {  // all on this thread
    for (;;) {
      impl_->matchBatch(*first, scratch[0]);
      tally.consume(*first);
      if (!more) break;
      first->clear();
      more = readLineBatch(reader, *first, options.batchBytes, piece);
    }
  } else {
    pool->submit(std::move(first));
    while (more || !pool->empty()) {
      if (more && !pool->full()) {
        std::unique_ptr<kb_detail::LineBatch> batch = pool->spare();
        more = readLineBatch(reader, *batch, options.batchBytes, piece);
        pool->submit(std::move(batch));
        continue;
      }
      std::unique_ptr<kb_detail::LineBatch> batch = pool->takeOldest();
      failed = failed || batch->failed;
      if (failed)
        more = false;  // read no further; take the rest back
      else
        tally.consume(*batch);
      pool->recycle(std::move(batch));
    }
  }
  if (failed) return GPUPEER_ERROR(ErrorCode::kSystem, "out of memory while matching log lines");
  if (reader.failed())
    return GPUPEER_ERROR(ErrorCode::kSystem, fmt::format("read error after {} lines", reader.linesRead()));
  KbScan scan;
  scan.linesRead = reader.linesRead();
  scan.bytesRead = reader.bytesRead();
  for (KbMatch& m : tally.found)
    if (m.matchingLines > 0) scan.matches.push_back(std::move(m));
  std::sort(scan.matches.begin(), scan.matches.end(), kbMatchRanksBefore);
  return scan;
}

KbScan KbMatcher::scanText(std::string_view text) const { return scanText(text, LineObserver{}); }

KbScan KbMatcher::scanText(std::string_view text, const LineObserver& onLine) const {
  std::istringstream in{std::string(text)};
  KbScanOptions onThisThread;
  onThisThread.matchThreads = 0;
  Result<KbScan> scan = this->scan(in, onLine, onThisThread);
  return scan.isOk() ? std::move(scan).value() : KbScan{};  // a string stream does not fail
}

}  // namespace gpupeer
