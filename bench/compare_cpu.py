#!/usr/bin/env python3
"""kvscope against the engines a user would pick instead, on the CPU, in one
run: llama.cpp (PyPI llama-cpp-python, built from source by pip) and
transformers eager (PyTorch CPU, batch 1), same model, same thread count,
same prompt tokens, interleaved repetitions, median and spread.

    python3 bench/compare_cpu.py [--model smollm2-135m] [--threads 2] [--reps 3]
        [--prompts 128,512,2048] [--decode 32] [--out bench/results/compare_cpu.json]
        [--random-llama 1b]
        [--engines kvscope,kvscope_h2o,kvscope_f16,llamacpp,llamacpp_f32kv,llamacpp_f16,transformers,
                   kvscope_stored,llamacpp_stored]

The model is a GGUF file (or a name fetched by tools/get-model.sh). kvscope
reads it directly and dequantizes to F32; transformers loads the same file
(it dequantizes too, fp32); llama.cpp gets an F32 GGUF written from it here
(gguf-py's reference dequantization), so all three compute in F32 on the
same weights. kvscope is also timed with all layers recorded and an H2O
policy at 50% (kvscope-cli bench --policy h2o). llama.cpp runs twice:
`llamacpp` with its default F16 KV cache and `llamacpp_f32kv` with an F32
cache, the same precision as kvscope and transformers throughout.

Half weights: `kvscope_f16` is kvscope with `--weights f16` (matrices in
IEEE half, computed in fp32, F32 KV cache) and `llamacpp_f16` llama.cpp on
an F16 GGUF written from the same file (2-D tensors in half, as
convert_hf_to_gguf.py --outtype f16 writes them) with an F32 KV cache: the
same bytes per token for both.

The file's own blocks: `kvscope_stored` is kvscope with `--weights stored`
(a quantized file's matrices kept in their blocks, dequantized inside the
products, activations in fp32) and `llamacpp_stored` llama.cpp on the same
file as it is (its quantized kernels, activations rounded to 8 bits), with
an F32 KV cache like kvscope's. Their floor counts the file's bytes per token.

--random-llama SHAPE swaps the model for a larger Llama-shaped one with
random F32 weights (written once into ~/.cache/kvscope/bench; SmolLM2's
tokenizer metadata so every engine can open it): see RANDOM_SHAPES.

The floor: weights + KV bytes read per decoded token divided by the read
bandwidth kvscope-cli bench measures on the same machine; each engine's
decode rate is reported as a fraction of it.

Needs (PyPI): numpy gguf torch transformers==5.23.0 accelerate llama-cpp-python;
a built kvscope-cli (build/release).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CLI = os.environ.get("KVSCOPE_CLI", os.path.join(ROOT, "build/release/app/cli/kvscope-cli"))


def resolve_model(name):
    if os.path.exists(name):
        return os.path.abspath(name)
    out = subprocess.run([os.path.join(ROOT, "tools/get-model.sh"), name], check=True, capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


def copy_metadata(reader, writer, keep):
    """The reader's metadata keys for which keep(name) holds, into writer."""
    import gguf
    for name, field in reader.fields.items():
        if keep(name):
            vtype = field.types[0]
            sub = field.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
            writer.add_key_value(name, field.contents(), vtype, sub_type=sub)


def write_f32_gguf(src, dst, half=False):
    """The same model with every tensor dequantized to F32 (llama.cpp's
    F32 baseline), or with its matrices in F16 and the rest F32 (half=True,
    as the converter's --outtype f16); metadata copied, file type set."""
    import gguf
    if os.path.exists(dst) and os.path.getmtime(dst) > os.path.getmtime(src):
        return dst
    r = gguf.GGUFReader(src)
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(dst + ".partial", arch)
    copy_metadata(r, w, lambda name: not name.startswith("GGUF.") and
                  name not in ("general.architecture", "general.file_type"))
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if half else gguf.LlamaFileType.ALL_F32)
    for t in r.tensors:
        data = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        data = data.reshape([int(x) for x in reversed(t.shape)])
        w.add_tensor(t.name, data.astype(np.float16) if half and data.ndim == 2 else data)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(dst + ".partial", dst)
    return dst


