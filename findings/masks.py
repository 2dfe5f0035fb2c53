#!/usr/bin/env python3
"""Side by side: which prompt positions each policy keeps, per KV head, on
one pass-key prompt (from kvscope's masks.npy exports).

usage: masks.py WORK_DIR FINDINGS_DIR   (WORK_DIR/mask_<policy>/ are exports)
"""
import json
import sys
from pathlib import Path

import numpy as np
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap

work, out = Path(sys.argv[1]), Path(sys.argv[2])
POLICIES = ["window", "sink", "h2o", "tova", "keyformer", "a2sf", "random"]
LAYER = int(sys.argv[3]) if len(sys.argv) > 3 else 15
masks, toks = {}, None
for p in POLICIES:
    masks[p] = np.load(work / f"mask_{p}" / "masks.npy")   # [steps, layers, kv_heads, positions]
    toks = json.load(open(work / f"mask_{p}" / "tokens.json"))
P = toks["prompt_length"]
text = toks["text"]
# positions of the pass-key digits (the first mention)
digits = [i for i in range(P) if text[i].strip().isdigit()]
KV = masks[POLICIES[0]].shape[2]

# 0 unseen, 1 kept, 2 protected, 3 evicted now, 4 evicted earlier
cmap = ListedColormap(["white", "#555555", "#3b6fb6", "#d95f02", "#fdd0a2"])
rows, labels = [], []
for p in POLICIES:
    last = masks[p][0, LAYER]          # row 0: right after the prompt (before the answer)
    for h in range(KV):
        rows.append(last[:, :P][h])
        labels.append(f"{p}  kv{h}")
img = np.array(rows)
fig, ax = plt.subplots(figsize=(13, 6.5))
ax.imshow(img, aspect="auto", cmap=cmap, vmin=-0.5, vmax=4.5, interpolation="nearest")
ax.set_yticks(range(len(labels)), labels, fontsize=8)
for k in range(1, len(POLICIES)):
    ax.axhline(k * KV - 0.5, color="k", lw=1)
for d in digits:
    ax.axvline(d, color="cyan", lw=0.9)
ax.set_xlabel("prompt position (cyan lines: the pass-key digits)")
ax.set_title(f"Kept (grey), protected (blue) and evicted (orange) prompt tokens after the prefill, layer {LAYER}, "
             f"every KV head; budget 30% of a {P}-token prompt", fontsize=10)
from matplotlib.patches import Patch
ax.legend(handles=[Patch(color="#555555", label="kept"), Patch(color="#3b6fb6", label="kept, protected (sink / window)"),
                   Patch(color="#d95f02", label="evicted")], loc="upper center", bbox_to_anchor=(0.5, -0.09), ncol=3, fontsize=8)
fig.tight_layout()
fig.savefig(out / "figures" / "kept_sets_L15.png", dpi=110)

# over the whole model: for each policy, the share of (layer, KV head) units
# that still hold each prompt position after the prefill
fig, ax = plt.subplots(figsize=(13, 4.8))
share = []
for p in POLICIES:
    m = masks[p][0, :, :, :P]
    share.append(((m == 1) | (m == 2)).mean(axis=(0, 1)))
im = ax.imshow(np.array(share), aspect="auto", cmap="magma", vmin=0, vmax=1, interpolation="nearest")
ax.set_yticks(range(len(POLICIES)), POLICIES, fontsize=9)
for d in digits:
    ax.axvline(d, color="cyan", lw=0.6, alpha=0.7)
ax.set_xlabel("prompt position (cyan lines: the pass-key digits)")
ax.set_title(f"Share of the {masks[POLICIES[0]].shape[1] * KV} (layer, KV head) units that keep each prompt token after the prefill (budget 30%)", fontsize=10)
fig.colorbar(im, ax=ax, fraction=0.03, label="share of units")
fig.tight_layout()
fig.savefig(out / "figures" / "kept_share_all_layers.png", dpi=110)
with open(out / "data" / "kept_passkey_digits.csv", "w") as f:
    f.write("policy,share_of_units_keeping_all_key_digits,share_of_units_keeping_any_key_digit\n")
    for p in POLICIES:
        m = masks[p][0, :, :, :P]
        kept = (m == 1) | (m == 2)
        d = kept[:, :, digits[:5]]
        f.write(f"{p},{d.all(-1).mean():.3f},{d.any(-1).mean():.3f}\n")
print(open(out / "data" / "kept_passkey_digits.csv").read())

# which tokens the scored (unprotected) kept slots go to, over all units
import collections
with open(out / "data" / "kept_token_kinds.csv", "w") as f:
    f.write("policy,token,share_of_kept_unprotected_slots\n")
    for p in ["h2o", "tova", "keyformer", "a2sf"]:
        kept = masks[p][0, :, :, :P] == 1
        c = collections.Counter()
        for pos in range(P):
            c[text[pos]] += int(kept[:, :, pos].sum())
        tot = kept.sum()
        for tok, v in c.most_common(5):
            f.write(f"{p},{json.dumps(tok)},{v / tot:.3f}\n")
print(open(out / "data" / "kept_token_kinds.csv").read())
