#!/usr/bin/env python3
"""Golden kept-KV indices from NVIDIA kvpress (one-shot prefill presses, AdaKVPress, DecodingPress) for kvscope.

For each tiny test checkpoint under tests/data/models/ this runs kvpress presses
on two random prompts (one prefill forward of the whole prompt, the way
kvpress' pipeline compresses a context) and writes, per case, exactly which KV
positions kvpress kept for every (layer, KV head) (for AdaKVPress, which
removes no row but masks (KV head, position) pairs: the positions it leaves
unmasked), and, for kvpress'
DecodingPress (which never touches the prompt but compresses the cache every
`compression_interval` decode steps down to `target_size` rows), which absolute
positions the cache holds after each compression of a teacher-forced decode:

    tests/data/kvpress/<model_dir_name>.json

Usage
-----
    tools/goldens_kvpress.sh [args]          # makes/uses its own venv, see below
    <venv>/bin/python tools/goldens_kvpress.py [--models a,b] [--out DIR] [--check]
    <venv>/bin/python tools/goldens_kvpress.py --smollm2 [--out FILE]

--check regenerates into memory and compares with the files on disk (exit 1
on any difference). --smollm2 writes ONLY the SmolLM2-135M file, from the GGUF
in ~/.cache/kvscope/models/smollm2-135m/ (needs PyPI `gguf`), by default to
~/.cache/kvscope/kvpress/smollm2-135m.json, outside the repo: CI does not use it.

Environment: this must run with kvpress' own pinned transformers (kvpress 0.5.5
requires transformers<5.3; the committed files were made with kvpress 0.5.5,
transformers 5.2.0, torch 2.15.0 on CPU). That is NOT the venv of
tools/make_goldens.py / goldens_models.py (transformers 5.23). A separate venv:

    python3 -m venv ~/.cache/kvscope/kvpress-venv
    ~/.cache/kvscope/kvpress-venv/bin/pip install kvpress==0.5.5 transformers==5.2.0

tools/goldens_kvpress.sh does exactly that (KVPRESS_VENV=/path overrides the
location, e.g. KVPRESS_VENV=/work/.venvs/kvpress) and then runs this script.

How the indices are captured (nothing of kvpress is reimplemented)
------------------------------------------------------------------
Prompts: PROMPT_LENS (48, 80) distinct random token ids in [1, vocab_size)
(torch.randperm, seed SEED), the same for every checkpoint of equal vocab.
Models load with dtype=float32 and attn_implementation="eager" (bf16/fp16
checkpoints are widened exactly; eager is what ObservedAttentionPress needs,
and it gives every press the plain softmax). The press instance's `compress`
(and `score`, when it has one) is wrapped on the instance; for each layer
(module.layer_idx) the wrapper keeps the keys going in and the keys coming out,
and every output key row (batch 0, per KV head) is mapped to the input row it
equals bit for bit. Exactly one input row must match (random weights make rows
unique; anything else aborts), and the value row at that index must equal the
output value row. The final DynamicCache length per layer must equal the
number of kept rows. Prefill is `model.model(input_ids=ids,
past_key_values=DynamicCache())` inside `with press(model):`, as in kvpress'
pipeline.py (no lm_head).

AdaKV cases (AdaKVPress, see below for its rule): AdaKVPress.compress asserts
that the attention is not eager, so these use a second load of the same
checkpoint with attn_implementation="sdpa" (still dtype=float32; a separate
model object, the eager one is untouched). For each prompt and each
(inner press, inner params, compression_ratio r, alpha_safeguard) of
adakv_configs() the press is AdaKVPress(press=Inner(compression_ratio=r,
**inner_params), alpha_safeguard=alpha), run as the one-shot cases are (one
prefill forward inside `with press(model):`). The inner press' `score` is
wrapped on its instance (a copy of the scores as returned, and the tensor
itself, which AdaKVPress then changes in place), and AdaKVPress' `compress` on
its instance: after it returns, the wrapper reads `module.masked_key_indices`
(batch, head, seq), the pairs AdaKVPress masks. Kept positions of a KV head =
0..n-1 minus the positions masked for that head. Checked on every case
(anything else aborts the case into "skipped"): compress returns the very
key / value tensors it got (nothing removed) and every layer's cache still
holds n rows after the prefill; no attention weights reach the press (sdpa);
the scores change only by entries set to float32 max, exactly n_safe per KV
head, each head's top n_safe by its own score (the "safeguarded" positions);
exactly n_kv_heads * (n - n_kept) distinct pairs are masked, all of batch 0,
none safeguarded, and no masked score (after the safeguard) exceeds a kept
one anywhere in the layer; the layer keeps n_kv_heads * n_kept pairs. Each
case also runs with alpha_safeguard=0 (same inner press): the cells whose kept
set differs are "safeguard_binds" (the cells the safeguard decides).

Decoding cases (DecodingPress): for each prompt / (compression_interval,
target_size, D steps) of decoding_configs() and each base press of
DECODE_BASES (KnormPress, KeyDiffPress, TOVAPress, built with their default
compression_ratio 0.0, which DecodingPress overrides), the prompt is prefilled
as above and then D continuation tokens are fed one per forward, all inside one
`with DecodingPress(...)(model):` and one DynamicCache: `model.model(input_ids=
[[tok]], past_key_values=cache, position_ids=[[n + step - 1]])`. The position
ids are absolute, as kvpress' pipeline.generate_answer passes them (context
length + i); cache_position is left to transformers, which derives it from the
(compressed) cache length, again as in the pipeline. transformers' default
position_ids (= cache_position) would rotate a new key to the compressed cache
length instead, and the kept sets differ from the first compression on.
Continuation ids: make_continuations(), D distinct ids in [1, vocab_size) not in
the prompt (torch.randperm, seed DECODE_SEED + prompt index). Every cache row
carries an absolute position: 0..n-1 after the prefill, n + step - 1 for the
token of decode step `step` (counted 1..D). DecodingPress' `compress` (on the
instance) is wrapped as above; at a compression every output key row is mapped
to the input row it equals bit for bit (same checks as the one-shot cases), and
each row keeps the position of the input row it came from. Checked as it runs:
nothing is compressed during the prefill, the rows going into a compression
are the cache before the step, bit for bit, plus the step's own key as the last
row, the cache afterwards is compress' output, its length per layer equals the
tracked positions after every step, and compressions happen exactly at the
steps stated below (anything else aborts the case into "skipped").

DecodingPress's schedule (kvpress 0.5.5, decoding_press.py; observed here)
---------------------------------------------------------------------------
- The prompt is never compressed: the forward hook returns at once while
  is_prefilling (cache_position[-1] + 1 == q_len), i.e. for the prefill forward.
- Each later forward of a layer adds 1 to that layer's step count (before the
  test). The forward whose count reaches compression_interval compresses, after
  its attention ran, then the count restarts at 0. So with one token a step,
  decode steps interval, 2*interval, 3*interval, ... (counted from 1) compress,
  every layer at the same step. (It also compresses whenever the forward feeds
  q_len >= target_size tokens at once; with one token a step that never
  happens for target_size > 1.)
- What is compressed is the layer's whole cache: the kept prompt and decode
  rows plus the current step's key (already appended, the last row). The
  current key is a candidate like any other: KnormPress and KeyDiffPress can
  drop it at once; TOVAPress scores it max + 1, so it always stays.
- It keeps exactly target_size rows: the base press runs with the compression
  ratio for which int(k_len * (1 - ratio)) == target_size (a binary search),
  and keeps its top-k scores per KV head. When the cache holds <= target_size
  rows (k_len <= target_size) the ratio is 0 and nothing is dropped, but the
  count still restarts (such no-op compressions are recorded, "n_in" <=
  "target_size").
- Scores see only that layer's cache at that moment: Knorm / KeyDiff from the
  keys (KeyDiff's anchor is the mean of the normalised keys then in the
  cache); TOVA from the eager attention weights of the step's query over the
  whole cache, itself included ([1, heads, 1, k_len]), averaged over query
  heads (one set for every KV head) with its own column set to max + 1.
- After a compression the cache rows are in top-k's order, not position order
  (it matters only for ties and float summation order; the file lists sorted
  positions).

AdaKVPress's rule (kvpress 0.5.5, adakv_press.py; observed and checked here)
---------------------------------------------------------------------------
With n prompt tokens, H KV heads, n_kept = max(1, int(n (1 - r))) (compute_n_kept,
the per-head count a plain press keeps) and n_safe = max(1, int(n_kept * alpha))
(0 when alpha is 0), per layer:
1. s = the inner press' score [1, H, n], the same score the inner press uses
   alone (SnapKVPress gets no attention weights under sdpa and computes its
   window queries' attention itself, compute_window_attention; its window is
   padded with the layer's max + 1, as in the eager cases).
2. Safeguard: each KV head's own top n_safe, torch.topk(s, n_safe, dim=-1), is
   set to float32 max (in place). Those are kept whatever the other heads score.
3. Layer-wide pruning: torch.topk(-s.reshape(1, H * n), H * (n - n_kept)), i.e.
   the H * (n - n_kept) lowest safeguarded scores of the layer, across all its
   KV heads (flat index head * n + position), are masked; everything else is
   kept. So the layer keeps H * n_kept pairs in total ("n_kept" = H * n_kept,
   asserted) but a head keeps anything from n_safe to n ("head_kept"): in the
   four files, of the 56 cells each of Knorm / SnapKV / KeyDiff at alpha 0.2,
   40 / 40 / 38 keep other than n_kept (e.g. llama_gqa, Knorm, r 0.5, prompt 0:
   head_kept [[32, 16], [28, 20]] where a plain press keeps 24 per head). The
   scores of different heads are compared as they are, unnormalised.
4. Nothing is removed: the cache keeps all n rows per head and
   module.masked_key_indices stays set after the prefill; in the decoding
   forwards attention_patch.py overwrites the masked keys with a fake key whose
   attention weight underflows to 0. So the kept positions are those of a
   per-(layer, KV head) eviction of the masked ones.
With one KV head (llama3_mqa_bf16) this is the inner press alone (observed: the
same kept sets as the eager cases of the same press and ratio). With these
random-weight checkpoints the heads' scores overlap so much that the safeguard
never changes a kept set at alpha 0.2 or 0.5 (each head keeps far more than
n_safe on its merit); alpha 0.9 (KnormPress) is in the list because there it
does: "safeguard_binds" lists the cells (12 in all files), where one head keeps
exactly n_safe (e.g. llama_gqa, r 0.5, prompt 0: head_kept [[27, 21], [27, 21]],
n_safe 21).
Ties (torch.topk's CPU rule, below): step 2 decides among a head's scores tied
at its n_safe-th place which get float32 max; that matters only if one of the
tied scores left unsafeguarded is then masked. Step 3 applies the rule to the
negated flat [H * n] vector (k = H * (n - n_kept), so nth_element here); a tie
at the layer's boundary (lowest kept vs highest masked safeguarded score)
decides which heads keep how many. Both are flagged per cell (below); neither
occurs in these files (the SnapKV window's max + 1 ties at the safeguard
boundary are all kept). ObservedAttentionPress cannot be the inner press: it
asserts attention weights ('Set attn_implementation="eager"'), which sdpa does
not return, and AdaKVPress refuses eager (its docstring: "AdaKVPress and
ObservedAttention are currently not supported"); its cases are in "skipped".

File format
-----------
{"format": "kvscope-kvpress-goldens", "version": 3, "made_by", "kvpress",
 "transformers", "torch", "model", "dtype": "float32", "attn_implementation":
 "eager" (of every case without an "attn_implementation" of its own), "seed",
 "prompts": [[ids]...],
 "cases": [{"press", "params", "prompt" (index into prompts), "n" (prompt
            length), "n_kept": [per layer],
            "kept": [layer][kv_head] -> sorted kept positions,
            "scores": [layer][kv_head][position] -> the press' score (float32
                      printed with 9 significant digits, so it parses back to
                      the same float32; null if not finite); absent when the
                      press has no score() or the file would grow too big,
            "tied_cells": [[layer, kv_head], ...] where the lowest kept score
                      and the highest dropped score differ by < 1e-6
                      (relative): there the choice is decided by top-k's tie
                      rule, not by the scores},
           ...; the AdaKV cases (version 3) come first, before the eager
           ones, and have these fields:
           {"press": "AdaKVPress", "params": {"press" (the inner press' class
                      name), "inner_params" (its other constructor params; it
                      is built with compression_ratio r plus these),
                      "compression_ratio" (r), "alpha_safeguard"},
            "prompt", "n", "attn_implementation": "sdpa",
            "n_kept": [per layer] -> kept (KV head, position) pairs SUMMED
                      over the layer's KV heads, = n_kv_heads * max(1,
                      int(n (1 - r))) (NOT the per-head count of the other
                      cases),
            "head_kept": [layer][kv_head] -> kept positions of that head,
            "kept": [layer][kv_head] -> sorted positions not masked,
            "n_safe": max(1, int(max(1, int(n (1 - r))) * alpha_safeguard)),
            "safeguarded": [layer][kv_head] -> sorted positions the safeguard
                      set to float32 max (the head's own top n_safe),
            "scores": [layer][kv_head][position] -> the inner press' score
                      BEFORE the safeguard (format as above),
            "tied_cells": [[layer, kv_head], ...] whose kept set top-k's tie
                      rule decides: (a) the layer's lowest kept and highest
                      masked score after the safeguard differ by < 1e-6
                      relative (the heads holding a score within that band),
                      or (b) the head's n_safe-th and (n_safe+1)-th scores
                      differ by < 1e-6 relative and a score within that band
                      was left unsafeguarded and masked,
            "safeguard_ties": [[layer, kv_head], ...] whose n_safe-th and
                      (n_safe+1)-th scores differ by < 1e-6 relative, whether
                      or not it changes the kept set (the SnapKV window's
                      max + 1 when n_safe < window_size: harmless),
            "safeguard_binds": [[layer, kv_head], ...] whose kept set
                      differs from AdaKVPress with alpha_safeguard=0}],
 "decoding_cases": [{"base_press" (KnormPress / KeyDiffPress / TOVAPress),
            "interval" (compression_interval), "target_size", "prompt" (index
            into prompts), "n" (prompt length), "steps" (D),
            "continuation": [D token ids fed at decode steps 1..D],
            "compressions": [{"step" (1..D, the decode step whose forward
                      compressed), "n_in" (rows going in, the same in every
                      layer), "kept": [layer][kv_head] -> sorted absolute
                      positions the cache holds after that compression,
                      "tied_cells": [[layer, kv_head], ...] with a boundary
                      gap < 1e-6 relative at that compression (a tie there
                      also makes everything after it in that layer, and the
                      layers above, a don't-care)}, ...],
            "final_kept": [layer][kv_head] -> sorted absolute positions held
                      after step D}]; no scores (version 2 added this list),
 "skipped": [{"press", "params", "prompt", "reason"}]  (a decoding case that
            fails: press "DecodingPress", params {"base_press",
            "compression_interval", "target_size"}; an AdaKV case: press
            "AdaKVPress" and its params as above)}
Rerunning writes identical bytes (fixed seeds, one thread, deterministic
algorithms, sorted keys, fixed float formatting).

torch.topk tie rule (CPU, observed with torch 2.15.0 and checked against C++)
----------------------------------------------------------------------------
kvpress keeps `scores.topk(n_kept, dim=-1).indices`. On CPU, torch.topk does
NOT break ties by index: e.g. tensor([1,1,1,0]).topk(2) -> [1, 2];
tensor([1,1,1,1,1,1,1,1]).topk(3) -> [6, 5, 4]; tensor([0,1,0,1,0,1,0,1]).topk(5)
-> [1, 7, 5, 3, 2]; zeros(48).topk(24) -> the last 24, zeros(48).topk(12) ->
a scattered set. The rule is libstdc++'s selection algorithm on (value, index)
pairs built in index order, compared by value only:
    if k*64 <= n: std::partial_sort(q, q+k, q+n, greater_by_value)
    else:         std::nth_element(q, q+k-1, q+n, greater_by_value);
                  std::sort(q, q+k-1, greater_by_value)
(aten/src/ATen/native/TopKImpl.h). A C++ emulation of exactly that, built with
g++ 12, reproduced torch's indices (order included) on 3000 random tie-heavy
vectors (n 4..1000, all k). So a C++ engine only matches kvpress on a tied
boundary if it uses the same libstdc++ calls; otherwise treat "tied_cells" as
don't-care. In these goldens the ties kvpress creates on purpose (SnapKV /
PyramidKV window and TOVA's last token scored max+1, StreamingLLM's 0/1
scores) never straddle the kept/dropped boundary.
"""
import argparse
import importlib.metadata as md
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FORMAT = "kvscope-kvpress-goldens"
VERSION = 3
SEED = 20240607
PROMPT_LENS = (48, 80)
DECODE_SEED = SEED + 1  # continuation ids: DECODE_SEED + prompt index
DECODE_BASES = ("KnormPress", "KeyDiffPress", "TOVAPress")
ADAKV_ATTN = "sdpa"  # AdaKVPress asserts the attention implementation is not eager
MODELS = ("llama_gqa", "mistral", "qwen2_fp16_sharded", "llama3_mqa_bf16")
EXPECT = {"kvpress": "0.5.5", "transformers": "5.2.0"}
MAX_FILE_BYTES = 300_000
TIE_REL = 1e-6
SMOLLM2_DIR = os.path.expanduser("~/.cache/kvscope/models/smollm2-135m")


