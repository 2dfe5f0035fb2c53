// A view of one value inside a parsed tokenizer.json that remembers where it
// lives ("model.merges[12]"), so every complaint about bad input names the
// file and the field, as the engine's error rule asks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kvscope::tok {

// Deepest JSON nesting a tokenizer.json component may use (real files nest a
// few levels; this only stops hostile files from exhausting the stack).
inline constexpr int kMaxNesting = 64;

// `s` between double quotes, as messages name a token or a line.
std::string in_quotes(std::string_view s);

class JsonField {
 public:
  // `source` is the file name used in messages; both referents must outlive
  // the view (they do: views only live while a tokenizer is being loaded).
  JsonField(const nlohmann::json& value, const std::string& source, std::string path, int depth = 0)
      : value_(&value), source_(&source), path_(std::move(path)), depth_(depth) {}

  const nlohmann::json& json() const { return *value_; }
  const std::string& path() const { return path_; }
  const std::string& source() const { return *source_; }
  // How many members/elements deep this value is; parsers of recursive
  // types (Sequence) refuse absurd nesting instead of exhausting the stack.
  int depth() const { return depth_; }
  void require_depth_below(int limit) const {
    if (depth_ >= limit) fail("nested too deeply");
  }

  // Throws kvscope::Error("<source>: <path>: <what>").
  [[noreturn]] void fail(const std::string& what) const;
  // Same, for a member that is absent (path is "<path>.<key>").
  [[noreturn]] void fail_member(std::string_view key, const std::string& what) const;

  bool is_null() const { return value_->is_null(); }
  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool is_string() const { return value_->is_string(); }

  // Required member of an object; fails when this is not an object or the
  // member is missing. A JSON null member counts as present.
  JsonField operator[](std::string_view key) const;
  // Optional member: nullopt when missing or null.
  std::optional<JsonField> get(std::string_view key) const;
  // Element of an array (caller checks size()).
  JsonField at(size_t index) const;
  size_t size() const;  // array or object size; fails otherwise

  std::string str() const;           // fails unless a string
  bool boolean() const;              // fails unless a bool
  int64_t integer() const;           // fails unless an integer
  double number() const;             // fails unless a number
  // A string holding exactly one Unicode character (Metaspace's replacement).
  char32_t single_char() const;

  // Optional typed members with a default when missing or null.
  bool get_bool(std::string_view key, bool fallback) const;
  std::string get_string(std::string_view key, const std::string& fallback) const;

  // The "type" member, which must be a string.
  std::string type() const;

  // Checks that this is an array (or object); fails with a clear message.
  void require_array() const;
  void require_object() const;

 private:
  const nlohmann::json* value_;
  const std::string* source_;
  std::string path_;
  int depth_;
};

}  // namespace kvscope::tok
