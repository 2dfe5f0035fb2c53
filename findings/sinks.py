#!/usr/bin/env python3
"""Attention sinks: share of each query head's attention that goes to the
first token(s), from a kvscope export (attention.npy) of a long generation.

usage: sinks.py EXPORT_DIR FINDINGS_DIR
Writes FINDINGS_DIR/data/sinks_share.csv and figures/sinks_*.png.
"""
import csv
import json
import sys
from pathlib import Path

import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

exp, out = Path(sys.argv[1]), Path(sys.argv[2])
att = np.load(exp / "attention.npy")          # [steps, layers, heads, positions]
toks = json.load(open(exp / "tokens.json"))
P = toks["prompt_length"]
man = json.load(open(exp / "manifest.json"))
layers = man["attention.npy"]["layers"]
KVH = np.load(exp / "masks.npy", mmap_mode="r").shape[2]
dec = att[1:]                                  # rows of the decoded (teacher-forced) tokens
steps, L, H, N = dec.shape
ctx = P + np.arange(steps)                     # positions each row attends over
first1 = dec[..., 0]                           # [steps, L, H]
first4 = dec[..., :4].sum(-1)
uniform = (1.0 / ctx)[:, None, None]           # what an even spread would give token 0

share1 = first1.mean(0)                        # [L, H]
share4 = first4.mean(0)
with open(out / "data" / "sinks_share.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["layer", "head", "share_first1_mean", "share_first1_std", "share_first4_mean", "even_spread_first1"])
    for i, l in enumerate(layers):
        for h in range(H):
            w.writerow([l, h, f"{share1[i, h]:.4f}", f"{first1[:, i, h].std():.4f}", f"{share4[i, h]:.4f}",
                        f"{uniform.mean():.4f}"])

fig, axes = plt.subplots(1, 2, figsize=(11, 6.2), gridspec_kw={"width_ratios": [1, 1.25]})
im = axes[0].imshow(share1, aspect="auto", cmap="viridis", vmin=0, vmax=1, origin="upper")
G = H // KVH
axes[0].set_xticks(range(H), [f"{h}\n(kv {h // G})" for h in range(H)], fontsize=8)
axes[0].set_yticks(range(0, L, 2), [str(layers[i]) for i in range(0, L, 2)], fontsize=8)
axes[0].set_xlabel("query head (KV head it reads)")
axes[0].set_ylabel("layer")
axes[0].set_title(f"share of attention on token 0\n(mean over {steps} decoding steps)", fontsize=10)
fig.colorbar(im, ax=axes[0], fraction=0.05, label="attention share")

x = np.arange(L)
m1, s1 = share1.mean(1), share1.std(1)
m4, s4 = share4.mean(1), share4.std(1)
axes[1].errorbar(x, m4, yerr=s4, fmt="s-", ms=4, capsize=2, label="first 4 tokens", color="tab:orange")
axes[1].errorbar(x, m1, yerr=s1, fmt="o-", ms=4, capsize=2, label="token 0 only", color="tab:blue")
axes[1].plot(x, 4 * uniform.mean() * np.ones(L), ":", color="tab:orange", label="first 4 if attention were even")
axes[1].plot(x, uniform.mean() * np.ones(L), ":", color="tab:blue", label="token 0 if attention were even")
axes[1].set_xticks(x[::2], [str(layers[i]) for i in range(0, L, 2)], fontsize=8)
axes[1].set_xlabel("layer")
axes[1].set_ylabel(f"attention share (mean ± std over the {H} query heads)")
axes[1].set_ylim(0, 1.05)
axes[1].set_title("by layer", fontsize=10)
axes[1].legend(fontsize=8, loc="lower right")
axes[1].grid(alpha=0.3)
model = Path(json.load(open(exp / "session.json"))["model"]).name
fig.suptitle(f"Attention sinks in {model}: {P}-token prompt + {steps} teacher-forced tokens of Ruth 1 (KJV), full cache", fontsize=11)
fig.tight_layout()
fig.savefig(out / "figures" / "sinks_by_layer_head.png", dpi=110)

# over the generation: does the sink share hold as the context grows?
fig, ax = plt.subplots(figsize=(8, 4))
all1 = first1.reshape(steps, -1)
deep = first1[:, 2:, :].reshape(steps, -1)
ax.plot(ctx, all1.mean(1), label="token 0, all layers and heads")
ax.fill_between(ctx, np.percentile(all1, 25, 1), np.percentile(all1, 75, 1), alpha=0.25, label=f"interquartile range over the {L * H} heads")
ax.plot(ctx, deep.mean(1), "--", label="token 0, layers 2-29")
ax.plot(ctx, 1 / ctx, ":", color="k", label="even spread (1 / context)")
ax.set_xlabel("context length (position of the query + 1)")
ax.set_ylabel("attention share on token 0")
ax.set_ylim(0, 1)
ax.grid(alpha=0.3)
ax.legend(fontsize=8)
ax.set_title("Share of attention on the first token as the context grows", fontsize=10)
fig.tight_layout()
fig.savefig(out / "figures" / "sinks_over_steps.png", dpi=110)
print(f"sinks: token-0 share mean {share1.mean():.3f} (layers 2+: {share1[2:].mean():.3f}), "
      f"first-4 {share4.mean():.3f}, even spread {uniform.mean():.4f}; "
      f"heads with >50% on token 0: {(share1 > 0.5).sum()}/{L * H}")
