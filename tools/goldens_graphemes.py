#!/usr/bin/env python3
"""Golden splits of Oniguruma's \\X (extended grapheme clusters) as HF
`tokenizers` runs it, on strings made to be hard for it.

Writes tests/data/tokenizers/grapheme_splits.json: {"tokenizers": VERSION,
"pattern": "\\\\X", "cases": [{"text": T, "pieces": [...]}, ...]}, the pieces
HF's Split pre-tokenizer (behavior Isolated) makes of each text. The C++ test
tests/tokenizer/test_graphemes.cpp compares kvscope's regex with them.

The strings: emoji ZWJ sequences (families, professions, flags), skin-tone
modifiers, regional indicators in odd and even runs, Indic scripts with
virama, Hangul jamo and syllables, stacked combining marks, Prepend
characters, CR/LF and controls, marks added in Unicode 15 and 16, and
seeded random strings over one representative of every grapheme class
(so every pair of classes is met, in every order).

    pip install tokenizers==0.23.3
    python3 tools/goldens_graphemes.py [--compare build/release/tests/tokenizer/tokenizer_probe]

--compare also runs kvscope's probe on the same strings and prints how many
split the same way, with the first differences.
"""

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import tokenizers
from tokenizers import Tokenizer

PINNED_TOKENIZERS = "0.23.3"
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "tokenizers" / "grapheme_splits.json"
SPLIT_X = {"type": "Split", "pattern": {"Regex": "\\X"}, "behavior": "Isolated", "invert": False}

ZWJ = "\u200d"
VS16 = "\ufe0f"
TONES = [chr(c) for c in range(0x1F3FB, 0x1F400)]
PEOPLE = ["\U0001F468", "\U0001F469", "\U0001F467", "\U0001F466", "\U0001F9D1"]
PICTS = ["\u2764", "\U0001F525", "\U0001F30D", "\U0001F680", "\u2695", "\U0001F3F3", "\U0001F3F4",
         "\u00A9", "\u203C", "\U0001FAE8", "\U0001FAEF", "\U0001F9CB"]
RI = [chr(c) for c in range(0x1F1E6, 0x1F200)]
# One representative per grapheme class (and some that differ by Unicode version).
REPS = {
    "Other": ["a", "Z", "1", " ", "\u4e00", "\u05d0", "\u0e01", "\u0915", "\u0cb5", "\u0e81"],
    "CR": ["\r"], "LF": ["\n"], "Control": ["\x01", "\u200b", "\u2028", "\ufeff"],
    "Extend": ["\u0301", "\u0308", "\u094d", "\u0ccd", "\u200c", "\U0001F3FB", "\ufe0f", "\u0ece",
               "\U0001E08F", "\u0cf3", "\U00011F00", "\U00011F41", "\u1dfa", "\U000E0061"],
    "ZWJ": [ZWJ],
    "SpacingMark": ["\u093e", "\u0903", "\u0cbe", "\u0e33", "\U00011F03", "\U00011F3E"],
    "Prepend": ["\u0600", "\u06dd", "\U000110BD", "\U000111C2", "\u0d4e"],
    "L": ["\u1100", "\ua960"], "V": ["\u1161", "\ud7b0"], "T": ["\u11a8", "\ud7cb"],
    "LV": ["\uac00"], "LVT": ["\uac01"],
    "RI": ["\U0001F1FA", "\U0001F1F8"],
    "Pict": ["\U0001F468", "\u2764", "\U0001F3F3", "\u00A9"],
}