# Llama shapes for --random-llama: the layer geometry of the named model,
# SmolLM2's 49,152-token vocabulary (its tokenizer is copied in), tied
# embeddings. "1b" is Llama-3.2-1B's geometry (2048 wide, 16 layers, 32
# query / 8 KV heads of 64, MLP 8192): 1.07 G parameters, 4.3 GB in F32.
RANDOM_SHAPES = {
    "1b": dict(hidden=2048, layers=16, heads=32, kv_heads=8, ffn=8192, rope_base=500000.0),
    "360m": dict(hidden=960, layers=32, heads=15, kv_heads=5, ffn=2560, rope_base=100000.0),
}


def write_random_llama(tokenizer_src, shape, dst, seed=0):
    """A Llama GGUF with random F32 weights (normal, std 0.02; norms 1) and
    the tokenizer metadata of tokenizer_src."""
    import gguf
    if os.path.exists(dst):
        return dst
    s = RANDOM_SHAPES[shape]
    r = gguf.GGUFReader(tokenizer_src)
    vocab = len(r.fields["tokenizer.ggml.tokens"].contents())
    w = gguf.GGUFWriter(dst + ".partial", "llama")
    w.add_name(f"random-llama-{shape}")
    w.add_context_length(8192)
    w.add_embedding_length(s["hidden"])
    w.add_block_count(s["layers"])
    w.add_feed_forward_length(s["ffn"])
    w.add_head_count(s["heads"])
    w.add_head_count_kv(s["kv_heads"])
    w.add_rope_dimension_count(s["hidden"] // s["heads"])
    w.add_rope_freq_base(s["rope_base"])
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(vocab)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    copy_metadata(r, w, lambda name: name.startswith("tokenizer."))
    rng = np.random.default_rng(seed)
    hd = s["hidden"] // s["heads"]

    def rand(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02))

    w.add_tensor("token_embd.weight", rand(vocab, s["hidden"]))
    w.add_tensor("output_norm.weight", np.ones(s["hidden"], np.float32))
    for i in range(s["layers"]):
        b = f"blk.{i}."
        w.add_tensor(b + "attn_norm.weight", np.ones(s["hidden"], np.float32))
        w.add_tensor(b + "attn_q.weight", rand(s["heads"] * hd, s["hidden"]))
        w.add_tensor(b + "attn_k.weight", rand(s["kv_heads"] * hd, s["hidden"]))
        w.add_tensor(b + "attn_v.weight", rand(s["kv_heads"] * hd, s["hidden"]))
        w.add_tensor(b + "attn_output.weight", rand(s["hidden"], s["heads"] * hd))
        w.add_tensor(b + "ffn_norm.weight", np.ones(s["hidden"], np.float32))
        w.add_tensor(b + "ffn_gate.weight", rand(s["ffn"], s["hidden"]))
        w.add_tensor(b + "ffn_up.weight", rand(s["ffn"], s["hidden"]))
        w.add_tensor(b + "ffn_down.weight", rand(s["hidden"], s["ffn"]))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(dst + ".partial", dst)
    return dst


def all_f32(path):
    import gguf
    return all(t.tensor_type == gguf.GGMLQuantizationType.F32 for t in gguf.GGUFReader(path).tensors)


def prompt_ids(vocab, n, seed=1):
    rng = np.random.default_rng(seed)
    return [int(x) for x in rng.integers(100, vocab - 100, size=n)]