def press_configs():
    """(press class name, params) in file order."""
    out = []
    for r in (0.25, 0.5, 0.75):
        out.append(("KnormPress", {"compression_ratio": r}))
    for w, k in ((8, 5), (16, 3)):
        for r in (0.25, 0.5):
            out.append(("SnapKVPress", {"compression_ratio": r, "window_size": w, "kernel_size": k}))
    for r in (0.25, 0.5, 0.75):
        out.append(("ObservedAttentionPress", {"compression_ratio": r}))
    out.append(("TOVAPress", {"compression_ratio": 0.5}))
    out.append(("StreamingLLMPress", {"compression_ratio": 0.5, "n_sink": 4}))
    for r in (0.25, 0.5):
        out.append(("PyramidKVPress", {"compression_ratio": r, "window_size": 8, "kernel_size": 5}))
    out.append(("KeyDiffPress", {"compression_ratio": 0.5}))
    return out


def adakv_configs():
    """(inner press class name, inner params without compression_ratio, compression_ratio, alpha_safeguard) of
    the AdaKVPress cases, in file order (per prompt)."""
    out = []
    for inner, inner_params in (("KnormPress", {}), ("SnapKVPress", {"window_size": 8, "kernel_size": 5}),
                                ("KeyDiffPress", {}), ("ObservedAttentionPress", {})):
        for r in (0.25, 0.5):
            out.append((inner, inner_params, r, 0.2))
    for alpha in (0.5, 0.9):  # 0.9: where the safeguard decides cells of these checkpoints (0.2, 0.5 never do)
        for r in (0.25, 0.5):
            out.append(("KnormPress", {}, r, alpha))
    return out


