#!/usr/bin/env python3
"""The GPU run's table (bench/gpu/on_device.sh prints it last): kvscope's
`bench --device cuda` and transformers eager side by side per shape and
prompt length, the capture and policy overhead per shape, and the speed
targets (overhead, ratio to transformers), met or not.

  python3 bench/gpu/summary.py --bench kvscope_bench.json --policy kvscope_policy.json \\
      --transformers transformers.json [--stages stages.tsv] [--out summary.md]

--bench and --policy are streams of the JSON objects `kvscope-cli bench
--json` prints (one after another), with on_device.sh's {"error": ...}
records for runs that gave none. Missing files or runs show as "—".
"""
import argparse
import json
import statistics

DASH = "—"


def read_stream(path):
    """Every JSON object in a file of objects written one after another."""
    try:
        text = open(path).read()
    except OSError:
        return []
    dec, i, out = json.JSONDecoder(), 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        try:
            obj, i = dec.raw_decode(text, i)
        except json.JSONDecodeError:
            return out  # a run cut off mid-print: what came before it stands
        out.append(obj)


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError):
        return {}


def fmt(x, spec=".1f", suffix=""):
    return DASH if x is None else format(x, spec) + suffix


def pct(x):
    return DASH if x is None else f"{100 * x:+.1f}%"


def ratio(a, b):
    return a / b if a is not None and b else None


def table(head, rows, align=None):
    """Markdown; `align` one letter a column (l or r), by default text first and numbers after it."""
    align = align or "l" + "r" * (len(head) - 1)
    rule = "|" + "|".join("---" if a == "l" else "---:" for a in align) + "|"
    lines = ["| " + " | ".join(head) + " |", rule]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def frac_of_floor(k):
    """Decode over the floor with the KV cache; runs from before that field, over the weights-only roofline."""
    return k.get("decode_fraction_of_floor", k.get("decode_fraction_of_roofline"))


def floor_model(ok):
    """shape -> (bandwidth B/s, weight bytes, KV bytes per cached row) from kvscope's bench records."""
    model = {}
    for r in ok:
        bw, w = r.get("bandwidth_gbs"), r.get("weight_bytes_per_token")
        if not bw or not w or r["shape"] in model:
            continue
        rows = r["prompt_tokens"] + (r.get("decode_tokens", 0) + 1) / 2
        kv = r.get("kv_bytes_read_per_token", 0) / rows if rows else 0
        model[r["shape"]] = (bw * 1e9, w, kv)
    return model


def floor_at(floor, shape, prompt, decode):
    """Tokens/s at the floor for a run of `prompt` tokens and `decode` steps, or None."""
    if shape not in floor:
        return None
    bw, w, kv = floor[shape]
    return bw / (w + kv * (prompt + (decode + 1) / 2))


def speed_section(bench, tf):
    ok = [r for r in bench if "error" not in r]
    tf_runs = {}
    for res in tf.get("results", []):
        for run in res.get("runs", []):
            if "skipped" not in run:
                tf_runs[(res["shape"], run["prompt_tokens"])] = run
    tf_params = {res["shape"]: res.get("parameters") for res in tf.get("results", [])}
    keys = sorted({(r["shape"], r["prompt_tokens"]) for r in ok} | set(tf_runs), key=lambda k: (k[0], k[1]))
    rows, notes, ratios = [], [], {}
    for shape, p in keys:
        k = next((r for r in ok if r["shape"] == shape and r["prompt_tokens"] == p), {})
        t = tf_runs.get((shape, p), {})
        dr = ratio(k.get("decode_tokens_per_s"), t.get("decode_tokens_per_s"))
        pr = ratio(k.get("prefill_tokens_per_s"), t.get("prefill_tokens_per_s"))
        if dr is not None:
            ratios.setdefault(shape, []).append(dr)
        rows.append([shape, p, fmt(k.get("decode_tokens_per_s")),
                     fmt(frac_of_floor(k) and 100 * frac_of_floor(k), ".0f", "%"),
                     fmt(k.get("prefill_tokens_per_s"), ".0f"), fmt(t.get("decode_tokens_per_s")),
                     fmt(t.get("prefill_tokens_per_s"), ".0f"), fmt(dr, ".2f", "x"), fmt(pr, ".2f", "x")])
        kp, tp = k.get("parameters"), tf_params.get(shape)
        if kp and tp and kp != tp:
            notes.append(f"{shape}: kvscope has {kp} parameters, transformers {tp}: the shapes differ")
    for r in bench:
        if "error" in r:
            notes.append(f"kvscope {r['shape']} prompt {r['prompt_tokens']}: {r['error']}")
    for res in tf.get("results", []):
        if "error" in res:
            notes.append(f"transformers {res['shape']}: {res['error']}")
    floor = floor_model(ok)
    dev = next((r.get("device") for r in ok), DASH)
    bw = next((r.get("bandwidth_gbs") for r in ok), None)
    text = [f"## Speed, batch 1: kvscope ({dev}) vs transformers eager ({tf.get('device', DASH)}, {tf.get('dtype', DASH)})",
            "",
            f"Floor: the weights and the KV cache (at the decode steps' mean length) read once per token, at the "
            f"bandwidth kvscope's bench measured ({fmt(bw)} GB/s: a device copy on CUDA, host reads on the CPU).",
            "",
            table(["shape", "prompt", "kvscope decode tok/s", "% of floor", "kvscope prefill tok/s",
                   "transformers decode tok/s", "transformers prefill tok/s", "decode ratio", "prefill ratio"], rows)]
    if notes:
        text += [""] + [f"- {n}" for n in notes]
    return "\n".join(text), floor, ratios


