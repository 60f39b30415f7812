// Reading a KbEntry from JSON: the flat seed schema of kb/ and the nested "canon" schema of
// deadends.dev (error.*, verdict.*). Both share dead_ends, workarounds and transition_graph.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/bounded_input.hpp"
#include "gpupeer/knowledge_base.hpp"

namespace gpupeer {
namespace {

using Json = nlohmann::json;

// Each reader fills `out` from obj[key] and returns an error naming `path.key` when the value
// has the wrong type. A missing key or JSON null leaves the default (seed files use null for
// "not known").
class FieldReader {
 public:
  FieldReader(const Json& obj, std::string path) : obj_(obj), path_(std::move(path)) {}

  Status string(const char* key, std::string& out, bool required = false) const {
    const Json* v = find(key);
    if (!v) return required ? missing(key) : Status::ok();
    if (!v->is_string()) return wrongType(key, "a string");
    out = v->get<std::string>();
    if (required && out.empty()) return GPUPEER_ERROR(ErrorCode::kParse, where(key) + ": is empty");
    return Status::ok();
  }

  /// Every number of an entry is a rate or a probability: 0 to 1 (as kb/schema.json says).
  Status number(const char* key, double& out) const {
    const Json* v = find(key);
    if (!v) return Status::ok();
    if (!v->is_number()) return wrongType(key, "a number");
    out = v->get<double>();
    if (!(out >= 0 && out <= 1))
      return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("{}: {} is not a rate from 0 to 1", where(key), out));
    return Status::ok();
  }

  Status strings(const char* key, std::vector<std::string>& out) const {
    const Json* v = find(key);
    if (!v) return Status::ok();
    if (!v->is_array()) return wrongType(key, "an array of strings");
    for (const Json& item : *v) {
      if (!item.is_string()) return wrongType(key, "an array of strings");
      out.push_back(item.get<std::string>());
    }
    return Status::ok();
  }

  /// obj[key] when it is an object/array of the wanted kind; nullptr when absent or null.
  Result<const Json*> child(const char* key, bool wantArray) const {
    const Json* v = find(key);
    if (!v) return static_cast<const Json*>(nullptr);
    if (wantArray ? !v->is_array() : !v->is_object()) return wrongType(key, wantArray ? "an array" : "an object");
    return v;
  }