def decoding_configs():
    """(prompt index, compression_interval, target_size, decode steps) in file order, for every base press."""
    return [(0, 4, 24, 14), (0, 3, 40, 14), (1, 5, 64, 16), (1, 2, 84, 12)]


def setup_torch():
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    import transformers
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    import logging
    logging.getLogger("kvpress").setLevel(logging.ERROR)
    return torch


def versions():
    v = {name: md.version(name) for name in ("kvpress", "transformers", "torch")}
    for name, want in EXPECT.items():
        if v[name] != want:
            print(f"warning: {name} {v[name]} here, the committed goldens used {want}", file=sys.stderr)
    return v


def load_model(path, gguf_file=None, attn_implementation="eager"):
    import torch
    from transformers import AutoModelForCausalLM
    kw = {"gguf_file": gguf_file} if gguf_file else {}
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation=attn_implementation,
                                                 **kw)
    if model.config._attn_implementation != attn_implementation:
        raise RuntimeError(f"asked for {attn_implementation} attention, got {model.config._attn_implementation}")
    return model.eval()


def make_prompts(vocab_size, seed=SEED, lens=PROMPT_LENS):
    import torch
    # Distinct ids within a prompt: a repeated id gives layer 0 two keys that differ only by
    # RoPE, a rotation, so KnormPress would see norms equal up to an ulp (a near-tie that only
    # bit-identical RoPE arithmetic could reproduce).
    g = torch.Generator().manual_seed(seed)
    return [(torch.randperm(vocab_size - 1, generator=g)[:n] + 1).tolist() for n in lens]


