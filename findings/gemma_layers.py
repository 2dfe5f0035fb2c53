#!/usr/bin/env python3
"""Gemma 3's local and global layers: for a full-cache run on a long
pass-key prompt, the share of each layer's attention (answer rows, mean
over heads) that lands on the pass key's digits (every spelling of it in
the prompt) and on <bos>, and which
layers are sliding ones (they cannot see either at the question).

usage: gemma_layers.py EXPORT_DIR FINDINGS_DIR KEY
Writes FINDINGS_DIR/data/gemma_layer_share.csv and figures/gemma_layer_share.png.
"""
import csv
import json
import sys
from pathlib import Path

import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

exp, out, key = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
att = np.load(exp / "attention.npy")            # [steps, layers, heads, positions]
toks = json.load(open(exp / "tokens.json"))
session = json.load(open(exp / "session.json"))
layers = json.load(open(exp / "manifest.json"))["attention.npy"]["layers"]
pieces = toks["text"]
P = toks["prompt_length"]
# The key's digits, every time the prompt spells it out (Gemma writes one
# digit per token).
def spelled_at(i):
    return i + len(key) <= P and "".join(pieces[j].strip() for j in range(i, i + len(key))) == key
key_pos = [j for i in range(P) if spelled_at(i) for j in range(i, i + len(key))]
answer = att[1:]                                 # rows of the generated answer
share_key = answer[..., key_pos].sum(-1).mean(axis=(0, 2))   # [layers]
share_bos = answer[..., 0].mean(axis=(0, 2))
# A layer that cannot see position 0 at the last prompt row is a sliding
# one (its window ends inside the prompt).
blind = answer[..., 0].max(axis=(0, 2)) == 0
with open(out / "data" / "gemma_layer_share.csv", "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["layer", "sliding_and_past_window", "share_on_key_digits", "share_on_bos"])
    for i, l in enumerate(layers):
        w.writerow([l, int(blind[i]), f"{share_key[i]:.4f}", f"{share_bos[i]:.4f}"])
fig, ax = plt.subplots(figsize=(7.5, 3.0), dpi=110)
x = np.arange(len(layers))
ax.bar(x - 0.2, share_key, 0.4, label="on the pass key's digits", color="#c0392b")
ax.bar(x + 0.2, share_bos, 0.4, label="on <bos>", color="#7f8c8d")
for i in x:
    if not blind[i]:
        ax.annotate("global", (i, max(share_key[i], share_bos[i])), ha="center", va="bottom", fontsize=7)
ax.set_xticks(x, [str(l) for l in layers], fontsize=7)
ax.set_xlabel("layer")
ax.set_ylabel("share of attention\n(answer rows, mean of heads)")
ax.set_title(f"Gemma 3 270M, {P}-token pass-key prompt, full cache", fontsize=9)
ax.legend(fontsize=7, frameon=False)
fig.tight_layout()
fig.savefig(out / "figures" / "gemma_layer_share.png")
print("key at positions", key_pos, "; layers that see it:", [l for i, l in enumerate(layers) if not blind[i]])
