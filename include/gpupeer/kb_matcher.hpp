#pragma once
/// \file kb_matcher.hpp
/// Matching logs against the knowledge base: a linear-time matcher that streams logs of any
/// size line by line, and the ranking of the entries that matched.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpupeer/knowledge_base.hpp"
#include "gpupeer/status.hpp"

namespace gpupeer {

/// Longest piece of one line the matcher looks at; longer lines are cut into pieces of this
/// size, each matched on its own; each piece after the first repeats the last 4 KiB of the one
/// before, so a message of up to 4 KiB that spans a cut is still matched.
inline constexpr std::size_t kKbMaxLinePiece = 64 * 1024;

/// A log line as the matcher sees it: ANSI escape sequences (CSI such as "\x1b[31m", OSC,
/// two-byte escapes) removed and trailing '\r' removed.
std::string normaliseLogLine(std::string_view line);

/// One entry that matched the log.
struct KbMatch {
  const KbEntry* entry = nullptr;
  std::uint64_t firstLine = 0;      ///< 1-based number of the first matching line
  std::string firstLineText;        ///< that line (or 64 KiB piece of it), normalised
  std::uint64_t matchingLines = 0;  ///< lines (pieces) that matched this entry
  /// How a one-line query found the entry when its regex did not: "its id", or the error code
  /// it carries ("cudaErrorPeerAccessUnsupported (cudaError_t 217)"); "" for a regex match.
  std::string matchedBy;
};

/// The outcome of scanning a log: ranked matches and how much was read.
struct KbScan {
  std::vector<KbMatch> matches;  ///< ranked: best explanation first
  std::uint64_t linesRead = 0;
  std::uint64_t bytesRead = 0;
};

/// Ranking order: entries not tagged "wrapper" first, then the longer (more specific) regex,
/// then the earlier first matching line, then id.
bool kbMatchRanksBefore(const KbMatch& a, const KbMatch& b);

/// How KbMatcher::scan spreads its work over threads. The calling thread always reads the log
/// and hands the lines to the observer, in order; worker threads match batches of lines (the
/// literal scan and RE2) meanwhile. The result and the observer's calls are the same whatever
/// the options.
struct KbScanOptions {
  /// Worker threads that match lines. Unset: min(4, cores - 1). 0: all on the calling thread.
  std::optional<unsigned> matchThreads;
  /// Bytes of lines per batch; at most 2 batches per worker are in flight (memory stays
  /// bounded). A log shorter than one batch is matched on the calling thread.
  std::size_t batchBytes = std::size_t{1} << 20;
};

/// Matches log lines against every entry of a KnowledgeBase at once (one scan of each line for
/// the entries' required literals, then RE2 for the entries whose literal it holds: time linear
/// in the input, memory bounded by a few batches of lines: see KbScanOptions). Keeps a pointer
/// to `kb`, which must outlive it. Const methods are safe to call from several threads.
class KbMatcher {
 public:
  /// Compiles every entry's regex and indexes their required literals; an error when RE2
  /// rejects a regex. `extraPatterns` (RE2 syntax) are matched in the same pass: scan() tells
  /// its line observer which of them matched the line, so another reader of the log needs no
  /// second pass.
  static Result<KbMatcher> build(const KnowledgeBase& kb, const std::vector<std::string>& extraPatterns = {});

  KbMatcher(KbMatcher&&) noexcept;             ///< takes the compiled set over
  KbMatcher& operator=(KbMatcher&&) noexcept;  ///< takes the compiled set over
  ~KbMatcher();                                ///< frees the compiled set

  /// Entries whose regex matches one already-normalised line, in KB order.
  std::vector<const KbEntry*> matchLine(std::string_view line) const;

  /// Streams `in` line by line (holding a few batches of lines, see KbScanOptions) and ranks
  /// the entries that matched. An error only when the stream fails (not at end of input).
  Result<KbScan> scan(std::istream& in) const;
  /// Convenience for text already in memory (e.g. the `explain "text"` argument); matched on
  /// the calling thread.
  KbScan scanText(std::string_view text) const;

  /// Sees every line (or 64 KiB piece) the matcher reads, normalised, with its 1-based number;
  /// lets other readers (the tool-output parsers) share one pass over a streamed log.
  /// `extraMatched`: indices into build()'s `extraPatterns` of those that match the line,
  /// ascending (valid during the call only).
  using LineObserver =
      std::function<void(std::string_view line, std::uint64_t lineNumber, std::span<const int> extraMatched)>;
  /// scan() that also hands each line to `onLine` (may be empty), on the calling thread, in
  /// order.
  Result<KbScan> scan(std::istream& in, const LineObserver& onLine, const KbScanOptions& options = {}) const;
  KbScan scanText(std::string_view text, const LineObserver& onLine) const;

 private:
  struct Impl;
  explicit KbMatcher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpupeer
