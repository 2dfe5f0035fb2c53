#include "tokenizer/onig_properties.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iterator>

namespace kvscope::tok::onig_properties {

namespace {

struct CodeRange {
  char32_t first, last;
};
struct NamedClass {
  const char* name;  // loose form, see loose()
  unsigned first;    // index into kOnigRanges
  unsigned count;
};

#include "tokenizer/onig_properties.inc"

std::string loose(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == ' ' || c == '_' || c == '-') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

const NamedClass* find(const std::string& key) {
  auto it = std::lower_bound(std::begin(kOnigClasses), std::end(kOnigClasses), key,
                             [](const NamedClass& c, const std::string& k) { return k.compare(c.name) > 0; });
  if (it == std::end(kOnigClasses) || key != it->name) return nullptr;
  return &*it;
}

void append_range(std::string& out, char32_t a, char32_t b) {
  char buf[40];
  if (a == b)
    std::snprintf(buf, sizeof buf, "\\x{%X}", static_cast<unsigned>(a));
  else
    std::snprintf(buf, sizeof buf, "\\x{%X}-\\x{%X}", static_cast<unsigned>(a), static_cast<unsigned>(b));
  out += buf;
}

// Ranges, or their complement over the code points UTF-8 can carry (PCRE2
// refuses surrogates inside a class, and valid text has none).
std::string items(const NamedClass& c, bool negate) {
  const CodeRange* r = kOnigRanges + c.first;
  std::string out;
  if (!negate) {
    for (unsigned i = 0; i < c.count; ++i) append_range(out, r[i].first, r[i].last);
    return out;
  }
  auto gap = [&](char32_t a, char32_t b) {  // [a, b], minus the surrogates
    if (a > b) return;
    if (b < 0xD800 || a > 0xDFFF) return append_range(out, a, b);
    if (a < 0xD800) append_range(out, a, 0xD7FF);
    if (b > 0xDFFF) append_range(out, 0xE000, b);
  };
  char32_t next = 0;
  for (unsigned i = 0; i < c.count; ++i) {
    if (r[i].first > 0) gap(next, r[i].first - 1);
    next = r[i].last + 1;
  }
  gap(next, 0x10FFFF);
  return out;
}

}  // namespace

std::optional<std::string> property_items(std::string_view name, bool negate) {
  const NamedClass* c = find(loose(name));
  if (!c || c->name[0] == '[') return std::nullopt;
  return items(*c, negate);
}

std::optional<std::string> posix_items(std::string_view name, bool negate) {
  const NamedClass* c = find("[:" + std::string(name) + ":]");
  if (!c) return std::nullopt;
  return items(*c, negate);
}

}  // namespace kvscope::tok::onig_properties
