#!/usr/bin/env python3
"""Turns a `kvscope-cli sweep` CSV into a Markdown table for docs/accuracy.md:
one row per policy, one column per budget, each cell the chosen metric.

  python3 tools/sweep_to_markdown.py out/sweep.csv --metric accuracy [--percent]
"""
import argparse
import csv


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--metric", default="accuracy")
    ap.add_argument("--percent", action="store_true", help="print the metric x 100 with a % sign")
    ap.add_argument("--digits", type=int, default=2)
    args = ap.parse_args()
    with open(args.csv, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows or args.metric not in rows[0]:
        raise SystemExit(f"{args.csv}: no column \"{args.metric}\" (have: {', '.join(rows[0]) if rows else 'nothing'})")
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    budgets = list(dict.fromkeys(r["budget"] for r in rows))
    cell = {(r["policy"], r["budget"]): r[args.metric] for r in rows}

    def fmt(v):
        if v in (None, "", "nan"):
            return "–"
        x = float(v)
        return f"{100 * x:.0f}%" if args.percent else f"{x:.{args.digits}f}"

    print("| policy | " + " | ".join(budgets) + " |")
    print("|---|" + "---:|" * len(budgets))
    for p in policies:
        print(f"| {p} | " + " | ".join(fmt(cell.get((p, b))) for b in budgets) + " |")


if __name__ == "__main__":
    main()
