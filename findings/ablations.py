#!/usr/bin/env python3
"""Plots of the ablation sweeps on the 100-item sets (kvscope's sweep plots
draw one line per policy name, and these compare settings of one policy).

Each figure has two kinds of panel: the mean of each cell with ± one
standard error over items (the sweep CSV's <metric> and <metric>_se
columns, n from its n column), and the difference between two settings on
the same items with its 95% paired bootstrap interval (pairs.py's method
and seed, so the bounds are those of the data/pairs_*.md tables).

usage: ablations.py FINDINGS_DIR
  reads data/sweep_{passkey100,kjv100}.csv and their _items.csv,
  data/sweep_tova_head_{passkey100,kjv100}*.csv, data/sweep_a2sf_*_kjv100*.csv,
  data/sweep_kf_*_kjv100*.csv, and data/sweep_passkey100_kvpress_all_items.csv
  when section 9's two stages have run; writes figures/tova_granularity.png,
  a2sf_alpha.png, keyformer_ablation.png, sink_vs_window.png and
  passkey100_kvpress_all_accuracy.png
"""
import csv
import random
import sys
from pathlib import Path

import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pairs import interval, per_item  # noqa: E402  (same bootstrap as the tables)

out = Path(sys.argv[1])
D = out / "data"
BUDGETS = ["10%", "30%", "50%", "70%", "90%"]
SEED = 0x6B7673636F7065  # pairs.py's seed: the same bounds as data/pairs_*.md
NLL = "NLL of the next 16 words (nats/token)"


def load(name):
    return {(r["policy"], r["budget"]): r for r in csv.DictReader(open(D / f"sweep_{name}.csv"))}


def items(name):
    return list(csv.DictReader(open(D / f"sweep_{name}_items.csv")))


def cells(sweep, policy, metric, budgets, k=1):
    """Mean, standard error and n of each budget's cell, from sweep.csv."""
    rs = [sweep[(policy, b)] for b in budgets]
    return (np.array([k * float(r[metric]) for r in rs]), np.array([k * float(r[metric + "_se"]) for r in rs]),
            sorted({int(r["n"]) for r in rs}))


def paired(rows_a, a, rows_b, b, budget, metric, k=1):
    """Mean of A - B over the items both have, and its 95% paired bootstrap interval."""
    xa, xb = per_item(rows_a, a, budget, metric), per_item(rows_b, b, budget, metric)
    its = sorted(set(xa) & set(xb))
    diffs = [xa[i] - xb[i] for i in its]
    lo, hi = interval(diffs, random.Random(SEED))
    return k * sum(diffs) / len(diffs), k * lo, k * hi, len(its)


def diff_bars(ax, x, ds, **kw):
    m = np.array([d[0] for d in ds])
    err = np.array([[d[0] - d[1] for d in ds], [d[2] - d[0] for d in ds]])
    ax.errorbar(x, m, yerr=err, capsize=3, **kw)
    return {d[3] for d in ds}


def n_text(ns):
    ns = sorted(set(ns))
    return f"n = {ns[0]}" if len(ns) == 1 else "n = " + "–".join(map(str, [ns[0], ns[-1]]))


def note(fig, text):
    fig.text(0.01, 0.005, text, fontsize=8, ha="left", va="bottom", wrap=True)


def budget_axis(ax, x):
    ax.set_xticks(x, BUDGETS)
    ax.set_xlabel("KV budget (% of prompt)")
    ax.grid(alpha=0.3)


main = {"passkey": load("passkey100"), "kjv": load("kjv100")}
main_items = {"passkey": items("passkey100"), "kjv": items("kjv100")}
METRIC = {"passkey": ("accuracy", 100, "pass-key accuracy (%)", "points of accuracy"),
          "kjv": ("answer_nll", 1, NLL, "nats/token")}
TITLE = {"passkey": "pass-key set (100 items)", "kjv": "KJV passages (100 items)"}
x5 = np.arange(len(BUDGETS))

