#!/usr/bin/env python3
"""Golden kept-KV indices from NVIDIA kvpress, for kvscope's one-shot prefill eviction.

For each tiny test checkpoint under tests/data/models/ this runs kvpress presses
on two random prompts (one prefill forward of the whole prompt, the way
kvpress' pipeline compresses a context) and writes, per case, exactly which KV
positions kvpress kept for every (layer, KV head):

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

File format
-----------
{"format": "kvscope-kvpress-goldens", "version": 1, "made_by", "kvpress",
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
 "skipped": [{"press", "params", "prompt", "reason"}]}
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
VERSION = 1
SEED = 20240607
PROMPT_LENS = (48, 80)
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
        if key in ("cases", "prompts", "skipped") and val:
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
    doc = {"format": FORMAT, "version": VERSION, "made_by": "tools/goldens_kvpress.py",
           "kvpress": vers["kvpress"], "transformers": vers["transformers"], "torch": vers["torch"],
           "model": model_label, "dtype": "float32", "attn_implementation": "eager", "seed": SEED,
           "prompts": prompts, "cases": cases, "skipped": skipped}
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
