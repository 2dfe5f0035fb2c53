#!/usr/bin/env python3
"""Where kvscope's tokenizer and HF `tokenizers` disagree on Unicode, per component.

Runs every assigned code point (Unicode 18, from PyPI `unicodedata2`) through
small tokenizer stages built in HF `tokenizers` (normalizers, pre-tokenizers,
Split regexes with Unicode properties, POSIX classes and scripts, added tokens)
and through the same stages in kvscope (tests/tokenizer/tokenizer_probe, built
with `cmake --build build/release --target tokenizer_probe`). Marks are also
tried in sequences (base + mark + mark, both orders), which shows canonical
combining classes and composition. For each component it prints the number of
code points that differ, as ranges, with the Unicode version each range was
assigned in: a component that differs exactly on the characters newer than
version V uses Unicode V tables.

    python3 tools/probe_tokenizer_unicode.py [--only NAME] [--list] [--show N]
        [--probe build/release/tests/tokenizer/tokenizer_probe] [--ucd DIR]

--ucd is a directory with DerivedAge.txt (Debian's unicode-data package puts
one in /usr/share/unicode); without it, ages older than 14.0 are not shown.
Exits 1 when any component differs.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

import tokenizers
import unicodedata2
from tokenizers import Tokenizer

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PROBE = ROOT / "build" / "release" / "tests" / "tokenizer" / "tokenizer_probe"


# ---------------------------------------------------------------------------
# Code points and their ages.
def assigned_code_points():
    """Every code point assigned in unicodedata2's Unicode, without surrogates
    and the supplementary private use planes (they behave like U+E000)."""
    out = []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF or cp >= 0xF0000:
            continue
        if unicodedata2.category(chr(cp)) != "Cn":
            out.append(cp)
    return out


def read_ages(ucd_dir):
    """code point -> "X.Y" from DerivedAge.txt; later versions from the
    difference between Python's unicodedata (14.0) and unicodedata2."""
    ages = {}
    path = Path(ucd_dir) / "DerivedAge.txt" if ucd_dir else None
    if path and path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.split("#")[0].strip()
            if not line:
                continue
            cps, age = (x.strip() for x in line.split(";"))
            lo, _, hi = cps.partition("..")
            for cp in range(int(lo, 16), int(hi or lo, 16) + 1):
                ages[cp] = age
    return ages


def age_of(cp, ages):
    if cp in ages:
        return ages[cp]
    if unicodedata.category(chr(cp)) != "Cn":
        return "<=" + unicodedata.unidata_version.rsplit(".", 1)[0]
    return ">" + unicodedata.unidata_version.rsplit(".", 1)[0]


# ---------------------------------------------------------------------------
# The components. Each builds one tokenizer.json fragment, given to HF and to
# kvscope alike, and the texts to run per code point.
def around(c):
    """A code point among letters, digits, punctuation and spaces, so that a
    class boundary on either side of it shows in the pieces."""
    return f"{c}a{c} {c}1{c}.{c}"


def alone(c):
    return c


def mark_sequences(c):
    """A mark between other marks of known classes: shows whether HF gives it
    a combining class (reordering) and whether it blocks composition."""
    return [f"a{c}\u0301", f"a\u0301{c}", f"a{c}\u0334", f"a\u0334{c}",
            f"e{c}\u0323", f"\u1100{c}\u1161", f"{c}\u0301"]


def split(pattern, behavior="Isolated"):
    return {"type": "Split", "pattern": {"Regex": pattern}, "behavior": behavior, "invert": False}


def normalizer(kind):
    return {"type": kind}


COMPONENTS = {}


def component(name, kind, config, texts=around, code_points="all"):
    COMPONENTS[name] = dict(kind=kind, config=config, texts=texts, code_points=code_points)


for form in ["NFC", "NFD", "NFKC", "NFKD"]:
    component(f"normalizer/{form}", "normalizer", normalizer(form), alone)
    component(f"normalizer/{form}+marks", "normalizer", normalizer(form), mark_sequences, "marks")
