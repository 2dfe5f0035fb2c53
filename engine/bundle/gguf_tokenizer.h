// The tokenizer a GGUF file describes in its metadata (token list, merges,
// token types, pre-tokenizer name, special ids), written as the
// tokenizer.json transformers 5.23.0 builds from the same file, so the ids
// match it and the tokenizer module needs no second parser.
#pragma once

#include <string>

#include "io/gguf.h"

namespace kvscope {

// Throws kvscope::Error naming the file and the metadata key for a tokenizer
// kind kvscope cannot build (tokenizer.ggml.model "gpt2", byte-level BPE, and
// "llama", SentencePiece BPE, are supported; the latter built as transformers'
// LlamaTokenizer, or its GemmaTokenizer for gemma, gemma2 and gemma3 files) or
// inconsistent metadata.
std::string gguf_tokenizer_json(const GgufFile& file);

}  // namespace kvscope
