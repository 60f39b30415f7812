// Reads the files `gpupeer report --results` takes: `gpupeer coll --json` documents, `gpupeer
// bench --json` lines and results-format lines, told apart by their fields.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/bounded_input.hpp"
#include "core/json_fields.hpp"
#include "gpupeer/report.hpp"

namespace gpupeer {
namespace {

using Json = nlohmann::ordered_json;

// Bounds on what one results file may hold, so that a hostile file cannot make the page (an
// N x N heat map, a row per size) or the memory behind it grow without end. Each is far above
// what gpupeer writes; docs/bad-inputs.md lists them.
constexpr int kMaxGpuOrdinal = 127;                    // as in snapshots
constexpr std::size_t kMaxCellsPerResult = 128 * 128;  // a cell per ordered pair of 128 GPUs
constexpr std::size_t kMaxRowsPerTable = 256;          // a coll sweep has at most 256 sizes
constexpr std::size_t kMaxBaselinesPerRow = 16;        // coll writes 2 (nccl, nccl_symmetric)
constexpr std::size_t kMaxResultsPerFile = 100'000;    // the largest file in bench/results holds 2,215
constexpr double kMaxBytes = 9007199254740992.0;       // 2^53: sizes are whole numbers a double holds

// Typed optional fields of one result, named by their path when of the wrong type.
class Fields {
 public:
  Fields(const Json& j, std::string path) : j_(j), path_(std::move(path)) {}

  const Json* find(const char* key) const {
    auto it = j_.find(key);
    return it == j_.end() || it->is_null() ? nullptr : &*it;
  }
  std::string str(const char* key) const { return get<std::string>(key, ""); }
  double num(const char* key) const { return get<double>(key, 0.0); }
  bool boolean(const char* key) const { return get<bool>(key, false); }
  int integer(const char* key, int lo, int hi, int absent) const {
    const Json* v = find(key);
    return v ? jsonInRange(jsonAs<int>(*v, join(key)), join(key), lo, hi) : absent;
  }
  double bytes(const char* key) const {
    double b = num(key);
    if (b != std::floor(b)) throw JsonFieldError{join(key), fmt::format("{} is not a whole number of bytes", b)};
    return jsonInRange(b, join(key), 0.0, kMaxBytes);
  }
  // The array under `key` (empty when absent), at most `cap` long.
  const Json& array(const char* key, std::size_t cap) const {
    static const Json kEmpty = Json::array();
    const Json* v = find(key);
    if (!v) return kEmpty;
    if (!v->is_array()) throw JsonFieldError{join(key), "expected an array"};
    if (v->size() > cap)
      throw JsonFieldError{join(key), fmt::format("{} entries; at most {} are read", v->size(), cap)};
    return *v;
  }
  Fields element(const char* key, std::size_t i, const Json& v) const {
    std::string path = fmt::format("{}[{}]", join(key), i);
    if (!v.is_object()) throw JsonFieldError{path, "expected an object"};
    return Fields(v, path);
  }
  std::string join(const char* key) const { return jsonFieldPath(path_, key); }

