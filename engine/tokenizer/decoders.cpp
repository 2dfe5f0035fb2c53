#include "tokenizer/decoders.h"

#include <optional>

#include "tokenizer/byte_level_alphabet.h"
#include "tokenizer/pattern_json.h"
#include "tokenizer/utf8.h"

namespace kvscope::tok {

namespace {

// All tokens' bytes, one string, invalid UTF-8 replaced like Rust's
// from_utf8_lossy. A token with a character outside the byte alphabet (an
// added token such as "中") contributes its own UTF-8 unchanged.
class ByteLevel final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const std::string& t : tokens) {
      if (auto b = byte_level::decode(t))
        bytes += *b;
      else
        bytes += t;
    }
    tokens.assign(1, utf8::lossy(bytes));
  }
};

enum class PrependScheme { Always, First, Never };

// Every replacement character becomes a space, except in the first token,
// where HF drops them all (the one it prepended, and any others).
class Metaspace final : public Decoder {
 public:
  Metaspace(char32_t replacement, PrependScheme scheme) : replacement_(replacement), scheme_(scheme) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t k = 0; k < tokens.size(); ++k) {
      const std::string& t = tokens[k];
      std::string out;
      out.reserve(t.size());
      size_t i = 0;
      while (i < t.size()) {
        size_t at = i;
        char32_t c = utf8::decode(t, i);
        if (c == replacement_) {
          if (!(k == 0 && scheme_ != PrependScheme::Never)) out += ' ';
        } else {
          out.append(t, at, i - at);
        }
      }
      tokens[k] = std::move(out);
    }
  }

 private:
  char32_t replacement_;
  PrependScheme scheme_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(Regex pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      std::vector<Match> matches = pattern_.find_all(t);
      if (matches.empty()) continue;
      std::string out;
      size_t prev = 0;
      for (const Match& m : matches) {
        out.append(t, prev, m.start - prev);
        out += content_;
        prev = m.end;
      }
      out.append(t, prev, std::string::npos);
      t = std::move(out);
    }
  }

 private:
  Regex pattern_;
  std::string content_;
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "<0xHH>" -> the byte, parsed like Rust's u8::from_str_radix(HH, 16), which
// also takes a leading '+' ("<0x+A>" is 0x0A).
std::optional<unsigned char> byte_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return std::nullopt;
  if (t[3] == '+') {
    int v = hex_value(t[4]);
    if (v < 0) return std::nullopt;
    return static_cast<unsigned char>(v);
  }
  int hi = hex_value(t[3]), lo = hex_value(t[4]);
  if (hi < 0 || lo < 0) return std::nullopt;
  return static_cast<unsigned char>(hi * 16 + lo);
}

// Runs of <0xHH> tokens become their text; a run that is not valid UTF-8
// becomes one U+FFFD per byte (HF's rule, unlike from_utf8_lossy).
class ByteFallback final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    out.reserve(tokens.size());
    std::string run;
    auto flush = [&] {
      if (run.empty()) return;
      if (utf8::is_valid(run)) {
        out.push_back(run);
      } else {
        for (size_t i = 0; i < run.size(); ++i) out.emplace_back("\xEF\xBF\xBD");
      }
      run.clear();
    };
    for (std::string& t : tokens) {
      if (auto b = byte_token(t)) {
        run += static_cast<char>(*b);
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens = std::move(out);
  }
};

class Fuse final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const std::string& t : tokens) all += t;
    tokens.assign(1, std::move(all));
  }
};

// Removes up to `start` leading and `stop` trailing `content` characters
// from every token.
class StripDecoder final : public Decoder {
 public:
  StripDecoder(char32_t content, size_t start, size_t stop) : content_(content), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& t : tokens) {
      std::vector<size_t> offsets;  // byte offset of every character, plus the end
      std::vector<char32_t> chars;
      size_t i = 0;
      while (i < t.size()) {
        offsets.push_back(i);
        chars.push_back(utf8::decode(t, i));
      }
      offsets.push_back(t.size());
      const size_t n = chars.size();
      size_t start_cut = 0;
      for (size_t k = 0; k < start_ && k < n; ++k) {
        if (chars[k] != content_) break;
        start_cut = k + 1;
      }
      size_t stop_cut = n;
      for (size_t k = 0; k < stop_ && k < n; ++k) {
        size_t index = n - k - 1;
        if (chars[index] != content_) break;
        stop_cut = index;
      }
      // HF panics when the cuts cross (a token made only of `content` with
      // both sides stripped); an empty token is the sensible answer.
      if (start_cut >= stop_cut) {
        t.clear();
        continue;
      }
      t = t.substr(offsets[start_cut], offsets[stop_cut] - offsets[start_cut]);
    }
  }

 private:
  char32_t content_;
  size_t start_, stop_;
};

