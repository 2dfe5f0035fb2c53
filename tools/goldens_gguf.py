#!/usr/bin/env python3
"""Golden files for kvscope's GGUF reader (engine/io/gguf*, engine/model/gguf_model,
engine/bundle/gguf_tokenizer), made with PyPI `gguf` and transformers.

    python3 tools/goldens_gguf.py        # writes tests/data/gguf
    (PyPI: gguf numpy torch transformers==5.23.0 accelerate)

Two files, both small and deterministic (fixed seeds):

  dequant.gguf       for every tensor type kvscope reads (F32, F16, BF16, Q4_0,
                     Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K) a tensor `x.TYPE`
                     of random blocks and `x.TYPE.ref`, its dequantization by
                     gguf-py's reference code (gguf.quants.dequantize), as F32.
                     The C++ test wants them equal bit for bit.
  tiny_llama.gguf    a llama model (2 layers, 4 heads, 2 KV heads, head dim 64)
                     whose weights are random blocks of every quantized type, with
                     the byte-level tokenizer of tests/data/models/llama_gqa in its
                     metadata and add_bos_token set. transformers loads it (it
                     dequantizes, undoes llama.cpp's rotary row order and builds the
                     tokenizer from the metadata) and records:
  tiny_llama.golden.json   prompt ids, 16-token greedy continuation, and the ids of
                           the hard strings (tests/data/tokenizers/hard_strings.json)
  tiny_llama.logits.npy    float32 [n_prompt, vocab] logits of the prompt
  tiny_qwen2.*       the same for a Qwen2 (q/k/v biases, Qwen2's split pattern,
                     no BOS)
  tiny_qwen3.*       a Qwen3 (per-head q/k norms, head size 128 as key_length)
  tiny_phi3.*        a Phi-3 (q, k, v fused in attn_qkv, gate and up in ffn_up)
                     with a SentencePiece vocabulary, as llama.cpp writes it
  tiny_llama_spm.*   a llama with a SentencePiece vocabulary (tokenizer.ggml.model
                     "llama": scores and token types, no merges)
  tiny_gpt2.*        the same for a GPT-2 (fused QKV, Conv1D weights stored
                     transposed as llama.cpp writes them, learned positions)
  tiny_gptneox.*     tests/data/models/gpt_neox_parallel converted the way
  tiny_gptneox_f16.* llama.cpp's convert_hf_to_gguf.py converts GPT-NeoX (its fused
                     query_key_value regrouped from [head][q,k,v] to [q|k|v]; the
                     rotary width as rope.dimension_count), F32, and
                     gpt_neox_sequential at F16 (2-D weights, as --outtype f16 does).
                     transformers 5.23.0 cannot load a gptneox GGUF, so the
                     reference is transformers on the checkpoint each file was
                     converted from (its 2-D weights rounded to F16 for the F16 one).
  tiny_mpt.*         tests/data/models/mpt (ALiBi over 6 heads, clip_qkv, tied head)
                     converted as convert_hf_to_gguf.py converts MPT with
                     --outtype q8_0: Q8_0 where a row is whole blocks of 32
                     (ffn_down), F16 where not (the converter's fallback; d_model
                     is 48), norms F32. transformers 5.23.0 cannot load an mpt
                     GGUF: the reference is transformers on that folder with
                     every matrix replaced by the file's dequantized values.
  tiny_llama3.*      tests/data/models/llama3_mqa_bf16 (llama3 rope scaling, MQA,
                     q/k/v/o and MLP biases, tied head) converted as llama.cpp's
                     converter does it: q/k rows and biases interleaved, the
                     scaling as rope_freqs.weight; the reference is transformers
                     on that folder.
  tiny_gemma3.*      a Gemma 3 written the way llama.cpp's converter writes one
                     (architecture "gemma3", q/k norms, post-attention and
                     post-FFN norms, every norm stored as 1 + w, a tied head;
                     layers 0-4 sliding-window, layer 5 full) with a small
                     Gemma-like SentencePiece vocabulary (control and
                     user-defined tokens, whitespace-run tokens stored as
                     spaces, byte tokens, scores that disagree with the merge
                     order), so transformers builds its GemmaTokenizer. Its
                     golden also holds Gemma-specific strings, the decoded text
                     of every string and the smallest top-1 margin of the
                     greedy continuation.

The random blocks are real model weights here: the file *is* the model, so no
quantizer is needed, and every block layout is exercised with arbitrary bits.
"""

import json
import os
import sys

import numpy as np

import gguf
from gguf import GGMLQuantizationType as T

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

BLOCK = {  # elements, bytes, byte offsets of f16 scale fields
    T.Q4_0: (32, 18, [0]),
    T.Q4_1: (32, 20, [0, 2]),
    T.Q5_0: (32, 22, [0]),
    T.Q5_1: (32, 24, [0, 2]),
    T.Q8_0: (32, 34, [0]),
    T.Q4_K: (256, 144, [0, 2]),
    T.Q5_K: (256, 176, [0, 2]),
    T.Q6_K: (256, 210, [208]),
}


