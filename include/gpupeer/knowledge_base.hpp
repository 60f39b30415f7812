#pragma once
/// \file knowledge_base.hpp
/// The knowledge base of known failures: the entry model, entries parsed from JSON (the flat
/// "seed" schema of kb/ and the nested "canon" schema of deadends.dev) and the loaded set.

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
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
  /// defaultDirectories() that exist. Each that does not (a stale GPUPEER_KB_PATH entry) adds
  /// a warning to `skipped`, which the caller shows as it shows warnings.
  static std::vector<std::string> existingDefaultDirectories(std::vector<std::string>* skipped);

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

}  // namespace gpupeer
