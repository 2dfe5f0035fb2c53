// kvscope-cli tokenize MODEL --text T [--json]: token ids and pieces.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli_common.h"

namespace kvscope::cli {
namespace {

struct TokenizeArgs {
  std::string model, text;
  bool json = false, no_special = false;
};

void run_tokenize(const TokenizeArgs& a) {
  const ModelBundle b = load_bundle(a.model);
  const auto ids = b.tokenizer->encode(a.text, !a.no_special);
  if (a.json) {
    nlohmann::json j = {{"ids", ids}, {"pieces", nlohmann::json::array()}, {"texts", nlohmann::json::array()}};
    for (int id : ids) {
      j["pieces"].push_back(b.tokenizer->piece(id));
      j["texts"].push_back(b.tokenizer->token_text(id));
    }
    // Invalid UTF-8 (a byte token that is half a character) is replaced, not thrown on.
    std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  std::printf("%zu tokens\n", ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i)
    std::printf("%5zu %7d  %s\n", i, ids[i], escape(b.tokenizer->piece(ids[i])).c_str());
}

}  // namespace

void register_tokenize(CLI::App& app) {
  auto args = std::make_shared<TokenizeArgs>();
  auto* cmd = app.add_subcommand("tokenize", "Token ids and pieces of a text");
  add_model_arg(*cmd, args->model);
  cmd->add_option("--text", args->text, "Text to tokenize")->required();
  cmd->add_flag("--no-special", args->no_special, "Do not add the tokenizer's BOS/EOS template tokens");
  cmd->add_flag("--json", args->json, "Print JSON");
  cmd->callback([args] { run_tokenize(*args); });
}

}  // namespace kvscope::cli
