// Reading JSON files with errors that name the file and the position, and
// writing JSON text whose numbers are the shortest that read back exactly.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace kvscope {

// Throws kvscope::Error("<path>: invalid JSON: ...") or ("<path>: cannot open").
nlohmann::json read_json_file(const std::filesystem::path& path);
nlohmann::json parse_json_text(const std::string& text, const std::string& source);

// The text of `j` laid out as nlohmann's dump(indent) lays it out (indent < 0:
// one line, no spaces), except numbers that are not integers: each is the
// shortest decimal that reads back to the same double (std::to_chars), with
// ".0" added to an integral value so it still reads as a float; NaN and the
// infinities are null. nlohmann's own dump is close (Grisu2) but does not
// promise the shortest string. `replace_invalid_utf8`: bytes that are not
// UTF-8 in strings become U+FFFD instead of an error.
std::string json_text(const nlohmann::json& j, int indent = 2, bool replace_invalid_utf8 = false);

// A float as JSON holds it: the double nearest the float's own shortest
// decimal, so json_text writes 0.2f as 0.2 (not 0.20000000298023224, the
// float's exact value) and reading that back as a float gives 0.2f again.
double json_float(float v);

// Typed field access with errors naming source and field path ("rope_scaling.factor").
// `field` is the dotted name used in messages; `j` is the object holding `key`.
class JsonReader {
 public:
  JsonReader(const nlohmann::json& j, std::string source, std::string prefix = "")
      : j_(j), source_(std::move(source)), prefix_(std::move(prefix)) {}

  bool has(const std::string& key) const;  // present and not null
  int get_int(const std::string& key) const;
  int get_int(const std::string& key, int fallback) const;
  double get_number(const std::string& key) const;
  double get_number(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  std::string get_string(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  JsonReader child(const std::string& key) const;  // must be an object
  const nlohmann::json& raw(const std::string& key) const;
  const nlohmann::json& json() const { return j_; }
  const std::string& source() const { return source_; }
  std::string field(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;

 private:
  const nlohmann::json& j_;
  std::string source_;
  std::string prefix_;
};

}  // namespace kvscope
