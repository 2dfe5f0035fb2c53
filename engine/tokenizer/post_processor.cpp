#include "tokenizer/post_processor.h"

#include <sstream>

#include "tokenizer/bpe_model.h"

namespace kvscope::tok {

namespace {

std::string in_quotes(const std::string& s) {
  std::string r;
  r.reserve(s.size() + 2);
  r += '"';
  r += s;
  r += '"';
  return r;
}

std::vector<SpecialPiece> template_special(const JsonField& specials, const std::string& name,
                                           const JsonField& where) {
  auto entry = specials.get(name);
  if (!entry) where.fail("special token " + in_quotes(name) + " is not in special_tokens");
  JsonField ids = (*entry)["ids"];
  JsonField tokens = (*entry)["tokens"];
  ids.require_array();
  tokens.require_array();
  if (ids.size() != tokens.size()) entry->fail("ids and tokens have different lengths");
  std::vector<SpecialPiece> out;
  for (size_t i = 0; i < ids.size(); ++i) {
    JsonField id = ids.at(i);
    int64_t v = id.integer();
    if (v < 0 || v > BpeModel::kMaxId) id.fail("id " + std::to_string(v) + " out of range");
    out.push_back({static_cast<int>(v), tokens.at(i).str()});
  }
  return out;
}

// HF also accepts a template written as a string: "<s> $A </s>", where $A,
// $0, $ or $A:1 stand for the sequence and name:1 sets a type id.
std::vector<std::pair<bool, std::string>> template_items(const JsonField& single) {
  std::vector<std::pair<bool, std::string>> items;  // (is_sequence, name)
  if (single.is_string()) {
    std::istringstream in(single.str());
    std::string word;
    while (in >> word) {
      std::string name = word.substr(0, word.find(':'));
      if (!name.empty() && name[0] == '$') {
        if (name == "$" || name == "$A" || name == "$0") items.emplace_back(true, "A");
        else single.fail("the single template may only use sequence $A, got " + in_quotes(word));
      } else {
        items.emplace_back(false, name);
      }
    }
    return items;
  }
  single.require_array();
  for (size_t i = 0; i < single.size(); ++i) {
    JsonField item = single.at(i);
    item.require_object();
    if (auto s = item.get("SpecialToken")) {
      items.emplace_back(false, (*s)["id"].str());
    } else if (auto q = item.get("Sequence")) {
      std::string id = (*q)["id"].str();
      if (id != "A") (*q)["id"].fail("the single template may only use sequence A, got " + in_quotes(id));
      items.emplace_back(true, id);
    } else {
      item.fail("expected {\"SpecialToken\": ...} or {\"Sequence\": ...}");
    }
  }
  return items;
}

PostProcessing parse_template(const JsonField& j) {
  JsonField single = j["single"];
  JsonField specials = j["special_tokens"];
  specials.require_object();
  PostProcessing p;
  bool seen_sequence = false;
  auto items = template_items(single);
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& [is_sequence, name] = items[i];
    if (is_sequence) {
      if (seen_sequence) single.fail("sequence A appears twice");
      seen_sequence = true;
      continue;
    }
    auto pieces = template_special(specials, name, single);
    auto& side = seen_sequence ? p.suffix : p.prefix;
    side.insert(side.end(), pieces.begin(), pieces.end());
  }
  if (!seen_sequence) single.fail("the template has no sequence $A");
  return p;
}

// ["<s>", 0] as used by RobertaProcessing / BertProcessing.
SpecialPiece token_pair(const JsonField& f) {
  f.require_array();
  if (f.size() != 2) f.fail("expected [\"token\", id]");
  int64_t id = f.at(1).integer();
  if (id < 0 || id > BpeModel::kMaxId) f.at(1).fail("id " + std::to_string(id) + " out of range");
  return {static_cast<int>(id), f.at(0).str()};
}

}  // namespace

PostProcessing parse_post_processor(const JsonField& j) {
  if (j.is_null()) return {};
  j.require_depth_below(kMaxNesting);
  j.require_object();
  const std::string type = j.type();
  if (type == "ByteLevel") return {};  // only adjusts offsets
  if (type == "TemplateProcessing") return parse_template(j);
  if (type == "RobertaProcessing" || type == "BertProcessing")
    return PostProcessing{{token_pair(j["cls"])}, {token_pair(j["sep"])}};
  if (type == "Sequence") {
    JsonField list = j["processors"];
    list.require_array();
    PostProcessing all;
    // Each processor wraps what the previous ones produced.
    for (size_t i = 0; i < list.size(); ++i) {
      PostProcessing p = parse_post_processor(list.at(i));
      all.prefix.insert(all.prefix.begin(), p.prefix.begin(), p.prefix.end());
      all.suffix.insert(all.suffix.end(), p.suffix.begin(), p.suffix.end());
    }
    return all;
  }
  j["type"].fail("unsupported post-processor \"" + type +
                 "\" (supported: TemplateProcessing, RobertaProcessing, BertProcessing, ByteLevel, Sequence)");
}

}  // namespace kvscope::tok