component("normalizer/Lowercase", "normalizer", normalizer("Lowercase"), alone)
component("normalizer/StripAccents", "normalizer", normalizer("StripAccents"), alone)

component("pre/Whitespace", "pre_tokenizer", {"type": "Whitespace"})
component("pre/WhitespaceSplit", "pre_tokenizer", {"type": "WhitespaceSplit"})
component("pre/Digits", "pre_tokenizer", {"type": "Digits", "individual_digits": False})
component("pre/Digits(individual)", "pre_tokenizer", {"type": "Digits", "individual_digits": True})
component("pre/Punctuation", "pre_tokenizer", {"type": "Punctuation", "behavior": "Isolated"})
component("pre/BertPreTokenizer", "pre_tokenizer", {"type": "BertPreTokenizer"})
component("pre/ByteLevel(GPT-2 regex)", "pre_tokenizer",
          {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True})

# Oniguruma properties and escapes, as tokenizer.json Split patterns use them.
for prop in ["L", "N", "Nd", "Lu", "Ll", "M", "P", "S", "So", "Han", "Katakana", "Hiragana",
             "Arabic", "Hangul", "Latin", "Greek", "Cyrillic", "Devanagari", "Thai", "Common",
             "Inherited"]:
    component(f"regex/\\p{{{prop}}}", "pre_tokenizer", split(f"\\p{{{prop}}}+"))
for esc in ["\\w", "\\s", "\\d", "\\W", "\\S", "\\D"]:
    component(f"regex/{esc}", "pre_tokenizer", split(f"{esc}+"))
component("regex/[^\\s\\p{L}\\p{N}]", "pre_tokenizer", split("[^\\s\\p{L}\\p{N}]+"))
for posix in ["alpha", "alnum", "digit", "space", "word", "punct", "upper", "lower", "graph",
              "print", "cntrl", "xdigit", "blank"]:
    component(f"regex/[[:{posix}:]]", "pre_tokenizer", split(f"[[:{posix}:]]+"))
component("regex/[[:^alpha:]]", "pre_tokenizer", split("[[:^alpha:]]+"))

# Added tokens whose normalized form is empty (StripAccents removes them).
# Ids through a byte-level BPE with no merges: one id per byte.
def _added_empty_tokenizer():
    from tokenizers import pre_tokenizers
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {ch: i for i, ch in enumerate(alphabet)}
    return {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [
            {"id": 256, "content": "\u0301", "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": True, "special": False},
            {"id": 257, "content": "x\u0300", "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": True, "special": False},
        ],
        "normalizer": {"type": "Sequence", "normalizers": [{"type": "NFD"},
                                                           {"type": "StripAccents"}]},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                          "use_regex": False},
        "post_processor": None, "decoder": None,
        "model": {"type": "BPE", "dropout": None, "unk_token": None,
                  "continuing_subword_prefix": None, "end_of_word_suffix": None,
                  "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": []},
    }


component("added/empty-normalized", "tokenizer", _added_empty_tokenizer(),
          lambda c: [f"{c}\u0301{c}", f"x\u0300{c}", f"a{c}x\u0301"], "marks")


# ---------------------------------------------------------------------------
def _encode_or_panic(tok, text):
    # HF panics on some inputs (pyo3 turns the panic into a BaseException);
    # kvscope then has no answer to match, which the report shows as a mismatch.
    try:
        return tok.encode(text, add_special_tokens=False).ids
    except BaseException as e:  # noqa: B036 - PanicException is not an Exception
        return f"HF panics: {e}"


