// KVSCOPE_SIMD_CLONES on a function: x86-64 GCC builds carry AVX-512
// (x86-64-v4) and AVX2 copies of it next to the baseline SSE2 one, picked at
// load time (function multiversioning), so loops written for vectorisation
// use the widest lanes the CPU has. Other compilers, or a build with
// KVSCOPE_NO_SIMD_CLONES, get the one baseline copy.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(KVSCOPE_NO_SIMD_CLONES)
#define KVSCOPE_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define KVSCOPE_SIMD_CLONES
#endif
