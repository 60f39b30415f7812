#pragma once
/// \file kb.hpp
/// The knowledge base of known failures: entries loaded from JSON files (the flat "seed"
/// schema of kb/ and the nested "canon" schema of deadends.dev), a linear-time matcher that
/// streams logs of any size line by line, ranking, and text/JSON rendering for `explain`.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpupeer/status.hpp"

namespace gpupeer {

/// Something users try that does not help for this cause.
struct KbDeadEnd {
  std::string action;                ///< may be empty in seed entries; whyFails then says it all
  std::string whyFails;              ///< why it does not help
  double failRate = 0;               ///< 0..1
  std::string condition;             ///< when this applies; empty = always
  std::vector<std::string> sources;  ///< where this was reported (URLs)
};

/// Something that fixes or works around the failure.
struct KbWorkaround {
  std::string action;                ///< what to do, in words
  std::string how;                   ///< the exact commands or code; may be empty
  double successRate = 0;            ///< 0..1
  std::string condition;             ///< when this applies; empty = always
  std::vector<std::string> sources;  ///< where this was reported (URLs)
};

/// An edge of the transition graph: another KB id with how likely / when.
struct KbTransition {
  std::string id;          ///< the other entry
  double probability = 0;  ///< 0 when the source gives none (confusions)
  std::string condition;   ///< canon "distinction" for confusions
};

/// One known failure. Field names follow the seed schema (snake_case there, camelCase here).
struct KbEntry {
  std::string id;                          ///< "cuda/peer-access-unsupported-by-hardware"
  std::string signature;                   ///< a typical message, verbatim
  std::string regex;                       ///< RE2 syntax, searched unanchored in each log line
  std::string domain;                      ///< "cuda", "nccl", "driver", "platform", ...
  std::string category;                    ///< a finer grouping within the domain
  std::string rootCause;                   ///< what is really wrong, in words
  std::string errorCode;                   ///< "cudaErrorPeerAccessUnsupported"; may be empty
  std::vector<KbDeadEnd> deadEnds;         ///< what not to try
  std::vector<KbWorkaround> workarounds;   ///< what to try, in file order
  std::vector<KbTransition> leadsTo;       ///< failures this one tends to cause next
  std::vector<KbTransition> precededBy;    ///< failures that tend to come before it
  std::vector<KbTransition> confusedWith;  ///< look-alikes, with how to tell them apart
  std::vector<std::string> tags;           ///< free labels ("wrapper" sets `wrapper`)
  double confidence = 0;                   ///< 0..1: how sure the entry is of its root cause
  double fixSuccessRate = 0;               ///< 0..1: share of reports the workarounds fixed
  std::string officialDocUrl;              ///< vendor documentation, when there is one
  std::string sourceFile;                  ///< the file it was loaded from ("" when built in code)
  /// Tagged "wrapper": a generic message that wraps the real cause ("unhandled cuda error").
  /// Ranked after every specific entry that matched the same log.
  bool wrapper = false;
};

/// The workarounds in the order `explain` lists them: highest success rate first, ties in
/// file order. Pointers into `entry`.
std::vector<const KbWorkaround*> workaroundsBySuccess(const KbEntry& entry);

/// What to run first for this entry: the `how` of the first workaround `explain` lists (its
/// `action` when it has no `how`); "" when the entry has no workaround. Used by `doctor`.
std::string firstWorkaround(const KbEntry& entry);

/// Parses one entry from JSON in either schema (canon when it has an "error" object).
/// Checks types and that id and regex are present; does not compile the regex.
Result<KbEntry> kbEntryFromJson(const nlohmann::json& doc, std::string sourceFile = {});

/// Parses one entry from JSON text: kParse for text that is not JSON (syntax, invalid UTF-8,
/// numbers out of range, nesting too deep) or not an entry. Never throws.
Result<KbEntry> kbEntryFromText(std::string_view text, std::string sourceFile = {});

/// A set of entries with unique ids, in load order. Immutable once loaded; safe to share
/// between threads.
class KnowledgeBase {
 public:
  KnowledgeBase() = default;  ///< empty

  /// Loads every *.json under each directory, recursively (schema.json is skipped), in sorted
  /// path order. A file that is not valid JSON, is not an entry, has a regex RE2 cannot
  /// compile, or repeats an id already loaded is skipped with a warning that names the file;
  /// warnings go to `warnings` when given. A directory that does not exist is an error naming it.
  static Result<KnowledgeBase> loadDirectories(const std::vector<std::string>& dirs,
                                               std::vector<std::string>* warnings);

  /// The built-in KB directory, the first that exists of: the source tree's kb/ only when the
  /// code runs from the build tree it was compiled in; then, relative to the file holding the
  /// code (the executable, or libgpupeer_c.so under Python), <dir>/kb beside a shared object
  /// (the installed Python package), <dir>/../share/gpupeer/kb (an install, relocated or not),
  /// <dir>/../kb (a build folder carried with its repository); the configured install dir.
  /// Followed by each directory of the colon-separated GPUPEER_KB_PATH.
  static std::vector<std::string> defaultDirectories();

  /// Adds an entry; an error if its id is taken or its regex does not compile.
  Status add(KbEntry entry);

  /// The entry with this id, or nullptr. Pointers into a KnowledgeBase stay valid until it
  /// is destroyed or added to (moving it keeps them valid).
  const KbEntry* find(std::string_view id) const;
  const std::vector<KbEntry>& entries() const { return entries_; }  ///< in load order
  std::size_t size() const { return entries_.size(); }              ///< number of entries

 private:
  std::vector<KbEntry> entries_;
  std::unordered_map<std::string, std::size_t> indexById_;
};

/// The KB of defaultDirectories(), loaded once on first use (thread-safe). Load warnings and
/// missing directories are logged with GPUPEER_WARN and skipped; never fails (may be empty).
const KnowledgeBase& builtinKnowledgeBase();

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

/// Human-readable report of the first `top` matches (0 = all): per match the id, the line,
/// root cause, "Do not try:" dead ends with fail rates, "Try:" workarounds by success rate
/// with their exact commands, and the related ids of the transition graph.
std::string renderKbScanText(const KbScan& scan, std::size_t top);

/// The same as JSON text ({"linesRead":…, "totalMatches":…, "matches":[…]}), for scripts.
std::string kbScanToJson(const KbScan& scan, std::size_t top);
/// The same as a JSON value, for callers that add their own keys before printing.
nlohmann::ordered_json kbScanToJsonValue(const KbScan& scan, std::size_t top);

/// Validates `instance` against a JSON Schema using the keywords type, required, properties,
/// items, enum, const, minimum, maximum, minItems, maxItems, minLength, maxLength, pattern
/// (RE2, unanchored), additionalProperties and local "$ref" ("#/definitions/…", "#/$defs/…").
/// Annotations ($schema, $id, title, description, …) are ignored; any other keyword is
/// reported as unsupported so that a constraint is never silently skipped.
/// Returns one message per violation ("/dead_ends/0/fail_rate: 1.5 is above maximum 1");
/// empty when valid.
std::vector<std::string> validateJsonSchema(const nlohmann::json& schema, const nlohmann::json& instance);

}  // namespace gpupeer
