#!/usr/bin/env python3
"""Golden kept-KV indices from NVIDIA kvpress (one-shot prefill presses, DecodingPress) for kvscope.

For each tiny test checkpoint under tests/data/models/ this runs kvpress presses
on two random prompts (one prefill forward of the whole prompt, the way
kvpress' pipeline compresses a context) and writes, per case, exactly which KV
positions kvpress kept for every (layer, KV head), and, for kvpress'
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

File format
-----------
{"format": "kvscope-kvpress-goldens", "version": 2, "made_by", "kvpress",
 "transformers", "torch", "model", "dtype": "float32", "attn_implementation":
 "eager", "seed", "prompts": [[ids]...],
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
                      rule, not by the scores}],
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
            "compression_interval", "target_size"})}
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
VERSION = 2
SEED = 20240607
PROMPT_LENS = (48, 80)
DECODE_SEED = SEED + 1  # continuation ids: DECODE_SEED + prompt index
DECODE_BASES = ("KnormPress", "KeyDiffPress", "TOVAPress")
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


def load_model(path, gguf_file=None):
    import torch
    from transformers import AutoModelForCausalLM
    kw = {"gguf_file": gguf_file} if gguf_file else {}
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation="eager", **kw)
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


def build(model, model_label, vers, prompts, stats, keep_scores=True, max_bytes=MAX_FILE_BYTES):
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
    doc = {"format": FORMAT, "version": VERSION, "made_by": "tools/goldens_kvpress.py",
           "kvpress": vers["kvpress"], "transformers": vers["transformers"], "torch": vers["torch"],
           "model": model_label, "dtype": "float32", "attn_implementation": "eager", "seed": SEED,
           "prompts": prompts, "cases": cases, "decoding_cases": decoding_cases, "skipped": skipped}
    text = render(doc)
    # Too big: drop scores from the largest cases first until it fits.
    while len(text.encode()) > max_bytes:
        with_scores = [c for c in cases if "scores" in c]
        if not with_scores:
            break
        big = max(with_scores, key=lambda c: (len(dumps(c["scores"])), -cases.index(c)))
        del big["scores"]
        text = render(doc)
    return text


def report(stats, label):
    print(f"  {label}: press: cases, (layer, KV head) cells, cells with boundary gap < {TIE_REL:g} rel, min rel gap")
    for name, st in stats.items():
        mg = "-" if st["min_gap"] == math.inf else f"{st['min_gap']:.3g}"
        print(f"    {name:24s} {st['cases']:3d} {st['cells']:5d} {st['tied']:4d}  {mg}")


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

    jobs = []  # (label, loader, out_path, keep_scores)
    if args.smollm2:
        ggufs = sorted(f for f in os.listdir(SMOLLM2_DIR) if f.endswith(".gguf")) if os.path.isdir(SMOLLM2_DIR) else []
        if not ggufs:
            sys.exit(f"no GGUF in {SMOLLM2_DIR}")
        out = args.out or os.path.expanduser("~/.cache/kvscope/kvpress/smollm2-135m.json")
        label = os.path.join(SMOLLM2_DIR.replace(os.path.expanduser("~"), "~"), ggufs[0])
        jobs.append((label, lambda: load_model(SMOLLM2_DIR, gguf_file=ggufs[0]), out, False))
    else:
        out_dir = args.out or os.path.join(ROOT, "tests", "data", "kvpress")
        for name in [m for m in args.models.split(",") if m]:
            path = os.path.join(ROOT, "tests", "data", "models", name)
            jobs.append((f"tests/data/models/{name}", (lambda p=path: load_model(p)),
                         os.path.join(out_dir, f"{name}.json"), True))

    total, failed = {}, False
    for label, loader, out, keep_scores in jobs:
        print(f"{label} -> {os.path.relpath(out, ROOT) if out.startswith(ROOT) else out}")
        model = loader()
        prompts = make_prompts(model.config.vocab_size)
        stats = {}
        text = build(model, label, vers, prompts, stats, keep_scores=keep_scores,
                     max_bytes=MAX_FILE_BYTES if keep_scores else math.inf)
        report(stats, f"{len(text.encode()) / 1000:.0f} KB")
        for name, st in stats.items():
            t = total.setdefault(name, {"cases": 0, "cells": 0, "tied": 0, "min_gap": math.inf})
            for key in ("cases", "cells", "tied"):
                t[key] += st[key]
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
