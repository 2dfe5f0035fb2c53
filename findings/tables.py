#!/usr/bin/env python3
"""Markdown tables (mean ± standard error over items) of the main sweeps,
written to data/tables.md; findings/README.md quotes them.

usage: tables.py FINDINGS_DIR
"""
import csv
import sys
from pathlib import Path

D = Path(sys.argv[1]) / "data"
out = []


def table(name, metric, title, percent=False):
    rows = list(csv.DictReader(open(D / f"sweep_{name}.csv")))
    pols = list(dict.fromkeys(r["policy"] for r in rows))
    buds = list(dict.fromkeys(r["budget"] for r in rows))
    cell = {(r["policy"], r["budget"]): r for r in rows}

    def fmt(r):
        m, s = float(r[metric]), float(r[metric + "_se"])
        return f"{100 * m:.0f} ± {100 * s:.0f}%" if percent else f"{m:.2f} ± {s:.2f}"
    out.append(f"{title} (n = {rows[0]['n']} items; ± standard error over items)\n")
    out.append("| policy | " + " | ".join(buds) + " |")
    out.append("|---|" + "---:|" * len(buds))
    for p in pols:
        out.append(f"| {p} | " + " | ".join(fmt(cell[(p, b)]) if (p, b) in cell else "–" for b in buds) + " |")
    out.append("")


def interval_table(name, metric, title, percent=False):
    """Mean ± standard error, and the 95% paired bootstrap interval of the
    difference from the best other policy at that budget (sweep.csv's
    <metric>_vs, _diff_lo, _diff_hi): a claim "A beats B" needs an
    interval that excludes 0."""
    path = D / f"sweep_{name}.csv"
    if not path.exists():
        return
    rows = list(csv.DictReader(open(path)))
    pols = list(dict.fromkeys(r["policy"] for r in rows))
    buds = list(dict.fromkeys(r["budget"] for r in rows))
    cell = {(r["policy"], r["budget"]): r for r in rows}
    k = 100 if percent else 1
    unit = "%" if percent else ""

    def fmt(r):
        m, s = k * float(r[metric]), k * float(r[metric + "_se"])
        text = f"{m:.0f} ± {s:.0f}{unit}" if percent else f"{m:.2f} ± {s:.2f}"
        lo, hi = k * float(r[metric + "_diff_lo"]), k * float(r[metric + "_diff_hi"])
        if r[metric + "_vs"] and lo == lo:  # not nan
            f = "{:+.0f}" if percent else "{:+.2f}"
            text += f" (vs {r[metric + '_vs']}: [{f.format(lo)}, {f.format(hi)}])"
        return text
    seeds = max(int(r["seeds"]) for r in rows)
    out.append(f"{title} (n = {rows[0]['n']} items, {seeds} seeds for random and keyformer; mean ± standard error "
               f"over items; in brackets the 95% paired bootstrap interval of the difference from the best other "
               f"policy at that budget)\n")
    out.append("| policy | " + " | ".join(buds) + " |")
    out.append("|---|" + "---:|" * len(buds))
    for p in pols:
        out.append(f"| {p} | " + " | ".join(fmt(cell[(p, b)]) if (p, b) in cell else "–" for b in buds) + " |")
    out.append("")


interval_table("passkey100", "accuracy", "Pass-key accuracy, 100 items", percent=True)
interval_table("passkey100", "answer_nll", "Pass-key answer NLL (nats/token), 100 items")
interval_table("kjv100", "answer_nll", "KJV continuation NLL (nats/token), 100 passages")
table("passkey", "accuracy", "Pass-key accuracy", percent=True)
table("passkey", "answer_nll", "Pass-key answer NLL (nats/token)")
table("kjv", "answer_nll", "KJV continuation NLL (nats/token, 16 teacher-forced words = 18–21 tokens)")
(D / "tables.md").write_text("\n".join(out))
print("\n".join(out))
