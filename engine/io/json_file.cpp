#include "io/json_file.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include "common/error.h"

namespace kvscope {

nlohmann::json parse_json_text(const std::string& text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.byte is the 1-based offset of the error; turn it into line:column.
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw Error(source, "", "invalid JSON at line " + std::to_string(line) + ", column " +
                                std::to_string(col));
  } catch (const nlohmann::json::exception& e) {
    // Well-formed text the library still cannot hold (a number past the
    // double range, 1e400): it carries no position.
    throw Error(source, "", std::string("invalid JSON: ") + e.what());
  }
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(path.string(), "", "file not found");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string(), "", "cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_json_text(ss.str(), path.string());
}

bool JsonReader::has(const std::string& key) const {
  return j_.is_object() && j_.contains(key) && !j_.at(key).is_null();
}

void JsonReader::fail(const std::string& key, const std::string& what) const {
  throw Error(source_, field(key), what);
}

const nlohmann::json& JsonReader::raw(const std::string& key) const {
  if (!has(key)) fail(key, "missing");
  return j_.at(key);
}

int JsonReader::get_int(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_number()) fail(key, "expected an integer, got " + v.dump());
  // Range first: converting a double outside long long's range (1e300, say)
  // to an integer is undefined behaviour, so the integrality test below may
  // only see values that already fit in an int.
  const double d = v.get<double>();
  if (!(d >= std::numeric_limits<int>::min() && d <= std::numeric_limits<int>::max()))
    fail(key, "integer out of range: " + v.dump());
  if (!v.is_number_integer() && d != std::trunc(d))
    fail(key, "expected an integer, got " + v.dump());
  return static_cast<int>(d);
}

int JsonReader::get_int(const std::string& key, int fallback) const {
  return has(key) ? get_int(key) : fallback;
}

double JsonReader::get_number(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_number()) fail(key, "expected a number, got " + v.dump());
  return v.get<double>();
}

double JsonReader::get_number(const std::string& key, double fallback) const {
  return has(key) ? get_number(key) : fallback;
}

bool JsonReader::get_bool(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const auto& v = j_.at(key);
  if (!v.is_boolean()) fail(key, "expected true or false, got " + v.dump());
  return v.get<bool>();
}

std::string JsonReader::get_string(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_string()) fail(key, "expected a string, got " + v.dump());
  return v.get<std::string>();
}

std::string JsonReader::get_string(const std::string& key, const std::string& fallback) const {
  return has(key) ? get_string(key) : fallback;
}

JsonReader JsonReader::child(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_object()) fail(key, "expected an object, got " + v.dump());
  return JsonReader(v, source_, field(key));
}

}  // namespace kvscope