# ----------------------------------------------------------------- engines
def kvscope_run(model, n_prompt, n_decode, threads, policy=None, weights="f32"):
    cmd = [CLI, "bench", model, "--prompt-tokens", str(n_prompt), "--decode-tokens", str(n_decode), "--json",
           "--weights", weights]
    env = dict(os.environ, KVSCOPE_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    if policy:
        # The policy benchmark: a whole session step (recorder on every
        # layer, the policy's statistic and eviction) against plain decode.
        cmd = [CLI, "bench", model, "--prompt-tokens", str(n_prompt), "--decode-tokens", str(n_decode),
               "--policy", policy, "--budget", "50%", "--repeats", "1", "--json"]  # the outer loop repeats
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return json.loads(out)


class Transformers:
    def __init__(self, gguf_path, threads):
        import torch
        from transformers import AutoModelForCausalLM
        torch.set_num_threads(threads)
        d, f = os.path.split(gguf_path)
        self.torch = torch
        self.model = AutoModelForCausalLM.from_pretrained(d, gguf_file=f, dtype=torch.float32,
                                                          attn_implementation="eager").eval()

    def run(self, ids, n_decode):
        torch = self.torch
        with torch.no_grad():
            x = torch.tensor([ids])
            t0 = time.perf_counter()
            out = self.model(x, use_cache=True)
            prefill = time.perf_counter() - t0
            past = out.past_key_values
            tok = out.logits[:, -1].argmax(-1, keepdim=True)
            t0 = time.perf_counter()
            for _ in range(n_decode):
                out = self.model(tok, past_key_values=past, use_cache=True)
                past = out.past_key_values
                tok = out.logits[:, -1].argmax(-1, keepdim=True)
            decode = time.perf_counter() - t0
        return len(ids) / prefill, n_decode / decode


class LlamaCpp:
    GGML_TYPE_F32, GGML_TYPE_F16 = 0, 1

    def __init__(self, gguf_path, threads, n_ctx, kv_f32=False):
        self.path = gguf_path
        from llama_cpp import Llama
        kv = self.GGML_TYPE_F32 if kv_f32 else self.GGML_TYPE_F16
        self.llm = Llama(model_path=gguf_path, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads,
                         n_batch=512, logits_all=False, verbose=False, type_k=kv, type_v=kv)

    def last_logits(self):
        # Llama.scores is written only with logits_all; the context holds
        # the last token's row.
        return np.ctypeslib.as_array(self.llm._ctx.get_logits(), shape=(self.llm.n_vocab(),))

    def run(self, ids, n_decode):
        llm = self.llm
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(ids)
        prefill = time.perf_counter() - t0
        tok = int(np.argmax(self.last_logits()))
        t0 = time.perf_counter()
        for _ in range(n_decode):
            llm.eval([tok])
            tok = int(np.argmax(self.last_logits()))
        decode = time.perf_counter() - t0
        return len(ids) / prefill, n_decode / decode


def summary(xs):
    xs = sorted(xs)
    q = lambda p: xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]  # noqa: E731
    return {"median": statistics.median(xs), "lo": q(0.0), "hi": q(1.0), "n": len(xs)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="smollm2-135m")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--prompts", default="128,512,2048")
    ap.add_argument("--decode", type=int, default=32)
    ap.add_argument("--engines",
                    default="kvscope,kvscope_h2o,kvscope_f16,llamacpp,llamacpp_f32kv,llamacpp_f16,transformers")
    ap.add_argument("--random-llama", choices=sorted(RANDOM_SHAPES),
                    help="time a Llama of this shape with random F32 weights instead of --model")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results/compare_cpu.json"))
    a = ap.parse_args()
    model = resolve_model(a.model)
    # Files this script writes stay out of the models folder: a name there
    # resolves to that folder's .gguf, and the window lists what is there.
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kvscope", "bench")
    os.makedirs(cache, exist_ok=True)
    if a.random_llama:
        model = write_random_llama(model, a.random_llama, os.path.join(cache, f"random-llama-{a.random_llama}.gguf"))
    prompts = [int(p) for p in a.prompts.split(",")]
    engines = a.engines.split(",")
    # The machine's bandwidth and the bytes a token reads (in fp32, unless
    # only the file's blocks are timed: an 8B file's fp32 copy needs 32 GB).
    only_stored = all(e.endswith("_stored") for e in engines)
    info = kvscope_run(model, 16, 4, a.threads, weights="stored" if only_stored else "f32")
    stored = any(e.endswith("_stored") for e in engines)
    info_stored = kvscope_run(model, 16, 4, a.threads, weights="stored") if stored and not only_stored else info
    shape = json.loads(subprocess.run([CLI, "inspect", model, "--json"], check=True, capture_output=True,
                                      text=True).stdout)
    vocab = shape["vocab_size"]
    # The floor of one decoded token at a context of p: every weight and the
    # whole KV cache read once, at the measured bandwidth.
    # llama.cpp's default cache holds F16 (half the KV bytes): its floor is
    # computed with the bytes it actually reads.
    def floor_at(p, kv_scale=1.0, weight_scale=1.0, weight_bytes=None):
        kv = shape["kv_bytes_per_token_fp32"] * kv_scale * (p + a.decode / 2)
        weights = (weight_bytes or info["weight_bytes_per_token"]) * weight_scale
        return info["bandwidth_gbs"] * 1e9 / (weights + kv)

    def engine_floor(e, p):  # with the bytes each engine reads: half weights, half KV, the file's blocks
        if e.endswith("_stored"):
            return floor_at(p, weight_bytes=info_stored["weight_bytes_per_token"])
        return floor_at(p, 0.5 if e == "llamacpp" else 1.0, 0.5 if e.endswith("_f16") else 1.0)
    # kvscope_h2o's run also times the same session with the metrics on
    # (their full-cache reference stepped together with the policy run).
    shown = engines + (["kvscope_h2o_metrics"] if "kvscope_h2o" in engines else [])
    results = {e: {p: {"prefill": [], "decode": []} for p in prompts} for e in shown}
    tf = Transformers(model, a.threads) if "transformers" in engines else None
    lc = {}
    if any(e.startswith("llamacpp") for e in engines):
        needs_f32 = any(e in ("llamacpp", "llamacpp_f32kv") for e in engines)
        f32 = model if all_f32(model) or not needs_f32 else write_f32_gguf(
            model, os.path.join(cache, "f32-" + os.path.basename(model)))
        f16 = None
        if "llamacpp_f16" in engines:
            f16 = write_f32_gguf(model, os.path.join(cache, "f16-" + os.path.basename(model)), half=True)
        files = {"llamacpp_f16": f16, "llamacpp_stored": model}
        for e in engines:
            if e.startswith("llamacpp"):
                lc[e] = LlamaCpp(files.get(e, f32), a.threads, max(prompts) + a.decode + 16, kv_f32=e != "llamacpp")
    floor = {p: floor_at(p) for p in prompts}
    for rep in range(a.reps):
        for p in prompts:
            ids = prompt_ids(vocab, p)
            for e in engines:  # interleaved: every engine once per repetition and size
                if e in ("kvscope", "kvscope_f16", "kvscope_stored"):
                    j = kvscope_run(model, p, a.decode, a.threads, weights={"kvscope_f16": "f16",
                                                                            "kvscope_stored": "stored"}.get(e, "f32"))
                    pre, dec = j["prefill_tokens_per_s"], j["decode_tokens_per_s"]
                elif e == "kvscope_h2o":
                    j = kvscope_run(model, p, a.decode, a.threads, policy="h2o")
                    # the session step with every layer recorded and H2O at 50%
                    pre, dec = float("nan"), 1e3 / j["policy_recorded_decode_ms_per_token"]
                    results["kvscope_h2o_metrics"][p]["prefill"].append(float("nan"))
                    results["kvscope_h2o_metrics"][p]["decode"].append(1e3 / j["policy_metrics_decode_ms_per_token"])
                    print(f"rep {rep} prompt {p:5d} h2o metrics  decode {1e3 / j['policy_metrics_decode_ms_per_token']:7.2f}"
                          f" tok/s ({j['metrics_overhead_paired_median']:+.1%} over metrics off, paired median)",
                          flush=True)
                elif e == "transformers":
                    pre, dec = tf.run(ids, a.decode)
                else:
                    pre, dec = lc[e].run(ids, a.decode)
                results[e][p]["prefill"].append(pre)
                results[e][p]["decode"].append(dec)
                print(f"rep {rep} prompt {p:5d} {e:12s} prefill {pre:9.1f} tok/s  decode {dec:7.2f} tok/s",
                      flush=True)
    # What ran: the CPU (its family and model tell a Zen 3 from a Zen 4 where
    # the name is only "AMD EPYC") and its vector width on each side.
    cpu = json.loads(subprocess.run([CLI, "cpu", "--json"], check=True, capture_output=True, text=True).stdout)
    machine = {"cpu": cpu.get("model_name"), "cpu_identity": cpu.get("identity"),
               "kvscope_simd_path": cpu.get("simd_path"), "cpu_simd_path": cpu.get("cpu_simd_path")}
    if lc:
        import llama_cpp
        machine["llama_cpp_python"] = llama_cpp.__version__
        machine["llama_cpp_system_info"] = llama_cpp.llama_print_system_info().decode().strip()
    out = {"model": model, "threads": a.threads, "decode_tokens": a.decode, "kvscope_device": info["device"],
           "machine": machine,
           "bandwidth_gbs": info["bandwidth_gbs"], "weight_bytes_per_token": info["weight_bytes_per_token"],
           "floor_tokens_per_s": floor,
           "floor_tokens_per_s_by_engine": {e: {p: engine_floor(e, p) for p in prompts} for e in shown},
           "results": {e: {p: {k: summary(v) for k, v in r.items() if v} for p, r in d.items()}
                       for e, d in results.items()}}
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1)
    print("\n| engine | prompt | prefill tok/s (median, min-max) | decode tok/s | decode / floor |")
    print("|---|---|---|---|---|")
    for e in shown:
        for p in prompts:
            r = out["results"][e][p]
            pre, dec = r["prefill"], r["decode"]
            fl = engine_floor(e, p)
            pre_s = "—" if np.isnan(pre["median"]) else f"{pre['median']:.1f} ({pre['lo']:.1f}-{pre['hi']:.1f})"
            print(f"| {e} | {p} | {pre_s} | {dec['median']:.2f} ({dec['lo']:.2f}-{dec['hi']:.2f}) | "
                  f"{dec['median'] / fl:.0%} |")
    # kvscope's speed over each other engine: ratios of medians, where both engines ran.
    pairs = [("kvscope_stored", "llamacpp_stored", "the file's blocks, F32 KV"),
             ("kvscope", "llamacpp_f32kv", "F32 weights, F32 KV"), ("kvscope", "llamacpp", "llama.cpp's F16 KV"),
             ("kvscope_f16", "llamacpp_f16", "F16 weights, F32 KV"), ("kvscope", "transformers", "fp32"),
             ("kvscope_f16", "transformers", "kvscope f16 vs transformers fp32")]
    print("\n| kvscope | against | prompt | decode ratio | prefill ratio |")
    print("|---|---|---|---|---|")
    for k, o, what in pairs:
        if k not in shown or o not in shown:
            continue
        for p in prompts:
            rk, ro = out["results"][k][p], out["results"][o][p]
            print(f"| {k} | {o} ({what}) | {p} | {rk['decode']['median'] / ro['decode']['median']:.2f}x | "
                  f"{rk['prefill']['median'] / ro['prefill']['median']:.2f}x |")
    if "kvscope_h2o" in shown:
        for p in prompts:
            base = out["results"]["kvscope"][p]["decode"]["median"] if "kvscope" in shown else float("nan")
            h2o = out["results"]["kvscope_h2o"][p]["decode"]["median"]
            met = out["results"]["kvscope_h2o_metrics"][p]["decode"]["median"]
            print(f"prompt {p}: H2O session (recorded) / plain decode time {base / h2o - 1:+.1%}; "
                  f"metrics on / off time {h2o / met - 1:+.1%}")


if __name__ == "__main__":
    sys.exit(main())