def make_continuations(vocab_size, prompts, steps):
    """Per prompt, `steps` distinct ids in [1, vocab_size) that are not in the prompt (torch.randperm, seed
    DECODE_SEED + prompt index): a repeated id would give layer-0 keys equal norms up to an ulp, as above."""
    import torch
    out = []
    for p, ids in enumerate(prompts):
        g = torch.Generator().manual_seed(DECODE_SEED + p)
        used = set(ids)
        perm = (torch.randperm(vocab_size - 1, generator=g) + 1).tolist()
        out.append([t for t in perm if t not in used][:steps])
    return out


def map_rows(rows_in, rows_out, what):
    """Index into rows_in of each row of rows_out, by exact equality; exactly one match each."""
    import torch
    eq = (rows_out[:, None, :] == rows_in[None, :, :]).all(-1)  # [n_out, n_in]
    counts = eq.sum(1)
    if not bool((counts == 1).all()):
        bad = [(r, int(c)) for r, c in enumerate(counts.tolist()) if c != 1]
        raise RuntimeError(f"{what}: output rows without exactly one equal input row (row, matches): {bad[:8]}")
    return eq.to(torch.int64).argmax(1).tolist()


def run_case(model, press_name, params, ids):
    """Run one press on one prompt; return (n_kept, kept, scores or None)."""
    import torch
    import kvpress
    from transformers import DynamicCache
    press = getattr(kvpress, press_name)(**params)
    rec, scores = {}, {}
    orig_compress = press.compress
    has_score = hasattr(press, "score")

    def compress(module, hidden_states, keys, values, attentions, kwargs):
        k_out, v_out = orig_compress(module, hidden_states, keys, values, attentions, kwargs)
        rec[module.layer_idx] = (keys.detach().clone(), values.detach().clone(),
                                 k_out.detach().clone(), v_out.detach().clone())
        return k_out, v_out
    press.compress = compress
    if has_score:
        orig_score = press.score

        def score(module, *args, **kwargs):
            s = orig_score(module, *args, **kwargs)
            scores[module.layer_idx] = s.detach().to(torch.float32).clone()
            return s
        press.score = score

    cache = DynamicCache()
    with torch.no_grad(), press(model):
        model.model(input_ids=torch.tensor([ids]), past_key_values=cache)

    n_layers = model.config.num_hidden_layers
    if sorted(rec) != list(range(n_layers)):
        raise RuntimeError(f"compress ran on layers {sorted(rec)}, expected 0..{n_layers - 1}")
    n_kept, kept, sc = [], [], []
    for li in range(n_layers):
        k_in, v_in, k_out, v_out = rec[li]
        if k_in.shape[2] != len(ids):
            raise RuntimeError(f"layer {li}: {k_in.shape[2]} keys in, prompt has {len(ids)}")
        n_kept.append(int(k_out.shape[2]))
        if cache.layers[li].keys.shape[2] != k_out.shape[2]:
            raise RuntimeError(f"layer {li}: cache holds {cache.layers[li].keys.shape[2]}, compress gave {k_out.shape[2]}")
        heads = []
        for h in range(k_in.shape[1]):
            idx = map_rows(k_in[0, h], k_out[0, h], f"layer {li} head {h} keys")
            if not torch.equal(v_in[0, h][idx], v_out[0, h]):
                raise RuntimeError(f"layer {li} head {h}: values do not follow the keys' indices")
            if len(set(idx)) != len(idx):
                raise RuntimeError(f"layer {li} head {h}: a position kept twice")
            heads.append(sorted(idx))
        kept.append(heads)
        if has_score:
            if li not in scores:
                raise RuntimeError(f"layer {li}: score() not called")
            s = scores[li]
            if tuple(s.shape) != (1, k_in.shape[1], len(ids)):
                raise RuntimeError(f"layer {li}: scores shape {tuple(s.shape)}")
            sc.append(s[0].tolist())
    return n_kept, kept, (sc if has_score else None)


