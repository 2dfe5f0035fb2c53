#!/usr/bin/env python3
"""Joins rows of several sweeps' sweep_items.csv into one file, so that
pairs.py can compare settings of one policy (several A2SF alphas) on the
same items. Each SPEC is FILE:POLICY=LABEL: the rows of POLICY in FILE,
renamed LABEL; --budgets B1,B2 keeps only those budgets. Standard library
only.

usage: merge_items.py [--budgets B1,B2] OUT_CSV SPEC [SPEC ...]
"""
import csv
import os
import sys


def main():
    args = sys.argv[1:]
    budgets = None
    if args[:1] == ["--budgets"]:
        budgets, args = set(args[1].split(",")), args[2:]
    out, specs = args[0], args[1:]
    rows, fields = [], None
    for spec in specs:
        path, rest = spec.rsplit(":", 1)
        policy, label = rest.split("=", 1)
        if not os.path.exists(path):
            sys.exit(f"merge_items.py: {path} is missing")
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            fields = reader.fieldnames
            picked = [dict(r, policy=label) for r in reader
                      if r["policy"] == policy and (budgets is None or r["budget"] in budgets)]
        if not picked:
            sys.exit(f"merge_items.py: {path} has no rows of policy {policy}")
        rows += picked
    with open(out + ".tmp", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