def policy_section(runs, floor):
    ok = [r for r in runs if "error" not in r]
    shapes = list(dict.fromkeys(r["shape"] for r in runs))
    policies = list(dict.fromkeys(r["policy"] for r in ok))
    med = lambda xs: statistics.median(xs) if xs else None  # noqa: E731

    def one(r):
        return len(r.get("recorded_layers", [])) == 1

    rows, h2o_one_floor, worst = [], {}, {}
    for s in shapes:
        rs = [r for r in ok if r["shape"] == s]
        bare = med([r["backend_decode_ms_per_token"] for r in rs])
        full1 = med([r["recorder_overhead_paired_median"] for r in rs if one(r)])
        fulla = med([r["recorder_overhead_paired_median"] for r in rs if not one(r)])
        fl = next((floor_at(floor, s, r["prompt_tokens"], r["decode_tokens"]) for r in rs), None)
        row = [s, fmt(bare, ".3f"), fmt(fl and bare and 100 * (1000 / bare) / fl, ".0f", "%"),
               pct(full1), pct(fulla)]
        for pol in policies:
            r = next((r for r in rs if r["policy"] == pol and one(r)), None)
            row.append(pct(r and r["policy_and_recorder_overhead_paired_median"]))
            if r:
                worst[s] = max(worst.get(s, -1e9), r["policy_and_recorder_overhead_paired_median"])
                if pol == "h2o" and fl:
                    h2o_one_floor[s] = (1000 / r["policy_recorded_decode_ms_per_token"]) / fl
        ra = next((r for r in rs if r["policy"] == "h2o" and not one(r)), None)
        row.append(pct(ra and ra["policy_and_recorder_overhead_paired_median"]))
        row.append(pct(ra and ra.get("metrics_overhead_paired_median")))
        rows.append(row)
    r0 = ok[0] if ok else {}
    head = ["shape", "backend ms/token (nothing captured)", "% of floor", "full, 1 layer", "full, all layers"]
    head += [f"{p}, 1 layer" for p in policies] + ["h2o, all layers", "metrics on (h2o, all)"]
    text = [f"## Capture and policy overhead on {r0.get('device', DASH)}",
            "",
            f"Prompt {r0.get('prompt_tokens', DASH)} tokens, {r0.get('decode_tokens', DASH)} decode steps, "
            f"budget {r0.get('budget', DASH)}; each column is the median over repeats of the paired ratio to the "
            "bare backend minus 1 (metrics: to the same policy run without them).",
            "",
            table(head, rows)]
    errs = [f"- {r['shape']} {r.get('policy')} ({r.get('record')}): {r['error']}" for r in runs if "error" in r]
    if errs:
        text += [""] + errs
    return "\n".join(text), h2o_one_floor, worst


def targets_section(h2o_one_floor, worst, ratios, on_gpu):
    def verdict(x, goal, higher=True):
        if x is None:
            return "no data"
        if not on_gpu:
            return "not a GPU run"
        return "met" if (x >= goal if higher else x <= goal) else "NOT met"

    rows = []
    for shape, goal in (("llama-2-7b", 0.85), ("llama-3.2-1b", 0.70)):
        x = h2o_one_floor.get(shape)
        rows.append([f"{shape}: decode with H2O and one layer captured >= {goal:.0%} of the floor",
                     fmt(x and 100 * x, ".0f", "%"), verdict(x, goal)])
    w = max(worst.values()) if worst else None
    rows.append(["capture (one layer) + any policy <= 5% over plain decoding", pct(w), verdict(w, 0.05, higher=False)])
    lo = min(min(v) for v in ratios.values()) if ratios else None
    rows.append([">= 5x transformers eager decode on every shape and prompt", fmt(lo, ".2f", "x (lowest)"),
                 verdict(lo, 5.0)])
    return "## Targets\n\n" + table(["target", "measured", "verdict"], rows, align="lrl")


def stages_section(path):
    rows = []
    try:
        for line in open(path):
            parts = line.rstrip("\n").split("\t")
            if len(parts) == 4:
                rows.append([parts[0], parts[1], parts[2] + " s", parts[3]])
    except OSError:
        return ""
    return "## Stages\n\n" + table(["stage", "status", "time", "note"], rows, align="llrl")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True)
    ap.add_argument("--policy", required=True)
    ap.add_argument("--transformers", required=True)
    ap.add_argument("--stages", default="")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    bench, policy_runs = read_stream(a.bench), read_stream(a.policy)
    on_gpu = any(str(r.get("device", "")).startswith("cuda") for r in bench + policy_runs)
    speed, floor, ratios = speed_section(bench, read_json(a.transformers))
    policy, h2o_one_floor, worst = policy_section(policy_runs, floor)
    parts = [stages_section(a.stages) if a.stages else "", speed, policy,
             targets_section(h2o_one_floor, worst, ratios, on_gpu)]
    text = "\n\n".join(p for p in parts if p) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
