#include "tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdio>
#include <stdexcept>

#include "tokenizer/grapheme_pattern.h"
#include "tokenizer/onig_properties.h"
#include "tokenizer/unicode_classes.h"
#include "tokenizer/utf8.h"

namespace kvscope::tok {

struct Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

namespace {

std::string pcre_error_text(int code) {
  PCRE2_UCHAR buf[256];
  if (pcre2_get_error_message(code, buf, sizeof buf) < 0) return "error " + std::to_string(code);
  return reinterpret_cast<const char*>(buf);
}

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// One of the classes Oniguruma and PCRE2 disagree on, as class items, plus
// the PCRE2 escape that is closest when it must appear negated inside [...]
// (a negated union cannot be nested in a class without set operations).
struct ClassSpec {
  std::string items;
  std::string negated_fallback;
};

// Property names (\p{...}) whose Oniguruma meaning needs the extra ranges.
const ClassSpec* extended_property(const std::string& name) {
  static const ClassSpec letter{unicode_classes::letter(), "\\P{L}"};
  static const ClassSpec number{unicode_classes::number(), "\\P{N}"};
  static const ClassSpec decimal{unicode_classes::decimal_number(), "\\P{Nd}"};
  if (name == "L" || name == "Letter") return &letter;
  if (name == "N" || name == "Number") return &number;
  if (name == "Nd" || name == "Decimal_Number") return &decimal;
  return nullptr;
}

}  // namespace

std::string Regex::translate(const std::string& p) {
  static const ClassSpec space{unicode_classes::space(), "\\S"};
  static const ClassSpec word{unicode_classes::word(), "\\W"};
  static const ClassSpec digit{unicode_classes::decimal_number(), "\\D"};
  static const ClassSpec hex{"0-9a-fA-F", ""};

  std::string out;
  out.reserve(p.size() * 2);
  bool in_class = false;
  int nested = 0;  // classes open inside the current class
  auto emit = [&](const ClassSpec& spec, bool negate) {
    if (!in_class) {
      out += negate ? "[^" : "[";
      out += spec.items;
      out += ']';
    } else if (!negate) {
      out += spec.items;
    } else {
      if (spec.negated_fallback.empty())
        throw std::invalid_argument("a negated class escape inside [...] is not supported");
      out += spec.negated_fallback;
    }
  };

  size_t i = 0;
  const size_t n = p.size();
  while (i < n) {
    char c = p[i];
    if (c == '\\') {
      if (i + 1 >= n) throw std::invalid_argument("pattern ends with a backslash");
      char d = p[i + 1];
      i += 2;
      switch (d) {
        case 's': emit(space, false); continue;
        case 'S': emit(space, true); continue;
        case 'w': emit(word, false); continue;
        case 'W': emit(word, true); continue;
        case 'd': emit(digit, false); continue;
        case 'D': emit(digit, true); continue;
        // Ruby syntax: \h is a hexadecimal digit (PCRE2: horizontal space).
        case 'h': emit(hex, false); continue;
        case 'H': emit(hex, true); continue;
        case 'X':  // Oniguruma's grapheme cluster, not PCRE2's (see grapheme_pattern.h)
          if (in_class) throw std::invalid_argument("\\X inside a character class");
          out += grapheme_cluster_pattern();
          continue;
        case 'u': {
          // Ruby's \uHHHH; PCRE2 spells it \x{HHHH}.
          if (i + 4 <= n && is_hex(p[i]) && is_hex(p[i + 1]) && is_hex(p[i + 2]) &&
              is_hex(p[i + 3])) {
            out += "\\x{" + p.substr(i, 4) + "}";
            i += 4;
            continue;
          }
          throw std::invalid_argument("\\u must be followed by four hex digits");
        }
        case 'p':
        case 'P': {
          bool negate = d == 'P';
          std::string name;
          if (i < n && p[i] == '{') {
            size_t close = p.find('}', i);
            if (close == std::string::npos) throw std::invalid_argument("unterminated \\p{...}");
            name = p.substr(i + 1, close - i - 1);
            i = close + 1;
          } else if (i < n) {
            name = std::string(1, p[i]);
            ++i;
          } else {
            throw std::invalid_argument("\\p needs a property name");
          }
          if (!name.empty() && name[0] == '^') {  // Oniguruma's \p{^L} means \P{L}
            negate = !negate;
            name.erase(0, 1);
          }
          const ClassSpec* spec = extended_property(name);
          if (spec && !(negate && in_class)) {
            emit(*spec, negate);
          } else if (auto items = onig_properties::property_items(name, negate)) {
            // Oniguruma's own set; the complement is already taken.
            emit(ClassSpec{*items, *items}, false);
          } else {
            out += negate ? "\\P{" : "\\p{";
            out += name;
            out += '}';
          }
          continue;
        }
        default:
          out += c;
          out += d;
          continue;
      }
    }
    if (c == '[') {
      if (in_class) {
        if (p.compare(i, 2, "[:") == 0) {  // POSIX bracket: Oniguruma's meaning, not PCRE2's
          size_t close = p.find(":]", i + 2);
          if (close == std::string::npos) throw std::invalid_argument("unterminated [: ... :]");
          std::string name = p.substr(i + 2, close - i - 2);
          bool negate = !name.empty() && name[0] == '^';
          if (negate) name.erase(0, 1);
          if (auto items = onig_properties::posix_items(name, negate))
            out += *items;
          else
            out.append(p, i, close + 2 - i);  // unknown: PCRE2 gives the error
          i = close + 2;
          continue;
        }
        // A class nested in a class is a union in Oniguruma (BLOOM's
        // " ?[^(\s|[.,!?...])]+"): its items simply join the outer class.
        // A negated one would need set operations PCRE2 10.42 lacks.
        if (p.compare(i, 2, "[^") == 0)
          throw std::invalid_argument(
              "a negated character class nested inside a class ([...[^...]...]) is not supported");
        ++nested;
        ++i;
        if (i < n && p[i] == ']') {  // a leading ']' is a literal here too
          out += "\\]";
          ++i;
        }
        continue;
      }
      in_class = true;
      out += '[';
      ++i;
      if (i < n && p[i] == '^') {
        out += '^';
        ++i;
      }
      if (i < n && p[i] == ']') {  // a leading ']' is a literal
        out += "\\]";
        ++i;
      }
      continue;
    }
    if (in_class && c == ']' && nested > 0) {
      --nested;
      ++i;
      continue;
    }
    if (in_class && c == ']') {
      in_class = false;
      out += ']';
      ++i;
      continue;
    }
    if (in_class && c == '&' && i + 1 < n && p[i + 1] == '&')
      throw std::invalid_argument("class intersection (&&) is not supported");
    out += c;
    ++i;
  }
  if (in_class) throw std::invalid_argument("unterminated character class");
  return out;
}

Regex Regex::compile(const std::string& onig_pattern) {
  Regex r;
  r.pcre_pattern_ = translate(onig_pattern);
  r.code_ = compile_pcre(r.pcre_pattern_);
  return r;
}

Regex Regex::literal(std::string_view text) {
  // Escape everything that is not a letter or digit; non-ASCII stays as is.
  std::string p;
  char buf[16];
  for (char ch : text) {
    auto u = static_cast<unsigned char>(ch);
    if (u >= 0x80 || (u >= '0' && u <= '9') || (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z')) {
      p += ch;
    } else {
      std::snprintf(buf, sizeof buf, "\\x{%X}", u);
      p += buf;
    }
  }
  Regex r;
  r.pcre_pattern_ = p;
  r.code_ = compile_pcre(p);
  return r;
}

namespace {

struct ContextDeleter {
  void operator()(pcre2_compile_context* c) const { pcre2_compile_context_free(c); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};

}  // namespace

std::shared_ptr<const Regex::Code> Regex::compile_pcre(const std::string& pattern) {
  std::unique_ptr<pcre2_compile_context, ContextDeleter> ctx(pcre2_compile_context_create(nullptr));
  // Oniguruma's Ruby syntax: ^ and $ are line anchors at "\n" only, and "."
  // does not match "\n".
  pcre2_set_newline(ctx.get(), PCRE2_NEWLINE_LF);
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_MULTILINE, &err, &offset, ctx.get());
  if (!code)
    throw std::invalid_argument("regex does not compile (" + pcre_error_text(err) + " at offset " +
                                std::to_string(offset) + " of the PCRE2 form \"" + pattern + "\")");
  auto holder = std::make_shared<Regex::Code>();
  holder->code = code;
  // JIT is optional: when unavailable pcre2_match interprets.
  (void)pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return holder;
}

std::vector<Match> Regex::find_all(std::string_view text) const {
  std::vector<Match> out;
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> md(
      pcre2_match_data_create_from_pattern(code_->code, nullptr));
  if (!md) throw std::bad_alloc();
  static const char kEmpty[] = "";
  auto subject = reinterpret_cast<PCRE2_SPTR>(text.data() ? text.data() : kEmpty);
  const size_t n = text.size();

  size_t last_end = 0;
  bool have_last = false;
  size_t last_match = 0;
  while (last_end <= n) {
    int rc = pcre2_match(code_->code, subject, n, last_end, PCRE2_NO_UTF_CHECK, md.get(), nullptr);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)  // deep backtracking: the interpreter uses the heap
      rc = pcre2_match(code_->code, subject, n, last_end, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT,
                       md.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) throw std::runtime_error("regex match failed: " + pcre_error_text(rc));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
    size_t s = ov[0], e = ov[1];
    if (s > e) s = e;  // only possible with \K inside a lookaround
    if (s == e && have_last && last_match == e) {
      if (last_end >= n) break;
      last_end += utf8::sequence_length(static_cast<unsigned char>(text[last_end]));
      continue;
    }
    last_end = e;
    last_match = e;
    have_last = true;
    out.push_back({s, e});
  }
  return out;
}

}  // namespace kvscope::tok
