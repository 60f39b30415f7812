#pragma once
// A one-line explain input read as a query rather than a log line: a KB id, an error name or
// an error number. Finds the entries that carry it and ranks them with the regex matches.

#include <optional>
#include <string_view>
#include <vector>

#include "gpupeer/api_error_code.hpp"
#include "gpupeer/kb_matcher.hpp"
#include "gpupeer/knowledge_base.hpp"

namespace gpupeer::explain_detail {

/// What a query found: the codes the text was read as, and the entries found by id or by the
/// error code they carry (KbMatch::matchedBy says which), unranked.
struct QueryLookup {
  struct Found {
    KbMatch match;
    std::optional<ApiErrorCode> code;  ///< the reading that found it; unset when found by id
  };
  std::vector<ApiErrorCode> readings;
  std::vector<Found> matches;
};

/// Reads `line` (one normalised line, the whole input) as a KB id or error codes and finds the
/// entries of `kb` that it names.
QueryLookup lookUpQuery(const KnowledgeBase& kb, std::string_view line);

/// Adds the lookup's matches to `scan` (an entry its regex matched too keeps the regex match)
/// and ranks them all: wrappers last, as for logs; then the entry named by its id; then the
/// entry gpupeer's own errors cite for the code (kbIdForApiError); then entries that carry the
/// code before those only their regex found; then entries of the code's own domain (cuda, nccl;
/// driver for NVML); then higher confidence; then id.
void mergeQueryMatches(KbScan& scan, QueryLookup lookup);

}  // namespace gpupeer::explain_detail
