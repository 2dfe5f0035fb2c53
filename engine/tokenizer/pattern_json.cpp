#include "tokenizer/pattern_json.h"

#include <stdexcept>

namespace kvscope::tok {

Regex parse_pattern(const JsonField& j) {
  j.require_object();
  if (auto s = j.get("String")) return Regex::literal(s->str());
  if (auto r = j.get("Regex")) {
    try {
      return Regex::compile(r->str());
    } catch (const std::invalid_argument& e) {
      r->fail(e.what());
    }
  }
  j.fail("expected {\"String\": ...} or {\"Regex\": ...}");
}

}  // namespace kvscope::tok
