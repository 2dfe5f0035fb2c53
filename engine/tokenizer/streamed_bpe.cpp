#include "tokenizer/streamed_bpe.h"

namespace kvscope::tok {

namespace {

using Json = nlohmann::json;
using Dom = nlohmann::detail::json_sax_dom_parser<Json>;

// SAX events go to the document's tree builder, except the members of
// model.vocab and the elements of model.merges: each of those is built into
// a value of its own (a token's id, a merge's pair, or whatever a broken
// file put there, for the error message) and moved out.
class Splitter {
 public:
  Splitter(Json& root, StreamedBpe& taken) : main_(root), taken_(taken) {}

  bool null() {
    return value([](Dom& d) { return d.null(); });
  }
  bool boolean(bool v) {
    return value([&](Dom& d) { return d.boolean(v); });
  }
  bool number_integer(Json::number_integer_t v) {
    return value([&](Dom& d) { return d.number_integer(v); });
  }
  bool number_unsigned(Json::number_unsigned_t v) {
    return value([&](Dom& d) { return d.number_unsigned(v); });
  }
  bool number_float(Json::number_float_t v, const Json::string_t& s) {
    return value([&](Dom& d) { return d.number_float(v, s); });
  }
  bool string(Json::string_t& v) {
    return value([&](Dom& d) { return d.string(v); });
  }
  bool binary(Json::binary_t& v) {
    return value([&](Dom& d) { return d.binary(v); });
  }

  bool start_object(std::size_t n) {
    if (element_ || capturing_ != Capture::None) return open([&](Dom& d) { return d.start_object(n); });
    if (depth_ == 1) key_[2].clear();
    const bool vocab = depth_ == 2 && key_[1] == "model" && key_[2] == "vocab";
    if (depth_ == 1 && key_[1] == "model") taken_ = StreamedBpe{};  // a later "model" replaces the first
    if (vocab) taken_.vocab.emplace();
    capturing_ = vocab ? Capture::Vocab : Capture::None;
    ++depth_;
    return main_.start_object(n);
  }
  bool key(Json::string_t& k) {
    if (element_) return element_->key(k);
    if (capturing_ == Capture::Vocab) {
      member_key_ = std::move(k);
      return true;
    }
    if (depth_ <= 2) key_[depth_] = k;
    return main_.key(k);
  }
  bool end_object() {
    if (element_) return close([](Dom& d) { return d.end_object(); });
    capturing_ = Capture::None;
    --depth_;
    return main_.end_object();
  }
  bool start_array(std::size_t n) {
    if (element_ || capturing_ != Capture::None) return open([&](Dom& d) { return d.start_array(n); });
    if (depth_ == 1) key_[2].clear();
    const bool merges = depth_ == 2 && key_[1] == "model" && key_[2] == "merges";
    if (merges) taken_.merges.emplace();
    capturing_ = merges ? Capture::Merges : Capture::None;
    ++depth_;
    return main_.start_array(n);
  }
  bool end_array() {
    if (element_) return close([](Dom& d) { return d.end_array(); });
    capturing_ = Capture::None;
    --depth_;
    return main_.end_array();
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    return main_.parse_error(position, token, e);
  }

 private:
  enum class Capture { None, Vocab, Merges };

  // A value where one is expected: a whole element when capturing, else a
  // part of the document (or of the element being built).
  template <class Event>
  bool value(Event event) {
    if (element_) return event(*element_);  // inside an element's container
    if (capturing_ != Capture::None) {
      begin_element();
      event(*element_);
      finish_element();
      return true;
    }
    return event(main_);
  }
  // A container opening inside an element, or as one.
  template <class Event>
  bool open(Event event) {
    if (!element_) begin_element();
    ++element_depth_;
    return event(*element_);
  }
  template <class Event>
  bool close(Event event) {
    event(*element_);
    if (--element_depth_ == 0) finish_element();
    return true;
  }
  void begin_element() {
    element_value_ = Json();
    element_.emplace(element_value_);
  }
  void finish_element() {
    element_.reset();
    if (capturing_ == Capture::Vocab) taken_.vocab->emplace_back(std::move(member_key_), std::move(element_value_));
    else taken_.merges->push_back(std::move(element_value_));
  }

  Dom main_;
  StreamedBpe& taken_;
  int depth_ = 0;       // containers of the document open
  std::string key_[3];  // the key at depth 1 and 2 (key_[0] unused)
  Capture capturing_ = Capture::None;
  std::string member_key_;  // model.vocab's member being read
  std::optional<Dom> element_;
  Json element_value_;
  int element_depth_ = 0;  // containers open inside the element
};

}  // namespace

nlohmann::json parse_streaming_bpe(const std::string& text, StreamedBpe& taken) {
  Json root;
  Splitter splitter(root, taken);
  Json::sax_parse(text, &splitter);
  return root;
}

}  // namespace kvscope::tok
