// kvscope-cli tokenize MODEL (--text T | --text-file F | stdin) [--json]:
// token ids and pieces. kvscope-cli detokenize MODEL (--ids 1,2,3 | stdin):
// the text of token ids, as the tokenizer decodes them.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_common.h"
#include "common/error.h"
#include "io/json_file.h"

namespace kvscope::cli {
namespace {

struct TokenizeArgs {
  std::string model;
  std::optional<std::string> text;
  std::string text_file;
  bool json = false, no_special = false;
};

std::string read_all(std::istream& in) { return {std::istreambuf_iterator<char>(in), {}}; }

// The text from exactly one source: --text, --text-file (- = stdin), or
// stdin when it is not a terminal (so `echo hi | kvscope-cli tokenize` works
// and a bare call at a prompt does not hang waiting for input).
std::string input_text(const std::optional<std::string>& text, const std::string& file, const char* what) {
  if (text && !file.empty()) throw Error("--text", "", "give --text or --text-file, not both");
  if (text) return *text;
  if (file == "-" || (file.empty() && !::isatty(STDIN_FILENO))) return read_all(std::cin);
  if (file.empty()) throw Error("--text", "", std::string("no input: give --text, --text-file or pipe ") + what + " on stdin");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error("--text-file", file, "cannot open the file");
  return read_all(in);
}

void run_tokenize(const TokenizeArgs& a) {
  const std::string text = input_text(a.text, a.text_file, "the text");
  const ModelBundle b = load_bundle(a.model);
  const auto ids = b.tokenizer->encode(text, !a.no_special);
  if (a.json) {
    nlohmann::json j = {{"ids", ids}, {"pieces", nlohmann::json::array()}, {"texts", nlohmann::json::array()}};
    for (int id : ids) {
      j["pieces"].push_back(std::string(b.tokenizer->piece(id)));
      j["texts"].push_back(b.tokenizer->token_text(id));
    }
    // Invalid UTF-8 (a byte token that is half a character) is replaced, not thrown on.
    std::printf("%s\n", json_text(j, 2, true).c_str());
    return;
  }
  std::printf("%zu tokens\n", ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i)
    std::printf("%5zu %7d  %s\n", i, ids[i], escape(b.tokenizer->piece(ids[i])).c_str());
}

struct DetokenizeArgs {
  std::string model;
  std::optional<std::string> ids;
  std::string ids_file;
  bool skip_special = false;
};

// Ids separated by commas, spaces or newlines, or a JSON list (what
// `tokenize --json` prints under "ids").
std::vector<int> parse_ids(const std::string& text, int vocab) {
  std::string s = text;
  for (char& c : s)
    if (c == ',' || c == '[' || c == ']' || c == '\n' || c == '\r' || c == '\t') c = ' ';
  std::istringstream in(s);
  std::vector<int> ids;
  std::string word;
  while (in >> word) {
    std::size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || v < 0) throw Error("--ids", "", "'" + word + "' is not a token id");
    if (v >= vocab)
      throw Error("--ids", "", "token id " + word + " is outside the vocabulary (0.." + std::to_string(vocab - 1) + ")");
    ids.push_back(static_cast<int>(v));
  }
  return ids;
}

void run_detokenize(const DetokenizeArgs& a) {
  std::optional<std::string> given = a.ids;
  const std::string text = input_text(given, a.ids_file, "the ids");
  const ModelBundle b = load_bundle(a.model);
  const auto ids = parse_ids(text, b.tokenizer->vocab_size());
  std::printf("%s\n", b.tokenizer->decode(ids, a.skip_special).c_str());
}

}  // namespace

void register_tokenize(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  auto* cmd = app.add_subcommand("tokenize", "Token ids and pieces of a text (--text, --text-file or stdin)");
  add_model_arg(*cmd, args->model);
  cmd->add_option("--text", args->text, "Text to tokenize");
  cmd->add_option("--text-file", args->text_file, "File with the text (- = stdin)");
  cmd->add_flag("--no-special", args->no_special, "Do not add the tokenizer's BOS/EOS template tokens");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args] { run_tokenize(*args); });

  auto dargs = std::make_shared<DetokenizeArgs>();
  auto* dec = app.add_subcommand("detokenize", "Text of token ids (--ids 1,2,3, --ids-file or stdin)");
  add_model_arg(*dec, dargs->model);
  dec->add_option("--ids", dargs->ids, "Token ids, separated by commas or spaces, or a JSON list");
  dec->add_option("--ids-file", dargs->ids_file, "File with the ids (- = stdin)");
  dec->add_flag("--skip-special", dargs->skip_special, "Leave out special tokens (BOS, EOS, ...)");
  dec->callback([dargs] { run_detokenize(*dargs); });
}

}  // namespace kvscope::cli
