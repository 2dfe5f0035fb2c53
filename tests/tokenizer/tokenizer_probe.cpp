// tokenizer_probe: runs kvscope's tokenizer stages on many strings at once,
// for tools/probe_tokenizer_unicode.py, which feeds the same strings to HF
// tokenizers and lists where the two disagree. Not a test itself.
//
//   tokenizer_probe JOBS.json > RESULTS.json
//
// JOBS.json: {"jobs": [{"normalizer" | "pre_tokenizer" | "tokenizer": CONFIG,
//                       "texts": [...]}, ...]}
// RESULTS.json: {"results": [{"out": [...]} or {"error": "..."}, ...]}, one per
// job; "out" holds per text the normalized string, the list of pre-tokens, or
// the ids (without special tokens).
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

#include "tokenizer/json_field.h"
#include "tokenizer/normalizers.h"
#include "tokenizer/pre_tokenizers.h"
#include "tokenizer/tokenizer.h"

namespace {

using nlohmann::json;
using namespace kvscope::tok;

json run_job(const json& job) {
  const json& texts = job.at("texts");
  json out = json::array();
  if (job.contains("normalizer")) {
    auto n = parse_normalizer(JsonField(job["normalizer"], "probe.json", "normalizer"));
    for (const auto& t : texts) {
      std::string s = t.get<std::string>();
      if (n) n->normalize(s);
      out.push_back(s);
    }
  } else if (job.contains("pre_tokenizer")) {
    auto p = parse_pre_tokenizer(JsonField(job["pre_tokenizer"], "probe.json", "pre_tokenizer"));
    for (const auto& t : texts) {
      std::string s = t.get<std::string>();
      Pieces pieces{Piece{s, s.empty() ? 0u : 1u, -1}};
      p->pre_tokenize(pieces);
      json words = json::array();
      for (const Piece& piece : pieces) words.push_back(piece.text);
      out.push_back(words);
    }
  } else {
    auto tok = kvscope::Tokenizer::from_json_string(job.at("tokenizer").dump(), "probe.json");
    for (const auto& t : texts) out.push_back(tok.encode(t.get<std::string>(), false));
  }
  return {{"out", out}};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: tokenizer_probe JOBS.json\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::cerr << "cannot open " << argv[1] << "\n";
    return 2;
  }
  json jobs = json::parse(in);
  json results = json::array();
  for (const json& job : jobs.at("jobs")) {
    try {
      results.push_back(run_job(job));
    } catch (const std::exception& e) {
      results.push_back({{"error", e.what()}});
    }
  }
  // Invalid UTF-8 cannot come out of the stages; replace rather than throw.
  std::cout << json{{"results", results}}.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  return 0;
}
