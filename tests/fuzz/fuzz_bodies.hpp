#pragma once
// What each fuzz target does with one input, shared by the libFuzzer targets (fuzz_*.cpp) and
// the CPU test that replays the inputs kept under tests/data/fuzz/<target>/. Each body checks
// the invariants the callers rely on and aborts where one breaks, so the fuzzer reports it.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>

#include "core/cpulist.hpp"
#include "gpupeer/doctor.hpp"
#include "gpupeer/kb_matcher.hpp"
#include "gpupeer/knowledge_base.hpp"
#include "gpupeer/report.hpp"
#include "gpupeer/snapshot_json.hpp"
#include "gpupeer/topology.hpp"
#include "kb/log_lines.hpp"

namespace gpupeer::fuzz {

inline void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
    std::abort();
  }
}

/// Snapshot reader: any text gives a snapshot or an error; a snapshot read back from its own
/// JSON is the same snapshot; the analyses of `topo` and `doctor --snapshot` take any snapshot
/// the reader accepts.
inline void snapshotBody(std::string_view text) {
  Result<Snapshot> s = snapshotFromJson(text, "fuzz");
  if (!s.isOk()) {
    require(!s.status().message().empty(), "an error names its reason");
    return;
  }
  (void)renderTopology(s.value());
  (void)topologyToJson(s.value());
  (void)diagnose(s.value(), nullptr);
  std::string again = snapshotToJson(s.value());
  Result<Snapshot> back = snapshotFromJson(again, "again");
  require(back.isOk(), "a snapshot written by gpupeer reads back");
  require(snapshotToJson(back.value()) == again, "writing is stable across a round trip");
}

/// KB entry loader, either schema: text that parses as JSON gives an entry or an error, and an
/// entry is either added to a KB (its regex compiles) or refused with a reason.
inline void kbEntryBody(std::string_view text) {
  Result<KbEntry> entry = kbEntryFromText(text, "fuzz.json");
  if (!entry.isOk()) return;
  KnowledgeBase kb;
  Status added = kb.add(entry.value());
  if (!added.isOk()) return;
  Result<KbMatcher> matcher = KbMatcher::build(kb);
  require(matcher.isOk(), "an entry the KB accepts compiles into a matcher");
  (void)matcher.value().scanText(entry.value().signature);
}

/// Log line splitter: the first byte picks a piece size (2 to 65 bytes) so that the cuts are
/// reached; the pieces, without their repeated bytes, put back together give the input.
inline void logLinesBody(std::string_view data) {
  if (data.empty()) return;
  std::size_t pieceBytes = 2 + static_cast<unsigned char>(data[0]) % 64;
  std::size_t overlap = static_cast<unsigned char>(data[0]) / 64;  // 0 to 3
  std::istringstream in{std::string(data.substr(1))};
  kb_detail::LogLineReader reader(in, pieceBytes, overlap);
  std::string piece, rebuilt, normalised;
  std::uint64_t line = 0, lastLine = 0;
  while (reader.next(piece, line)) {
    require(piece.size() <= pieceBytes, "a piece fits its size");
    require(line == lastLine || line == lastLine + 1, "line numbers go up by one");
    require(reader.repeated() <= piece.size(), "the repeated bytes are inside the piece");
    if (line != lastLine && lastLine != 0) rebuilt += '\n';
    if (line != lastLine) require(reader.repeated() == 0, "a new line repeats nothing");
    rebuilt.append(piece, reader.repeated());
    lastLine = line;
    kb_detail::normaliseLogLineInto(piece, normalised);
    require(normalised.size() <= piece.size(), "normalising never lengthens a line");
  }
  std::string expected(data.substr(1));
  if (!expected.empty() && expected.back() == '\n') expected.pop_back();
  require(rebuilt == expected, "the pieces give back the input");
  require(reader.linesRead() == lastLine, "lines read is the last line number");
}

/// Matcher: the repository's KB over any log; every match names an entry and a line read.
inline void matcherBody(std::string_view data) {
  static const KnowledgeBase* kb = [] {
    auto* loaded = new KnowledgeBase;
    Result<KnowledgeBase> r = KnowledgeBase::loadDirectories({GPUPEER_SOURCE_KB_DIR}, nullptr);
    if (r.isOk()) *loaded = std::move(r).value();
    return loaded;
  }();
  static const KbMatcher* matcher = [] {
    Result<KbMatcher> m = KbMatcher::build(*kb);
    require(m.isOk(), "the repository's KB compiles into a matcher");
    return new KbMatcher(std::move(m).value());
  }();
  KbScan scan = matcher->scanText(data);
  for (const KbMatch& m : scan.matches) {
    require(m.entry != nullptr, "a match names its entry");
    require(m.firstLine >= 1 && m.firstLine <= scan.linesRead, "a match's line was read");
  }
  require(scan.bytesRead == data.size(), "every byte is read");
}

/// CPU list reader: any text gives sorted, merged ranges within the caps, or nullopt; the
/// list written back from them reads back the same.
inline void cpuListBody(std::string_view data) {
  std::optional<CpuRanges> ranges = parseCpuRanges(std::string(data));
  if (!ranges) return;
  require(ranges->size() <= kMaxCpuListRanges, "at most the cap of ranges");
  for (std::size_t i = 0; i < ranges->size(); ++i) {
    const auto& [lo, hi] = (*ranges)[i];
    require(lo >= 0 && lo <= hi && hi <= kMaxCpuNumber, "a range is ordered and within the CPU numbers");
    require(i == 0 || (*ranges)[i - 1].second + 1 < lo, "ranges are sorted, apart and merged");
  }
  std::optional<std::set<int>> cpus = parseCpuList(std::string(data));
  require(cpus.has_value(), "the set reads where the ranges do");
  std::optional<CpuRanges> back = parseCpuRanges(formatCpuList(*cpus));
  require(back && *back == *ranges, "a list written back reads back the same");
  if (!ranges->empty()) require(cpuRangesOverlap(*ranges, *ranges), "a list shares its CPUs with itself");
}

/// `report --results` reader: any text gives results within the caps or an error that names
/// its reason.
inline void resultsBody(std::string_view data) {
  ReportResults results;
  Status read = readReportResults(data, "fuzz.jsonl", results);
  if (!read.isOk()) {
    require(!read.message().empty(), "an error names its reason");
    return;
  }
  for (const BenchResult& b : results.bench) require(b.cells.size() <= 16384, "cells within their cap");
  for (const CollectiveTable& t : results.collectives) require(t.rows.size() <= 256, "rows within their cap");
}

}  // namespace gpupeer::fuzz
