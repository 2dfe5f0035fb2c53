#include "tokenizer/normalizers.h"

#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "tokenizer/byte_level_alphabet.h"
#include "tokenizer/pattern_json.h"
#include "tokenizer/unicode_fixups.h"
#include "tokenizer/utf8.h"

namespace kvscope::tok {

void Normalizer::normalize_piece(std::string& text, size_t& origin_bytes) const {
  if (origin_bytes > 0) origin_bytes = origin_after(text, origin_bytes);
  normalize(text);
  origin_bytes = std::min(origin_bytes, text.size());
}

size_t Normalizer::origin_after(const std::string& before, size_t origin_bytes) const {
  std::string prefix = before.substr(0, origin_bytes);
  normalize(prefix);
  return prefix.size();
}

namespace {

bool is_ascii(const std::string& s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

// Unicode normalization forms through utf8proc (HF uses the
// unicode-normalization crate; both follow UAX #15). The few characters
// HF's older tables do not decompose are copied through untouched.
class UnicodeForm final : public Normalizer {
 public:
  explicit UnicodeForm(int options) : options_(options) {}
  void normalize(std::string& text) const override {
    if (is_ascii(text)) return;  // every form leaves ASCII alone
    const bool compat = (options_ & UTF8PROC_COMPAT) != 0;
    std::string out;
    out.reserve(text.size());
    size_t segment = 0, i = 0;
    while (i < text.size()) {
      size_t at = i;
      char32_t c = utf8::decode(text, i);
      bool keep = compat ? unicode_fixups::keeps_compatibility(c) : unicode_fixups::keeps_canonical(c);
      if (!keep) continue;
      append_normalized(out, std::string_view(text).substr(segment, at - segment));
      out.append(text, at, i - at);
      segment = i;
    }
    append_normalized(out, std::string_view(text).substr(segment));
    text = std::move(out);
  }

 private:
  void append_normalized(std::string& out, std::string_view s) const {
    if (s.empty()) return;
    utf8proc_uint8_t* mapped = nullptr;
    utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                      static_cast<utf8proc_ssize_t>(s.size()), &mapped,
                                      static_cast<utf8proc_option_t>(options_));
    if (n < 0) {
      // Only possible for invalid UTF-8 or out of memory; the pipeline keeps
      // text valid, so keep the text rather than fail an encode.
      out.append(s);
    } else {
      out.append(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
    }
    std::free(mapped);
  }

  int options_;
};

// Rust's char::to_lowercase, per character (HF does not apply the
// word-final sigma rule). Its only multi-character mapping is U+0130.
class Lowercase final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    if (is_ascii(text)) {
      for (char& c : text)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      return;
    }
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
      char32_t c = utf8::decode(text, i);
      if (c == 0x130) {
        out += "i\xCC\x87";
      } else if (auto added = unicode_fixups::added_lowercase(c)) {
        utf8::append(out, *added);
      } else {
        utf8::append(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(c))));
      }
    }
    text = std::move(out);
  }
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  void normalize(std::string& text) const override {
    size_t begin = left_ ? utf8::leading_whitespace(text) : 0;
    size_t end = right_ ? begin + utf8::trailing_whitespace_start(std::string_view(text).substr(begin)) : text.size();
    text = text.substr(begin, end - begin);
  }

 private:
  bool left_, right_;
};

// Drops combining marks (HF: unicode_normalization's is_combining_mark, with
// its own Unicode version, hence the table instead of utf8proc).
class StripAccents final : public Normalizer {
 public:
  void normalize(std::string& text) const override {
    if (is_ascii(text)) return;
    std::string out;
    out.reserve(text.size());
    size_t i = 0;
    while (i < text.size()) {
      size_t at = i;
      if (unicode_fixups::is_combining_mark(utf8::decode(text, i))) continue;
      out.append(text, at, i - at);
    }
    text = std::move(out);
  }
};

class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(Regex pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  // HF aligns a replacement with the last character it replaced, so a match
  // that runs past the origin prefix ends the prefix where it starts.
  size_t origin_after(const std::string& before, size_t origin_bytes) const override {
    size_t keep = origin_bytes;
    for (const Match& m : pattern_.find_all(before)) {
      if (m.start >= origin_bytes) break;
      if (m.end > origin_bytes) {
        keep = m.start;
        break;
      }
    }
    return keep == 0 ? 0 : Normalizer::origin_after(before, keep);
  }
  void normalize(std::string& text) const override {
    std::vector<Match> matches = pattern_.find_all(text);
    if (matches.empty()) return;
    std::string out;
    out.reserve(text.size());
    size_t prev = 0;
    for (const Match& m : matches) {
      out.append(text, prev, m.start - prev);
      out += content_;
      prev = m.end;
    }
    out.append(text, prev, std::string::npos);
    text = std::move(out);
  }

 private:
  Regex pattern_;
  std::string content_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  void normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
  }

 private:
  std::string prefix_;
};

class ByteLevelNormalizer final : public Normalizer {
 public:
  void normalize(std::string& text) const override { text = byte_level::encode(text); }
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<const Normalizer>> steps) : steps_(std::move(steps)) {}
  size_t origin_after(const std::string& before, size_t origin_bytes) const override {
    std::string text = before;
    for (const auto& s : steps_) s->normalize_piece(text, origin_bytes);
    return origin_bytes;
  }
  void normalize(std::string& text) const override {
    for (const auto& s : steps_) s->normalize(text);
  }

 private:
  std::vector<std::unique_ptr<const Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<const Normalizer> parse_normalizer(const JsonField& j) {
  if (j.is_null()) return nullptr;
  j.require_depth_below(kMaxNesting);
  j.require_object();
  const std::string type = j.type();
  if (type == "NFC") return std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_COMPOSE);
  if (type == "NFD") return std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE);
  if (type == "NFKC")
    return std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
  if (type == "NFKD")
    return std::make_unique<UnicodeForm>(UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "ByteLevel") return std::make_unique<ByteLevelNormalizer>();
  if (type == "Strip")
    return std::make_unique<StripNormalizer>(j.get_bool("strip_left", true), j.get_bool("strip_right", true));
  if (type == "Prepend") return std::make_unique<Prepend>(j["prepend"].str());
  if (type == "Replace") return std::make_unique<ReplaceNormalizer>(parse_pattern(j["pattern"]), j["content"].str());
  if (type == "Sequence") {
    JsonField list = j["normalizers"];
    list.require_array();
    std::vector<std::unique_ptr<const Normalizer>> steps;
    for (size_t i = 0; i < list.size(); ++i) {
      JsonField item = list.at(i);
      if (item.is_null()) item.fail("expected a normalizer, got null");
      steps.push_back(parse_normalizer(item));
    }
    return std::make_unique<SequenceNormalizer>(std::move(steps));
  }
  j["type"].fail("unsupported normalizer \"" + type +
                 "\" (supported: NFC, NFD, NFKC, NFKD, Lowercase, Strip, StripAccents, Replace, "
                 "Prepend, ByteLevel, Sequence)");
}

}  // namespace kvscope::tok
