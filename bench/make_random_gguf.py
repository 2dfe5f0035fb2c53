#!/usr/bin/env python3
"""Writes a GGUF file of a real model's shape with random quantized weights,
for measuring what kvscope needs to open and decode a model of that size
(bench/NOTES.md, "Quantized weights in their blocks").

    python bench/make_random_gguf.py --shape llama3-8b --mix q4_k_m --out /tmp/llama3-8b-q4_k_m.gguf
    kvscope-cli bench /tmp/llama3-8b-q4_k_m.gguf --prompt-tokens 16 --decode-tokens 8

Shapes: llama3-8b (Llama-3-8B: 32 layers, hidden 4096, MLP 14336, 32 heads,
8 KV heads, vocabulary 128256) and llama3-1b (Llama-3.2-1B's). Mixes:
q4_k_m (llama.cpp's: Q4_K matrices, Q6_K for attn_v, ffn_down on every
other layer and the output head, as its quantizer chooses for this family)
and q8_0. Norm weights are F32 ones.

The blocks are random bytes with f16 scales chosen so that a weight is
about +-0.02 (no quantizer is needed: any bytes are a valid block). Needs
the gguf package (pip install gguf numpy). The file has no tokenizer: bench
draws its prompt's ids, which is all it needs. --placeholder-vocab adds a
SentencePiece-style vocabulary of the shape's size (<unk>, <s>, </s>, the
256 byte tokens, then "t<i>" placeholders, every score 0) so that llama.cpp,
which will not open a file without one, can be timed on the same file
(bench/compare_cpu.py --engines kvscope_stored,llamacpp_stored).
"""

import argparse
import sys

import numpy as np

import gguf
from gguf import GGMLQuantizationType as T

SHAPES = {
    "llama3-8b": dict(layers=32, hidden=4096, ff=14336, heads=32, kv_heads=8, vocab=128256, theta=500000.0),
    "llama3-1b": dict(layers=16, hidden=2048, ff=8192, heads=32, kv_heads=8, vocab=128256, theta=500000.0),
}

# elements, bytes, offsets of the f16 scale fields, the scale's size
BLOCK = {
    T.Q4_K: (256, 144, [0, 2], 2e-4),
    T.Q6_K: (256, 210, [208], 2e-5),
    T.Q8_0: (32, 34, [0], 2e-4),
}


def random_blocks(rng, qtype, rows, cols):
    elems, nbytes, fields, scale = BLOCK[qtype]
    n = rows * cols // elems
    b = rng.integers(0, 256, size=(n, nbytes), dtype=np.uint8)
    for off in fields:
        v = (rng.random(n, dtype=np.float32) * scale).astype(np.float16)
        b[:, off:off + 2] = v.view(np.uint8).reshape(n, 2)
    return b.reshape(rows, cols // elems * nbytes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", choices=sorted(SHAPES), required=True)
    ap.add_argument("--mix", choices=["q4_k_m", "q8_0"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--placeholder-vocab", action="store_true",
                    help="write a placeholder SentencePiece vocabulary (for llama.cpp)")
    a = ap.parse_args()
    s = SHAPES[a.shape]
    rng = np.random.default_rng(a.seed)
    d, hd = s["hidden"], s["hidden"] // s["heads"]
    kv = s["kv_heads"] * hd

    def kind(name, layer):
        if a.mix == "q8_0":
            return T.Q8_0
        if name == "output" or name == "attn_v" or (name == "ffn_down" and layer % 2 == 0):
            return T.Q6_K
        return T.Q4_K

    w = gguf.GGUFWriter(a.out, "llama")
    w.add_name(f"random {a.shape} {a.mix} (kvscope bench/make_random_gguf.py)")
    w.add_context_length(8192)
    w.add_embedding_length(d)
    w.add_feed_forward_length(s["ff"])
    w.add_block_count(s["layers"])
    w.add_head_count(s["heads"])
    w.add_head_count_kv(s["kv_heads"])
    w.add_rope_freq_base(s["theta"])
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(s["vocab"])
    w.add_rope_dimension_count(hd)
    if a.placeholder_vocab:
        special = ["<unk>", "<s>", "</s>"]
        byte_tokens = [f"<0x{b:02X}>" for b in range(256)]
        rest = [f"t{i}" for i in range(s["vocab"] - len(special) - len(byte_tokens))]
        w.add_tokenizer_model("llama")
        w.add_token_list(special + byte_tokens + rest)
        w.add_token_scores([0.0] * s["vocab"])
        # gguf's token types: 1 normal, 2 unknown, 3 control, 6 byte
        w.add_token_types([2, 3, 3] + [6] * len(byte_tokens) + [1] * len(rest))
        w.add_unk_token_id(0)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)

    def matrix(name, rows, cols, layer=-1):
        qt = kind(name.split(".")[-2] if layer >= 0 else name.split(".")[0], layer)
        w.add_tensor(name, random_blocks(rng, qt, rows, cols), raw_dtype=qt)

    def norm(name, n):
        w.add_tensor(name, np.ones(n, dtype=np.float32))

    matrix("token_embd.weight", s["vocab"], d)
    for l in range(s["layers"]):
        p = f"blk.{l}."
        norm(p + "attn_norm.weight", d)
        matrix(p + "attn_q.weight", d, d, l)
        matrix(p + "attn_k.weight", kv, d, l)
        matrix(p + "attn_v.weight", kv, d, l)
        matrix(p + "attn_output.weight", d, d, l)
        norm(p + "ffn_norm.weight", d)
        matrix(p + "ffn_gate.weight", s["ff"], d, l)
        matrix(p + "ffn_up.weight", s["ff"], d, l)
        matrix(p + "ffn_down.weight", d, s["ff"], l)
        print(f"layer {l + 1}/{s['layers']}", file=sys.stderr, end="\r")
    norm("output_norm.weight", d)
    matrix("output.weight", s["vocab"], d)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"\nwrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
