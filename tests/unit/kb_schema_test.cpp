// The small JSON-Schema validator the KB tests use on every entry.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kb/json_schema.hpp"

namespace gpupeer {
namespace {

using nlohmann::json;

std::vector<std::string> check(const char* schema, const char* instance) {
  return validateJsonSchema(json::parse(schema), json::parse(instance));
}

bool mentions(const std::vector<std::string>& errors, const std::string& text) {
  for (const std::string& e : errors)
    if (e.find(text) != std::string::npos) return true;
  return false;
}

const char* kEntrySchema = R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "t", "description": "d",
  "type": "object",
  "additionalProperties": false,
  "required": ["id", "rate", "items"],
  "properties": {
    "id": {"type": "string", "pattern": "^[a-z]+/[a-z-]+$"},
    "kind": {"type": "string", "enum": ["runtime_error", "hang"]},
    "rate": {"type": "number", "minimum": 0, "maximum": 1},
    "count": {"type": "integer", "minimum": 1},
    "maybe": {"type": ["string", "null"]},
    "items": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/item"}},
    "extra": {"type": "object", "additionalProperties": {"type": "string"}}
  },
  "$defs": {"item": {"type": "object", "required": ["how"], "properties": {"how": {"type": "string", "minLength": 1}}}}
})";

TEST(KbSchema, ValidInstancePasses) {
  EXPECT_TRUE(check(kEntrySchema, R"({"id": "cuda/peer-x", "kind": "hang", "rate": 0.5, "count": 3,
                                      "maybe": null, "items": [{"how": "x"}], "extra": {"linux": "y"}})")
                  .empty());
  EXPECT_TRUE(check(kEntrySchema, R"({"id": "a/b", "rate": 1, "count": 2.0, "items": [{"how": "é"}]})").empty());
}

TEST(KbSchema, ReportsEachKeywordWithPath) {
  auto errors = check(kEntrySchema, R"({"id": "Cuda/X", "kind": "crash", "rate": 1.5, "count": 1.5,
                                        "maybe": 3, "items": [], "extra": {"a": 1}, "surprise": true})");
  EXPECT_TRUE(mentions(errors, "/id: \"Cuda/X\" does not match pattern")) << ::testing::PrintToString(errors);
  EXPECT_TRUE(mentions(errors, "/kind: \"crash\" is not one of"));
  EXPECT_TRUE(mentions(errors, "/rate: 1.5 is above maximum 1"));
  EXPECT_TRUE(mentions(errors, "/count: 1.5 is not of type \"integer\""));
  EXPECT_TRUE(mentions(errors, "/maybe: 3 is not of type [\"string\",\"null\"]"));
  EXPECT_TRUE(mentions(errors, "/items: has 0 items; minItems is 1"));
  EXPECT_TRUE(mentions(errors, "/extra/a: 1 is not of type \"string\""));
  EXPECT_TRUE(mentions(errors, "/: property 'surprise' is not allowed"));
  EXPECT_EQ(errors.size(), 8u);
}

TEST(KbSchema, RequiredAndNestedRef) {
  auto errors = check(kEntrySchema, R"({"items": [{"how": ""}, {}]})");
  EXPECT_TRUE(mentions(errors, "/: required property 'id' is missing"));
  EXPECT_TRUE(mentions(errors, "/: required property 'rate' is missing"));
  EXPECT_TRUE(mentions(errors, "/items/0/how: has 0 characters; minLength is 1"));
  EXPECT_TRUE(mentions(errors, "/items/1: required property 'how' is missing"));
  EXPECT_TRUE(mentions(check(R"({"minimum": 2})", "1"), "1 is below minimum 2"));
  EXPECT_TRUE(check(R"({"const": "en"})", R"("en")").empty());
  EXPECT_FALSE(check(R"({"const": "en"})", R"("zh")").empty());
  EXPECT_TRUE(mentions(check(R"({"$ref": "#/nowhere"})", "1"), "points nowhere"));
}

TEST(KbSchema, UnsupportedKeywordIsReportedNotIgnored) {
  auto errors = check(R"({"type": "object", "properties": {"a": {"oneOf": [{"type": "string"}]}}})", R"({"a": 1})");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_TRUE(mentions(errors, "schema keyword 'oneOf' (used at /a) is not supported"));
}

TEST(KbSchema, BooleanSchemas) {
  EXPECT_TRUE(check("true", "{}").empty());
  EXPECT_FALSE(check("false", "{}").empty());
}

}  // namespace
}  // namespace gpupeer
