#include "tokenizer/pre_tokenizers.h"

#include <stdexcept>
#include <vector>

#include "tokenizer/byte_level_alphabet.h"
#include "tokenizer/pattern_json.h"
#include "tokenizer/regex.h"
#include "tokenizer/split_behavior.h"
#include "tokenizer/unicode_classes.h"
#include "tokenizer/unicode_fixups.h"
#include "tokenizer/utf8.h"

namespace kvscope::tok {

const char kGpt2SplitPattern[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

namespace {

std::vector<Match> whole(const std::string& text) { return {Match{0, text.size()}}; }

// Patterns compiled once, on first use (compilation is not free, and the
// compiled code is shared read-only between threads).
const Regex& gpt2_regex() {
  static const Regex r = Regex::compile(kGpt2SplitPattern);
  return r;
}

// HF's Whitespace is Rust regex's \w+|[^\w\s]+, and Rust's \w is not
// Oniguruma's: it has ZWNJ/ZWJ (Join_Control) and lacks "²³¹¼½¾" (No).
const Regex& whitespace_words_regex() {
  static const std::string w = unicode_classes::rust_word();
  static const Regex r = Regex::compile("[" + w + "]+|[^" + w + "\\s]+");
  return r;
}

std::vector<Match> split_by(const Regex& re, const std::string& text, SplitBehavior behavior,
                            bool invert = false) {
  std::vector<Span> spans = spans_from_matches(text.size(), re.find_all(text));
  if (invert) invert_spans(spans);
  return apply_split_behavior(spans, behavior);
}

class ByteLevel final : public PreTokenizer {
 public:
  ByteLevel(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space), use_regex_(use_regex) {}
  void pre_tokenize(Pieces& pieces) const override {
    split_pieces(pieces, [&](Piece& p) {
      if (add_prefix_space_ && !p.text.empty() && p.text[0] != ' ') {
        p.text.insert(p.text.begin(), ' ');
        if (p.origin_bytes) ++p.origin_bytes;  // HF aligns a prepended space with what follows
      }
      return use_regex_ ? split_by(gpt2_regex(), p.text, SplitBehavior::Isolated) : whole(p.text);
    });
    for (Piece& p : pieces) {
      if (p.added_id >= 0) continue;
      if (p.origin_bytes) p.origin_bytes = byte_level::encode(p.text.substr(0, p.origin_bytes)).size();
      p.text = byte_level::encode(p.text);
    }
  }

 private:
  bool add_prefix_space_, use_regex_;
};

class Split final : public PreTokenizer {
 public:
  Split(Regex pattern, SplitBehavior behavior, bool invert)
      : pattern_(std::move(pattern)), behavior_(behavior), invert_(invert) {}
  void pre_tokenize(Pieces& pieces) const override {
    split_pieces(pieces, [&](Piece& p) { return split_by(pattern_, p.text, behavior_, invert_); });
  }

 private:
  Regex pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

enum class PrependScheme { Always, First, Never };

class Metaspace final : public PreTokenizer {
 public:
  Metaspace(char32_t replacement, PrependScheme scheme, bool split)
      : replacement_(replacement), rep_(utf8::encode(replacement)), scheme_(scheme), split_(split) {}
  void pre_tokenize(Pieces& pieces) const override {
    split_pieces(pieces, [&](Piece& p) {
      std::string& t = p.text;
      if (t.find(' ') != std::string::npos) {
        if (p.origin_bytes) p.origin_bytes = spaces_replaced(t.substr(0, p.origin_bytes)).size();
        t = spaces_replaced(t);
      }
      bool starts_with_rep = t.compare(0, rep_.size(), rep_) == 0;
      bool prepend = !t.empty() && !starts_with_rep &&
                     (scheme_ == PrependScheme::Always || (scheme_ == PrependScheme::First && p.at_origin()));
      if (prepend) {
        t.insert(0, rep_);
        if (p.origin_bytes) p.origin_bytes += rep_.size();
      }
      if (!split_) return whole(t);
      char32_t rep = replacement_;
      return apply_split_behavior(spans_from_chars(t, [rep](char32_t c) { return c == rep; }),
                                  SplitBehavior::MergedWithNext);
    });
  }

 private:
  std::string spaces_replaced(const std::string& t) const {
    std::string out;
    out.reserve(t.size() + t.size() / 2);
    for (char c : t) {
      if (c == ' ')
        out += rep_;
      else
        out += c;
    }
    return out;
  }

  char32_t replacement_;
  std::string rep_;
  PrependScheme scheme_;
  bool split_;
};

class Digits final : public PreTokenizer {
 public:
  explicit Digits(bool individual) : individual_(individual) {}
  void pre_tokenize(Pieces& pieces) const override {
    auto behavior = individual_ ? SplitBehavior::Isolated : SplitBehavior::Contiguous;
    split_pieces(pieces, [&](Piece& p) {
      return apply_split_behavior(spans_from_chars(p.text, unicode_fixups::is_numeric), behavior);
    });
  }

 private:
  bool individual_;
};

// \w+|[^\w\s]+ kept, everything else (whitespace) dropped.
class Whitespace final : public PreTokenizer {
 public:
  void pre_tokenize(Pieces& pieces) const override {
    split_pieces(pieces, [&](Piece& p) {
      return split_by(whitespace_words_regex(), p.text, SplitBehavior::Removed, /*invert=*/true);
    });
  }
};

class CharSplit final : public PreTokenizer {
 public:
  explicit CharSplit(char32_t delimiter) : delimiter_(delimiter) {}
  void pre_tokenize(Pieces& pieces) const override {
    char32_t d = delimiter_;
    split_pieces(pieces, [d](Piece& p) {
      return apply_split_behavior(spans_from_chars(p.text, [d](char32_t c) { return c == d; }),
                                  SplitBehavior::Removed);
    });
  }

 private:
  char32_t delimiter_;
};

class WhitespaceSplit final : public PreTokenizer {
 public:
  void pre_tokenize(Pieces& pieces) const override {
    split_pieces(pieces, [](Piece& p) {
      return apply_split_behavior(spans_from_chars(p.text, utf8::is_whitespace), SplitBehavior::Removed);
    });
  }
};

class Punctuation final : public PreTokenizer {
 public:
  explicit Punctuation(SplitBehavior behavior) : behavior_(behavior) {}
  void pre_tokenize(Pieces& pieces) const override {
    split_pieces(pieces, [&](Piece& p) {
      return apply_split_behavior(spans_from_chars(p.text, unicode_fixups::is_punctuation), behavior_);
    });
  }

 private:
  SplitBehavior behavior_;
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<const PreTokenizer>> steps) : steps_(std::move(steps)) {}
  void pre_tokenize(Pieces& pieces) const override {
    for (const auto& s : steps_) s->pre_tokenize(pieces);
  }

 private:
  std::vector<std::unique_ptr<const PreTokenizer>> steps_;
};

SplitBehavior read_behavior(const JsonField& j, std::string_view key, SplitBehavior fallback) {
  auto f = j.get(key);
  if (!f) return fallback;
  std::string name = f->str();
  auto b = parse_split_behavior(name);
  if (!b)
    f->fail("unknown behavior \"" + name +
            "\" (expected Removed, Isolated, MergedWithPrevious, MergedWithNext or Contiguous)");
  return *b;
}

PrependScheme read_prepend_scheme(const JsonField& j) {
  std::optional<PrependScheme> scheme;
  if (auto f = j.get("prepend_scheme")) {
    std::string name = f->str();
    if (name == "always") scheme = PrependScheme::Always;
    else if (name == "first") scheme = PrependScheme::First;
    else if (name == "never") scheme = PrependScheme::Never;
    else f->fail("unknown prepend_scheme \"" + name + "\" (expected always, first or never)");
  }
  // Files older than prepend_scheme say add_prefix_space instead. (HF 0.23
  // refuses add_prefix_space: false without prepend_scheme: "never"; reading
  // it as "never" is what such files meant.)
  if (auto f = j.get("add_prefix_space")) {
    if (!f->boolean()) {
      if (scheme && *scheme != PrependScheme::Never)
        f->fail("add_prefix_space: false contradicts prepend_scheme");
      scheme = PrependScheme::Never;
    }
  }
  return scheme.value_or(PrependScheme::Always);
}

}  // namespace

std::unique_ptr<const PreTokenizer> parse_pre_tokenizer(const JsonField& j) {
  if (j.is_null()) return nullptr;
  j.require_depth_below(kMaxNesting);
  j.require_object();
  const std::string type = j.type();
  if (type == "ByteLevel")
    return std::make_unique<ByteLevel>(j.get_bool("add_prefix_space", true), j.get_bool("use_regex", true));
  if (type == "Split") {
    if (!j.get("behavior")) j.fail_member("behavior", "missing");
    auto behavior = read_behavior(j, "behavior", SplitBehavior::Isolated);
    return std::make_unique<Split>(parse_pattern(j["pattern"]), behavior, j.get_bool("invert", false));
  }
  if (type == "Metaspace")
    return std::make_unique<Metaspace>(j["replacement"].single_char(), read_prepend_scheme(j),
                                       j.get_bool("split", true));
  if (type == "Digits") return std::make_unique<Digits>(j.get_bool("individual_digits", false));
  if (type == "Whitespace") return std::make_unique<Whitespace>();
  if (type == "WhitespaceSplit") return std::make_unique<WhitespaceSplit>();
  if (type == "Punctuation")
    return std::make_unique<Punctuation>(read_behavior(j, "behavior", SplitBehavior::Isolated));
  if (type == "CharDelimiterSplit") return std::make_unique<CharSplit>(j["delimiter"].single_char());
  if (type == "BertPreTokenizer") {
    std::vector<std::unique_ptr<const PreTokenizer>> steps;
    steps.push_back(std::make_unique<WhitespaceSplit>());
    steps.push_back(std::make_unique<Punctuation>(SplitBehavior::Isolated));
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
  }
  if (type == "Sequence") {
    JsonField list = j["pretokenizers"];
    list.require_array();
    std::vector<std::unique_ptr<const PreTokenizer>> steps;
    for (size_t i = 0; i < list.size(); ++i) {
      JsonField item = list.at(i);
      if (item.is_null()) item.fail("expected a pre-tokenizer, got null");
      steps.push_back(parse_pre_tokenizer(item));
    }
    return std::make_unique<SequencePreTokenizer>(std::move(steps));
  }
  j["type"].fail("unsupported pre-tokenizer \"" + type +
                 "\" (supported: ByteLevel, Split, Metaspace, Digits, Whitespace, WhitespaceSplit, "
                 "Punctuation, BertPreTokenizer, CharDelimiterSplit, Sequence)");
}

}  // namespace kvscope::tok
