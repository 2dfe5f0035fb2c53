#include "tokenizer/streamed_bpe.h"

namespace kvscope::tok {

namespace {

using Json = nlohmann::json;

// Builds a JSON value from SAX events, as nlohmann's own parser does (a key
// given twice keeps its last value). Kept here rather than borrowed from
// nlohmann's detail namespace, whose builder changes between releases.
class TreeBuilder {
 public:
  explicit TreeBuilder(Json& root) : root_(root) {}

  void value(Json v) { (void)place(std::move(v)); }
  void open(Json container) { open_.push_back(place(std::move(container))); }
  void close() { open_.pop_back(); }
  void key(std::string k) { key_ = std::move(k); }
  bool done() const { return open_.empty(); }

 private:
  // Where a new value goes: the root, the end of the open array, or the
  // open object's member named by the last key. A pointer to a container
  // stays valid while it is open: its parent grows only after it closes.
  Json* place(Json v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(v));
      return &parent.back();
    }
    Json& member = parent[key_];
    member = std::move(v);
    return &member;
  }

  Json& root_;
  std::vector<Json*> open_;
  std::string key_;
};

// SAX events build the document's tree, except the members of model.vocab
// and the elements of model.merges: each of those is built into a value of
// its own (a token's id, a merge's pair, or whatever a broken file put
// there, for the error message) and moved out.
class Splitter {
 public:
  Splitter(Json& root, StreamedBpe& taken) : main_(root), taken_(taken) {}

  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(Json::number_integer_t v) { return value(v); }
  bool number_unsigned(Json::number_unsigned_t v) { return value(v); }
  bool number_float(Json::number_float_t v, const Json::string_t&) { return value(v); }
  bool string(Json::string_t& v) { return value(std::move(v)); }
  bool binary(Json::binary_t& v) { return value(Json::binary(std::move(v))); }

  bool start_object(std::size_t) { return start(Json::object()); }
  bool start_array(std::size_t) { return start(Json::array()); }
  bool end_object() { return end(); }
  bool end_array() { return end(); }
  bool key(Json::string_t& k) {
    if (element_) {
      element_->key(std::move(k));
    } else if (capturing_ == Capture::Vocab) {
      member_key_ = std::move(k);
    } else {
      if (depth_ <= 2) key_[depth_] = k;
      main_.key(std::move(k));
    }
    return true;
  }
  // What nlohmann's own parser does with a syntax error: throw it.
  template <class Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& e) {
    throw e;
  }

 private:
  enum class Capture { None, Vocab, Merges };

  bool value(Json v) {
    if (!element_ && capturing_ == Capture::None) {
      main_.value(std::move(v));
      return true;
    }
    if (!element_) {  // a whole element
      begin_element().value(std::move(v));
      finish_element();
      return true;
    }
    element_->value(std::move(v));  // a part of the element being built
    return true;
  }
  bool start(Json container) {
    if (element_ || capturing_ != Capture::None) {
      if (!element_) begin_element();
      element_->open(std::move(container));
      return true;
    }
    if (depth_ == 1) {
      key_[2].clear();
      if (key_[1] == "model") taken_ = StreamedBpe{};  // a later "model" replaces the first
    }
    const bool in_model = depth_ == 2 && key_[1] == "model";
    capturing_ = Capture::None;
    if (in_model && container.is_object() && key_[2] == "vocab") {
      taken_.vocab.emplace();
      capturing_ = Capture::Vocab;
    } else if (in_model && container.is_array() && key_[2] == "merges") {
      taken_.merges.emplace();
      capturing_ = Capture::Merges;
    }
    ++depth_;
    main_.open(std::move(container));
    return true;
  }
  bool end() {
    if (element_) {
      element_->close();
      if (element_->done()) finish_element();
      return true;
    }
    capturing_ = Capture::None;
    --depth_;
    main_.close();
    return true;
  }
  TreeBuilder& begin_element() {
    element_value_ = Json();
    element_.emplace(element_value_);
    return *element_;
  }
  void finish_element() {
    element_.reset();
    if (capturing_ == Capture::Vocab) taken_.vocab->emplace_back(std::move(member_key_), std::move(element_value_));
    else taken_.merges->push_back(std::move(element_value_));
  }

  TreeBuilder main_;
  StreamedBpe& taken_;
  int depth_ = 0;       // containers of the document open
  std::string key_[3];  // the key at depth 1 and 2 (key_[0] unused)
  Capture capturing_ = Capture::None;
  std::string member_key_;  // model.vocab's member being read
  std::optional<TreeBuilder> element_;
  Json element_value_;
};

}  // namespace

nlohmann::json parse_streaming_bpe(const std::string& text, StreamedBpe& taken) {
  Json root;
  Splitter splitter(root, taken);
  Json::sax_parse(text, &splitter);
  return root;
}

}  // namespace kvscope::tok