def boundary_gaps(kept, scores):
    """Per (layer, head): relative gap lowest kept score - highest dropped score (None: nothing dropped)."""
    out = []
    for li, heads in enumerate(kept):
        row = []
        for h, idx in enumerate(heads):
            s = scores[li][h]
            ks = set(idx)
            kept_s = [s[i] for i in idx]
            drop_s = [s[i] for i in range(len(s)) if i not in ks]
            if not drop_s:
                row.append(None)
                continue
            lo, hi = min(kept_s), max(drop_s)
            if lo < hi:
                raise RuntimeError(f"layer {li} head {h}: a dropped score {hi!r} beats a kept one {lo!r}")
            row.append((lo - hi) / max(abs(lo), abs(hi), 1e-30))
        out.append(row)
    return out


def rel_gap(s, idx):
    """Relative gap lowest kept score - highest dropped score of one head (None: nothing dropped)."""
    ks = set(idx)
    kept_s = [s[i] for i in idx]
    drop_s = [s[i] for i in range(len(s)) if i not in ks]
    if not drop_s:
        return None
    lo, hi = min(kept_s), max(drop_s)
    if lo < hi:
        raise RuntimeError(f"a dropped score {hi!r} beats a kept one {lo!r}")
    return (lo - hi) / max(abs(lo), abs(hi), 1e-30)


def run_decoding_case(model, base_name, interval, target, ids, continuation, gaps):
    """Prefill `ids` and teacher-force `continuation` one token a step under DecodingPress(base_name());
    return (compressions, final_kept) with absolute positions, appending each compression's boundary gaps
    (per layer, KV head) to `gaps` as (step, layer, kv_head, gap)."""
    import torch
    import kvpress
    from transformers import DynamicCache
    base = getattr(kvpress, base_name)()
    press = kvpress.DecodingPress(base_press=base, compression_interval=interval, target_size=target)
    calls, scores = [], {}
    orig_compress, orig_score = press.compress, base.score

    def compress(module, hidden_states, keys, values, attentions, kwargs):
        k_out, v_out = orig_compress(module, hidden_states, keys, values, attentions, kwargs)
        calls.append((module.layer_idx, keys.detach().clone(), values.detach().clone(),
                      k_out.detach().clone(), v_out.detach().clone()))
        return k_out, v_out
    press.compress = compress

    def score(module, *args, **kwargs):
        s = orig_score(module, *args, **kwargs)
        scores[module.layer_idx] = s.detach().to(torch.float32).clone()
        return s
    base.score = score

    n, n_layers = len(ids), model.config.num_hidden_layers
    cache = DynamicCache()
    compressions = []
    with torch.no_grad(), press(model):
        model.model(input_ids=torch.tensor([ids]), past_key_values=cache)
        if calls:
            raise RuntimeError("DecodingPress compressed during the prefill")
        if [cache.layers[li].keys.shape[2] for li in range(n_layers)] != [n] * n_layers:
            raise RuntimeError("prefill cache is not the whole prompt")
        n_heads = cache.layers[0].keys.shape[1]
        pos = [[list(range(n)) for _ in range(n_heads)] for _ in range(n_layers)]
        for step in range(1, len(continuation) + 1):
            before = [cache.layers[li].keys.clone() for li in range(n_layers)]
            calls.clear()
            scores.clear()
            # Absolute RoPE positions, as kvpress' pipeline.generate_answer passes them (position_ids =
            # context length + i); cache_position is left to transformers (from the cache length).
            model.model(input_ids=torch.tensor([[continuation[step - 1]]]), past_key_values=cache,
                        position_ids=torch.tensor([[n + step - 1]]))
            for heads in pos:
                for p in heads:
                    p.append(n + step - 1)
            if calls:
                if [c[0] for c in calls] != list(range(n_layers)):
                    raise RuntimeError(f"step {step}: compress ran on layers {[c[0] for c in calls]}")
                kept, n_in = [], calls[0][1].shape[2]
                for li, k_in, v_in, k_out, v_out in calls:
                    # What is compressed: the whole cache before this step plus this step's key, last.
                    if k_in.shape[2] != before[li].shape[2] + 1 or not torch.equal(k_in[:, :, :-1], before[li]):
                        raise RuntimeError(f"step {step} layer {li}: compress did not get the cache + this step's key")
                    if k_in.shape[2] != n_in or k_out.shape[2] != min(target, n_in):
                        raise RuntimeError(f"step {step} layer {li}: {k_in.shape[2]} rows in, {k_out.shape[2]} out")
                    if not torch.equal(cache.layers[li].keys, k_out):
                        raise RuntimeError(f"step {step} layer {li}: the cache is not compress's output")
                    heads = []
                    for h in range(n_heads):
                        idx = map_rows(k_in[0, h], k_out[0, h], f"step {step} layer {li} head {h} keys")
                        if not torch.equal(v_in[0, h][idx], v_out[0, h]):
                            raise RuntimeError(f"step {step} layer {li} head {h}: values do not follow the keys")
                        if len(set(idx)) != len(idx):
                            raise RuntimeError(f"step {step} layer {li} head {h}: a row kept twice")
                        pos[li][h] = [pos[li][h][i] for i in idx]  # cache row order: top-k's order
                        heads.append(sorted(pos[li][h]))
                        if n_in > target:
                            if li not in scores or tuple(scores[li].shape) != (1, n_heads, n_in):
                                raise RuntimeError(f"step {step} layer {li}: no score of shape (1, {n_heads}, {n_in})")
                            g = rel_gap(scores[li][0, h].tolist(), idx)
                            if g is not None:
                                gaps.append((step, li, h, g))
                        elif scores:
                            raise RuntimeError(f"step {step}: scored although {n_in} <= target_size {target}")
                    kept.append(heads)
                compressions.append({"step": step, "n_in": n_in, "kept": kept})
            for li in range(n_layers):
                if cache.layers[li].keys.shape[2] != len(pos[li][0]):
                    raise RuntimeError(f"step {step} layer {li}: cache holds {cache.layers[li].keys.shape[2]} "
                                       f"rows, tracked {len(pos[li][0])}")
    # The schedule observed must be the one the docstring states.
    want = [s for s in range(1, len(continuation) + 1) if s % interval == 0]
    if [c["step"] for c in compressions] != want:
        raise RuntimeError(f"compressions at steps {[c['step'] for c in compressions]}, expected {want}")
    return compressions, [[sorted(p) for p in heads] for heads in pos]


