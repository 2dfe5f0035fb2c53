#!/usr/bin/env python3
"""Synthetic English corpus with long-range dependencies for kvscope's default model.

Everything is generated from a seed with our own templates, so the corpus,
and the model trained on it, reproduce exactly. Four kinds of document:

- story:   people, objects, colours, places and numbers are introduced early,
           filler narrative follows, and questions at the end ask about them.
- passkey: a number stated once, then filler, then "What is the pass key?".
- kv:      a list of key = value records, then questions about some keys.
- plain:   narrative only, so free prompts read well.

The evaluation sets use a different seed and store, for each item, the
prompt (ending right before the answer) and the expected answer text.

Usage:
  python3 tools/corpus.py train --seed 1 --docs 60000 --out tools/.cache/train.jsonl
  python3 tools/corpus.py eval  --seed 1001 --per-kind 100 --out assets/eval
  python3 tools/corpus.py prompts --seed 2026 --out assets/prompts
"""
import argparse
import json
import os
import random

NAMES = ["Mia", "Leo", "Anna", "Tom", "Nora", "Sam", "Lily", "Ben", "Emma", "Jack",
         "Zoe", "Max", "Ava", "Finn", "Ruby", "Owen", "Ella", "Noah", "Ivy", "Luke",
         "Rosa", "Hugo", "Lena", "Adam", "Kate", "Omar", "Sara", "Paul", "Maya", "Eric"]
OBJECTS = ["key", "ball", "cup", "book", "hat", "coin", "ring", "pen", "kite", "shoe",
           "lamp", "box", "bell", "card", "sock", "spoon", "drum", "flag", "map", "clock",
           "scarf", "bag", "toy", "shell", "stone", "leaf", "rope", "brush", "plate", "fork"]
COLOURS = ["red", "blue", "green", "yellow", "black", "white", "pink", "brown",
           "orange", "purple", "grey", "silver"]
PLACES = ["kitchen", "garden", "attic", "garage", "bedroom", "library", "cellar",
          "hall", "barn", "office", "park", "school", "shop", "bathroom", "shed",
          "forest", "beach", "market", "church", "station"]
CONTAINERS = ["box", "bag", "basket", "drawer", "jar", "chest", "bucket", "cupboard",
              "pocket", "bowl", "crate", "tin"]
NUMBERS = ["two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
           "eleven", "twelve"]
FRUITS = ["apples", "pears", "plums", "eggs", "cakes", "books", "pencils", "cards",
          "stamps", "shells", "coins", "flowers"]
ANIMALS = ["dog", "cat", "bird", "horse", "rabbit", "fox", "duck", "goat", "mouse", "frog"]

FILLER = [
    "The sun was warm and the sky was clear.",
    "A small bird sang in the old tree.",
    "The wind moved the grass by the road.",
    "Later that day it began to rain a little.",
    "Everyone had lunch and talked about the weather.",
    "The town was quiet in the afternoon.",
    "A cat slept on the wall near the gate.",
    "The river ran slowly past the houses.",
    "Some children played a game in the street.",
    "The clock on the tower rang three times.",
    "There was bread and soup on the table.",
    "A dog barked somewhere far away.",
    "The shop at the corner opened late.",
    "Clouds came in from the sea.",
    "The bus was full of people going home.",
    "It was a long and happy day.",
    "The leaves on the trees were turning gold.",
    "A train passed behind the hill.",
    "The lights in the windows came on one by one.",
    "Somebody was singing a song in the next room.",
]

PASSKEY_FILLER = [
    "The grass is green.", "The sky is blue.", "The sun is yellow.",
    "Here we go.", "There and back again.",
]


def a_or_an(word):
    return "an" if word[0] in "aeiou" else "a"