// end_of_word_suffix models: the suffix marks a word end, so it becomes a
// space (nothing after the last token).
class BpeSuffix final : public Decoder {
 public:
  explicit BpeSuffix(std::string suffix) : suffix_(std::move(suffix)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    if (suffix_.empty()) return;
    for (size_t k = 0; k < tokens.size(); ++k) {
      const std::string replacement = k + 1 == tokens.size() ? "" : " ";
      std::string& t = tokens[k];
      std::string out;
      size_t prev = 0, at;
      while ((at = t.find(suffix_, prev)) != std::string::npos) {
        out.append(t, prev, at - prev);
        out += replacement;
        prev = at + suffix_.size();
      }
      out.append(t, prev, std::string::npos);
      t = std::move(out);
    }
  }

 private:
  std::string suffix_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<const Decoder>> steps) : steps_(std::move(steps)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& s : steps_) s->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<const Decoder>> steps_;
};

PrependScheme read_prepend_scheme(const JsonField& j) {
  std::optional<PrependScheme> scheme;
  if (auto f = j.get("prepend_scheme")) {
    std::string name = f->str();
    if (name == "always") scheme = PrependScheme::Always;
    else if (name == "first") scheme = PrependScheme::First;
    else if (name == "never") scheme = PrependScheme::Never;
    else f->fail("unknown prepend_scheme \"" + name + "\" (expected always, first or never)");
  }
  if (auto f = j.get("add_prefix_space")) {  // the spelling before prepend_scheme
    if (!f->boolean()) {
      if (scheme && *scheme != PrependScheme::Never) f->fail("add_prefix_space: false contradicts prepend_scheme");
      scheme = PrependScheme::Never;
    }
  }
  return scheme.value_or(PrependScheme::Always);
}

size_t read_count(const JsonField& j, std::string_view key) {
  auto f = j.get(key);
  if (!f) return 0;
  int64_t v = f->integer();
  if (v < 0) f->fail("expected a count >= 0");
  return static_cast<size_t>(v);
}

}  // namespace

std::unique_ptr<const Decoder> parse_decoder(const JsonField& j) {
  if (j.is_null()) return nullptr;
  j.require_depth_below(kMaxNesting);
  j.require_object();
  const std::string type = j.type();
  if (type == "ByteLevel") return std::make_unique<ByteLevel>();
  if (type == "Metaspace") return std::make_unique<Metaspace>(j["replacement"].single_char(), read_prepend_scheme(j));
  if (type == "Replace") return std::make_unique<ReplaceDecoder>(parse_pattern(j["pattern"]), j["content"].str());
  if (type == "ByteFallback") return std::make_unique<ByteFallback>();
  if (type == "Fuse") return std::make_unique<Fuse>();
  if (type == "Strip")
    return std::make_unique<StripDecoder>(j["content"].single_char(), read_count(j, "start"), read_count(j, "stop"));
  if (type == "BPEDecoder") return std::make_unique<BpeSuffix>(j.get_string("suffix", "</w>"));
  if (type == "Sequence") {
    JsonField list = j["decoders"];
    list.require_array();
    std::vector<std::unique_ptr<const Decoder>> steps;
    for (size_t i = 0; i < list.size(); ++i) {
      JsonField item = list.at(i);
      if (item.is_null()) item.fail("expected a decoder, got null");
      steps.push_back(parse_decoder(item));
    }
    return std::make_unique<SequenceDecoder>(std::move(steps));
  }
  j["type"].fail("unsupported decoder \"" + type +
                 "\" (supported: ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, BPEDecoder, Sequence)");
}

}  // namespace kvscope::tok
