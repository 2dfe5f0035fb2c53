#!/usr/bin/env python3
"""Builds the two evaluation sets the findings use, deterministically.

  assets/eval/passkey_smollm.jsonl  pass-key retrieval, same format as
                                    assets/eval/passkey.jsonl (seeded)
  assets/eval/passkey_gemma.jsonl   long pass-key items (about 780 Gemma tokens,
                                    the key within the first tenth: past a
                                    512-token sliding window at the question)
  assets/eval/kjv.jsonl             King James Bible passages: a prompt and
                                    its true continuation, scored with
                                    teacher forcing (answer NLL)
  findings/data/sinks_text.txt      Ruth 1 as running text (attention sinks)
  assets/eval/passkey_smollm_100.jsonl, assets/eval/kjv_100.jsonl,
  assets/eval/passkey_gemma_100.jsonl
                                    the same kinds of items, 100 each, for
                                    sweeps whose intervals can tell policies
                                    apart (findings/run.sh passkey100 kjv100)

The KJV text comes from Debian's `bible-kjv-text` package (read through the
`bible` program of `bible-kjv`); the translation of 1611 is in the public
domain (see /usr/share/doc/bible-kjv-text/copyright).
"""
import json
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "assets" / "eval"

FILLER = ["The grass is green.", "The sky is blue.", "The sun is yellow.",
          "Here we go.", "There and back again."]


def passkey(n=6, filler_sentences=34, seed=19, first=3, last=None):
    """Pass-key items: the key stated at a random sentence in [first, last]
    (default: the first half of the text, so a recency window loses it
    first)."""
    rng = random.Random(seed)
    last = filler_sentences // 2 if last is None else last
    items = []
    for i in range(n):
        key = rng.randint(10000, 99999)
        at = rng.randint(first, last)
        body = [rng.choice(FILLER) for _ in range(filler_sentences)]
        body.insert(at, f"The pass key is {key}. Remember it. {key} is the pass key.")
        prompt = ("There is a pass key hidden in this text. Remember it. " + " ".join(body) +
                  "\nWhat is the pass key? The pass key is")
        items.append({"prompt": prompt, "answer": f" {key}."})
    return items


def passkey_long(n=6, seed=23):
    """Longer, with the key in the first tenth: at the question it lies
    beyond the last 512 tokens (Gemma 3's sliding window)."""
    return passkey(n=n, filler_sentences=150, seed=seed, first=0, last=15)


# narrative chapters, one item each (prompt words, answer words)
CHAPTERS = ["Ru1:1-40", "Ru2:1-40", "Jon1:1-40", "Ge37:1-40", "1Sa17:1-40"]


# 100 chapters of narrative for the larger set: Genesis, the first half of
# Exodus, the first chapters of Joshua, Judges and 1 Samuel, and Ruth.
CHAPTERS_100 = ([f"Ge{i}:1-40" for i in range(1, 51)] + [f"Ex{i}:1-40" for i in range(1, 21)] +
                [f"Jos{i}:1-40" for i in range(1, 11)] + [f"Jdg{i}:1-40" for i in range(1, 11)] +
                [f"Ru{i}:1-40" for i in range(1, 5)] + [f"1Sa{i}:1-40" for i in range(1, 7)])


def kjv(prompt_words=130, answer_words=16, chapters=CHAPTERS):
    items = []
    for ch in chapters:
        out = subprocess.run(["bible", ch], capture_output=True, text=True, check=True).stdout
        # the first non-empty line is the chapter's title ("Ruth 1"); verse
        # numbers stand alone as digit-only words
        lines = [line for line in out.splitlines() if line.strip()][1:]
        words = [w for w in " ".join(lines).split() if not w.isdigit()]
        if len(words) < prompt_words + answer_words:
            sys.exit(f"make_datasets: {ch} is too short")
        items.append({"prompt": " ".join(words[:prompt_words]),
                      "answer": " " + " ".join(words[prompt_words:prompt_words + answer_words])})
    return items


def sinks_text(words=230):
    """Running text for the attention-sink measurement (teacher forced)."""
    out = subprocess.run(["bible", "Ru1:1-40"], capture_output=True, text=True, check=True).stdout
    lines = [line for line in out.splitlines() if line.strip()][1:]
    w = [x for x in " ".join(lines).split() if not x.isdigit()]
    path = ROOT / "findings" / "data" / "sinks_text.txt"
    path.write_text(" ".join(w[:words]) + "\n")
    print(f"wrote {path.relative_to(ROOT)} ({words} words)")


def write(name, items):
    path = OUT / name
    path.write_text("".join(json.dumps(it) + "\n" for it in items))
    print(f"wrote {path.relative_to(ROOT)} ({len(items)} items)")


if __name__ == "__main__":
    write("passkey_smollm.jsonl", passkey())
    write("passkey_gemma.jsonl", passkey_long())
    write("kjv.jsonl", kjv())
    sinks_text()
    write("passkey_smollm_100.jsonl", passkey(n=100, seed=31))
    write("kjv_100.jsonl", kjv(chapters=CHAPTERS_100))
    write("passkey_gemma_100.jsonl", passkey_long(n=100, seed=41))
