#!/usr/bin/env python3
"""Merges the kvpress100 stage's sweeps into one items file, so that
pairs.py can compare any two of them on the same items: the main sweep
(full, h2o, tova, snapkv, knorm, keydiff) as it is, H2O with
--h2o-score mean as `h2o_mean`, SnapKV with a 16-token observation window
as `snapkv_w16`, and, once the kvpress100b stage has run, CUR and PyramidKV as
they are, LagKV at lag 32 as `lagkv_l32`, ChunkKV(SnapKV) as `chunkkv_snapkv`
AdaKV(SnapKV) as `adakv_snapkv` and CriticalKV(SnapKV) as `criticalkv_snapkv`, and, once the
kvpress100c stage has run, LeverageScore and ExpectedAttention as they are
(`leverage`, `expected`) and TOVA, KeyDiff, Knorm, H2O and SnapKV under
kvpress's DecodingPress schedule with an interval of 2 (`tova_dec2`, ...). Also prints the per-policy means ± standard error as a markdown table.
Standard library only.

usage: kvpress_merge.py DATA_DIR  (reads and writes findings/data)
"""
import csv
import os
import sys
from collections import defaultdict

PARTS = [("sweep_passkey100_kvpress_items.csv", None),
         ("sweep_passkey100_h2o_mean_items.csv", "h2o_mean"),
         ("sweep_passkey100_snapkv_w16_items.csv", "snapkv_w16")]
# The kvpress100b stage (CUR, PyramidKV, LagKV at lag 32, ChunkKV and AdaKV
# around SnapKV), merged when it has run.
PARTS_B = [("sweep_passkey100_kvpress2_items.csv", None),
           ("sweep_passkey100_lagkv_l32_items.csv", "lagkv_l32"),
           ("sweep_passkey100_chunk_snapkv_items.csv", "chunkkv_snapkv"),
           ("sweep_passkey100_adakv_snapkv_items.csv", "adakv_snapkv"),
           ("sweep_passkey100_critical_snapkv_items.csv", "criticalkv_snapkv")]
# The kvpress100c stage (LeverageScore, ExpectedAttention), merged when it has run.
# A rename that starts with "+" is a suffix for every policy of its file
# (the decoding schedule's runs: tova_dec2, ...).
PARTS_C = [("sweep_passkey100_kvpress3_items.csv", None), ("sweep_passkey100_decoding2_items.csv", "+_dec2")]
BUDGETS = ["10%", "30%", "50%", "70%", "90%"]


def mean(xs):
    return sum(xs) / len(xs)


def se(xs):
    """Standard error of the mean: sample s.d. / sqrt(n), as kvscope's <metric>_se."""
    if len(xs) < 2:
        return float("nan")
    m = mean(xs)
    return (sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 / len(xs) ** 0.5


def main():
    data = sys.argv[1]
    rows, fields = [], None
    parts = PARTS
    if all(os.path.exists(os.path.join(data, name)) for name, _ in PARTS_B):
        parts = PARTS + PARTS_B
        if all(os.path.exists(os.path.join(data, name)) for name, _ in PARTS_C):
            parts += PARTS_C
    for name, rename in parts:
        path = os.path.join(data, name)
        if not os.path.exists(path):
            sys.exit(f"kvpress_merge.py: {path} is missing (run findings/run.sh kvpress100)")
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            fields = reader.fieldnames
            for r in reader:
                if rename and rename.startswith("+"):
                    r["policy"] += rename[1:]
                elif rename:
                    r["policy"] = rename
                rows.append(r)
    out = os.path.join(data, "sweep_passkey100_kvpress_all_items.csv")
    with open(out + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(out + ".tmp", out)

    sums = defaultdict(list)
    for r in rows:
        sums[(r["policy"], r["budget"], "accuracy")].append(float(r["accuracy"]))
        sums[(r["policy"], r["budget"], "answer_nll")].append(float(r["answer_nll"]))
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    print(f"Pass-key accuracy / answer NLL (nats/token), 100 items, kvpress's policies beside H2O and TOVA "
          f"(n = {len(sums[(policies[0], BUDGETS[0], 'accuracy')])} items per cell, one run each: all are deterministic; "
          f"mean ± standard error over items)\n")
    print("| policy | " + " | ".join(BUDGETS) + " |")
    print("|---|" + "---:|" * len(BUDGETS))
    for p in policies:
        cells = []
        for b in BUDGETS:
            acc, nll = sums[(p, b, "accuracy")], sums[(p, b, "answer_nll")]
            cells.append(f"{100 * mean(acc):.0f} ± {100 * se(acc):.0f}% / {mean(nll):.2f} ± {se(nll):.2f}" if acc else "")
        print(f"| {p} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
