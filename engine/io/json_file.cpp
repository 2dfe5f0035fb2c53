#include "io/json_file.h"

#include <charconv>
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

namespace {

void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v);
  std::string text(buf, r.ptr - buf);
  if (text.find_first_of(".e") == std::string::npos) {
    // An integral value in fixed notation needs ".0" to read as a float;
    // scientific notation may then be the shorter ("9.028231e+10" rather
    // than "90282311680.0").
    text += ".0";
    char sci[64];
    const auto s = std::to_chars(sci, sci + sizeof(sci), v, std::chars_format::scientific);
    if (std::size_t(s.ptr - sci) < text.size()) text.assign(sci, s.ptr);
  }
  out += text;
}

void append_json(std::string& out, const nlohmann::json& j, int indent, int depth, bool replace) {
  const auto handler = replace ? nlohmann::json::error_handler_t::replace : nlohmann::json::error_handler_t::strict;
  auto newline = [&](int level) {
    if (indent < 0) return;
    out += '\n';
    out.append(std::size_t(indent) * level, ' ');
  };
  switch (j.type()) {
    case nlohmann::json::value_t::object: {
      if (j.empty()) {
        out += "{}";
        return;
      }
      out += '{';
      bool first = true;
      for (auto it = j.begin(); it != j.end(); ++it) {
        if (!first) out += ',';
        first = false;
        newline(depth + 1);
        out += nlohmann::json(it.key()).dump(-1, ' ', false, handler);
        out += indent < 0 ? ":" : ": ";
        append_json(out, it.value(), indent, depth + 1, replace);
      }
      newline(depth);
      out += '}';
      return;
    }
    case nlohmann::json::value_t::array: {
      if (j.empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (std::size_t i = 0; i < j.size(); ++i) {
        if (i) out += ',';
        newline(depth + 1);
        append_json(out, j[i], indent, depth + 1, replace);
      }
      newline(depth);
      out += ']';
      return;
    }
    case nlohmann::json::value_t::number_float: append_number(out, j.get<double>()); return;
    default:  // strings, integers, booleans, null: as nlohmann writes them
      out += j.dump(-1, ' ', false, handler);
  }
}

}  // namespace

std::string json_text(const nlohmann::json& j, int indent, bool replace_invalid_utf8) {
  std::string out;
  append_json(out, j, indent, 0, replace_invalid_utf8);
  return out;
}

double json_float(float v) {
  if (!std::isfinite(v)) return v;
  // Scientific: the fewest significant digits (plain to_chars may pick the
  // exact fixed digits of a large integral float, "90282311680", whose
  // double then needs them all).
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  double d = 0;
  std::from_chars(buf, r.ptr, d);
  return d;
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
