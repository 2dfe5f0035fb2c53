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


table("passkey", "accuracy", "Pass-key accuracy", percent=True)
table("passkey", "answer_nll", "Pass-key answer NLL (nats/token)")
table("kjv", "answer_nll", "KJV continuation NLL (nats/token, 16 teacher-forced words = 18–21 tokens)")
(D / "tables.md").write_text("\n".join(out))
print("\n".join(out))
