#!/usr/bin/env python3
"""Line and bar plots of the ablation sweeps (kvscope's sweep plots draw one
line per policy name, and these compare settings of one policy).

usage: ablations.py FINDINGS_DIR   (reads data/sweep_*.csv, writes figures/)
"""
import csv
import sys
from pathlib import Path

import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

out = Path(sys.argv[1])
D = out / "data"


def load(name):
    rows = list(csv.DictReader(open(D / f"sweep_{name}.csv")))
    for r in rows:
        r["b"] = float(r["budget"].rstrip("%"))
    return rows


def pick(rows, policy, metric):
    rs = sorted((r for r in rows if r["policy"] == policy), key=lambda r: r["b"])
    return (np.array([r["b"] for r in rs]), np.array([float(r[metric]) for r in rs]),
            np.array([float(r[metric + "_se"]) for r in rs]))


def full_ref(ax, rows, metric):
    _, y, _ = pick(rows, "full", metric)
    ax.axhline(y[0], ls="--", color="k", lw=1, label="full cache")


main = {"passkey": load("passkey"), "kjv": load("kjv")}
n = {k: v[0]["n"] for k, v in main.items()}
METRIC = {"passkey": ("accuracy", "pass-key accuracy"), "kjv": ("answer_nll", "NLL of the next 16 words (nats/token)")}
TITLE = {"passkey": f"pass-key set ({n['passkey']} items)", "kjv": f"KJV passages ({n['kjv']} items)"}

# 1. TOVA: one decision per layer (head-averaged) vs one per KV head
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for ax, ds in zip(axes, ["passkey", "kjv"]):
    m, lab = METRIC[ds]
    head = load(f"tova_head_{ds}")
    for rows, pol, name, st in [(main[ds], "tova", "TOVA per layer (default)", "o-"), (head, "tova", "TOVA per KV head", "s--")]:
        x, y, e = pick(rows, pol, m)
        ax.errorbar(x, y, yerr=e, fmt=st, capsize=3, label=name)
    x, y, e = pick(main[ds], "h2o", m)
    ax.errorbar(x, y, yerr=e, fmt="^:", capsize=3, color="gray", alpha=0.7, label="H2O (for scale)")
    full_ref(ax, main[ds], m)
    ax.set_xlabel("KV budget (% of prompt)"); ax.set_ylabel(lab); ax.set_title(TITLE[ds], fontsize=10)
    ax.set_xticks(x, [f"{int(v)}%" for v in x]); ax.grid(alpha=0.3); ax.legend(fontsize=8)
fig.suptitle("TOVA granularity (error bars: standard error over items)", fontsize=11)
fig.tight_layout(); fig.savefig(out / "figures" / "tova_granularity.png", dpi=110)

# 2. A2SF forgetting factor
alphas = [0, 0.1, 0.2, 0.5, 0.9, 1]
fig, ax = plt.subplots(figsize=(7, 4))
for b, st in [(30.0, "o-"), (50.0, "s-")]:
    ys, es = [], []
    for a in alphas:
        rows = main["kjv"] if a == 0.2 else load(f"a2sf_{a:g}_kjv")
        r = [r for r in rows if r["policy"] == "a2sf" and r["b"] == b][0]
        ys.append(float(r["answer_nll"])); es.append(float(r["answer_nll_se"]))
    ax.errorbar(alphas, ys, yerr=es, fmt=st, capsize=3, label=f"A2SF, budget {int(b)}%")
    _, hy, _ = pick(main["kjv"], "h2o", "answer_nll")
full_ref(ax, main["kjv"], "answer_nll")
ax.set_xlabel("forgetting factor α  (0: latest row only, like TOVA per head; 1: H2O's sum without its window)")
ax.set_ylabel("NLL of the next 16 words (nats/token)")
ax.set_title(f"A2SF's forgetting factor, KJV passages ({n['kjv']} items, ± s.e.)", fontsize=10)
ax.grid(alpha=0.3); ax.legend(fontsize=8)
fig.tight_layout(); fig.savefig(out / "figures" / "a2sf_alpha.png", dpi=110)

# 3. Keyformer: noise and temperature schedule
variants = [("gumbel, τ 1→2\n(default)", None), ("gaussian, τ 1→2", "kf_noise_gaussian_kjv"),
            ("no noise, τ 1→2", "kf_noise_none_kjv"), ("gumbel, τ = 1", "kf_tau_const1_kjv"),
            ("gumbel, τ = 2", "kf_tau_const2_kjv")]
fig, ax = plt.subplots(figsize=(9, 4))
w = 0.38
for j, b in enumerate([30.0, 50.0]):
    ys, es = [], []
    for _, f in variants:
        rows = main["kjv"] if f is None else load(f)
        r = [r for r in rows if r["policy"] == "keyformer" and r["b"] == b][0]
        ys.append(float(r["answer_nll"])); es.append(float(r["answer_nll_se"]))
    ax.bar(np.arange(len(variants)) + (j - 0.5) * w, ys, w, yerr=es, capsize=3, label=f"budget {int(b)}%")
full_ref(ax, main["kjv"], "answer_nll")
ax.set_xticks(range(len(variants)), [v for v, _ in variants], fontsize=8)
ax.set_ylabel("NLL of the next 16 words (nats/token)\n(axis starts at 2.0)")
ax.set_title(f"Keyformer's score noise and temperature, KJV passages ({n['kjv']} items, ± s.e.)", fontsize=10)
ax.set_ylim(2.0, 3.1); ax.legend(fontsize=8, loc="upper left"); ax.grid(axis="y", alpha=0.3)
fig.tight_layout(); fig.savefig(out / "figures" / "keyformer_ablation.png", dpi=110)

# 4. StreamingLLM: window with and without the 4 sinks
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for ax, ds in zip(axes, ["passkey", "kjv"]):
    m, lab = METRIC[ds]
    if ds == "passkey":
        m, lab = "answer_nll", "NLL of the answer tokens (nats/token)"
    for pol, name, st in [("window", "window (recent tokens only)", "o-"), ("sink", "sink (4 first tokens + recent)", "s--")]:
        x, y, e = pick(main[ds], pol, m)
        ax.errorbar(x, y, yerr=e, fmt=st, capsize=3, label=name)
    full_ref(ax, main[ds], m)
    ax.set_xlabel("KV budget (% of prompt)"); ax.set_ylabel(lab); ax.set_title(TITLE[ds], fontsize=10)
    ax.set_xticks(x, [f"{int(v)}%" for v in x]); ax.grid(alpha=0.3); ax.legend(fontsize=8)
fig.suptitle("StreamingLLM: a recent window with and without attention sinks (± s.e.)", fontsize=11)
fig.tight_layout(); fig.savefig(out / "figures" / "sink_vs_window.png", dpi=110)
print("ablation plots written")
