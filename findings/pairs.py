#!/usr/bin/env python3
"""Paired comparisons that the findings' claims name (H2O against random,
Keyformer against H2O, ...), from a sweep's sweep_items.csv: for each
budget the mean difference A - B over the same items and its 95% paired
bootstrap interval. A claim "A beats B" on this page needs an interval
that excludes 0.

A policy with several seeds counts as its mean over them per item, as in
sweep.csv. The interval is the percentile method of kvscope's own
reports/bootstrap.h (10,000 resamples of the items, the 250th and 9,749th
of the sorted resampled means); the draws here come from numpy with a
fixed seed (Python's random), so the bounds can differ from kvscope's by
resampling noise, not in method. Standard library only.

usage: pairs.py ITEMS_CSV A:B[,A:B...] > table.md
"""
import csv
import random
import sys
from collections import defaultdict

RESAMPLES, LEVEL = 10000, 0.95


def per_item(rows, policy, budget, metric):
    by_item = defaultdict(list)
    for r in rows:
        if r["policy"] == policy and r["budget"] == budget and r[metric] not in ("", "nan"):
            by_item[int(r["item"])].append(float(r[metric]))
    return {i: sum(v) / len(v) for i, v in by_item.items()}


def interval(diffs, rng):
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(RESAMPLES))
    k = int(RESAMPLES * (1 - LEVEL) / 2)
    return means[k], means[RESAMPLES - 1 - k]


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    pairs = [p.split(":") for p in sys.argv[2].split(",")]
    budgets = list(dict.fromkeys(r["budget"] for r in rows))
    metrics = [m for m in ("accuracy", "answer_nll") if m in rows[0]]
    for metric in metrics:
        pct = metric == "accuracy"
        unit = " (points of accuracy)" if pct else " (nats/token)"
        print(f"{metric}: A − B{unit}, mean over the same items and 95% paired bootstrap interval\n")
        print("| A − B | " + " | ".join(budgets) + " |")
        print("|---|" + "---:|" * len(budgets))
        for a, b in pairs:
            cells = []
            for bud in budgets:
                xa, xb = per_item(rows, a, bud, metric), per_item(rows, b, bud, metric)
                items = sorted(set(xa) & set(xb))
                if not items:
                    cells.append("–")
                    continue
                diffs = [xa[i] - xb[i] for i in items]
                lo, hi = interval(diffs, random.Random(0x6B7673636F7065))
                k = 100 if pct else 1
                f = "{:+.0f}" if pct else "{:+.2f}"
                mark = " *" if lo > 0 or hi < 0 else ""
                cells.append(f"{f.format(k * sum(diffs) / len(diffs))} [{f.format(k * lo)}, {f.format(k * hi)}]{mark}")
            print(f"| {a} − {b} | " + " | ".join(cells) + " |")
        print(f"\n(n = {len(items)} items; * the interval excludes 0)\n")


if __name__ == "__main__":
    main()