def run_adakv_case(model, inner_name, inner_params, ratio, alpha, ids):
    """Prefill `ids` under AdaKVPress(inner_name(compression_ratio=ratio, **inner_params), alpha) on an sdpa
    model. AdaKVPress removes no row: it sets module.masked_key_indices to the pruned (KV head, position)
    pairs. Returns a dict: n_kept (per layer, summed over KV heads), head_kept, kept, n_safe, safeguarded,
    scores (the inner press' scores before the safeguard scatter, [layer][kv_head][position] floats),
    layer_gaps (per layer, relative gap lowest kept - highest pruned safeguarded score; None: nothing pruned),
    tied_cells, safeguard_ties. Everything the docstring states about the rule is checked here."""
    import torch
    import kvpress
    from kvpress.utils import compute_n_kept
    from transformers import DynamicCache
    inner = getattr(kvpress, inner_name)(compression_ratio=ratio, **inner_params)
    press = kvpress.AdaKVPress(press=inner, alpha_safeguard=alpha)
    rec, live = {}, {}
    orig_compress, orig_score = press.compress, inner.score

    def score(module, *args, **kwargs):
        s = orig_score(module, *args, **kwargs)
        # A copy as scored, and the tensor itself: AdaKVPress scatters the safeguard into it in place.
        live[module.layer_idx] = (s.detach().clone(), s)
        return s
    inner.score = score

    def compress(module, hidden_states, keys, values, attentions, kwargs):
        module.masked_key_indices = None
        k_out, v_out = orig_compress(module, hidden_states, keys, values, attentions, kwargs)
        if k_out is not keys or v_out is not values:
            raise RuntimeError(f"layer {module.layer_idx}: AdaKVPress changed the keys / values")
        if module.layer_idx not in live:
            raise RuntimeError(f"layer {module.layer_idx}: the inner press' score() was not called")
        pre, post = live.pop(module.layer_idx)
        rec[module.layer_idx] = (keys.shape[2], attentions is None, pre, post.detach().clone(),
                                 module.masked_key_indices)
        return k_out, v_out
    press.compress = compress

    n, n_layers = len(ids), model.config.num_hidden_layers
    cache = DynamicCache()
    with torch.no_grad(), press(model):
        model.model(input_ids=torch.tensor([ids]), past_key_values=cache)
    if sorted(rec) != list(range(n_layers)):
        raise RuntimeError(f"compress ran on layers {sorted(rec)}, expected 0..{n_layers - 1}")

    n_kept_head = compute_n_kept(n, ratio)
    n_safe = max(1, int(n_kept_head * alpha)) if alpha > 0 else 0
    fmax = torch.finfo(torch.float32).max
    out = {"n_kept": [], "head_kept": [], "kept": [], "n_safe": n_safe, "safeguarded": [], "scores": [],
           "layer_gaps": [], "tied_cells": [], "safeguard_ties": []}
    for li in range(n_layers):
        k_len, no_attn, pre, post, masked = rec[li]
        attn = model.model.layers[li].self_attn
        if k_len != n or cache.layers[li].keys.shape[2] != n:
            raise RuntimeError(f"layer {li}: {k_len} keys in, cache holds {cache.layers[li].keys.shape[2]}, "
                               f"prompt has {n}")
        if not no_attn:
            raise RuntimeError(f"layer {li}: the attention weights reached the press under {ADAKV_ATTN}")
        if getattr(attn, "masked_key_indices", None) is not masked or masked is None:
            raise RuntimeError(f"layer {li}: module.masked_key_indices not set / not kept after the forward")
        if pre.dtype != torch.float32 or pre.dim() != 3 or tuple(pre.shape)[::2] != (1, n):
            raise RuntimeError(f"layer {li}: scores {pre.dtype} {tuple(pre.shape)}")
        n_heads = pre.shape[1]
        # The safeguard, as observed: exactly n_safe entries per KV head set to float32 max, each head's top
        # n_safe by its own score; nothing else touched.
        if not bool((pre.isfinite() & (pre < fmax)).all()):
            raise RuntimeError(f"layer {li}: a score is not finite or is float32 max before the safeguard")
        changed = post != pre
        if not torch.equal(changed, post == fmax):
            raise RuntimeError(f"layer {li}: the scores changed other than to float32 max")
        safe, heads, sc = [], [], []
        b, hh, ss = (t.tolist() for t in masked)
        if set(b) != {0} or len(b) != n_heads * (n - n_kept_head):
            raise RuntimeError(f"layer {li}: {len(b)} masked pairs, expected {n_heads} * ({n} - {n_kept_head})")
        pruned = set(zip(hh, ss))
        if len(pruned) != len(b):
            raise RuntimeError(f"layer {li}: a (head, position) masked twice")
        pre_l, post_l = pre[0].tolist(), post[0].tolist()
        for h in range(n_heads):
            sg = [i for i in range(n) if post_l[h][i] == fmax]
            if len(sg) != n_safe:
                raise RuntimeError(f"layer {li} head {h}: {len(sg)} safeguarded, expected {n_safe}")
            sgs = set(sg)
            rest = [pre_l[h][i] for i in range(n) if i not in sgs]
            if sg and rest and min(pre_l[h][i] for i in sg) < max(rest):
                raise RuntimeError(f"layer {li} head {h}: the safeguard is not the head's top {n_safe}")
            safe.append(sg)
            kept = [i for i in range(n) if (h, i) not in pruned]
            heads.append(kept)
            if not set(sg) <= set(kept):
                raise RuntimeError(f"layer {li} head {h}: a safeguarded position was pruned")
            sc.append(pre_l[h])
        # The pruning, as observed: the layer's n_heads * (n - n_kept) lowest safeguarded scores, across heads.
        kept_s = [post_l[h][i] for h in range(n_heads) for i in heads[h]]
        drop_s = [post_l[h][i] for h, i in sorted(pruned)]
        if sum(len(k) for k in heads) != n_heads * n_kept_head:
            raise RuntimeError(f"layer {li}: {sum(len(k) for k in heads)} kept, expected {n_heads * n_kept_head}")
        tied = set()
        if drop_s:
            lo, hi = min(kept_s), max(drop_s)
            if lo < hi:
                raise RuntimeError(f"layer {li}: a pruned score {hi!r} beats a kept one {lo!r}")
            gap = (lo - hi) / max(abs(lo), abs(hi), 1e-30)
            out["layer_gaps"].append(gap)
            if gap < TIE_REL:  # the heads holding a score in the tie band decide by top-k's tie rule
                tol = TIE_REL * max(abs(lo), abs(hi))
                tied |= {h for h in range(n_heads) if any(hi - tol <= x <= lo + tol for x in post_l[h])}
        else:
            out["layer_gaps"].append(None)
        for h in range(n_heads):
            if not 0 < n_safe < n:
                continue
            desc = sorted(pre_l[h], reverse=True)
            a, z = desc[n_safe - 1], desc[n_safe]
            if (a - z) / max(abs(a), abs(z), 1e-30) < TIE_REL:
                out["safeguard_ties"].append([li, h])
                # It decides the kept set only if a score of that tie group was left unsafeguarded and pruned.
                tol = TIE_REL * max(abs(a), abs(z))
                if any((h, i) in pruned for i in range(n) if z - tol <= pre_l[h][i] <= a + tol):
                    tied.add(h)
        out["tied_cells"] += [[li, h] for h in sorted(tied)]
        out["n_kept"].append(sum(len(k) for k in heads))
        out["head_kept"].append([len(k) for k in heads])
        out["kept"].append(heads)
        out["safeguarded"].append(safe)
        out["scores"].append(sc)
    return out


