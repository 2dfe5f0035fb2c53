// The tokenizer a GGUF file describes in its metadata (token list, merges,
// token types, pre-tokenizer name, special ids), built as transformers
// 5.23.0 builds it from the same file, so the ids match it: its stages as the
// tokenizer.json parts transformers writes (read by the tokenizer module's
// one parser), its BPE vocabulary and merges straight from the metadata.
#pragma once

#include "io/gguf.h"
#include "tokenizer/tokenizer.h"

namespace kvscope {

// Throws kvscope::Error naming the file and the metadata key for a tokenizer
// kind kvscope cannot build (tokenizer.ggml.model "gpt2", byte-level BPE, and
// "llama", SentencePiece BPE, are supported; the latter built as transformers'
// LlamaTokenizer, or its GemmaTokenizer for gemma, gemma2 and gemma3 files) or
// inconsistent metadata.
Tokenizer gguf_tokenizer(const GgufFile& file);

}  // namespace kvscope