# 1. TOVA: one decision per layer (head-averaged) vs one per KV head
fig, axes = plt.subplots(2, 2, figsize=(11, 7.4), height_ratios=[3, 2])
ns = []
for col, ds in enumerate(["passkey", "kjv"]):
    m, k, lab, unit = METRIC[ds]
    head = load(f"tova_head_{ds}100")
    ax = axes[0, col]
    for sweep, pol, name, st in [(main[ds], "tova", "TOVA per layer (default)", "o-"),
                                 (head, "tova", "TOVA per KV head", "s--"),
                                 (main[ds], "h2o", "H2O (for scale)", "^:")]:
        y, e, n = cells(sweep, pol, m, BUDGETS, k)
        ns += n
        ax.errorbar(x5, y, yerr=e, fmt=st, capsize=3, label=name, **({"color": "gray", "alpha": 0.7} if pol == "h2o" else {}))
    ax.axhline(k * float(main[ds][("full", "10%")][m]), ls="--", color="k", lw=1, label="full cache")
    ax.set_ylabel(lab); ax.set_title(TITLE[ds] + ": mean ± s.e.", fontsize=10)
    budget_axis(ax, x5); ax.legend(fontsize=8)
    ax = axes[1, col]
    hitems = items(f"tova_head_{ds}100")
    ns += diff_bars(ax, x5, [paired(main_items[ds], "tova", hitems, "tova", b, m, k) for b in BUDGETS],
                    fmt="o", color="C0")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_ylabel(f"per layer − per KV head\n({unit})"); ax.set_title("paired difference, 95% interval", fontsize=10)
    budget_axis(ax, x5)
fig.suptitle("TOVA granularity on the 100-item sets", fontsize=11)
note(fig, f"Top: mean ± one standard error over items ({n_text(ns)} items per point). Bottom: mean difference on the "
          "same items, bars the 95% paired bootstrap interval (pairs.py); an interval that crosses 0 does not tell them apart.")
fig.tight_layout(rect=(0, 0.03, 1, 1)); fig.savefig(out / "figures" / "tova_granularity.png", dpi=110)
plt.close(fig)

# 2. A2SF forgetting factor (0.2 is the kjv100 sweep's a2sf)
alphas = ["0", "0.1", "0.2", "0.5", "0.9", "1"]
AB = ["30%", "50%"]
sweeps = {a: (main["kjv"], main_items["kjv"]) if a == "0.2" else (load(f"a2sf_{a}_kjv100"), items(f"a2sf_{a}_kjv100"))
          for a in alphas}
fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
xa = np.arange(len(alphas))
xlabels = [a + ("\n(default)" if a == "0.2" else "") for a in alphas]
ns = []
ax = axes[0]
for j, (b, st) in enumerate([("30%", "o-"), ("50%", "s-")]):
    y, e = [], []
    for a in alphas:
        yy, ee, n = cells(sweeps[a][0], "a2sf", "answer_nll", [b])
        y.append(yy[0]); e.append(ee[0]); ns += n
    ax.errorbar(xa + (j - 0.5) * 0.08, y, yerr=e, fmt=st, capsize=3, label=f"A2SF, budget {b}")
for b, c in [("30%", "C0"), ("50%", "C1")]:
    ax.axhline(float(main["kjv"][("h2o", b)]["answer_nll"]), ls=":", color=c, lw=1, label=f"H2O, {b}")
ax.axhline(float(main["kjv"][("full", "10%")]["answer_nll"]), ls="--", color="k", lw=1, label="full cache")
ax.set_xticks(xa, xlabels); ax.set_xlabel("forgetting factor α")
ax.set_ylabel(NLL); ax.set_title("mean ± s.e.", fontsize=10); ax.grid(alpha=0.3); ax.legend(fontsize=8)
ax = axes[1]
others = [a for a in alphas if a not in ("0.2", "1")]
xo = np.arange(len(others))
for j, b in enumerate(AB):
    ds = [paired(sweeps[a][1], "a2sf", main_items["kjv"], "a2sf", b, "answer_nll") for a in others]
    ns += diff_bars(ax, xo + (j - 0.5) * 0.15, ds, fmt="os"[j], color=f"C{j}", label=f"budget {b}")
ax.axhline(0, color="k", lw=0.8)
y0, y1 = ax.get_ylim()
ax.set_ylim(y0, y1 + 0.25 * (y1 - y0))  # room for the α = 1 line
far = [paired(sweeps["1"][1], "a2sf", main_items["kjv"], "a2sf", b, "answer_nll") for b in AB]
ax.text(0.98, 0.97, "α = 1 (off this scale): " + ", ".join(f"{b} {d[0]:+.2f} [{d[1]:+.2f}, {d[2]:+.2f}]"
        for b, d in zip(AB, far)), transform=ax.transAxes, ha="right", va="top", fontsize=8)
ax.set_xticks(xo, others); ax.set_xlabel("forgetting factor α")
ax.set_ylabel("α − α 0.2 (nats/token)"); ax.set_title("paired difference from α = 0.2, 95% interval", fontsize=10)
ax.grid(alpha=0.3); ax.legend(fontsize=8, loc="lower left")
fig.suptitle("A2SF's forgetting factor, 100 KJV passages (0: latest row only; 1: H2O's sum without its window)",
             fontsize=11)
note(fig, f"Left: mean ± one standard error over items ({n_text(ns)} passages per point). Right: mean difference on the "
          "same passages, bars the 95% paired bootstrap interval (pairs.py).")
