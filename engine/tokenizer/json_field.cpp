#include "tokenizer/json_field.h"

#include "common/error.h"
#include "tokenizer/utf8.h"

namespace kvscope::tok {

namespace {

const char* kind_name(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    case nlohmann::json::value_t::number_float: return "a number";
    default: return "an unexpected value";
  }
}

std::string member_path(const std::string& path, std::string_view key) {
  if (path.empty()) return std::string(key);
  return path + "." + std::string(key);
}

}  // namespace

void JsonField::fail(const std::string& what) const { throw Error(*source_, path_, what); }

void JsonField::fail_member(std::string_view key, const std::string& what) const {
  throw Error(*source_, member_path(path_, key), what);
}

void JsonField::require_object() const {
  if (!value_->is_object()) fail(std::string("expected an object, got ") + kind_name(*value_));
}

void JsonField::require_array() const {
  if (!value_->is_array()) fail(std::string("expected an array, got ") + kind_name(*value_));
}

JsonField JsonField::operator[](std::string_view key) const {
  require_object();
  auto it = value_->find(key);
  if (it == value_->end()) fail_member(key, "missing");
  return JsonField(*it, *source_, member_path(path_, key), depth_ + 1);
}

std::optional<JsonField> JsonField::get(std::string_view key) const {
  require_object();
  auto it = value_->find(key);
  if (it == value_->end() || it->is_null()) return std::nullopt;
  return JsonField(*it, *source_, member_path(path_, key), depth_ + 1);
}

JsonField JsonField::at(size_t index) const {
  require_array();
  if (index >= value_->size()) fail("index " + std::to_string(index) + " out of range");
  return JsonField((*value_)[index], *source_, path_ + "[" + std::to_string(index) + "]", depth_ + 1);
}

size_t JsonField::size() const {
  if (!value_->is_array() && !value_->is_object())
    fail(std::string("expected an array or object, got ") + kind_name(*value_));
  return value_->size();
}

std::string JsonField::str() const {
  if (!value_->is_string()) fail(std::string("expected a string, got ") + kind_name(*value_));
  const auto& s = value_->get_ref<const std::string&>();
  // nlohmann accepts only valid UTF-8 when parsing, but a caller could build
  // a json by hand; the pipeline relies on valid UTF-8 everywhere.
  if (!utf8::is_valid(s)) fail("string is not valid UTF-8");
  return s;
}

bool JsonField::boolean() const {
  if (!value_->is_boolean()) fail(std::string("expected true or false, got ") + kind_name(*value_));
  return value_->get<bool>();
}

int64_t JsonField::integer() const {
  if (value_->is_number_unsigned()) {
    uint64_t u = value_->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) fail("integer out of range");
    return static_cast<int64_t>(u);
  }
  if (!value_->is_number_integer()) fail(std::string("expected an integer, got ") + kind_name(*value_));
  return value_->get<int64_t>();
}

double JsonField::number() const {
  if (!value_->is_number()) fail(std::string("expected a number, got ") + kind_name(*value_));
  return value_->get<double>();
}

char32_t JsonField::single_char() const {
  std::string s = str();
  size_t i = 0;
  if (s.empty()) fail("expected one character, got an empty string");
  char32_t c = utf8::decode(s, i);
  if (i != s.size()) fail("expected one character, got \"" + s + "\"");
  return c;
}

bool JsonField::get_bool(std::string_view key, bool fallback) const {
  auto f = get(key);
  return f ? f->boolean() : fallback;
}

std::string JsonField::get_string(std::string_view key, const std::string& fallback) const {
  auto f = get(key);
  return f ? f->str() : fallback;
}

std::string JsonField::type() const { return (*this)["type"].str(); }

std::string in_quotes(std::string_view s) {
  std::string r;
  r.reserve(s.size() + 2);
  r += '"';
  r.append(s);
  r += '"';
  return r;
}

}  // namespace kvscope::tok
