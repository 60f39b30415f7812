// A small JSON-Schema validator: the keywords the KB schema needs, nothing silently ignored.
#include "json_schema.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

namespace gpupeer {
namespace {

using Json = nlohmann::json;

bool isAnnotation(const std::string& key) {
  static const std::set<std::string> kIgnored = {"$schema",  "$id",       "$comment",    "title", "description",
                                                 "default",  "examples",  "definitions", "$defs", "format",
                                                 "readOnly", "writeOnly", "deprecated"};
  return kIgnored.count(key) > 0;
}

bool isSupported(const std::string& key) {
  static const std::set<std::string> kKeywords = {
      "type",    "required", "properties", "items",     "enum",      "const",   "minimum",
      "maximum", "minItems", "maxItems",   "minLength", "maxLength", "pattern", "additionalProperties",
      "$ref"};
  return kKeywords.count(key) > 0;
}

bool hasType(const Json& v, const std::string& type) {
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "integer")
    return v.is_number_integer() || (v.is_number_float() && std::trunc(v.get<double>()) == v.get<double>());
  if (type == "boolean") return v.is_boolean();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "null") return v.is_null();
  return false;
}

std::size_t utf8Length(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string brief(const Json& v) {
  std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return text.size() > 60 ? text.substr(0, 60) + "…" : text;
}

class Validator {
 public:
  Validator(const Json& root, std::vector<std::string>& errors) : root_(root), errors_(errors) {}

  void validate(const Json& schema, const Json& v, const std::string& path, int depth) {
    if (depth > 64) return fail(path, "schema nests too deeply (a $ref cycle?)");
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) fail(path, "not allowed here (schema is false)");
      return;
    }
    if (!schema.is_object()) return fail(path, "schema is not an object");
    for (const auto& [key, value] : schema.items()) {
      if (isAnnotation(key)) continue;
      if (!isSupported(key)) {
        unsupported_.insert(fmt::format("schema keyword '{}' (used at {}) is not supported", key, shown(path)));
        continue;
      }
      check(key, value, schema, v, path, depth);
    }
  }

  void finish() {
    for (const std::string& s : unsupported_) errors_.push_back(s);
  }

 private:
  void check(const std::string& key, const Json& value, const Json& schema, const Json& v, const std::string& path,
             int depth) {
    if (key == "$ref") return ref(value, v, path, depth);
    if (key == "type") {
      std::vector<std::string> types;
      if (value.is_string()) types.push_back(value.get<std::string>());
      if (value.is_array())
        for (const Json& t : value)
          if (t.is_string()) types.push_back(t.get<std::string>());
      for (const std::string& t : types)
        if (hasType(v, t)) return;
      return fail(path, fmt::format("{} is not of type {}", brief(v), value.dump()));
    }
    if (key == "enum") {
      for (const Json& option : value)
        if (option == v) return;
      return fail(path, fmt::format("{} is not one of {}", brief(v), brief(value)));
    }
    if (key == "const") {
      if (v != value) fail(path, fmt::format("{} is not {}", brief(v), brief(value)));
      return;
    }
    if ((key == "minimum" || key == "maximum") && v.is_number() && value.is_number()) {
      double x = v.get<double>(), limit = value.get<double>();
      if (key == "minimum" ? x < limit : x > limit)
        fail(path, fmt::format("{} is {} {} {}", brief(v), key == "minimum" ? "below" : "above", key, brief(value)));
      return;
    }
    if ((key == "minItems" || key == "maxItems") && v.is_array() && value.is_number()) {
      auto n = v.size(), limit = value.get<std::size_t>();
      if (key == "minItems" ? n < limit : n > limit) fail(path, fmt::format("has {} items; {} is {}", n, key, limit));
      return;
    }
    if ((key == "minLength" || key == "maxLength") && v.is_string() && value.is_number()) {
      auto n = utf8Length(v.get<std::string>()), limit = value.get<std::size_t>();
      if (key == "minLength" ? n < limit : n > limit)
        fail(path, fmt::format("has {} characters; {} is {}", n, key, limit));
      return;
    }
    if (key == "pattern" && v.is_string() && value.is_string()) {
      RE2::Options options;
      options.set_log_errors(false);
      RE2 re(value.get<std::string>(), options);
      if (!re.ok()) return fail(path, fmt::format("schema pattern {} does not compile: {}", value.dump(), re.error()));
      if (!RE2::PartialMatch(v.get<std::string>(), re))
        fail(path, fmt::format("{} does not match pattern {}", brief(v), value.dump()));
      return;
    }
    if (key == "required" && v.is_object() && value.is_array()) {
      for (const Json& name : value)
        if (name.is_string() && !v.contains(name.get<std::string>()))
          fail(path, fmt::format("required property '{}' is missing", name.get<std::string>()));
      return;
    }
    if (key == "properties" && v.is_object() && value.is_object()) {
      for (const auto& [name, sub] : value.items())
        if (v.contains(name)) validate(sub, v.at(name), path + "/" + name, depth + 1);
      return;
    }
    if (key == "additionalProperties" && v.is_object()) {
      const Json* props = schema.contains("properties") ? &schema.at("properties") : nullptr;
      for (const auto& [name, sub] : v.items()) {
        if (props && props->contains(name)) continue;
        if (value.is_boolean() && !value.get<bool>())
          fail(path, fmt::format("property '{}' is not allowed", name));
        else if (value.is_object())
          validate(value, sub, path + "/" + name, depth + 1);
      }
      return;
    }
    if (key == "items" && v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (value.is_array()) {  // tuple form: one schema per position
          if (i < value.size()) validate(value[i], v[i], fmt::format("{}/{}", path, i), depth + 1);
        } else {
          validate(value, v[i], fmt::format("{}/{}", path, i), depth + 1);
        }
      }
    }
  }

  void ref(const Json& value, const Json& v, const std::string& path, int depth) {
    std::string target = value.is_string() ? value.get<std::string>() : "";
    if (target.rfind("#", 0) != 0)
      return fail(path, fmt::format("only local $ref (\"#/...\") is supported, not {}", value.dump()));
    const Json* resolved = nullptr;
    try {  // a malformed pointer throws; it is the schema's error, reported like the others
      Json::json_pointer pointer(target.substr(1));
      if (root_.contains(pointer)) resolved = &root_.at(pointer);
    } catch (const Json::exception&) {
    }
    if (!resolved) return fail(path, fmt::format("$ref {} points nowhere", value.dump()));
    validate(*resolved, v, path, depth + 1);
  }

  static std::string shown(const std::string& path) { return path.empty() ? "/" : path; }
  void fail(const std::string& path, const std::string& message) { errors_.push_back(shown(path) + ": " + message); }

  const Json& root_;
  std::vector<std::string>& errors_;
  std::set<std::string> unsupported_;
};

}  // namespace

std::vector<std::string> validateJsonSchema(const nlohmann::json& schema, const nlohmann::json& instance) {
  std::vector<std::string> errors;
  Validator validator(schema, errors);
  validator.validate(schema, instance, "", 0);
  validator.finish();
  return errors;
}

}  // namespace gpupeer
