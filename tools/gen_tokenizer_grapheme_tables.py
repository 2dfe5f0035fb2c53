#!/usr/bin/env python3
"""Generates engine/tokenizer/onig_grapheme.inc: the grapheme classes behind
Oniguruma's \\X, as HF `tokenizers` runs it.

Oniguruma does not expose Grapheme_Cluster_Break as a property, and its
Unicode version (16) is not Debian PCRE2's (14), whose own \\X therefore
splits newer marks from their base. So the classes are read from HF's \\X
itself: every code point is put in small contexts (after a letter, before a
letter, after a Prepend, between Hangul jamo, doubled, inside an emoji ZWJ
sequence), all joined by NULs (a Control: a break on both sides) into one
string per context, and whether each context stays one cluster decides the
class (UAX #29's classes; the rules kvscope builds from them are in
engine/tokenizer/grapheme_pattern.cpp).

    pip install tokenizers==0.23.3
    python3 tools/gen_tokenizer_grapheme_tables.py

Deterministic: same tokenizers release, same file. Refuses other releases.
Takes a few minutes (one pass of HF over all code points per context).
"""

import json
import sys
from pathlib import Path

import tokenizers
from tokenizers import Tokenizer

PINNED_TOKENIZERS = "0.23.3"
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "engine" / "tokenizer" / "onig_grapheme.inc"
CPS = [cp for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]


def split_pre_tokenizer(pattern):
    """HF's Split pre-tokenizer on `pattern` (matches and the text between)."""
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
           "normalizer": None,
           "pre_tokenizer": {"type": "Split", "pattern": {"Regex": pattern},
                             "behavior": "Isolated", "invert": False},
           "post_processor": None, "decoder": None,
           "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}
    return Tokenizer.from_str(json.dumps(doc)).pre_tokenizer


def one_cluster(x, make):
    """For every code point c: is make(c) a single \\X cluster?"""
    texts = [make(chr(cp)) for cp in CPS]
    starts = {a for _, (a, _) in x.pre_tokenize_str("\x00".join(texts))}
    out, pos = [], 0
    for t in texts:
        out.append(not any(pos + k in starts for k in range(1, len(t))))
        pos += len(t) + 1
    return out


def removed_set(pattern):
    """Code points that a Split with behavior "removed" drops: those the
    pattern matches one by one."""
    from tokenizers import pre_tokenizers
    pt = pre_tokenizers.Split(tokenizers.Regex(pattern), behavior="removed")
    text = "".join(map(chr, CPS))
    kept = set()
    for _, (a, b) in pt.pre_tokenize_str(text):
        kept.update(CPS[a:b])
    return set(CPS) - kept


def ranges(cps):
    out = []
    for cp in sorted(cps):
        if out and cp == out[-1][1] + 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def classes():
    x = split_pre_tokenizer("\\X")
    ctx = {
        "post": lambda c: "a" + c,              # Extend, ZWJ, SpacingMark
        "pre": lambda c: c + "a",               # Prepend
        "after_prepend": lambda c: "\u0600" + c,  # anything but Control, CR, LF
        "after_l": lambda c: "\u1100" + c,      # L V LV LVT (or post)
        "before_v": lambda c: c + "\u1161",     # L V LV (or pre)
        "before_t": lambda c: c + "\u11A8",     # V T LV LVT (or pre)
        "twice": lambda c: c + c,               # RI, jamo runs (or post, pre)
        "in_zwj_seq": lambda c: "\U0001F468" + c + "\u200d\U0001F469",  # Extend (GB11)
    }
    r = {k: one_cluster(x, f) for k, f in ctx.items()}
    pict = removed_set("\\p{Extended_Pictographic}")
    cls = {k: set() for k in ["Control", "Prepend", "Extend", "ZWJ", "SpacingMark", "L", "V", "T",
                              "LV", "LVT", "RI", "Pict"]}
    for i, cp in enumerate(CPS):
        post, pre = r["post"][i], r["pre"][i]
        if not r["after_prepend"][i]:
            cls["Control"].add(cp)
        elif pre:
            cls["Prepend"].add(cp)
        elif post:
            if cp == 0x200D:
                cls["ZWJ"].add(cp)
            elif r["in_zwj_seq"][i]:
                cls["Extend"].add(cp)
            else:
                cls["SpacingMark"].add(cp)
        else:
            al, bv, bt = r["after_l"][i], r["before_v"][i], r["before_t"][i]
            if al and bv and not bt:
                cls["L"].add(cp)
            elif al and bv and bt:
                cls["LV" if 0xAC00 <= cp <= 0xD7A3 else "V"].add(cp)
            elif al and not bv and bt:
                cls["LVT"].add(cp)
            elif not al and not bv and bt:
                cls["T"].add(cp)
            elif r["twice"][i]:
                cls["RI"].add(cp)
        if cp in pict:
            cls["Pict"].add(cp)
    return cls


def main():
    if tokenizers.__version__ != PINNED_TOKENIZERS:
        sys.exit(f"tokenizers {tokenizers.__version__} installed; the tables are read from "
                 f"{PINNED_TOKENIZERS} (pip install tokenizers=={PINNED_TOKENIZERS})")
    cls = classes()
    lines = [
        "// Generated by tools/gen_tokenizer_grapheme_tables.py: the grapheme classes of",
        "// Oniguruma's \\X as HF's tokenizers runs it (read from its \\X, code point by code point).",
        f"// Do not edit; rerun the script (input pinned: tokenizers=={PINNED_TOKENIZERS}).",
        "",
        "// kGraphemeRanges holds every class's ranges one after another; kGraphemeClasses",
        "// names each class (UAX #29's Grapheme_Cluster_Break values, Pict for",
        "// Extended_Pictographic) and points into kGraphemeRanges.",
        "",
        "const CodeRange kGraphemeRanges[] = {",
    ]
    index, at = [], 0
    for name, cps in cls.items():
        rs = ranges(cps)
        index.append((name, at, len(rs)))
        at += len(rs)
        row = []
        for a, b in rs:
            row.append(f"{{0x{a:04X}, 0x{b:04X}}},")
            if len(row) == 4:
                lines.append("    " + " ".join(row))
                row = []
        if row:
            lines.append("    " + " ".join(row))
    lines.append("};")
    lines.append("")
    lines.append("const GraphemeClass kGraphemeClasses[] = {")
    for name, first, count in index:
        lines.append(f'    {{"{name}", {first}, {count}}},')
    lines.append("};")
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: " + ", ".join(f"{n} {len(c)}" for n, c in cls.items()))


if __name__ == "__main__":
    main()
