#!/usr/bin/env python3
"""Transformers eager at batch 1 on the shapes `kvscope-cli bench --shape`
times, with random weights: the baseline kvscope's CUDA numbers are divided by.

  python3 bench/gpu/transformers_gpu.py [--device cuda] [--shapes llama-2-7b,llama-3.2-1b,pythia-160m]
      [--prompt-tokens 128,512,2048] [--decode-tokens 64] [--reps 3] [--out transformers.json]

For each shape and prompt length: prefill tokens/s (one forward over the
prompt, the last position's logits only, as generate() asks) and decode
tokens/s (greedy, one token at a time through the KV cache), each the median
of --reps runs after a warm-up, timed with the device synchronised before
each clock read. A length is skipped where prompt + decode tokens pass the
shape's maximum positions, as kvscope's bench refuses them. The JSON is
rewritten after every shape, so a run stopped by a time limit keeps what it
measured. On the CPU (`--device cpu --shapes pythia-160m`, fp32 by default)
it runs in seconds, to check the script where there is no GPU.
"""
import argparse
import json
import os
import statistics
import sys
import time

# The dimensions of engine/model/shapes.cpp (shape_config), one for one; the
# parameter count in the output is compared with kvscope's by summary.py.
SHAPES = {
    "llama-2-7b": dict(arch="llama", vocab=32000, hidden=4096, layers=32, heads=32, kv_heads=32, head_dim=128,
                       intermediate=11008, max_positions=4096, rope={"rope_type": "default", "rope_theta": 10000.0},
                       eps=1e-5, tied=False),
    "llama-3.2-1b": dict(arch="llama", vocab=128256, hidden=2048, layers=16, heads=32, kv_heads=8, head_dim=64,
                         intermediate=8192, max_positions=131072,
                         rope={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0, "low_freq_factor": 1.0,
                               "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
                         eps=1e-5, tied=True),
    "pythia-160m": dict(arch="gpt_neox", vocab=50304, hidden=768, layers=12, heads=12, kv_heads=12, head_dim=64,
                        intermediate=3072, max_positions=2048,
                        rope={"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25},
                        eps=1e-5, tied=False),
}


def make_config(s):
    from transformers import GPTNeoXConfig, LlamaConfig
    if s["arch"] == "llama":
        cfg = LlamaConfig(vocab_size=s["vocab"], hidden_size=s["hidden"], num_hidden_layers=s["layers"],
                          num_attention_heads=s["heads"], num_key_value_heads=s["kv_heads"], head_dim=s["head_dim"],
                          intermediate_size=s["intermediate"], max_position_embeddings=s["max_positions"],
                          rms_norm_eps=s["eps"], tie_word_embeddings=s["tied"], hidden_act="silu",
                          rope_parameters=dict(s["rope"]))
    else:
        cfg = GPTNeoXConfig(vocab_size=s["vocab"], hidden_size=s["hidden"], num_hidden_layers=s["layers"],
                            num_attention_heads=s["heads"], intermediate_size=s["intermediate"],
                            max_position_embeddings=s["max_positions"], layer_norm_eps=s["eps"],
                            tie_word_embeddings=s["tied"], use_parallel_residual=True, hidden_act="gelu",
                            attention_bias=True, rope_parameters=dict(s["rope"]))
    # Checked rather than trusted: an older transformers that ignored
    # rope_parameters would time another model.
    got = getattr(cfg, "rope_parameters", None) or {}
    for k, v in s["rope"].items():
        if got.get(k) != v:
            raise RuntimeError(f"transformers kept rope_parameters {got}, not {s['rope']}")
    cfg._attn_implementation = "eager"
    return cfg


def build_model(torch, name, device, dtype, seed):
    from transformers import GPTNeoXForCausalLM, LlamaForCausalLM
    s = SHAPES[name]
    cfg = make_config(s)
    cls = LlamaForCausalLM if s["arch"] == "llama" else GPTNeoXForCausalLM
    torch.manual_seed(seed)
    prev = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        with torch.device(device):  # initialised where it runs: a 7B model never passes through the host
            model = cls(cfg)
    finally:
        torch.set_default_dtype(prev)
    model = model.to(dtype).eval()
    if model.config._attn_implementation != "eager":
        raise RuntimeError(f"attention implementation is {model.config._attn_implementation}, not eager")
    return model


class Timer:
    def __init__(self, torch, device):
        self.torch, self.cuda = torch, device.startswith("cuda")

    def now(self):
        if self.cuda:
            self.torch.cuda.synchronize()
        return time.perf_counter()


def run_once(torch, model, timer, ids, n_decode, last_only):
    """Seconds for the prefill of `ids` and for `n_decode` greedy steps after it."""
    kw = {"logits_to_keep": 1} if last_only else {}
    t0 = timer.now()
    out = model(ids, use_cache=True, **kw)
    t1 = timer.now()
    past = out.past_key_values
    tok = out.logits[:, -1:].argmax(-1)
    t2 = timer.now()
    for _ in range(n_decode):
        out = model(tok, past_key_values=past, use_cache=True)
        past = out.past_key_values
        tok = out.logits[:, -1:].argmax(-1)
    t3 = timer.now()
    return t1 - t0, t3 - t2


def bench_shape(torch, name, a, dtype, timer):
    import inspect
    s = SHAPES[name]
    t_build = time.perf_counter()
    model = build_model(torch, name, a.device, dtype, a.seed)
    build_s = time.perf_counter() - t_build
    params = sum(p.numel() for p in model.parameters())  # a tied head once, as kvscope counts it
    last_only = "logits_to_keep" in inspect.signature(model.forward).parameters
    gen = torch.Generator().manual_seed(a.seed)
    res = {"shape": name, "parameters": params, "build_seconds": build_s, "logits_to_keep_1": last_only, "runs": []}
    with torch.inference_mode():
        warm = torch.randint(100, s["vocab"] - 100, (1, 16), generator=gen).to(a.device)
        run_once(torch, model, timer, warm, 8, last_only)  # cuBLAS handles, kernel loading, allocator
        for p in a.prompt_tokens:
            if p + a.decode_tokens > s["max_positions"]:
                res["runs"].append({"prompt_tokens": p, "skipped": f"prompt + decode > {s['max_positions']} positions"})
                continue
            ids = torch.randint(100, s["vocab"] - 100, (1, p), generator=gen).to(a.device)
            for _ in range(a.warmup):
                run_once(torch, model, timer, ids, min(8, a.decode_tokens), last_only)
            pre, dec = [], []
            for _ in range(a.reps):
                tp, td = run_once(torch, model, timer, ids, a.decode_tokens, last_only)
                pre.append(p / tp)
                dec.append(a.decode_tokens / td)
            res["runs"].append({"prompt_tokens": p, "decode_tokens": a.decode_tokens,
                                "prefill_tokens_per_s": statistics.median(pre), "prefill_tokens_per_s_all": pre,
                                "decode_tokens_per_s": statistics.median(dec), "decode_tokens_per_s_all": dec})
            print(f"  {name:13s} prompt {p:5d}: prefill {statistics.median(pre):10.1f} tok/s, "
                  f"decode {statistics.median(dec):8.1f} tok/s", flush=True)
    del model
    if timer.cuda:
        torch.cuda.empty_cache()
    return res


def write_json(path, doc):
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--shapes", default="llama-2-7b,llama-3.2-1b,pythia-160m")
    ap.add_argument("--prompt-tokens", default="128,512,2048")
    ap.add_argument("--decode-tokens", type=int, default=64)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs per prompt length")
    ap.add_argument("--dtype", default=None, help="float16 (default on cuda), bfloat16 or float32 (default on cpu)")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: PyTorch's default)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    a.prompt_tokens = [int(x) for x in a.prompt_tokens.split(",") if x]
    names = [x for x in a.shapes.split(",") if x]
    for n in names:
        if n not in SHAPES:
            sys.exit(f"--shapes: unknown shape '{n}' (known: {', '.join(SHAPES)})")

    import torch
    import transformers
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        sys.exit("--device cuda: no CUDA device visible to PyTorch")
    if a.threads:
        torch.set_num_threads(a.threads)
    dtype = getattr(torch, a.dtype or ("float16" if a.device.startswith("cuda") else "float32"))
    timer = Timer(torch, a.device)
    where = torch.cuda.get_device_name(torch.device(a.device)) if timer.cuda else f"cpu, {torch.get_num_threads()} threads"
    doc = {"engine": "transformers eager, batch 1", "torch": torch.__version__, "transformers": transformers.__version__,
           "device": where, "dtype": str(dtype).replace("torch.", ""), "reps": a.reps, "results": []}
    print(f"transformers {transformers.__version__}, torch {torch.__version__}, {where}, {doc['dtype']}", flush=True)
    failed = False
    for n in names:
        try:
            doc["results"].append(bench_shape(torch, n, a, dtype, timer))
        except Exception as e:  # one shape's failure (out of memory, say) leaves the others
            failed = True
            print(f"  {n}: FAILED: {type(e).__name__}: {e}", flush=True)
            doc["results"].append({"shape": n, "error": f"{type(e).__name__}: {e}"})
            if timer.cuda:
                torch.cuda.empty_cache()
        write_json(a.out, doc)
    write_json(a.out, doc)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