  std::string where(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

 private:
  const Json* find(const char* key) const {
    auto it = obj_.find(key);
    return it == obj_.end() || it->is_null() ? nullptr : &*it;
  }
  Status missing(const char* key) const {
    return GPUPEER_ERROR(ErrorCode::kParse, where(key) + ": required field is missing");
  }
  Status wrongType(const char* key, const char* what) const {
    return GPUPEER_ERROR(ErrorCode::kParse, fmt::format("{}: expected {}", where(key), what));
  }

  const Json& obj_;
  std::string path_;
};

Status readDeadEnds(const FieldReader& r, std::vector<KbDeadEnd>& out) {
  Result<const Json*> list = r.child("dead_ends", true);
  if (!list.isOk()) return list.status();
  if (!list.value()) return Status::ok();
  for (std::size_t i = 0; i < list.value()->size(); ++i) {
    const Json& item = (*list.value())[i];
    std::string path = fmt::format("{}[{}]", r.where("dead_ends"), i);
    if (!item.is_object()) return GPUPEER_ERROR(ErrorCode::kParse, path + ": expected an object");
    FieldReader f(item, path);
    KbDeadEnd d;
    GPUPEER_RETURN_IF_ERROR(f.string("action", d.action));
    GPUPEER_RETURN_IF_ERROR(f.string("why_fails", d.whyFails));
    GPUPEER_RETURN_IF_ERROR(f.number("fail_rate", d.failRate));
    GPUPEER_RETURN_IF_ERROR(f.string("condition", d.condition));
    GPUPEER_RETURN_IF_ERROR(f.strings("sources", d.sources));
    out.push_back(std::move(d));
  }
  return Status::ok();
}

Status readWorkarounds(const FieldReader& r, std::vector<KbWorkaround>& out) {
  Result<const Json*> list = r.child("workarounds", true);
  if (!list.isOk()) return list.status();
  if (!list.value()) return Status::ok();
  for (std::size_t i = 0; i < list.value()->size(); ++i) {
    const Json& item = (*list.value())[i];
    std::string path = fmt::format("{}[{}]", r.where("workarounds"), i);
    if (!item.is_object()) return GPUPEER_ERROR(ErrorCode::kParse, path + ": expected an object");
    FieldReader f(item, path);
    KbWorkaround w;
    GPUPEER_RETURN_IF_ERROR(f.string("action", w.action));
    GPUPEER_RETURN_IF_ERROR(f.string("how", w.how));
    GPUPEER_RETURN_IF_ERROR(f.number("success_rate", w.successRate));
    GPUPEER_RETURN_IF_ERROR(f.string("condition", w.condition));
    GPUPEER_RETURN_IF_ERROR(f.strings("sources", w.sources));
    out.push_back(std::move(w));
  }
  return Status::ok();
}

// An edge is an id string or an object {error_id | id, probability, condition | distinction}.
Status readTransitions(const FieldReader& graph, const char* key, std::vector<KbTransition>& out) {
  Result<const Json*> list = graph.child(key, true);
  if (!list.isOk()) return list.status();
  if (!list.value()) return Status::ok();
  for (std::size_t i = 0; i < list.value()->size(); ++i) {
    const Json& item = (*list.value())[i];
    std::string path = fmt::format("{}[{}]", graph.where(key), i);
    KbTransition t;
    if (item.is_string()) {
      t.id = item.get<std::string>();
    } else if (item.is_object()) {
      FieldReader f(item, path);
      GPUPEER_RETURN_IF_ERROR(f.string(item.contains("error_id") ? "error_id" : "id", t.id, true));
      GPUPEER_RETURN_IF_ERROR(f.number("probability", t.probability));
      GPUPEER_RETURN_IF_ERROR(f.string("condition", t.condition));
      if (t.condition.empty()) GPUPEER_RETURN_IF_ERROR(f.string("distinction", t.condition));
    } else {
      return GPUPEER_ERROR(ErrorCode::kParse, path + ": expected an id or an object");
    }
    out.push_back(std::move(t));
  }
  return Status::ok();
}

// Shared by both schemas: the top-level dead_ends, workarounds and transition_graph.
Status readCommon(const FieldReader& top, KbEntry& e) {
  GPUPEER_RETURN_IF_ERROR(readDeadEnds(top, e.deadEnds));
  GPUPEER_RETURN_IF_ERROR(readWorkarounds(top, e.workarounds));
  Result<const Json*> graph = top.child("transition_graph", false);
  if (!graph.isOk()) return graph.status();
  if (graph.value()) {
    FieldReader g(*graph.value(), "transition_graph");
    GPUPEER_RETURN_IF_ERROR(readTransitions(g, "leads_to", e.leadsTo));
    GPUPEER_RETURN_IF_ERROR(readTransitions(g, "preceded_by", e.precededBy));
    GPUPEER_RETURN_IF_ERROR(readTransitions(g, "frequently_confused_with", e.confusedWith));
  }
  GPUPEER_RETURN_IF_ERROR(top.strings("tags", e.tags));
  for (const std::string& tag : e.tags)
    if (tag == "wrapper") e.wrapper = true;
  return Status::ok();
}

Status readSeed(const Json& doc, KbEntry& e) {
  FieldReader r(doc, "");
  GPUPEER_RETURN_IF_ERROR(r.string("id", e.id, true));
  GPUPEER_RETURN_IF_ERROR(r.string("signature", e.signature));
  GPUPEER_RETURN_IF_ERROR(r.string("regex", e.regex, true));
  GPUPEER_RETURN_IF_ERROR(r.string("domain", e.domain));
  GPUPEER_RETURN_IF_ERROR(r.string("category", e.category));
  GPUPEER_RETURN_IF_ERROR(r.string("root_cause", e.rootCause));
  GPUPEER_RETURN_IF_ERROR(r.string("error_code", e.errorCode));
  GPUPEER_RETURN_IF_ERROR(r.number("confidence", e.confidence));
  GPUPEER_RETURN_IF_ERROR(r.number("fix_success_rate", e.fixSuccessRate));
  GPUPEER_RETURN_IF_ERROR(r.string("official_doc_url", e.officialDocUrl));
  return readCommon(r, e);
}

// Canon: {id, url, error:{signature, regex, domain, category}, verdict:{summary, confidence,
// fix_success_rate}, dead_ends, workarounds, transition_graph}. The entry's page (url) is the
// best documentation link it has.
Status readCanon(const Json& doc, KbEntry& e) {
  FieldReader r(doc, "");
  GPUPEER_RETURN_IF_ERROR(r.string("id", e.id, true));
  GPUPEER_RETURN_IF_ERROR(r.string("url", e.officialDocUrl));
  FieldReader err(doc.at("error"), "error");
  GPUPEER_RETURN_IF_ERROR(err.string("signature", e.signature));
  GPUPEER_RETURN_IF_ERROR(err.string("regex", e.regex, true));
  GPUPEER_RETURN_IF_ERROR(err.string("domain", e.domain));
  GPUPEER_RETURN_IF_ERROR(err.string("category", e.category));
  GPUPEER_RETURN_IF_ERROR(err.string("error_code", e.errorCode));
  Result<const Json*> verdict = r.child("verdict", false);
  if (!verdict.isOk()) return verdict.status();
  if (verdict.value()) {
    FieldReader v(*verdict.value(), "verdict");
    GPUPEER_RETURN_IF_ERROR(v.string("summary", e.rootCause));
    GPUPEER_RETURN_IF_ERROR(v.number("confidence", e.confidence));
    GPUPEER_RETURN_IF_ERROR(v.number("fix_success_rate", e.fixSuccessRate));
  }
  return readCommon(r, e);
}

}  // namespace

Result<KbEntry> kbEntryFromJson(const nlohmann::json& doc, std::string sourceFile) {
  if (!doc.is_object()) return GPUPEER_ERROR(ErrorCode::kParse, "not a KB entry: the top level is not an object");
  KbEntry e;
  e.sourceFile = std::move(sourceFile);
  auto error = doc.find("error");
  bool canon = error != doc.end() && error->is_object();
  Status s = canon ? readCanon(doc, e) : readSeed(doc, e);
  if (!s.isOk()) return s;
  return e;
}

Result<KbEntry> kbEntryFromText(std::string_view text, std::string sourceFile) {
  Result<Json> doc = parseJsonText<Json>(text, sourceFile.empty() ? "<text>" : sourceFile);
  if (!doc.isOk()) return doc.status();
  return kbEntryFromJson(doc.value(), std::move(sourceFile));
}

}  // namespace gpupeer
