#!/usr/bin/env python3
"""Measures the bundled models with kvscope-cli (our engine, not PyTorch) on
every held-out set in assets/eval and prints docs/accuracy.md's Markdown table:
answer accuracy (the greedy answer equals the expected one), mean NLL of the
answer tokens and perplexity of prompt + answer, full cache.

  python3 tools/eval_default_models.py [--cli build/release/app/cli/kvscope-cli]
"""
import argparse
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["kvscope-tiny", "kvscope-tiny-mlkv"]
SETS = ["story", "passkey", "kv", "plain"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "cli", "kvscope-cli"))
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args()
    print("| model | set | items | answer accuracy | answer NLL (nats/token) | perplexity |")
    print("|---|---|---:|---:|---:|---:|")
    for model in MODELS:
        for kind in SETS:
            cmd = [args.cli, "eval", os.path.join(ROOT, "assets", "models", model), "--dataset",
                   os.path.join(ROOT, "assets", "eval", kind + ".jsonl"), "--no-metrics", "--json"]
            if args.limit:
                cmd += ["--limit", str(args.limit)]
            r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            acc = f"{100 * r['accuracy']:.0f}%" if r["scored"] else "–"
            nll = f"{r['answer_mean_nll']:.3f}" if r["scored"] else "–"
            print(f"| {model} | {kind} | {r['items']} | {acc} | {nll} | {r.get('perplexity', float('nan')):.3f} |",
                  flush=True)


if __name__ == "__main__":
    main()