class Story:
    """A story with facts that can be asked about at the end. Each answer
    restates words of its fact in the fact's own order ("Ivy has three
    pears."), so a model answers by finding the fact and copying on."""

    def __init__(self, rng):
        self.rng = rng
        self.sentences = []
        self.questions = []  # (question, answer sentence)

    def fact_location(self, person, colour, obj, c_colour, container):
        self.sentences.append(f"{person} put the {colour} {obj} in the {c_colour} {container}. "
                              f"The {colour} {obj} is in the {c_colour} {container}.")
        self.questions.append((f"Where is the {colour} {obj}?",
                               f"The {colour} {obj} is in the {c_colour} {container}."))

    def fact_place(self, person, place):
        self.sentences.append(f"{person} went to the {place}.")
        self.questions.append((f"Where did {person} go?", f"{person} went to the {place}."))

    def fact_colour(self, person, colour, obj):
        self.sentences.append(f"{person} has {a_or_an(colour)} {colour} {obj}.")
        self.questions.append((f"What colour is the {obj} of {person}?",
                               f"{person} has {a_or_an(colour)} {colour} {obj}."))

    def fact_count(self, person, number, things):
        self.sentences.append(f"{person} has {number} {things}.")
        self.questions.append((f"How many {things} does {person} have?",
                               f"{person} has {number} {things}."))

    def fact_owner(self, person, colour, animal):
        self.sentences.append(f"{person} has a pet {animal} called {colour.capitalize()}y.")
        self.questions.append((f"What is the name of the {animal} of {person}?",
                               f"{person} has a pet {animal} called {colour.capitalize()}y."))


FACT_KINDS = ["location", "place", "colour", "count", "owner"]