def fmt_score(x):
    if not math.isfinite(x):
        return None
    return float(f"{x:.9g}")


def dumps(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def render(doc):
    """JSON with one prompt / case / skip per line, keys sorted: small diffs, identical bytes."""
    lines = ["{"]
    keys = sorted(doc)
    for i, key in enumerate(keys):
        comma = "," if i + 1 < len(keys) else ""
        val = doc[key]
        if key in ("cases", "decoding_cases", "prompts", "skipped") and val:
            lines.append(f"{json.dumps(key)}:[")
            lines += [dumps(v) + ("," if j + 1 < len(val) else "") for j, v in enumerate(val)]
            lines.append("]" + comma)
        else:
            lines.append(f"{json.dumps(key)}:{dumps(val)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def build(model, sdpa_model, model_label, vers, prompts, stats, keep_scores=True, max_bytes=MAX_FILE_BYTES):
    cases, skipped = [], []
    for p, ids in enumerate(prompts):
        n = len(ids)
        for press_name, params in press_configs():
            from kvpress.utils import compute_n_kept
            w = params.get("window_size")
            if press_name == "SnapKVPress" and compute_n_kept(n, params["compression_ratio"]) < w:
                reason = f"n_kept {compute_n_kept(n, params['compression_ratio'])} < window_size {w}"
                print(f"  skip {press_name} {params} prompt {p}: {reason}")
                skipped.append({"press": press_name, "params": params, "prompt": p, "reason": reason})
                continue
            try:
                n_kept, kept, scores = run_case(model, press_name, params, ids)
            except Exception as e:  # recorded, the run goes on
                reason = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                print(f"  skip {press_name} {params} prompt {p}: {reason}")
                skipped.append({"press": press_name, "params": params, "prompt": p, "reason": reason})
                continue
            case = {"press": press_name, "params": params, "prompt": p, "n": n, "n_kept": n_kept, "kept": kept}
            tied = []
            st = stats.setdefault(press_name, {"cases": 0, "cells": 0, "tied": 0, "min_gap": math.inf})
            st["cases"] += 1
            st["cells"] += sum(len(h) for h in kept)
            if scores is not None:
                rounded = [[[fmt_score(x) for x in row] for row in layer] for layer in scores]
                gaps = boundary_gaps(kept, scores)
                for li, row in enumerate(gaps):
                    for h, g in enumerate(row):
                        if g is None:
                            continue
                        st["min_gap"] = min(st["min_gap"], g)
                        if g < TIE_REL:
                            tied.append([li, h])
                if keep_scores:
                    case["scores"] = rounded
            st["tied"] += len(tied)
            case["tied_cells"] = tied
            cases.append(case)
    decoding_cases = []
    steps_max = max(c[3] for c in decoding_configs())
    continuations = make_continuations(model.config.vocab_size, prompts, steps_max)
    for p, interval, target, steps in decoding_configs():
        ids, cont = prompts[p], continuations[p][:steps]
        for base_name in DECODE_BASES:
            params = {"base_press": base_name, "compression_interval": interval, "target_size": target}
            gaps = []
            try:
                compressions, final_kept = run_decoding_case(model, base_name, interval, target, ids, cont, gaps)
            except Exception as e:  # recorded, the run goes on
                reason = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                print(f"  skip DecodingPress {params} prompt {p}: {reason}")
                skipped.append({"press": "DecodingPress", "params": params, "prompt": p, "reason": reason})
                continue
            tied = {}
            st = stats.setdefault(f"Decoding/{base_name}", {"cases": 0, "cells": 0, "tied": 0, "min_gap": math.inf})
            st["cases"] += 1
            for step, li, h, g in gaps:
                st["min_gap"] = min(st["min_gap"], g)
                if g < TIE_REL:
                    tied.setdefault(step, []).append([li, h])
            for c in compressions:
                c["tied_cells"] = tied.get(c["step"], [])
                st["cells"] += sum(len(heads) for heads in c["kept"])
                st["tied"] += len(c["tied_cells"])
            decoding_cases.append({"base_press": base_name, "interval": interval, "target_size": target,
                                   "prompt": p, "n": len(ids), "steps": steps, "continuation": cont,
                                   "compressions": compressions, "final_kept": final_kept})
    from kvpress.utils import compute_n_kept
    adakv_cases = []
    for p, ids in enumerate(prompts):
        n = len(ids)
        for inner, inner_params, r, alpha in adakv_configs():
            params = {"press": inner, "inner_params": inner_params, "compression_ratio": r, "alpha_safeguard": alpha}
            try:
                res = run_adakv_case(sdpa_model, inner, inner_params, r, alpha, ids)
                # Which cells the safeguard decides: those AdaKVPress(alpha_safeguard=0) keeps otherwise.
                free = run_adakv_case(sdpa_model, inner, inner_params, r, 0.0, ids)["kept"]
            except Exception as e:  # recorded, the run goes on
                reason = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                print(f"  skip AdaKVPress {params} prompt {p}: {reason}")
                skipped.append({"press": "AdaKVPress", "params": params, "prompt": p, "reason": reason})
                continue
            st = stats.setdefault(f"AdaKV/{inner}/{alpha:g}",
                                  {"cases": 0, "cells": 0, "tied": 0, "min_gap": math.inf})
            st["cases"] += 1
            st["cells"] += sum(len(h) for h in res["kept"])
            st["tied"] += len(res["tied_cells"])
            st["min_gap"] = min([st["min_gap"]] + [g for g in res["layer_gaps"] if g is not None])
            for key in ("safeguard_ties", "uneven_cells", "binds"):
                st.setdefault(key, 0)
            st["safeguard_ties"] += len(res["safeguard_ties"])
            per_head = compute_n_kept(n, r)
            st["uneven_cells"] += sum(c != per_head for row in res["head_kept"] for c in row)
            binds = [[li, h] for li, heads in enumerate(res["kept"]) for h, k in enumerate(heads) if k != free[li][h]]
            st["binds"] += len(binds)
            case = {"press": "AdaKVPress", "params": params, "prompt": p, "n": n,
                    "attn_implementation": ADAKV_ATTN, "n_kept": res["n_kept"], "head_kept": res["head_kept"],
                    "kept": res["kept"], "n_safe": res["n_safe"], "safeguarded": res["safeguarded"],
                    "tied_cells": res["tied_cells"], "safeguard_ties": res["safeguard_ties"],
                    "safeguard_binds": binds}
            if keep_scores:
                case["scores"] = [[[fmt_score(x) for x in row] for row in layer] for layer in res["scores"]]
            adakv_cases.append(case)
    # The AdaKV cases come first in "cases", so that the eager cases after them keep their bytes (and commas).
    cases[:0] = adakv_cases
    doc = {"format": FORMAT, "version": VERSION, "made_by": "tools/goldens_kvpress.py",
           "kvpress": vers["kvpress"], "transformers": vers["transformers"], "torch": vers["torch"],
           "model": model_label, "dtype": "float32", "attn_implementation": "eager", "seed": SEED,
           "prompts": prompts, "cases": cases, "decoding_cases": decoding_cases, "skipped": skipped}
    text = render(doc)
    # Too big: drop scores from the largest cases first until it fits (the AdaKV cases' first).
    while len(text.encode()) > max_bytes:
        with_scores = [c for c in adakv_cases if "scores" in c] or [c for c in cases if "scores" in c]
        if not with_scores:
            break
        big = max(with_scores, key=lambda c: (len(dumps(c["scores"])), -cases.index(c)))
        del big["scores"]
        print(f"  warning: scores of {big['press']} {big['params']} prompt {big['prompt']} left out (file size)")
        text = render(doc)
    return text


def report(stats, label):
    print(f"  {label}: press: cases, (layer, KV head) cells, cells with boundary gap < {TIE_REL:g} rel, min rel gap")
    for name, st in stats.items():
        mg = "-" if st["min_gap"] == math.inf else f"{st['min_gap']:.3g}"
        extra = ""
        if "safeguard_ties" in st:  # AdaKV: min gap is the layer-wide one
            extra = (f"  (safeguard ties {st['safeguard_ties']}, cells keeping other than n (1 - r): "
                     f"{st['uneven_cells']}, cells the safeguard decides: {st['binds']})")
        print(f"    {name:24s} {st['cases']:3d} {st['cells']:5d} {st['tied']:4d}  {mg}{extra}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated dirs of tests/data/models")
    ap.add_argument("--out", help="output dir (default tests/data/kvpress); with --smollm2 the output file")
    ap.add_argument("--check", action="store_true", help="compare with the files on disk instead of writing")
    ap.add_argument("--smollm2", action="store_true", help="only SmolLM2-135M from its GGUF, to a separate file")
    args = ap.parse_args()
    setup_torch()
    vers = versions()
    print(f"kvpress {vers['kvpress']}, transformers {vers['transformers']}, torch {vers['torch']}")

    jobs = []  # (label, loader, out_path, keep_scores); loader(attn_implementation) -> model
    if args.smollm2:
        ggufs = sorted(f for f in os.listdir(SMOLLM2_DIR) if f.endswith(".gguf")) if os.path.isdir(SMOLLM2_DIR) else []
        if not ggufs:
            sys.exit(f"no GGUF in {SMOLLM2_DIR}")
        out = args.out or os.path.expanduser("~/.cache/kvscope/kvpress/smollm2-135m.json")
        label = os.path.join(SMOLLM2_DIR.replace(os.path.expanduser("~"), "~"), ggufs[0])
        jobs.append((label, lambda attn: load_model(SMOLLM2_DIR, gguf_file=ggufs[0], attn_implementation=attn),
                     out, False))
    else:
        out_dir = args.out or os.path.join(ROOT, "tests", "data", "kvpress")
        for name in [m for m in args.models.split(",") if m]:
            path = os.path.join(ROOT, "tests", "data", "models", name)
            jobs.append((f"tests/data/models/{name}", (lambda attn, p=path: load_model(p, attn_implementation=attn)),
                         os.path.join(out_dir, f"{name}.json"), True))

    total, failed = {}, False
    for label, loader, out, keep_scores in jobs:
        print(f"{label} -> {os.path.relpath(out, ROOT) if out.startswith(ROOT) else out}")
        model = loader("eager")
        sdpa_model = loader(ADAKV_ATTN)  # a separate load: AdaKVPress refuses eager attention
        prompts = make_prompts(model.config.vocab_size)
        stats = {}
        text = build(model, sdpa_model, label, vers, prompts, stats, keep_scores=keep_scores,
                     max_bytes=MAX_FILE_BYTES if keep_scores else math.inf)
        report(stats, f"{len(text.encode()) / 1000:.0f} KB")
        for name, st in stats.items():
            t = total.setdefault(name, {"cases": 0, "cells": 0, "tied": 0, "min_gap": math.inf})
            for key in ("cases", "cells", "tied", "safeguard_ties", "uneven_cells", "binds"):
                if key in st:
                    t[key] = t.get(key, 0) + st[key]
            t["min_gap"] = min(t["min_gap"], st["min_gap"])
        if args.check:
            old = open(out, encoding="utf-8").read() if os.path.exists(out) else None
            if old != text:
                print(f"  DIFFERS from {out}")
                failed = True
        else:
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "w", encoding="utf-8") as f:
                f.write(text)
    print("all files")
    report(total, "total")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
