#pragma once
// The subset of JSON Schema that kb/schema.json uses: the KB tests check every entry against
// it. Internal.

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace gpupeer {

/// Validates `instance` against a JSON Schema using the keywords type, required, properties,
/// items, enum, const, minimum, maximum, minItems, maxItems, minLength, maxLength, pattern
/// (RE2, unanchored), additionalProperties and local "$ref" ("#/definitions/…", "#/$defs/…").
/// Annotations ($schema, $id, title, description, …) are ignored; any other keyword is
/// reported as unsupported so that a constraint is never silently skipped.
/// Returns one message per violation ("/dead_ends/0/fail_rate: 1.5 is above maximum 1");
/// empty when valid.
std::vector<std::string> validateJsonSchema(const nlohmann::json& schema, const nlohmann::json& instance);

}  // namespace gpupeer
