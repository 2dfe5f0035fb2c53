#!/usr/bin/env python3
"""Regenerates every golden file the C++ tests compare against, in one go.

  python3 tools/make_goldens.py     (PyPI: torch, transformers, tokenizers, safetensors)

- tests/data/tokenizers/: byte-level and SentencePiece-style tokenizers
  trained from scratch, with HF's token ids and decodings of hard strings
  (tools/goldens_tokenizers.py);
- tests/data/models/: tiny random checkpoints of every supported
  architecture variant with HF's logits, eager attention and greedy
  continuations (tools/goldens_models.py).
Both are deterministic: rerunning rewrites the same files.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import goldens_models  # noqa: E402
import goldens_tokenizers  # noqa: E402


def main():
    goldens_tokenizers.main(os.path.join(ROOT, "tests", "data", "tokenizers"))
    goldens_models.main(os.path.join(ROOT, "tests", "data", "models"))
    print("golden files written under tests/data/")


if __name__ == "__main__":
    main()
