// llama.cpp's side of the resident-memory comparison in NOTES.md: a prompt
// and N greedy tokens through libllama (the library llama-cpp-python ships),
// without a Python process around it. The context is the prompt plus N
// (llama.cpp pads it to 256), the KV in F32 as kvscope's, the batch sizes
// llama.cpp's defaults, so the peak is the file's pages, the KV, llama.cpp's
// compute buffers and its code. Built and run by hand (not part of the
// build: it needs llama-cpp-python's library and header):
/*
   P=$(python3 -c 'import llama_cpp, os; print(os.path.dirname(os.path.dirname(llama_cpp.__file__)))')
   gcc -O2 bench/llamacpp_generate.c -I$P/include -L$P/llama_cpp/lib -lllama -lggml -lggml-base \
       -Wl,-rpath,$P/llama_cpp/lib -o /tmp/llamacpp_generate
   /tmp/llamacpp_generate MODEL.gguf PROMPT.txt 32 2     # new tokens, threads
*/
#include <stdio.h>
#include <stdlib.h>

#include "llama.h"

static char* read_text(const char* path, long* n) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char* text = malloc((size_t)*n + 1);
  *n = (long)fread(text, 1, (size_t)*n, f);
  text[*n] = 0;
  fclose(f);
  return text;
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s MODEL.gguf PROMPT.txt NEW_TOKENS THREADS\n", argv[0]);
    return 2;
  }
  long n = 0;
  char* text = read_text(argv[2], &n);
  if (!text) {
    fprintf(stderr, "%s: cannot read\n", argv[2]);
    return 2;
  }
  const int n_new = atoi(argv[3]), threads = atoi(argv[4]);
  llama_backend_init();
  struct llama_model* model = llama_model_load_from_file(argv[1], llama_model_default_params());
  if (!model) return 1;
  const struct llama_vocab* vocab = llama_model_get_vocab(model);
  llama_token* tokens = malloc(sizeof(llama_token) * ((size_t)n + 16));
  const int n_prompt = llama_tokenize(vocab, text, (int)n, tokens, (int)n + 16, true, false);
  if (n_prompt <= 0) return 1;
  struct llama_context_params cp = llama_context_default_params();
  cp.n_ctx = (uint32_t)(n_prompt + n_new);
  cp.n_threads = cp.n_threads_batch = threads;
  cp.type_k = cp.type_v = GGML_TYPE_F32;
  struct llama_context* ctx = llama_init_from_model(model, cp);
  if (!ctx) return 1;
  struct llama_sampler* greedy = llama_sampler_chain_init(llama_sampler_chain_default_params());
  llama_sampler_chain_add(greedy, llama_sampler_init_greedy());
  if (llama_decode(ctx, llama_batch_get_one(tokens, n_prompt))) return 1;
  for (int i = 0; i < n_new; ++i) {
    llama_token t = llama_sampler_sample(greedy, ctx, -1);
    if (llama_decode(ctx, llama_batch_get_one(&t, 1))) return 1;
  }
  fprintf(stderr, "prompt %d tokens, %d new\n", n_prompt, n_new);
  llama_sampler_free(greedy);
  llama_free(ctx);
  llama_model_free(model);
  free(tokens);
  free(text);
  return 0;
}
