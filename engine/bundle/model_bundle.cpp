#include "bundle/model_bundle.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "bundle/downloaded_models.h"
#include "bundle/gguf_tokenizer.h"
#include "common/error.h"
#include "common/freed_heap.h"
#include "io/json_file.h"
#include "model/gguf_model.h"

namespace kvscope {
namespace fs = std::filesystem;

bool ModelBundle::is_eos(int id) const {
  const auto& e = files.config.eos_ids;
  return std::find(e.begin(), e.end(), id) != e.end();
}

namespace {

// tokenizer_config.json names BOS/EOS as strings or {"content": ...}.
std::string special_name(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string()) return v["content"].get<std::string>();
  return "";
}

}  // namespace

// Building a tokenizer leaves many freed small blocks behind: a
// tokenizer.json's members and merges are parsed one small value at a
// time, and a GGUF file's token list passes through vectors of strings
// (tens of MB for Gemma 3's 262,144 tokens); they are returned with
// return_freed_heap() once the bundle is built.

ModelBundle load_model_bundle(const fs::path& dir) {
  ModelBundle b;
  if (is_gguf_file(dir)) {
    verify_fetched_model(dir);  // a file tools/get-model.sh fetched still has its pinned SHA-256
    {
      // Everything is in the one file, read once: the tokenizer comes from its metadata.
      const GgufFile f = GgufFile::open(dir);
      b.files = load_gguf_model(f);
      b.tokenizer = std::make_shared<const Tokenizer>(gguf_tokenizer(f));
    }
    // After the file's parsed metadata (its token list's strings among it) is gone too.
    return_freed_heap();
    const std::string source = dir.string();
    const auto& cfg = b.files.config;
    if (b.tokenizer->vocab_size() > cfg.vocab_size)
      throw Error(source, "tokenizer.ggml.tokens",
                  std::to_string(b.tokenizer->vocab_size()) + " tokens but the model has " +
                      std::to_string(cfg.vocab_size) + " rows");
    for (int e : cfg.eos_ids)
      if (e < 0 || e >= cfg.vocab_size)
        throw Error(source, "tokenizer.ggml.eos_token_id", "id " + std::to_string(e) + " outside the vocabulary");
    return b;
  }
  b.files = load_model_files(dir);
  const fs::path tok_path = dir / "tokenizer.json";
  std::error_code ec;
  if (!fs::exists(tok_path, ec)) throw Error(tok_path.string(), "", "file not found (kvscope reads Hugging Face tokenizer.json)");
  b.tokenizer = std::make_shared<const Tokenizer>(Tokenizer::load(tok_path));
  return_freed_heap();
  auto& cfg = b.files.config;
  if (b.tokenizer->vocab_size() > cfg.vocab_size)
    throw Error(tok_path.string(), "model.vocab",
                "tokenizer has " + std::to_string(b.tokenizer->vocab_size()) + " tokens but config.json vocab_size is " +
                    std::to_string(cfg.vocab_size));
  const fs::path tc = dir / "tokenizer_config.json";
  if (fs::exists(tc, ec)) {
    const auto j = read_json_file(tc);
    if (cfg.eos_ids.empty() && j.contains("eos_token")) {
      if (auto id = b.tokenizer->token_id(special_name(j["eos_token"]))) cfg.eos_ids.push_back(*id);
    }
    if (cfg.bos_id < 0 && j.contains("bos_token")) {
      if (auto id = b.tokenizer->token_id(special_name(j["bos_token"]))) cfg.bos_id = *id;
    }
  }
  for (int e : cfg.eos_ids)
    if (e < 0 || e >= cfg.vocab_size)
      throw Error((dir / "config.json").string(), "eos_token_id", "id " + std::to_string(e) + " outside the vocabulary");
  return b;
}

fs::path assets_dir() {
  std::error_code ec;
  if (const char* env = std::getenv("KVSCOPE_ASSETS"); env && *env) return fs::path(env);
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) {
    buf[n] = 0;
    const fs::path installed = fs::path(buf).parent_path().parent_path() / "share" / "kvscope" / "assets";
    if (fs::exists(installed, ec)) return installed;
  }
  return fs::path(KVSCOPE_SOURCE_DIR) / "assets";
}

fs::path default_model_dir() { return assets_dir() / "models" / "kvscope-tiny"; }

}  // namespace kvscope