def make_story(rng, n_facts, n_filler, n_questions):
    """Facts first, filler after, questions last: the answer needs tokens far back.

    A story states at most one fact of each kind (so at most five), each about
    a different person: the answer is the one fact whose sentence pattern the
    question asks for, found wherever it is. (Several facts of one kind would
    also need the person matched several tokens back; this 3.5M-parameter
    model does not learn that within the training budget.) Half of the facts
    open the story; the others are dropped into the first half of the filler,
    so facts sit at varied distances from the question.
    """
    s = Story(rng)
    kinds = rng.sample(FACT_KINDS, k=min(len(FACT_KINDS), n_facts))
    people = rng.sample(NAMES, k=len(kinds))
    objs = rng.sample(OBJECTS, k=len(kinds))
    for kind, p, obj in zip(kinds, people, objs):
        if kind == "location":
            s.fact_location(p, rng.choice(COLOURS), obj, rng.choice(COLOURS), rng.choice(CONTAINERS))
        elif kind == "place":
            s.fact_place(p, rng.choice(PLACES))
        elif kind == "colour":
            s.fact_colour(p, rng.choice(COLOURS), obj)
        elif kind == "count":
            s.fact_count(p, rng.choice(NUMBERS), rng.choice(FRUITS))
        else:
            s.fact_owner(p, rng.choice(COLOURS), rng.choice(ANIMALS))
    n_open = max(1, (len(kinds) + 1) // 2)
    sentences = s.sentences[:n_open]
    filler = [rng.choice(FILLER) for _ in range(n_filler)]
    late = s.sentences[n_open:]
    for fact in late:
        filler.insert(rng.randint(0, max(0, len(filler) // 2)), fact)
    qs = rng.sample(s.questions, k=min(n_questions, len(s.questions)))
    return "Story: " + " ".join(sentences + filler), qs


def story_doc(rng):
    # Several questions per story: answer tokens are the scarce signal that
    # teaches the model to look back, so each document carries more of them.
    body, qs = make_story(rng, n_facts=rng.randint(2, 6), n_filler=rng.randint(0, 22),
                          n_questions=rng.randint(1, 5))
    lines = [body]
    for q, a in qs:
        lines.append(f"Question: {q}\nAnswer: {a}")
    return "\n".join(lines)


def passkey_number(rng):
    return str(rng.randint(10000, 99999))


def passkey_doc_parts(rng, n_before, n_after):
    key = passkey_number(rng)
    intro = "There is a pass key hidden in this text. Remember it."
    before = " ".join(rng.choice(PASSKEY_FILLER) for _ in range(n_before))
    after = " ".join(rng.choice(PASSKEY_FILLER) for _ in range(n_after))
    stated = f"The pass key is {key}. Remember it. {key} is the pass key."
    parts = [intro]
    if before:
        parts.append(before)
    parts.append(stated)
    if after:
        parts.append(after)
    prompt = " ".join(parts) + "\nWhat is the pass key? The pass key is"
    return prompt, f" {key}."


def passkey_doc(rng):
    prompt, answer = passkey_doc_parts(rng, rng.randint(0, 30), rng.randint(0, 60))
    return prompt + answer


KEY_CHARS = "abcdefghijkmnpqrstuvwxyz"


def kv_pairs(rng, n):
    # Keys in the order drawn (a list, not a set: set order follows Python's
    # per-process string hashing, which made the corpus differ between runs).
    keys = []
    while len(keys) < n:
        k = "".join(rng.choice(KEY_CHARS) for _ in range(3))
        if k not in keys:
            keys.append(k)
    return [(k, str(rng.randint(100, 999))) for k in keys]


def kv_doc_parts(rng, n_records, n_questions):
    pairs = kv_pairs(rng, n_records)
    lines = ["Records:"] + [f"{k} = {v}" for k, v in pairs]
    qs = rng.sample(pairs, k=min(n_questions, len(pairs)))
    return "\n".join(lines), qs


def kv_doc(rng):
    records, qs = kv_doc_parts(rng, rng.randint(3, 24), rng.randint(2, 6))
    out = [records]
    for k, v in qs:
        out.append(f"Question: What is the value of {k}?\nAnswer: {k} = {v}.")
    return "\n".join(out)


def plain_doc(rng):
    people = rng.sample(NAMES, k=3)
    sents = []
    for _ in range(rng.randint(4, 16)):
        kind = rng.randint(0, 5)
        p = rng.choice(people)
        if kind == 0:
            sents.append(f"{p} went to the {rng.choice(PLACES)}.")
        elif kind == 1:
            sents.append(f"{p} saw {a_or_an(c := rng.choice(COLOURS))} {c} {rng.choice(OBJECTS)}.")
        elif kind == 2:
            sents.append(f"{p} and {rng.choice(people)} walked to the {rng.choice(PLACES)} together.")
        elif kind == 3:
            sents.append(f"{p} had {rng.choice(NUMBERS)} {rng.choice(FRUITS)}.")
        else:
            sents.append(rng.choice(FILLER))
    return " ".join(sents)


PET_NAMES = [c.capitalize() + "y" for c in COLOURS]
# Every word a recall answer can need. A small model's copy circuit only
# copies the tokens it was trained to copy (trained on colours and names
# alone, it copied no place, number word or pet name), so the lists cover all.
COPY_WORDS = (COLOURS + OBJECTS + ANIMALS + NAMES + PLACES + CONTAINERS + NUMBERS + FRUITS
              + PET_NAMES)


def copy_doc(rng, max_items=40, max_gap=8):
    """A list and its repeat: the plainest way to make a model learn to look
    back and copy (induction), which every recall question above needs."""
    items = [rng.choice(COPY_WORDS) if rng.random() < 0.6 else str(rng.randint(0, 999))
             for _ in range(rng.randint(3, max_items))]
    # A gap of filler of random length between the list and its repeat, so the
    # copy has to be found by content, not at a fixed distance.
    gap = " ".join(rng.choice(FILLER) for _ in range(rng.randint(0, max_gap)))
    return ("Copy this list: " + " ".join(items) + "\n" + (gap + "\n" if gap else "")
            + "Again: " + " ".join(items) + ".")


DOC_KINDS = [("story", story_doc, 0.30), ("passkey", passkey_doc, 0.15),
             ("kv", kv_doc, 0.20), ("plain", plain_doc, 0.10), ("copy", copy_doc, 0.25)]

# Text that answers a question about something earlier in the document; the
# trainer weighs these tokens more (they are few, and they are the point).
ANSWER_PATTERNS = [r"(?<=\nAnswer:)[^\n]*", r"(?<=\nWhat is the pass key\? The pass key is)[^\n]*",
                   r"(?<=\nAgain:)[^\n]*"]


def answer_spans(doc):
    import re
    return [m.span() for pat in ANSWER_PATTERNS for m in re.finditer(pat, doc)]


def training_docs(seed, n_docs):
    rng = random.Random(seed)
    kinds = [k for k in DOC_KINDS]
    weights = [w for _, _, w in kinds]
    for _ in range(n_docs):
        _, fn, _ = rng.choices(kinds, weights=weights)[0]
        yield fn(rng)


# ---- held-out evaluation sets ---------------------------------------------

def eval_story(rng):
    body, qs = make_story(rng, n_facts=rng.randint(3, 5), n_filler=rng.randint(8, 22),
                          n_questions=1)
    q, a = qs[0]
    return {"prompt": f"{body}\nQuestion: {q}\nAnswer:", "answer": " " + a}


def eval_passkey(rng):
    prompt, answer = passkey_doc_parts(rng, rng.randint(0, 20), rng.randint(20, 60))
    return {"prompt": prompt, "answer": answer}


def eval_kv(rng):
    records, qs = kv_doc_parts(rng, rng.randint(8, 24), 1)
    k, v = qs[0]
    return {"prompt": f"{records}\nQuestion: What is the value of {k}?\nAnswer:",
            "answer": f" {k} = {v}."}


def eval_plain(rng):
    return {"prompt": plain_doc(rng), "answer": ""}


EVAL_KINDS = {"story": eval_story, "passkey": eval_passkey, "kv": eval_kv, "plain": eval_plain}


def write_eval_sets(seed, per_kind, out_dir):
    """<kind>.jsonl with per_kind items of each kind, kind i seeded seed*100+i."""
    os.makedirs(out_dir, exist_ok=True)
    for i, (kind, fn) in enumerate(EVAL_KINDS.items()):
        rng = random.Random(seed * 100 + i)
        with open(os.path.join(out_dir, f"{kind}.jsonl"), "w", encoding="utf-8") as f:
            for _ in range(per_kind):
                f.write(json.dumps(fn(rng), ensure_ascii=False) + "\n")


def write_prompts(seed, out_dir):
    """Example prompts for the CLI and the window: <kind>.txt (the prompt,
    ending where the model should answer) and <kind>.answer.txt."""
    os.makedirs(out_dir, exist_ok=True)
    for i, (kind, fn) in enumerate(EVAL_KINDS.items()):
        item = fn(random.Random(seed * 100 + i))
        with open(os.path.join(out_dir, f"{kind}.txt"), "w", encoding="utf-8") as f:
            f.write(item["prompt"])
        if item["answer"]:
            with open(os.path.join(out_dir, f"{kind}.answer.txt"), "w", encoding="utf-8") as f:
                f.write(item["answer"].strip() + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("train")
    t.add_argument("--seed", type=int, default=1)
    t.add_argument("--docs", type=int, default=60000)
    t.add_argument("--out", required=True)
    e = sub.add_parser("eval")
    e.add_argument("--seed", type=int, default=1001)
    e.add_argument("--per-kind", type=int, default=100)
    e.add_argument("--out", required=True)
    pr = sub.add_parser("prompts", help="one example prompt of each kind (assets/prompts)")
    pr.add_argument("--seed", type=int, default=2026)
    pr.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.cmd == "train":
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        # One JSON string per line: documents hold newlines, and the trainer
        # joins them with the end-of-text token itself.
        with open(args.out, "w", encoding="utf-8") as f:
            for doc in training_docs(args.seed, args.docs):
                f.write(json.dumps(doc, ensure_ascii=False) + "\n")
    elif args.cmd == "prompts":
        write_prompts(args.seed, args.out)
    else:
        write_eval_sets(args.seed, args.per_kind, args.out)


if __name__ == "__main__":
    main()