 private:
  template <class T>
  T get(const char* key, T absent) const {
    const Json* v = find(key);
    return v ? jsonAs<T>(*v, join(key)) : absent;
  }
  const Json& j_;
  std::string path_;
};

BenchResult benchFromJson(const Json& j) {
  Fields f(j, "");
  BenchResult r;
  r.key = f.str("testcase");
  // The description comes from the testcase table when the page is drawn (matrices_html.cpp):
  // this reader needs nothing of the bench code, so the fuzzer and sanitized tests link it alone.
  r.kind = f.str("unit") == "us" ? BenchKind::kLatency : BenchKind::kBandwidth;
  r.waived = f.str("waived");
  r.error = f.str("error");
  r.host = f.str("host");
  r.gpus = f.str("gpus");
  const Json& cells = f.array("cells", kMaxCellsPerResult);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    Fields cf = f.element("cells", i, cells[i]);
    BenchCell c;
    c.row = cf.integer("src", -1, kMaxGpuOrdinal, -1);  // -1: the host, or all GPUs in a total
    c.col = cf.integer("dst", -1, kMaxGpuOrdinal, -1);
    c.label = cf.str("label");
    c.bytes = static_cast<std::size_t>(cf.bytes("bytes"));
    c.value.median = cf.num("median");
    c.value.min = cf.num("min");
    c.value.max = cf.num("max");
    c.value.samples = cf.integer("samples", 0, std::numeric_limits<int>::max(), 0);
    c.verified = cf.boolean("verified");
    c.note = cf.str("note");
    // The line keeps the share of the limit, not the limit; the limit is what it came from.
    double percent = cf.num("percentOfLink");
    if (percent > 0) c.theoreticalGBps = 100 * c.value.median / percent;
    r.cells.push_back(std::move(c));
  }
  return r;
}

CollectiveTable collectiveFromJson(const Json& j, const std::string& source) {
  Fields f(j, "");
  CollectiveTable t;
  t.op = f.str("op");
  t.mode = f.str("mode");
  t.gpuName = f.str("gpu_name");
  t.gpus = f.integer("gpus", 0, kMaxGpuOrdinal + 1, 0);
  t.source = source;
  const Json& rows = f.array("rows", kMaxRowsPerTable);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    Fields rf = f.element("rows", i, rows[i]);
    CollectiveRow row;
    row.bytes = rf.bytes("bytes");
    row.algorithm = rf.str("algo");
    row.us = rf.num("us");
    row.busbw = rf.num("busbw");
    row.failed = rf.find("error") != nullptr || rf.find("us") == nullptr;
    if (const Json* baselines = rf.find("baselines")) {
      if (!baselines->is_object()) throw JsonFieldError{rf.join("baselines"), "expected an object"};
      if (baselines->size() > kMaxBaselinesPerRow)
        throw JsonFieldError{rf.join("baselines"),
                             fmt::format("{} baselines; at most {} are read", baselines->size(), kMaxBaselinesPerRow)};
      for (const auto& [name, bj] : baselines->items()) {
        std::string path = rf.join("baselines") + "." + name;
        if (!bj.is_object()) throw JsonFieldError{path, "expected an object"};
        Fields bf(bj, path);
        if (bf.find("us")) row.baselines[name] = {bf.num("us"), bf.num("busbw")};
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

ResultRecord recordFromJson(const Json& j) {
  Fields f(j, "");
  ResultRecord r;
  r.commit = f.str("commit");
  r.date = f.str("date");
  r.machine = f.str("machine");
  r.gpuModel = f.str("gpu_model");
  r.gpuCount = f.integer("gpu_count", 0, kMaxGpuOrdinal + 1, 0);
  r.driver = f.str("driver");
  r.command = f.str("command");
  r.metric = f.str("metric");
  r.value = f.num("value");
  r.unit = f.str("unit");
  r.baseline = f.str("baseline");
  r.baselineValue = f.num("baseline_value");
  r.bytes = f.bytes("bytes");
  return r;
}

// Appends what one JSON value holds; false when it is none of the three forms. Throws
// JsonFieldError for a result with a field of the wrong type or out of range.
bool take(const Json& j, const std::string& source, ReportResults& into) {
  if (!j.is_object()) return false;
  if (j.contains("rows") && j.contains("op")) {
    into.collectives.push_back(collectiveFromJson(j, source));
    return true;
  }
  if (j.contains("testcase") && j.contains("cells")) {
    into.bench.push_back(benchFromJson(j));
    return true;
  }
  if (j.contains("metric") && j.contains("value")) {
    into.records.push_back(recordFromJson(j));
    return true;
  }
  return false;
}

// `take` with its field error as a Status naming `where` ("F" or "F:L").
Result<bool> takeOrRefuse(const Json& j, const std::string& source, const std::string& where, ReportResults& into) {
  try {
    return take(j, source, into);
  } catch (const JsonFieldError& e) {
    return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("{}: field '{}': {}", where, e.path, e.message));
  }
}

Status nestedTooDeep(const std::string& where) {
  return GPUPEER_ERROR(ErrorCode::kParse,
                       fmt::format("{}: JSON nested more than {} levels deep; refused", where, kMaxJsonDepth));
}

}  // namespace

Status loadReportResults(const std::string& path, ReportResults& into) {
  Result<std::string> read = readFileBounded(path, kMaxResultsBytes, "results file");
  if (!read.isOk()) return read.status();
  return readReportResults(read.value(), path, into);
}

Status readReportResults(std::string_view text, const std::string& path, ReportResults& into) {
  // A whole-file document first (`coll --json` is pretty-printed over many lines). Nesting is
  // measured before parsing: the JSON library's copies and destructor recurse once per level.
  // Keys are counted too: an object's every insert searches the keys before it.
  if (std::size_t past = jsonKeyPastLimit(text, kMaxJsonObjectKeys); past != std::string_view::npos)
    return GPUPEER_ERROR(ErrorCode::kParse, jsonTooManyKeysMessage(text, path, past));
  if (jsonNestingDepth(text, kMaxJsonDepth) <= kMaxJsonDepth) {
    Json whole = Json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!whole.is_discarded()) {
      Result<bool> taken = takeOrRefuse(whole, path, path, into);
      if (!taken.isOk()) return taken.status();
      if (taken.value()) return Status::ok();
      return GPUPEER_ERROR(
          ErrorCode::kParse,
          fmt::format("{}: JSON, but not a coll --json document, bench --json line or results record", path));
    }
  }
  std::size_t used = 0, lineNumber = 0;
  // Line by line over the text as given (up to kMaxResultsBytes): no copy of the whole.
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++lineNumber;
    std::size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] != '{') continue;  // logged commands, notes
    const std::string where = fmt::format("{}:{}", path, lineNumber);
    if (jsonNestingDepth(line, kMaxJsonDepth) > kMaxJsonDepth) return nestedTooDeep(where);
    Json j = Json::parse(line.begin(), line.end(), nullptr, false);
    Result<bool> taken = j.is_discarded() ? Result<bool>(false) : takeOrRefuse(j, path, where, into);
    if (!taken.isOk()) return taken.status();
    if (!taken.value()) {
      into.warnings.push_back(fmt::format("{}: skipped a line that is not a result", where));
    } else if (++used > kMaxResultsPerFile) {
      return GPUPEER_ERROR(ErrorCode::kInvalidArgument,
                           fmt::format("{}: more than {} results in one file; refused", path, kMaxResultsPerFile));
    }
  }
  if (used == 0) return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("{}: no result found in it", path));
  return Status::ok();
}

}  // namespace gpupeer
