// A one-line explain input read as a KB id or an error code. People paste what an earlier
// answer or a log gave them: "driver/cuda-driver-too-old", "cudaErrorPeerAccessUnsupported",
// "CUDA error 217", "NCCL error 2". Only a whole input of one line is read this way, so logs
// are matched by the entries' regexes alone (no number in a log line is taken for a code).
#include "query_lookup.hpp"

#include <re2/re2.h>

#include <algorithm>
#include <unordered_map>

#include "gpupeer/error_kb.hpp"

namespace gpupeer::explain_detail {
namespace {

std::string_view domainOf(ApiErrorFamily family) {
  switch (family) {
    case ApiErrorFamily::kNccl: return "nccl";
    case ApiErrorFamily::kNvml: return "driver";  // NVML's failures are the driver's: its entries live under driver/
    case ApiErrorFamily::kCuda: break;
  }
  return "cuda";
}

// Where a match stands among a query's matches; smaller ranks first.
struct QueryRank {
  bool wrapper = false;
  bool notById = true;
  bool notCited = true;
  bool notByCode = true;
  bool otherDomain = true;
  double confidence = 0;

  auto key() const { return std::make_tuple(wrapper, notById, notCited, notByCode, otherDomain, -confidence); }
};

}  // namespace

QueryLookup lookUpQuery(const KnowledgeBase& kb, std::string_view line) {
  static const RE2 kKbId(R"(\s*([a-z]+/[a-z0-9][a-z0-9-]*)\s*)");
  QueryLookup out;
  std::string id;
  if (RE2::FullMatch(re2::StringPiece(line.data(), line.size()), kKbId, &id)) {
    if (const KbEntry* e = kb.find(id)) out.matches.push_back({{e, 1, std::string(line), 1, "its id"}, std::nullopt});
    return out;
  }
  out.readings = readApiErrorCodes(line);
  if (out.readings.empty()) return out;
  for (const KbEntry& e : kb.entries())
    for (const ApiErrorCode& carried : apiErrorCodesCarried(e.errorCode)) {
      auto reading = std::find_if(out.readings.begin(), out.readings.end(),
                                  [&carried](const ApiErrorCode& r) { return sameApiError(r, carried); });
      if (reading == out.readings.end()) continue;
      out.matches.push_back({{&e, 1, std::string(line), 1, "error code " + describeApiError(*reading)}, *reading});
      break;
    }
  return out;
}

void mergeQueryMatches(KbScan& scan, QueryLookup lookup) {
  if (lookup.matches.empty()) return;
  std::unordered_map<const KbEntry*, QueryRank> ranks;
  for (const KbMatch& m : scan.matches)
    ranks[m.entry] = {m.entry->wrapper, true, true, true, true, m.entry->confidence};
  for (QueryLookup::Found& f : lookup.matches) {
    const KbEntry* e = f.match.entry;
    bool byRegex = ranks.contains(e);
    QueryRank& r = ranks[e];
    r.wrapper = e->wrapper;
    r.confidence = e->confidence;
    if (!f.code) {
      r.notById = false;
    } else {
      r.notByCode = false;
      r.notCited = kbIdForApiError(f.code->name) != e->id;
      r.otherDomain = e->domain != domainOf(f.code->family);
    }
    if (!byRegex) scan.matches.push_back(std::move(f.match));
  }
  std::stable_sort(scan.matches.begin(), scan.matches.end(), [&ranks](const KbMatch& a, const KbMatch& b) {
    auto ka = ranks[a.entry].key(), kb = ranks[b.entry].key();
    return ka != kb ? ka < kb : a.entry->id < b.entry->id;
  });
}

}  // namespace gpupeer::explain_detail