def hand_made():
    s = []
    fam = ZWJ.join(PEOPLE[:4])
    s += [fam, "x" + fam, fam + "x", fam + fam, fam + ZWJ, ZWJ + fam, " " + fam + " "]
    s += [PEOPLE[0] + ZWJ, PEOPLE[0] + ZWJ + ZWJ + PEOPLE[1], PEOPLE[0] + "\u0301" + ZWJ + PEOPLE[1]]
    s += [p + t for p in PEOPLE for t in TONES]
    s += [PEOPLE[0] + t + ZWJ + "\U0001F91D" + ZWJ + PEOPLE[1] + u for t in TONES for u in TONES[:2]]
    s += ["\U0001F3F3" + VS16 + ZWJ + "\U0001F308", "\U0001F3F4" + ZWJ + "\u2620" + VS16,
          "\U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F"]
    s += [p + VS16 + ZWJ + q for p in PICTS for q in PICTS[:4]]
    for n in range(1, 7):
        s.append("".join(RI[(7 * i) % 26] for i in range(n)))
        s.append("a" + "".join(RI[(5 * i + 3) % 26] for i in range(n)) + "b")
    s += ["\r\n", "\n\r", "\r\r\n\n", "a\r\nb", "\u0301\r\n", "\r\n\u0301", "\u0600\r\n", "\u0600\n"]
    s += ["क्षि", "क्‍ष", "क्‌ष", "नमस्ते", "हिन्दी", "स्त्री", "ক্ষ", "ಕನ್ನಡ", "ಕ್ಷ", "മലയാളം",
          "ന്‍", "தமிழ்", "తెలుగు", "ગુજરાતી", "ਪੰਜਾਬੀ", "ଓଡ଼ିଆ", "සිංහල", "ကြ", "ភាសា", "ພາສາ"]
    s += ["각", "\u1100\u1161\u11a8", "\u1100\u1100\u1161", "\uac00\u11a8", "\uac01\u1161",
          "\u1161\u1161\u11a8\u11a8", "\u11a8\u1100", "한국어", "\ua960\ud7b0\ud7cb"]
    s += ["e\u0301\u0302\u0303\u0304", "\u0301", "\u0301\u0301a", "a\u20dd", "Z\u0335\u0336\u0337"]
    s += ["\u0cf3\u0ece", "\u0ece\u0cf3", "a\u0cf3", "a\u0ece", "\U00011F00\U00011F41",
          "\U0001E08F", "a\U0001E08F", "\u1dfa\u0301", "\U00011F02\U00011F03"]
    s += ["\u0600a", "\u0600\u0600a", "\u0600 ", "\U000110BD\u0915", "\u0d4e\u0d15"]
    return s


def randomized(rng, n):
    names = sorted(REPS)
    out = []
    for _ in range(n):
        k = rng.randint(2, 6)
        out.append("".join(rng.choice(REPS[rng.choice(names)]) for _ in range(k)))
    # every ordered pair of classes, with one representative each
    for a in names:
        for b in names:
            out.append(REPS[a][0] + REPS[b][0])
            out.append(REPS[a][-1] + REPS[b][-1] + REPS[a][0])
    return out


def corpus():
    strings, seen = [], set()
    for s in hand_made() + randomized(random.Random(34), 2400):
        if s not in seen:
            seen.add(s)
            strings.append(s)
    return strings


def hf_pieces(texts):
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
           "normalizer": None, "pre_tokenizer": SPLIT_X, "post_processor": None, "decoder": None,
           "model": {"type": "WordLevel", "vocab": {"a": 0}, "unk_token": "a"}}
    pt = Tokenizer.from_str(json.dumps(doc)).pre_tokenizer
    return [[w for w, _ in pt.pre_tokenize_str(t)] for t in texts]


def kvscope_pieces(probe, texts):
    with tempfile.TemporaryDirectory() as d:
        jobs = Path(d) / "jobs.json"
        jobs.write_text(json.dumps({"jobs": [{"pre_tokenizer": SPLIT_X, "texts": texts}]}), encoding="utf-8")
        res = subprocess.run([str(probe), str(jobs)], check=True, capture_output=True)
    return json.loads(res.stdout)["results"][0]["out"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--compare", help="kvscope's tokenizer_probe: report agreement, write nothing")
    args = ap.parse_args()
    if tokenizers.__version__ != PINNED_TOKENIZERS:
        sys.exit(f"tokenizers {tokenizers.__version__} installed; the goldens are from {PINNED_TOKENIZERS}")
    texts = corpus()
    hf = hf_pieces(texts)
    if args.compare:
        kv = kvscope_pieces(args.compare, texts)
        bad = [(t, h, k) for t, h, k in zip(texts, hf, kv) if h != k]
        print(f"{len(texts) - len(bad)} of {len(texts)} strings split like HF tokenizers {tokenizers.__version__}")
        for t, h, k in bad[:15]:
            cp = lambda ps: [" ".join(f"{ord(c):04X}" for c in p) for p in ps]  # noqa: E731
            print(f"  HF {cp(h)}\n  kv {cp(k)}")
        return 1 if bad else 0
    OUT.write_text(json.dumps({"tokenizers": tokenizers.__version__, "pattern": "\\X",
                               "cases": [{"text": t, "pieces": p} for t, p in zip(texts, hf)]},
                              ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(texts)} strings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
