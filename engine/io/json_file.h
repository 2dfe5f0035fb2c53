// Reading JSON files with errors that name the file and the position.
#pragma once

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace kvscope {

// Throws kvscope::Error("<path>: invalid JSON: ...") or ("<path>: cannot open").
nlohmann::json read_json_file(const std::filesystem::path& path);
nlohmann::json parse_json_text(const std::string& text, const std::string& source);

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