fig.tight_layout(rect=(0, 0.04, 1, 1)); fig.savefig(out / "figures" / "a2sf_alpha.png", dpi=110)
plt.close(fig)

# 3. Keyformer: noise and temperature schedule (the default is the kjv100 sweep's keyformer)
variants = [("Gumbel, τ 1→2\n(default)", None), ("Gaussian,\nτ 1→2", "kf_noise_gaussian_kjv100"),
            ("no noise,\nτ 1→2", "kf_noise_none_kjv100"), ("Gumbel,\nτ = 1", "kf_tau_const1_kjv100"),
            ("Gumbel,\nτ = 2", "kf_tau_const2_kjv100")]
kf = {f: (main["kjv"], main_items["kjv"]) if f is None else (load(f), items(f)) for _, f in variants}
fig, axes = plt.subplots(1, 2, figsize=(12, 4.6))
ns = []
ax = axes[0]
w = 0.38
lo_y = 2.5
for j, b in enumerate(AB):
    y, e = [], []
    for _, f in variants:
        yy, ee, n = cells(kf[f][0], "keyformer", "answer_nll", [b])
        y.append(yy[0]); e.append(ee[0]); ns += n
    ax.bar(np.arange(len(variants)) + (j - 0.5) * w, np.array(y) - lo_y, w, bottom=lo_y, yerr=e, capsize=3,
           label=f"budget {b}", color=f"C{j}")
for b, c in [("30%", "C0"), ("50%", "C1")]:
    ax.axhline(float(main["kjv"][("h2o", b)]["answer_nll"]), ls=":", color=c, lw=1.2, label=f"H2O, {b}")
ax.axhline(float(main["kjv"][("full", "10%")]["answer_nll"]), ls="--", color="k", lw=1, label="full cache")
ax.set_xticks(range(len(variants)), [v for v, _ in variants], fontsize=8)
ax.set_ylabel(NLL + f"\n(axis starts at {lo_y})"); ax.set_ylim(lo_y, 3.05)
ax.set_title("mean ± s.e.", fontsize=10); ax.legend(fontsize=8, loc="upper left", ncol=2); ax.grid(axis="y", alpha=0.3)
ax = axes[1]
arms = [(v, f) for v, f in variants if f is not None]
xk = np.arange(len(arms) + 1)
for j, b in enumerate(AB):
    ds = [paired(kf[f][1], "keyformer", main_items["kjv"], "keyformer", b, "answer_nll") for _, f in arms]
    ds.append(paired(main_items["kjv"], "keyformer", main_items["kjv"], "h2o", b, "answer_nll"))
    ns += diff_bars(ax, xk + (j - 0.5) * 0.15, ds, fmt="os"[j], color=f"C{j}", label=f"budget {b}")
ax.axhline(0, color="k", lw=0.8)
ax.set_xticks(xk, [v + "\n− default" for v, _ in arms] + ["default\n− H2O"], fontsize=8)
ax.set_ylabel("difference (nats/token)"); ax.set_title("paired difference, 95% interval", fontsize=10)
ax.grid(axis="y", alpha=0.3); ax.legend(fontsize=8, loc="upper left")
fig.suptitle("Keyformer's score noise and temperature, 100 KJV passages", fontsize=11)
note(fig, f"Left: mean ± one standard error over items ({n_text(ns)} passages per bar; 3 seeds per passage for the "
          "Gumbel and Gaussian arms, 1 for no noise). Right: mean difference on the same passages, bars the 95% paired "
          "bootstrap interval (pairs.py).")
fig.tight_layout(rect=(0, 0.05, 1, 1)); fig.savefig(out / "figures" / "keyformer_ablation.png", dpi=110)
plt.close(fig)

# 4. StreamingLLM: window with and without the 4 sinks
fig, axes = plt.subplots(2, 2, figsize=(11, 7.4), height_ratios=[3, 2])
ns = []
for col, ds in enumerate(["passkey", "kjv"]):
    m, lab = ("answer_nll", "NLL of the answer tokens (nats/token)") if ds == "passkey" else ("answer_nll", NLL)
    ax = axes[0, col]
    for pol, name, st in [("window", "window (recent tokens only)", "o-"), ("sink", "sink (4 first tokens + recent)", "s--")]:
        y, e, n = cells(main[ds], pol, m, BUDGETS)
        ns += n
        ax.errorbar(x5, y, yerr=e, fmt=st, capsize=3, label=name)
    ax.axhline(float(main[ds][("full", "10%")][m]), ls="--", color="k", lw=1, label="full cache")
    ax.set_ylabel(lab); ax.set_title(TITLE[ds] + ": mean ± s.e.", fontsize=10)
    budget_axis(ax, x5); ax.legend(fontsize=8)
    ax = axes[1, col]
    for j, (a, b, c) in enumerate([("sink", "window", "C1"), ("sink", "full", "k")]):
        ns += diff_bars(ax, x5 + (j - 0.5) * 0.15, [paired(main_items[ds], a, main_items[ds], b, bud, m) for bud in BUDGETS],
                        fmt="os"[j], color=c, label=f"{a} − {b}")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_ylabel("difference (nats/token)"); ax.set_title("paired difference, 95% interval", fontsize=10)
    budget_axis(ax, x5); ax.legend(fontsize=8)
