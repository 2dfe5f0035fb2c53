#pragma once

// glibc keeps the pages of freed blocks in the process's resident memory
// until asked to return them: blocks above the mmap threshold go back at
// once, but the threshold rises with every large block freed (loading a
// model frees several), so a prompt's activations or a tokenizer's build
// scratch stay resident after they are freed. Called where a large
// temporary has just been released and something large is about to be
// touched (the model's head, the first decode), so the two are never
// resident together.
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kvscope {

inline void return_freed_heap() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace kvscope
