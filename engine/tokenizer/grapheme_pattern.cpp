#include "tokenizer/grapheme_pattern.h"

#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string_view>
#include <stdexcept>

namespace kvscope::tok {

namespace {

struct CodeRange {
  char32_t first, last;
};
struct GraphemeClass {
  const char* name;  // a Grapheme_Cluster_Break value, or Pict (Extended_Pictographic)
  unsigned first;    // index into kGraphemeRanges
  unsigned count;
};

#include "tokenizer/onig_grapheme.inc"

// The class's ranges as PCRE2 class items ("\x{300}-\x{36F}...").
std::string items(const char* name) {
  for (const GraphemeClass& c : kGraphemeClasses) {
    if (std::strcmp(c.name, name) != 0) continue;
    std::string out;
    char buf[40];
    for (unsigned i = c.first; i < c.first + c.count; ++i) {
      const auto a = static_cast<unsigned>(kGraphemeRanges[i].first),
                 b = static_cast<unsigned>(kGraphemeRanges[i].last);
      if (a == b) std::snprintf(buf, sizeof buf, "\\x{%X}", a);
      else std::snprintf(buf, sizeof buf, "\\x{%X}-\\x{%X}", a, b);
      out += buf;
    }
    return out;
  }
  throw std::logic_error(std::string("onig_grapheme.inc has no class ") + name);
}

// The pieces joined (appends, not operator+ on literals: GCC 12 warns
// falsely, -Wrestrict, on "[" + std::string).
std::string join(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view p : parts) out.append(p);
  return out;
}

std::string build() {
  auto cls = [](const char* name) { return join({"[", items(name), "]"}); };
  const std::string control = items("Control"), L = cls("L"), V = cls("V"), T = cls("T");
  // UAX #29 GB6-GB8: a Hangul syllable from jamo and precomposed syllables.
  const std::string hangul = join({L, "*(?:", V, "+|", cls("LV"), V, "*|", cls("LVT"), ")", T, "*|", L, "+|", T, "+"});
  // GB12/13: regional indicators pair up; GB11: pictographs joined by ZWJ
  // (Extend allowed before each joiner).
  const std::string ri = join({cls("RI"), cls("RI")});
  const std::string pict = join({cls("Pict"), "(?:[", items("Extend"), "]*\\x{200D}", cls("Pict"), ")*"});
  const std::string core = join({"(?:", hangul, "|", ri, "|", pict, "|[^", control, "])"});
  // GB9, GB9a: Extend, ZWJ and SpacingMark attach to what precedes; GB9b:
  // Prepend to what follows (unless it is a control).
  const std::string post = join({"[", items("Extend"), items("ZWJ"), items("SpacingMark"), "]"});
  // GB3-GB5: CR LF stays together; any other control stands alone.
  return join({"(?>\\r\\n|[", control, "]|", cls("Prepend"), "*", core, post, "*)"});
}

}  // namespace

const std::string& grapheme_cluster_pattern() {
  static const std::string pattern = build();
  return pattern;
}

}  // namespace kvscope::tok