def hf_outputs(comp, texts):
    kind, config = comp["kind"], comp["config"]
    if kind == "tokenizer":
        tok = Tokenizer.from_str(json.dumps(config))
        return [_encode_or_panic(tok, t) for t in texts]
    doc = json.loads(json.dumps(_added_empty_tokenizer()))
    doc["added_tokens"] = []
    doc["normalizer"] = None
    doc["pre_tokenizer"] = None
    doc[kind] = config
    try:
        tok = Tokenizer.from_str(json.dumps(doc))
    except Exception as e:  # HF refuses the pattern: report, do not compare
        return {"error": str(e)}
    if kind == "normalizer":
        return [tok.normalizer.normalize_str(t) for t in texts]
    return [[w for w, _ in tok.pre_tokenizer.pre_tokenize_str(t)] for t in texts]


def kvscope_outputs(probe, comp, texts):
    with tempfile.TemporaryDirectory() as d:
        jobs = Path(d) / "jobs.json"
        jobs.write_text(json.dumps({"jobs": [{comp["kind"]: comp["config"], "texts": texts}]}),
                        encoding="utf-8")
        res = subprocess.run([str(probe), str(jobs)], check=True, capture_output=True)
    r = json.loads(res.stdout)["results"][0]
    return r if "error" in r else r["out"]


def ranges(cps):
    out = []
    for cp in sorted(cps):
        if out and cp == out[-1][1] + 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--probe", default=str(DEFAULT_PROBE))
    ap.add_argument("--only", help="components whose name contains this")
    ap.add_argument("--list", action="store_true", help="list the components and exit")
    ap.add_argument("--show", type=int, default=12, help="ranges shown per component")
    ap.add_argument("--ucd", default="/usr/share/unicode", help="directory with DerivedAge.txt")
    ap.add_argument("--json", help="also write {component: [[first, last, age], ...]} here")
    args = ap.parse_args()
    if args.list:
        print("\n".join(COMPONENTS))
        return 0

    print(f"HF tokenizers {tokenizers.__version__}, code points of Unicode "
          f"{unicodedata2.unidata_version}")
    ages = read_ages(args.ucd)
    everything = assigned_code_points()
    marks = [cp for cp in everything
             if unicodedata2.category(chr(cp)).startswith("M") or unicodedata2.combining(chr(cp))]
    report = {}
    total = 0
    for name, comp in COMPONENTS.items():
        if args.only and args.only not in name:
            continue
        cps = marks if comp["code_points"] == "marks" else everything
        per_cp = [comp["texts"](chr(cp)) for cp in cps]
        groups = [t if isinstance(t, list) else [t] for t in per_cp]
        texts = [t for g in groups for t in g]
        hf = hf_outputs(comp, texts)
        kv = kvscope_outputs(args.probe, comp, texts)
        if isinstance(hf, dict) or isinstance(kv, dict):
            hf_err, kv_err = (x.get("error") if isinstance(x, dict) else None for x in (hf, kv))
            same = (hf_err is None) == (kv_err is None)
            print(f"{name}: HF {'refuses: ' + hf_err if hf_err else 'accepts'}; kvscope "
                  f"{'refuses: ' + kv_err if kv_err else 'accepts'}{'' if same else '  <-- DIFFERS'}")
            total += 0 if same else 1
            continue
        bad, panics = [], []
        at = 0
        for cp, g in zip(cps, groups):
            theirs = hf[at:at + len(g)]
            if any(isinstance(x, str) and x.startswith("HF panics") for x in theirs):
                panics.append(cp)  # nothing to match
            elif theirs != kv[at:at + len(g)]:
                bad.append(cp)
            at += len(g)
        total += len(bad)
        if panics:
            print(f"{name}: HF panics on the texts of {len(panics)} code points (not compared), "
                  f"e.g. U+{panics[0]:04X}")
        rs = ranges(bad)
        report[name] = [[a, b, age_of(a, ages)] for a, b in rs]
        print(f"{name}: {len(bad)} code points differ" + (":" if bad else ""))
        for a, b in rs[:args.show]:
            span = f"U+{a:04X}" if a == b else f"U+{a:04X}..U+{b:04X}"
            print(f"    {span:<22} Unicode {age_of(a, ages)}")
        if len(rs) > args.show:
            print(f"    ... {len(rs) - args.show} more ranges")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