def random_blocks(rng, qtype, rows, cols, scale):
    """Random bytes in the block layout of `qtype`, with finite f16 scales of
    about `scale` (random sign for the first, so negative scales are covered)."""
    elems, nbytes, f16_fields = BLOCK[qtype]
    assert cols % elems == 0
    n_blocks = rows * cols // elems
    b = rng.integers(0, 256, size=(n_blocks, nbytes), dtype=np.uint8)
    for k, off in enumerate(f16_fields):
        v = (rng.random(n_blocks) * scale).astype(np.float16)
        if k == 0:
            v = np.where(rng.random(n_blocks) < 0.2, -v, v).astype(np.float16)
        b[:, off:off + 2] = v.view(np.uint8).reshape(n_blocks, 2)
    return b.reshape(rows, cols // elems * nbytes)


def special_halves(rng, n, exp_mask, frac_mask):
    """16-bit float patterns (f16 or bf16 by the masks): random, plus zeros,
    subnormals and infinities; NaNs become infinities so the C++ test can
    compare bits."""
    bits = rng.integers(0, 1 << 16, size=n, dtype=np.uint16)
    bits[:6] = [0x0000, 0x8000, 0x0001, 0x8001, exp_mask, 0x8000 | exp_mask]
    nan = ((bits & exp_mask) == exp_mask) & ((bits & frac_mask) != 0)
    return np.where(nan, bits & ~np.uint16(frac_mask), bits).astype(np.uint16)


def write_dequant(path):
    rng = np.random.default_rng(20261123)
    w = gguf.GGUFWriter(path, "kvscope-test")
    rows, cols = 3, 512
    for qtype in BLOCK:
        blocks = random_blocks(rng, qtype, rows, cols, 0.5)
        ref = gguf.quants.dequantize(blocks, qtype).astype(np.float32)
        assert ref.shape == (rows, cols)
        w.add_tensor(f"x.{qtype.name}", blocks, raw_dtype=qtype)
        w.add_tensor(f"x.{qtype.name}.ref", ref)
    f32 = rng.standard_normal((rows, cols)).astype(np.float32)
    w.add_tensor("x.F32", f32)
    w.add_tensor("x.F32.ref", f32.copy())
    h = special_halves(rng, rows * cols, 0x7C00, 0x03FF).view(np.float16).reshape(rows, cols)
    w.add_tensor("x.F16", h)
    w.add_tensor("x.F16.ref", h.astype(np.float32))
    bf = special_halves(rng, rows * cols, 0x7F80, 0x007F).reshape(rows, cols)
    w.add_tensor("x.BF16", bf.view(np.uint8).reshape(rows, cols * 2), raw_dtype=T.BF16)
    w.add_tensor("x.BF16.ref", (bf.astype(np.uint32) << 16).view(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# The tiny model: dims chosen so every block type fits its rows (256-element
# K-quant blocks need an input width that is a multiple of 256).
HIDDEN, FF, HEADS, KV_HEADS, HEAD_DIM, LAYERS = 256, 256, 4, 2, 64, 2
LAYER_TYPES = [
    {"attn_q": T.Q4_0, "attn_k": T.Q4_1, "attn_v": T.Q5_0, "attn_output": T.Q5_1,
     "ffn_gate": T.Q8_0, "ffn_up": T.Q4_K, "ffn_down": T.Q5_K},
    {"attn_q": T.Q6_K, "attn_k": "F16", "attn_v": "BF16", "attn_output": T.Q8_0,
     "ffn_gate": T.Q4_K, "ffn_up": T.Q6_K, "ffn_down": T.Q5_K},
]


def dense(rng, rows, cols, kind, std):
    x = (rng.standard_normal((rows, cols)) * std).astype(np.float32)
    if kind == "F16":
        return x.astype(np.float16), None
    if kind == "BF16":
        bits = (x.view(np.uint32) >> 16).astype(np.uint16)
        return bits.view(np.uint8).reshape(rows, cols * 2), T.BF16
    return x, None


def add_weight(w, rng, name, rows, cols, kind):
    if kind in ("F16", "BF16", "F32"):
        data, raw = dense(rng, rows, cols, kind, 0.08)
        w.add_tensor(name, data, raw_dtype=raw)
    else:
        # A scale per block that keeps activations of order one through a
        # few layers (quantized values span about +-8 or +-32 steps).
        step = {T.Q8_0: 0.0008, T.Q6_K: 0.0002, T.Q5_K: 0.0002, T.Q4_K: 0.0003}.get(kind, 0.006)
        w.add_tensor(name, random_blocks(rng, kind, rows, cols, step), raw_dtype=kind)


def bpe_vocabulary(tokenizer_json):
    """A byte-level BPE tokenizer.json as GGUF metadata wants it: tokens in id
    order, token types (3 for the added special tokens, else 1), merges as
    "left right" strings."""
    tok = json.load(open(tokenizer_json, encoding="utf-8"))
    vocab = tok["model"]["vocab"]
    specials = {t["id"]: t["content"] for t in tok["added_tokens"]}
    tokens = [None] * (max(max(vocab.values()), max(specials)) + 1)
    for t, i in vocab.items():
        tokens[i] = t
    for i, t in specials.items():
        tokens[i] = t
    assert all(t is not None for t in tokens)
    types = [3 if i in specials else 1 for i in range(len(tokens))]
    merges = [m if isinstance(m, str) else " ".join(m) for m in tok["model"]["merges"]]
    return tokens, types, merges


def spm_vocabulary(tokenizer_json):
    """A SentencePiece-style vocabulary as llama.cpp writes it for Llama 2 /
    Mistral: tokens, a score per token (here minus its id, so earlier pieces
    merge first), token types (2 unknown, 3 control, 6 byte, 1 normal) and no
    merges: transformers rebuilds them from the scores."""
    tok = json.load(open(tokenizer_json, encoding="utf-8"))
    vocab = tok["model"]["vocab"]
    tokens = [None] * len(vocab)
    for t, i in vocab.items():
        tokens[i] = t
    def kind(i, t):
        if t == "<unk>":
            return 2
        if t in ("<s>", "</s>"):
            return 3
        if len(t) == 6 and t.startswith("<0x") and t.endswith(">"):
            return 6
        return 1
    return tokens, [-float(i) for i in range(len(tokens))], [kind(i, t) for i, t in enumerate(tokens)]


def write_tiny_llama(path, tokenizer_json, arch="llama", spm=False):
    """A llama (or, with arch="qwen2", a Qwen2: q/k/v biases, no rotary row
    interleaving in llama.cpp's converter, head size from the widths; with
    arch="qwen3", a Qwen3: per-head q/k RMSNorm, head size 128 as key_length
    (transformers 5.23.0 reads no head size from a qwen3 file: Qwen3Config's
    128); with arch="phi3", a Phi-3: q, k, v fused in attn_qkv and gate, up
    fused in ffn_up, as llama.cpp stores them)."""
    rng = np.random.default_rng({"llama": 7, "qwen2": 13, "qwen3": 17, "phi3": 19}[arch])
    hd = 128 if arch == "qwen3" else HEAD_DIM
    tokens, types, merges = bpe_vocabulary(tokenizer_json)
    n_vocab = len(tokens)
    if spm:
        tokens, scores, types = spm_vocabulary(tokenizer_json)
        n_vocab = len(tokens)

    w = gguf.GGUFWriter(path, arch)
    w.add_name(f"kvscope tiny {arch}")
    w.add_context_length(256)
    w.add_embedding_length(HIDDEN)
    w.add_block_count(LAYERS)
    w.add_feed_forward_length(FF)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    if arch in ("llama", "phi3"):
        w.add_rope_dimension_count(HEAD_DIM)
    if arch == "qwen3":
        w.add_key_length(hd)
        w.add_value_length(hd)
    w.add_rope_freq_base(10000.0 if arch in ("llama", "phi3") else 1000000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    if spm:
        w.add_tokenizer_model("llama")
        w.add_tokenizer_pre("default")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_unk_token_id(0)
        if arch == "phi3":  # Phi3Config's pad id (32000) lies past this vocabulary
            w.add_pad_token_id(0)
    else:
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre("llama-bpe" if arch == "llama" else "qwen2")  # named: the Split + ByteLevel path
        w.add_token_list(tokens)
        w.add_token_types(types)
        w.add_token_merges(merges)
        w.add_bos_token_id(0)
        w.add_eos_token_id(0)
        w.add_add_bos_token(arch == "llama")

    add_weight(w, rng, "token_embd.weight", n_vocab, HIDDEN, T.Q8_0)
    for layer, kinds in enumerate(LAYER_TYPES):
        p = f"blk.{layer}."
        w.add_tensor(p + "attn_norm.weight", (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32))
        w.add_tensor(p + "ffn_norm.weight", (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32))
        if arch == "phi3":
            add_weight(w, rng, p + "attn_qkv.weight", (HEADS + 2 * KV_HEADS) * hd, HIDDEN, kinds["attn_q"])
        else:
            add_weight(w, rng, p + "attn_q.weight", HEADS * hd, HIDDEN, kinds["attn_q"])
            add_weight(w, rng, p + "attn_k.weight", KV_HEADS * hd, HIDDEN, kinds["attn_k"])
            add_weight(w, rng, p + "attn_v.weight", KV_HEADS * hd, HIDDEN, kinds["attn_v"])
        if arch == "qwen2":
            for part, rows in (("attn_q", HEADS), ("attn_k", KV_HEADS), ("attn_v", KV_HEADS)):
                w.add_tensor(p + part + ".bias", (0.1 * rng.standard_normal(rows * hd)).astype(np.float32))
        if arch == "qwen3":
            for part in ("attn_q_norm", "attn_k_norm"):
                w.add_tensor(p + part + ".weight", (1 + 0.1 * rng.standard_normal(hd)).astype(np.float32))
        add_weight(w, rng, p + "attn_output.weight", HIDDEN, HEADS * hd, kinds["attn_output"])
        if arch == "phi3":
            add_weight(w, rng, p + "ffn_up.weight", 2 * FF, HIDDEN, kinds["ffn_up"])
        else:
            add_weight(w, rng, p + "ffn_gate.weight", FF, HIDDEN, kinds["ffn_gate"])
            add_weight(w, rng, p + "ffn_up.weight", FF, HIDDEN, kinds["ffn_up"])
        add_weight(w, rng, p + "ffn_down.weight", HIDDEN, FF, kinds["ffn_down"])
    w.add_tensor("output_norm.weight", (1 + 0.1 * rng.standard_normal(HIDDEN)).astype(np.float32))
    add_weight(w, rng, "output.weight", n_vocab, HIDDEN, T.Q6_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


GPT2_EMBD, GPT2_LAYERS, GPT2_HEADS, GPT2_POSITIONS = 128, 2, 4, 1024
GPT2_LAYER_TYPES = [  # (attn_qkv, attn_output, ffn_up, ffn_down); ffn_down's rows are 512 wide
    (T.Q8_0, T.Q4_1, T.Q5_0, T.Q4_K),
    (T.Q5_1, T.Q4_0, T.Q8_0, T.Q6_K),
]


def write_tiny_gpt2(path, tokenizer_json):
    """GPT-2 as llama.cpp writes it: Conv1D weights stored [out, in], fused
    QKV, learned positions (1024 rows: transformers' GPT2Config sizes wpe so),
    biases everywhere, a tied head."""
    rng = np.random.default_rng(11)
    tokens, types, merges = bpe_vocabulary(tokenizer_json)
    n_vocab = len(tokens)
    d = GPT2_EMBD
    w = gguf.GGUFWriter(path, "gpt2")
    w.add_name("kvscope tiny gpt2")
    w.add_context_length(GPT2_POSITIONS)
    w.add_embedding_length(d)
    w.add_block_count(GPT2_LAYERS)
    w.add_feed_forward_length(4 * d)
    w.add_head_count(GPT2_HEADS)
    w.add_layer_norm_eps(1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(0)
    w.add_eos_token_id(0)
    add_weight(w, rng, "token_embd.weight", n_vocab, d, T.Q8_0)
    add_weight(w, rng, "position_embd.weight", GPT2_POSITIONS, d, T.Q8_0)

    def norm(name):
        w.add_tensor(name + ".weight", (1 + 0.1 * rng.standard_normal(d)).astype(np.float32))
        w.add_tensor(name + ".bias", (0.05 * rng.standard_normal(d)).astype(np.float32))

    def bias(name, n):
        w.add_tensor(name, (0.02 * rng.standard_normal(n)).astype(np.float32))

    for layer, (qkv, out, up, down) in enumerate(GPT2_LAYER_TYPES):
        p = f"blk.{layer}."
        norm(p + "attn_norm")
        add_weight(w, rng, p + "attn_qkv.weight", 3 * d, d, qkv)
        bias(p + "attn_qkv.bias", 3 * d)
        add_weight(w, rng, p + "attn_output.weight", d, d, out)
        bias(p + "attn_output.bias", d)
        norm(p + "ffn_norm")
        add_weight(w, rng, p + "ffn_up.weight", 4 * d, d, up)
        bias(p + "ffn_up.bias", 4 * d)
        add_weight(w, rng, p + "ffn_down.weight", d, 4 * d, down)
        bias(p + "ffn_down.bias", d)
    norm("output_norm")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


GEMMA3_HIDDEN, GEMMA3_FF, GEMMA3_LAYERS, GEMMA3_HEADS, GEMMA3_KV_HEADS = 64, 128, 6, 2, 1
# 256: transformers' Gemma3TextConfig scales queries by query_pre_attn_scalar,
# 256 by default (a GGUF does not store it), so only head_dim 256 agrees.
GEMMA3_HEAD_DIM = 256
GEMMA3_LAYER_TYPES = [  # attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down
    # Layer 0 as llama.cpp's Q4_K_M writes Gemma 3 (ffn_down would be Q6_K,
    # but K-quants need 256-wide rows: only attn_output, 2 x 256 inputs, has
    # them); the others mostly 4- and 5-bit types to keep the file small.
    (T.Q5_0, T.Q5_0, T.Q8_0, T.Q4_K, T.Q5_0, T.Q5_0, T.Q8_0),
    (T.Q4_0, T.Q4_1, T.Q5_0, T.Q6_K, T.Q4_0, T.Q5_1, T.Q4_1),
    (T.Q4_1, T.Q4_0, T.Q5_1, T.Q4_K, T.Q5_0, T.Q4_0, T.Q8_0),
    (T.Q4_0, T.Q5_0, T.Q4_0, T.Q4_K, T.Q4_1, T.Q5_0, T.Q5_0),
    (T.Q5_0, T.Q4_0, T.Q4_1, T.Q4_K, T.Q5_0, T.Q4_0, T.Q5_1),
    (T.Q4_0, T.Q4_0, T.Q5_0, T.Q6_K, T.Q5_0, T.Q5_0, T.Q8_0),
]
# The strings a Gemma vocabulary treats specially, recorded on top of the
# hard strings: turn markers, user-defined tokens, whitespace runs (stored as
# spaces in the file), U+2581 typed by the user.
GEMMA3_STRINGS = [
    "<start_of_turn>user\nHi there<end_of_turn>\n<start_of_turn>model\n",
    "<bos>hello<eos>", "<pad><mask><unk>", "[multimodal] image", "a[multimodal]b",
    "two  spaces, three   spaces,    four", "  lead and trail  ", "\u2581\u2581 typed \u2581", "x \u2581y",
    "one\n\ntwo\n\n\nthree\n", " \n  \n", "tabs\t\tand  \t mixed",
    "The cache keeps the tokens that matter; the rest are evicted.",
]


def gemma_vocabulary(pieces_json, seed=5):
    """A small vocabulary laid out like Gemma 3's (llama.cpp's SentencePiece
    export): 0-4 <pad> <eos> <bos> <unk> <mask> (control), a user-defined
    [multimodal], the turn markers (control), user-defined "\n" and "\n\n",
    whitespace runs of 2 and 3 plain spaces (user-defined, as Gemma's file
    stores them), the 256 byte tokens, then the pieces of a Llama-2
    SentencePiece vocabulary in their order (that order is Gemma's merge
    order). Scores are shuffled among the pieces: Gemma's scores do not follow
    its merge order, and transformers must not use them."""
    rng = np.random.default_rng(seed)
    head = [("<pad>", 3), ("<eos>", 3), ("<bos>", 3), ("<unk>", 3), ("<mask>", 3), ("[multimodal]", 4),
            ("<start_of_turn>", 3), ("<end_of_turn>", 3), ("\n", 4), ("\n\n", 4), ("  ", 4), ("   ", 4)]
    head += [(f"<0x{b:02X}>", 6) for b in range(256)]
    taken = {t for t, _ in head} | {"\u2581" * 2, "\u2581" * 3}
    vocab = json.load(open(pieces_json, encoding="utf-8"))["model"]["vocab"]
    pieces = [t for t in sorted(vocab, key=vocab.get)
              if not (t.startswith("<") and t.endswith(">") and len(t) > 1) and t not in taken]
    tokens = [t for t, _ in head] + pieces
    types = [k for _, k in head] + [1] * len(pieces)
    scores = [-1000.0] * len(head) + list(rng.permutation(-np.arange(len(head), len(tokens), dtype=np.float64)))
    return tokens, [float(x) for x in scores], types


def write_tiny_gemma3(path, seed=7):
    """Gemma 3 as llama.cpp's convert_hf_to_gguf.py writes it (key and tensor
    order as in its gemma-3-270m files): every *norm.weight stored as 1 + w
    (the converter adds 1; transformers subtracts it; here w is about
    0.1 N(0, 1)), no output.weight. What the file does not say, transformers'
    Gemma3TextConfig defaults to: query_pre_attn_scalar 256, sliding layers
    with RoPE base 10000 (rope.freq_base is the full layers'), every sixth
    layer full, gelu_pytorch_tanh, embeddings scaled by sqrt(hidden), no
    softcapping."""
    rng = np.random.default_rng(seed)
    tokens, scores, types = gemma_vocabulary(
        os.path.join(ROOT, "tests/data/tokenizers/llama2_sentencepiece/tokenizer.json"))
    n_vocab, d, hd = len(tokens), GEMMA3_HIDDEN, GEMMA3_HEAD_DIM
    w = gguf.GGUFWriter(path, "gemma3")
    w.add_type("model")
    w.add_name("kvscope tiny gemma3")
    w.add_context_length(256)
    w.add_embedding_length(d)
    w.add_block_count(GEMMA3_LAYERS)
    w.add_feed_forward_length(GEMMA3_FF)
    w.add_head_count(GEMMA3_HEADS)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_key_length(hd)
    w.add_value_length(hd)
    w.add_rope_freq_base(1000000.0)
    w.add_sliding_window(8)
    w.add_head_count_kv(GEMMA3_KV_HEADS)
    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(2)
    w.add_eos_token_id(1)
    w.add_unk_token_id(3)
    w.add_pad_token_id(0)
    w.add_add_bos_token(True)
    w.add_add_sep_token(False)
    w.add_add_eos_token(False)
    w.add_add_space_prefix(False)

    def norm(name, n):
        w.add_tensor(name, (1 + 0.1 * rng.standard_normal(n)).astype(np.float32))

    # A final norm of about 4 spreads the logits (standard deviation about 1)
    # so the greedy path has clear margins; a larger embedding would do it
    # too, but then each token's own embedding dominates and the greedy path
    # repeats one token.
    w.add_tensor("output_norm.weight", (4 * (1 + 0.1 * rng.standard_normal(d))).astype(np.float32))
    add_weight(w, rng, "token_embd.weight", n_vocab, d, T.Q8_0)
    for layer, (q, k, v, o, gate, up, down) in enumerate(GEMMA3_LAYER_TYPES):
        p = f"blk.{layer}."
        shapes = {"attn_k": (GEMMA3_KV_HEADS * hd, d, k), "attn_output": (d, GEMMA3_HEADS * hd, o),
                  "attn_q": (GEMMA3_HEADS * hd, d, q), "attn_v": (GEMMA3_KV_HEADS * hd, d, v),
                  "ffn_down": (d, GEMMA3_FF, down), "ffn_gate": (GEMMA3_FF, d, gate), "ffn_up": (GEMMA3_FF, d, up)}
        norms = {"attn_k_norm": hd, "attn_norm": d, "attn_q_norm": hd, "ffn_norm": d,
                 "post_attention_norm": d, "post_ffw_norm": d}
        for part in sorted(list(shapes) + list(norms)):  # the converter's files list a block's tensors by name
            if part in norms:
                norm(p + part + ".weight", norms[part])
            else:
                rows, cols, kind = shapes[part]
                add_weight(w, rng, p + part + ".weight", rows, cols, kind)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def hf_goldens(gguf_path, out_json, out_logits, extra_strings=None, extended=False):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    d, name = os.path.split(gguf_path)
    tok = AutoTokenizer.from_pretrained(d, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=name, dtype=torch.float32,
                                                 attn_implementation="eager")
    return record_goldens(model, tok, out_json, out_logits, extra_strings, extended)


def add_checkpoint_vocabulary(w, model_dir, cfg):
    """A checkpoint's byte-level BPE tokenizer.json as the converter's
    _set_vocab_gpt2 writes it (the GPT-2 split pattern), padded to the
    embedding's rows, with its BOS and EOS ids."""
    tokens, types, merges = bpe_vocabulary(os.path.join(model_dir, "tokenizer.json"))
    for i in range(len(tokens), cfg["vocab_size"]):  # the converter pads to the embedding's rows
        tokens.append(f"[PAD{i}]")
        types.append(5)  # unused
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(cfg["bos_token_id"])
    w.add_eos_token_id(cfg["eos_token_id"])


def write_gptneox(path, model_dir, f16):
    """A GPT-NeoX checkpoint converted as llama.cpp's converter does it."""
    from safetensors.numpy import load_file
    cfg = json.load(open(os.path.join(model_dir, "config.json"), encoding="utf-8"))
    tensors = load_file(os.path.join(model_dir, "model.safetensors"))
    d, heads = cfg["hidden_size"], cfg["num_attention_heads"]
    hd = d // heads
    rope = cfg.get("rope_parameters", {})  # or the older top-level spellings
    rotary = int(rope.get("partial_rotary_factor", cfg.get("rotary_pct", 0.25)) * hd)
    theta = rope.get("rope_theta", cfg.get("rotary_emb_base", 10000.0))
    w = gguf.GGUFWriter(path, "gptneox")
    w.add_name(os.path.basename(model_dir))
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(d)
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_rope_dimension_count(rotary)
    if theta != 10000.0:  # llama.cpp's converter leaves it out; its reader takes it when present
        w.add_rope_freq_base(theta)
    w.add_head_count(heads)
    w.add_parallel_residual(cfg["use_parallel_residual"])
    w.add_layer_norm_eps(cfg["layer_norm_eps"])
    add_checkpoint_vocabulary(w, model_dir, cfg)

    parts = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
             "attention.query_key_value": "attn_qkv", "attention.dense": "attn_output",
             "mlp.dense_h_to_4h": "ffn_up", "mlp.dense_4h_to_h": "ffn_down"}
    top = {"gpt_neox.embed_in": "token_embd", "gpt_neox.final_layer_norm": "output_norm", "embed_out": "output"}
    for name in sorted(tensors):
        x = tensors[name].astype(np.float32)
        stem, suffix = name.rsplit(".", 1)
        if stem in top:
            out = top[stem]
        else:
            layer, rest = stem[len("gpt_neox.layers."):].split(".", 1)
            out = f"blk.{layer}.{parts[rest]}"
        if out.endswith("attn_qkv"):  # [head][q,k,v][hd] -> [q|k|v]
            x = np.concatenate([x.reshape(heads, 3, hd, -1)[:, p].reshape(d, -1) for p in range(3)])
            x = x.reshape(tensors[name].shape)
        if f16 and x.ndim == 2:
            x = x.astype(np.float16)
        w.add_tensor(f"{out}.{suffix}", x)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# MPT's tensors as convert_hf_to_gguf.py names them (gguf-py's tensor map).
MPT_TOP = {"transformer.wte": "token_embd", "transformer.norm_f": "output_norm"}
MPT_PARTS = {"norm_1": "attn_norm", "attn.Wqkv": "attn_qkv", "attn.out_proj": "attn_output",
             "norm_2": "ffn_norm", "ffn.up_proj": "ffn_up", "ffn.down_proj": "ffn_down"}


def mpt_gguf_name(hf_name):
    stem, suffix = hf_name.rsplit(".", 1)
    if stem in MPT_TOP:
        return f"{MPT_TOP[stem]}.{suffix}"
    layer, rest = stem[len("transformer.blocks."):].split(".", 1)
    return f"blk.{layer}.{MPT_PARTS[rest]}.{suffix}"


def write_mpt(path, model_dir):
    """An MPT checkpoint converted as llama.cpp's converter does it with
    --outtype q8_0 (MPTModel: the feed-forward length written as 4 x d_model,
    layer_norm_epsilon 1e-5, clip_qkv as clamp_kqv, alibi_bias_max as
    max_alibi_bias; names from gguf-py's map; no tensor reordered)."""
    from safetensors.numpy import load_file
    cfg = json.load(open(os.path.join(model_dir, "config.json"), encoding="utf-8"))
    attn = cfg["attn_config"]
    tensors = load_file(os.path.join(model_dir, "model.safetensors"))
    w = gguf.GGUFWriter(path, "mpt")
    w.add_name(os.path.basename(model_dir))
    w.add_context_length(cfg["max_seq_len"])
    w.add_embedding_length(cfg["d_model"])
    w.add_block_count(cfg["n_layers"])
    w.add_feed_forward_length(4 * cfg["d_model"])
    w.add_head_count(cfg["n_heads"])
    w.add_layer_norm_eps(1e-5)
    if attn.get("clip_qkv") is not None:
        w.add_clamp_kqv(attn["clip_qkv"])
    w.add_max_alibi_bias(attn["alibi_bias_max"] if attn["alibi"] else 0.0)
    add_checkpoint_vocabulary(w, model_dir, cfg)
    for name in sorted(tensors):
        x = tensors[name].astype(np.float32)
        out = mpt_gguf_name(name)
        if x.ndim == 2:
            try:
                w.add_tensor(out, gguf.quants.quantize(x, T.Q8_0), raw_dtype=T.Q8_0)
            except gguf.QuantError:  # rows not whole blocks: the converter falls back to F16
                w.add_tensor(out, x.astype(np.float16))
        else:
            w.add_tensor(out, x)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def file_weight_goldens(model_dir, gguf_path, gguf_name_of, out_json, out_logits):
    """transformers on the checkpoint a GGUF was converted from, each
    parameter replaced by the file's dequantized tensor of that name (the
    tokenizer as checkpoint_goldens reads it)."""
    import torch
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(model_dir, "tokenizer.json"))
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager")
    reader = gguf.GGUFReader(gguf_path)
    stored = {t.name: t for t in reader.tensors}
    with torch.no_grad():
        for name, p in model.named_parameters():
            t = stored[gguf_name_of(name)]
            x = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32).reshape(p.shape)
            p.copy_(torch.from_numpy(x))
    record_goldens(model, tok, out_json, out_logits)


def llama3_rope_factors(cfg, head_dim):
    """rope_freqs.weight as llama.cpp's convert_hf_to_gguf.py writes it for a
    checkpoint with llama3 rope scaling: per rotary frequency, 1 (short
    wavelengths), factor (long ones) or 1 / ((1 - smooth) / factor + smooth)
    in between, computed on fp32 frequencies, stored as F32."""
    import math
    import torch
    rope = cfg["rope_parameters"]
    freqs = 1.0 / (rope["rope_theta"] ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    factor, low, high = rope["factor"], rope["low_freq_factor"], rope["high_freq_factor"]
    old = rope["original_max_position_embeddings"]
    low_wavelen, high_wavelen = old / low, old / high
    factors = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        if wavelen < high_wavelen:
            factors.append(1)
        elif wavelen > low_wavelen:
            factors.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            factors.append(1 / ((1 - smooth) / factor + smooth))
    return torch.tensor(factors, dtype=torch.float32).numpy()


def write_llama_checkpoint(path, model_dir):
    """A Llama checkpoint converted as llama.cpp's converter does it: q and k
    rows (and biases) interleaved per head for its RoPE kernel, the llama3
    rope_scaling as rope_freqs.weight, no lm_head when tied, F32 weights
    (the bf16 checkpoint's values exactly)."""
    from safetensors.torch import load_file
    cfg = json.load(open(os.path.join(model_dir, "config.json"), encoding="utf-8"))
    tensors = {k: v.float().numpy() for k, v in load_file(os.path.join(model_dir, "model.safetensors")).items()}
    d, heads, kv_heads = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim", d // heads)

    w = gguf.GGUFWriter(path, "llama")
    w.add_name(os.path.basename(model_dir))
    w.add_context_length(cfg["max_position_embeddings"])
    w.add_embedding_length(d)
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(heads)
    w.add_head_count_kv(kv_heads)
    w.add_rope_dimension_count(hd)
    w.add_rope_freq_base(cfg["rope_parameters"]["rope_theta"])
    w.add_layer_norm_rms_eps(cfg["rms_norm_eps"])
    w.add_vocab_size(cfg["vocab_size"])
    add_checkpoint_vocabulary(w, model_dir, cfg)
    w.add_add_bos_token(False)

    def permute(x, n):  # LlamaModel.permute: each head's two rotary halves interleaved
        return x.reshape(n, 2, x.shape[0] // n // 2, *x.shape[1:]).swapaxes(1, 2).reshape(x.shape)

    parts = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm", "self_attn.q_proj": "attn_q",
             "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v", "self_attn.o_proj": "attn_output",
             "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down"}
    top = {"model.embed_tokens": "token_embd", "model.norm": "output_norm", "lm_head": "output"}
    if cfg["rope_parameters"].get("rope_type") == "llama3":
        w.add_tensor("rope_freqs.weight", llama3_rope_factors(cfg, hd))
    for name in sorted(tensors):
        x = tensors[name]
        stem, suffix = name.rsplit(".", 1)
        if stem in top:
            out = top[stem]
        else:
            layer, rest = stem[len("model.layers."):].split(".", 1)
            out = f"blk.{layer}.{parts[rest]}"
        if out.endswith("attn_q"):
            x = permute(x, heads)
        elif out.endswith("attn_k"):
            x = permute(x, kv_heads)
        w.add_tensor(f"{out}.{suffix}", np.ascontiguousarray(x, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def checkpoint_goldens(model_dir, f16, out_json, out_logits):
    """transformers on the checkpoint a GGUF was converted from. The tokenizer
    is its tokenizer.json as written (what the converter copied), not
    AutoTokenizer: transformers 5 rebuilds a GPT-NeoX pipeline with an NFC
    normalizer this test file does not have, and neither llama.cpp nor a
    gpt2-kind GGUF vocabulary normalizes."""
    import torch
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_file=os.path.join(model_dir, "tokenizer.json"))
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager")
    if f16:
        with torch.no_grad():
            for p in model.parameters():
                if p.dim() == 2:
                    p.copy_(p.half().float())
    record_goldens(model, tok, out_json, out_logits)


def record_goldens(model, tok, out_json, out_logits, extra_strings=None, extended=False):
    """The golden files; `extended` adds each string's decoded text (with and
    without special tokens) and the smallest top-1 margin of the greedy
    continuation, which is returned."""
    import torch
    import transformers

    model.eval()
    prompt_text = "The cache keeps the tokens that matter; the rest are evicted, one by one."
    prompt = tok(prompt_text).input_ids
    with torch.no_grad():
        logits = model(torch.tensor([prompt])).logits[0].float().numpy()
        gen = model.generate(torch.tensor([prompt]), max_new_tokens=16, do_sample=False,
                             attention_mask=torch.ones(1, len(prompt), dtype=torch.long),
                             output_scores=True, return_dict_in_generate=True)
    greedy = gen.sequences[0, len(prompt):].tolist()
    margin = min(float(t[0] - t[1]) for t in (torch.topk(s[0], 2).values for s in gen.scores))
    hard = json.load(open(os.path.join(ROOT, "tests/data/tokenizers/hard_strings.json"), encoding="utf-8"))
    strings = []
    for s in hard + (extra_strings or []):
        entry = {"text": s, "ids": tok(s).input_ids, "ids_no_special": tok(s, add_special_tokens=False).input_ids}
        if extended:
            entry["decoded"] = tok.decode(entry["ids"])
            entry["decoded_skip_special"] = tok.decode(entry["ids"], skip_special_tokens=True)
        strings.append(entry)
    np.save(out_logits, logits.astype(np.float32))
    golden = {"transformers_version": transformers.__version__, "gguf_version": gguf.__version__
              if hasattr(gguf, "__version__") else "unknown",
              "prompt_text": prompt_text, "prompt": prompt, "greedy": greedy, "strings": strings}
    if extended:
        golden["min_top1_margin"] = margin
    with open(out_json, "w", encoding="utf-8") as f:
        json.dump(golden, f, ensure_ascii=False, indent=0, sort_keys=True)
        f.write("\n")
    return margin


def main(out_dir=None):
    out = out_dir or os.path.join(ROOT, "tests", "data", "gguf")
    os.makedirs(out, exist_ok=True)
    write_dequant(os.path.join(out, "dequant.gguf"))
    llama = os.path.join(out, "tiny_llama.gguf")
    write_tiny_llama(llama, os.path.join(ROOT, "tests/data/models/llama_gqa/tokenizer.json"))
    hf_goldens(llama, os.path.join(out, "tiny_llama.golden.json"), os.path.join(out, "tiny_llama.logits.npy"))
    qwen2 = os.path.join(out, "tiny_qwen2.gguf")
    write_tiny_llama(qwen2, os.path.join(ROOT, "tests/data/models/llama_gqa/tokenizer.json"), arch="qwen2")
    hf_goldens(qwen2, os.path.join(out, "tiny_qwen2.golden.json"), os.path.join(out, "tiny_qwen2.logits.npy"))
    # Qwen3 and Phi-3 as llama.cpp writes them (no rotary row interleaving;
    # Phi-3 with the SentencePiece vocabulary its files carry).
    qwen3 = os.path.join(out, "tiny_qwen3.gguf")
    write_tiny_llama(qwen3, os.path.join(ROOT, "tests/data/models/llama_gqa/tokenizer.json"), arch="qwen3")
    hf_goldens(qwen3, os.path.join(out, "tiny_qwen3.golden.json"), os.path.join(out, "tiny_qwen3.logits.npy"))
    phi3 = os.path.join(out, "tiny_phi3.gguf")
    write_tiny_llama(phi3, os.path.join(ROOT, "tests/data/tokenizers/llama2_sentencepiece/tokenizer.json"),
                     arch="phi3", spm=True)
    hf_goldens(phi3, os.path.join(out, "tiny_phi3.golden.json"), os.path.join(out, "tiny_phi3.logits.npy"))
    spm = os.path.join(out, "tiny_llama_spm.gguf")
    write_tiny_llama(spm, os.path.join(ROOT, "tests/data/tokenizers/llama2_sentencepiece/tokenizer.json"), spm=True)
    hf_goldens(spm, os.path.join(out, "tiny_llama_spm.golden.json"), os.path.join(out, "tiny_llama_spm.logits.npy"))
    gpt2 = os.path.join(out, "tiny_gpt2.gguf")
    write_tiny_gpt2(gpt2, os.path.join(ROOT, "tests/data/models/gpt2/tokenizer.json"))
    hf_goldens(gpt2, os.path.join(out, "tiny_gpt2.golden.json"), os.path.join(out, "tiny_gpt2.logits.npy"))
    for name, checkpoint, f16 in (("tiny_gptneox", "gpt_neox_parallel", False),
                                  ("tiny_gptneox_f16", "gpt_neox_sequential", True)):
        model_dir = os.path.join(ROOT, "tests/data/models", checkpoint)
        write_gptneox(os.path.join(out, name + ".gguf"), model_dir, f16)
        checkpoint_goldens(model_dir, f16, os.path.join(out, name + ".golden.json"),
                           os.path.join(out, name + ".logits.npy"))
    model_dir = os.path.join(ROOT, "tests/data/models/mpt")
    mpt = os.path.join(out, "tiny_mpt.gguf")
    write_mpt(mpt, model_dir)
    file_weight_goldens(model_dir, mpt, mpt_gguf_name, os.path.join(out, "tiny_mpt.golden.json"),
                        os.path.join(out, "tiny_mpt.logits.npy"))
    # Llama 3 scaling as llama.cpp writes it (rope_freqs.weight); the golden
    # is transformers on the folder the file was converted from.
    model_dir = os.path.join(ROOT, "tests/data/models/llama3_mqa_bf16")
    write_llama_checkpoint(os.path.join(out, "tiny_llama3.gguf"), model_dir)
    checkpoint_goldens(model_dir, False, os.path.join(out, "tiny_llama3.golden.json"),
                       os.path.join(out, "tiny_llama3.logits.npy"))
    gemma3 = os.path.join(out, "tiny_gemma3.gguf")
    write_tiny_gemma3(gemma3)
    margin = hf_goldens(gemma3, os.path.join(out, "tiny_gemma3.golden.json"),
                        os.path.join(out, "tiny_gemma3.logits.npy"), GEMMA3_STRINGS, extended=True)
    assert margin > 2e-3, f"tiny_gemma3: greedy top-1 margin {margin:.3g}; pick another seed"
    print("wrote", out)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