fig.suptitle("StreamingLLM: a recent window with and without attention sinks, 100-item sets", fontsize=11)
note(fig, f"Top: mean ± one standard error over items ({n_text(ns)} items per point). Bottom: mean difference on the "
          "same items, bars the 95% paired bootstrap interval (pairs.py); sink − full above 0 means the sink window's NLL stays above the full cache's.")
fig.tight_layout(rect=(0, 0.03, 1, 1)); fig.savefig(out / "figures" / "sink_vs_window.png", dpi=110)
plt.close(fig)
# 5. Section 9: the policies taken from kvpress, wrappers included (the
# kvpress100, kvpress100b and, once run, kvpress100c stages, merged by
# kvpress_merge.py).
ALL = D / "sweep_passkey100_kvpress_all_items.csv"
if ALL.exists() and "criticalkv_snapkv" in {r["policy"] for r in csv.DictReader(open(ALL))}:
    rows = list(csv.DictReader(open(ALL)))
    fig, axes = plt.subplots(2, 1, figsize=(12.5, 8.6), height_ratios=[3, 2])
    ax = axes[0]
    lines = [("keydiff", "KeyDiff", "o-"), ("cur", "CUR", "s-"), ("lagkv_l32", "LagKV (lag 32)", "D-"),
             ("tova", "TOVA", "^--"), ("h2o", "H2O", "v--"), ("knorm", "Knorm", "x:"),
             ("snapkv", "SnapKV (window 64)", "o:"), ("chunkkv_snapkv", "ChunkKV(SnapKV), chunks of 10", "s:"),
             ("adakv_snapkv", "AdaKV(SnapKV)", "<:"), ("criticalkv_snapkv", "CriticalKV(SnapKV)", ">:"),
             ("pyramidkv", "PyramidKV", "p:")]
    colours = [f"C{i}" for i in range(10)] + ["k"]  # eleven lines, ten colours in the cycle
    if "expected" in {r["policy"] for r in rows}:  # the kvpress100c stage has run
        lines += [("leverage", "LeverageScore", "h-"), ("expected", "ExpectedAttention", "*-")]
        colours += ["goldenrod", "m"]
    ns = []
    for (pol, name, st), colour in zip(lines, colours):
        y, e = [], []
        for b in BUDGETS:
            v = [100 * float(r["accuracy"]) for r in rows if r["policy"] == pol and r["budget"] == b]
            ns.append(len(v))
            y.append(np.mean(v))
            e.append(np.std(v, ddof=1) / np.sqrt(len(v)))
        ax.errorbar(x5, y, yerr=e, fmt=st, capsize=3, label=name, color=colour)
    ax.set_ylabel("pass-key accuracy (%)")
    ax.set_title("pass-key set (100 items): mean ± s.e.", fontsize=10)
    budget_axis(ax, x5)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))  # beside the plot: no point hidden
    ax = axes[1]
    for j, (a, b, c) in enumerate([("chunkkv_snapkv", "snapkv", "C7"), ("cur", "knorm", "C1"), ("lagkv_l32", "tova", "C2")]):
        ns += diff_bars(ax, x5 + (j - 1) * 0.15, [paired(rows, a, rows, b, bud, "accuracy", 100) for bud in BUDGETS],
                        fmt="osD"[j], color=c, label=f"{a} − {b}")
    ax.axhline(0, color="k", lw=0.8)
    ax.set_ylabel("difference (points)")
    ax.set_title("paired difference, 95% interval", fontsize=10)
    budget_axis(ax, x5)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    fig.suptitle("kvpress's policies in kvscope on SmolLM2-135M, each equal to its press on the goldens", fontsize=11)
    note(fig, f"Top: mean ± one standard error over items ({n_text(ns)} items per point; all deterministic, one run "
              "each). Bottom: mean difference on the same items, bars the 95% paired bootstrap interval (pairs.py).")
    fig.tight_layout(rect=(0, 0.03, 1, 1)); fig.savefig(out / "figures" / "passkey100_kvpress_all_accuracy.png", dpi=110)
    plt.close(fig)
print("ablation plots written")
