#!/usr/bin/env python3
"""Golden files for the tokenizer module (engine/tokenizer), made with PyPI `tokenizers`.

Trains six small BPE tokenizers from scratch on the corpus below (no downloads),
shaped like the real families kvscope must read (GPT-2, GPT-NeoX, Llama-3,
Qwen2, Llama-2 SentencePiece, Mistral Metaspace), and records what Hugging
Face's implementation does with a list of hard strings. The C++ tests compare
against these files without Python.

    python3 tools/goldens_tokenizers.py            # writes tests/data/tokenizers
    python3 -c "import goldens_tokenizers as g; g.main('/tmp/out')"

Output is deterministic: fixed corpus, no randomness, sorted JSON; rerunning
gives identical files.

Layout of the output directory:
    hard_strings.json             the strings, in order
    <name>/tokenizer.json         the tokenizer, as HF saves it (some edits below)
    <name>/golden.json            per string: ids/tokens with and without special
                                  tokens, decode with and without skipping specials,
                                  and decode(encode(s, add_special_tokens=False))
"""

import json
import os
import sys
from pathlib import Path

import tokenizers
import unicodedata2
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, processors, trainers)

# The split patterns of the real tokenizers (facts from their tokenizer.json /
# transformers' converters).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
LLAMA3_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
                  r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")
QWEN2_PATTERN = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"""
                 r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")

# ---------------------------------------------------------------------------
# Training corpus: written for this project. Varied on purpose: prose, code,
# numbers, accents, several scripts, emoji, odd whitespace.
CORPUS = [
    "The quick brown fox jumps over the lazy dog. The dog was not amused, and the fox did not care.",
    "A key-value cache stores the keys and values of every past token, so attention never recomputes them.",
    "When the cache grows too large, an eviction policy decides which tokens to keep and which to drop.",
    "Heavy hitters are the tokens that keep receiving attention; recent tokens are kept because they matter now.",
    "Researchers compare policies by the perplexity they lose for each megabyte of memory they save.",
    "I don't think we'll need it, but they're going to try anyway. You've seen it; I'd say it's fine.",
    "She said: \"It's 3.14159 or so, not 22/7.\" He replied, 'That's close enough for 1,000,000 uses.'",
    "On 2024-03-15 at 09:30, the run finished after 12345678 steps and 987 restarts (0.05% failed).",
    "Prices: $19.99, EUR 5,50, 100% free, #1 choice, user@example.com, https://example.org/path?q=1&r=2",
    "def attention(q, k, v, mask=None):\n    scores = q @ k.T / math.sqrt(q.shape[-1])\n    if mask is not None:\n        scores = scores.masked_fill(mask, -1e9)\n    return softmax(scores) @ v\n",
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i] * b[i];\n}\nreturn sum;\n",
    "class Cache:\n    def __init__(self, budget):\n        self.budget = budget\n        self.slots = []\n\n    def evict(self):\n        return self.slots.pop(0)\n",
    "SELECT name, COUNT(*) FROM tokens WHERE score > 0.5 GROUP BY name ORDER BY 2 DESC;",
    "{\"model\": \"tiny\", \"layers\": 4, \"heads\": [8, 8, 4, 2], \"rope\": true, \"eps\": 1e-05}",
    "Café, naïve, résumé, façade, jalapeño, Ångström, Zürich, São Paulo, Kraków, Dvořák.",
    "Die Straße ist groß, und die Bäume sind grün. Übermorgen fahren wir nach München.",
    "Le cœur a ses raisons que la raison ne connaît point. Où est la bibliothèque ?",
    "El niño comió paella en la playa mientras cantaba una canción española.",
    "Ελληνικά: η γρήγορη καφέ αλεπού πηδά πάνω από τον τεμπέλη σκύλο.",
    "Русский: съешь же ещё этих мягких французских булок, да выпей чаю.",
    "العربية: الذكاء الاصطناعي يغير العالم بسرعة كبيرة.",
    "हिन्दी: कृत्रिम बुद्धिमत्ता दुनिया को बदल रही है।",
    "中文：人工智能正在改变世界，缓存淘汰策略很重要。",
    "日本語：ひらがなとカタカナと漢字を使います。トークナイザーのテストです。",
    "한국어: 인공지능이 세상을 바꾸고 있습니다.",
    "Türkçe: İstanbul'da ılık bir akşam. ıİiI",
    "Emoji: 😀 😃 😄 👍🏽 👨‍👩‍👧‍👦 🇫🇷 🇯🇵 ❤️ 🔥🔥🔥 🚀",
    "Tabs\tand\tspaces   mixed    together\n\nwith blank lines\r\nand CRLF endings.",
    "    indented line\n        more indented\n            deepest\n",
    "The THE the tHe ThE; HELLO hello Hello; I'LL you'RE WE'VE they'D.",
    "aaaa bbbb aaaa bbbb abab baba aabb bbaa 1111 2222 0000 ---- ==== ____ ....",
    "Numbers: 0 1 2 3 4 5 6 7 8 9 10 11 12 100 101 1000 2048 4096 65536 3.0 -2.5 1e-9 0x1F",
    "Attention is all you need; memory is what you keep. Tokens come and tokens go.",
    "The model generated one token at a time, and each new token looked back at all the old ones.",
    "Policies like H2O, TOVA, Keyformer and StreamingLLM keep sinks plus a recent window.",
]
CORPUS = CORPUS * 3  # a little repetition gives the trainer stable pair counts


# ---------------------------------------------------------------------------
# Hard strings: what the C++ tokenizer must get exactly like HF.
def hard_strings():
    para = (
        "Large language models keep a cache of keys and values for every token they have seen. "
        "The cache grows linearly with the length of the conversation, and for long contexts it "
        "dominates the memory of the accelerator. Eviction policies try to keep only the tokens "
        "that matter: the first few (attention sinks), the most recent ones, and the heavy hitters "
        "that keep receiving attention. Whether that works depends on the task, the model and the "
        "budget; a playground that shows each decision as it happens makes the trade-offs visible. "
    )
    paragraph_5k = (para * 12)[:5000]
    s = [
        "",
        " ",
        "  ",
        "     ",
        "\t",
        " \t \t  ",
        "\n",
        "\n\n\n",
        "\r\n",
        "\r\n\r\n",
        "hello",
        "hello world",
        "hello world   ",
        "   hello world",
        " hello",
        "hello\n",
        "Hello, World!",
        "don't",
        "I'LL",
        "they'Re",
        "you'VE we'd she's it'S I'm",
        "'s 's 'S",
        "a'ſ b'K",
        "12345678",
        "3.14159",
        "1,000,000",
        "2024-03-15T09:30:00Z",
        "x = 42 + 7 * (3 - 1)",
        "café",
        "cafe\u0301",
        "Cafe\u0301 vs Café",
        "e\u0301\u0301\u0301",
        "Straße groß",
        "İstanbul ıI",
        "Ελληνικά ΣΑΣ",
        "Привет, мир!",
        "مرحبا بالعالم",
        "नमस्ते दुनिया",
        "中文测试",
        "人工智能正在改变世界。",
        "ひらがな カタカナ",
        "한국어 테스트",
        "😀",
        "👍🏽",
        "👨‍👩‍👧‍👦",
        "🇫🇷🇯🇵",
        "❤️🔥",
        "a\u00a0b",
        "a\u2009b",
        "a\u3000b",
        "a\u200bb\u200cc\u200dd",
        "a\u180eb",
        "a\u0085b\u2028c",
        "\u0000\u0001\u001f\u007f",
        "bell\u0007tab\tesc\u001b",
        "hello<|endoftext|>world",
        "<|endoftext|>hello",
        "hello<|endoftext|>",
        "<|endoftext|><|endoftext|>",
        "a<|endoftext|>b<|endoftext|>c",
        "<|endoftext",
        "<|endoftext|",
        "<s >",
        "<s>hello</s>",
        " <s> hello </s> ",
        "<s><s>",
        "<unk>",
        "<0x41>",
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
        "<|begin_of_text|>Hello<|eot_id|>",
        "text <mask> more",
        "text<mask>more",
        "   <mask>   x",
        "[NAME] said hi to [NAME]",
        "x[NAME]y",
        "foo@@ bar @@  baz",
        "cafe\u0301 and café",
        "eight    spaces        here",
        "a" * 500,
        "ab" * 200,
        " " * 300,
        "\n" * 50,
        "def f(x):\n    return x * 2\n\n\nclass A:\n\tpass\n",
        "if (a && b) { return c; } // comment\n",
        "https://example.com/path/to/page?query=1&other=two#anchor",
        "user.name+tag@example.co.uk",
        "𓀀𓀁 ꙮ ஆ ᚠᛇᚻ",
        "\U0010ffff\U000e0001",
        "\ua7cb\u1c89 \U00031350\U00031351",
        "\u2460\u00b2\u2155",
        "MiXeD CaSe WoRdS",
        "trailing punctuation!!!???...",
        "quotes \"double\" 'single' `back`",
        "é" * 100,
        "😀" * 60,
        paragraph_5k,
        # Unicode version edges: a mark newer than HF's Unicode 9.0
        # normalization tables between older ones, script and class edges.
        "e\u1df6\u0301 a\u0301\u1df6 \u1e0b\u1df6\u0323",
        "\u4e2d\u3001\u6587\U0002EBF0 \u30ab\u30fc\u30fb \u0639\u060c\u0897",
        "a\u200db c\u200cd x\u00b2y \u00bd\u00b3\u00b9\u00bc\u00be",
        "a\U00011DE0\U00011DE1b\U00016FF4 \u1c89\ua7cb \U0001E5D0\U0001E5F1",
    ]
    return s + newest_emoji() + unicode_block_samples()


def newest_emoji():
    """Emoji of Unicode 15 to 17 (some may be unassigned in a given engine,
    which is the point), ZWJ sequences, skin tones, flags, tags, keycaps."""
    return [
        "\U0001FAE8\U0001FAE9\U0001FAEA \U0001FAC6\U0001FABE\U0001FADC \U0001FA89\U0001FA8F\U0001FADF",
        "\U0001F3C3\u200d\u27a1\ufe0f \U0001F426\u200d\U0001F525 \U0001F34B\u200d\U0001F7E9 "
        "\u26d3\ufe0f\u200d\U0001F4A5 \U0001F9D1\u200d\U0001F9D1\u200d\U0001F9D2",
        "\U0001FAF7\U0001F3FD\U0001FAF8\U0001F3FF \U0001F44B\U0001F3FB\u200d\u2642\ufe0f "
        "\U0001F469\U0001F3FE\u200d\u2764\ufe0f\u200d\U0001F48B\u200d\U0001F468\U0001F3FC",
        "\U0001F1FA\U0001F1F3\U0001F1E8\U0001F1F6 \U0001F3F4\U000E0067\U000E0062\U000E0073"
        "\U000E0063\U000E0074\U000E007F 1\ufe0f\u20e3#\ufe0f\u20e3",
        "\U0001FAC8\U0001FA8E\U0001FAEF\U0001FADD \U0001F6DC\U0001FA87\U0001FA88",
    ]


def unicode_block_samples():
    """One string per 1024 code points that hold assigned characters
    (unicodedata2's Unicode 18, pinned for deterministic output): six of them,
    evenly spaced, in words with a space, a combining mark, digits and a full
    stop. Covers every block, the newest scripts included."""
    assert unicodedata2.unidata_version == "18.0.0", unicodedata2.unidata_version
    out = []
    for base in range(0, 0x110000, 0x400):
        cps = [cp for cp in range(base, base + 0x400)
               if not 0xD800 <= cp <= 0xDFFF and unicodedata2.category(chr(cp))[0] not in "CZ"]
        if not cps:
            continue
        pick = [chr(cps[i * (len(cps) - 1) // 5]) for i in range(6)]
        out.append(f"{pick[0]}{pick[1]}{pick[2]} {pick[3]}\u0301{pick[4]} 12{pick[5]}.")
    return out


# ---------------------------------------------------------------------------
def _train(tok, trainer):
    tok.train_from_iterator(CORPUS, trainer=trainer)
    return tok


def _byte_level_trainer(vocab_size, special):
    return trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                               special_tokens=special,
                               initial_alphabet=pre_tokenizers.ByteLevel.alphabet())


def _legacy_merges(d):
    """Rewrites model.merges from [a, b] pairs to the older "a b" strings."""
    merges = d["model"]["merges"]
    assert all(" " not in a and " " not in b for a, b in merges)
    d["model"]["merges"] = [f"{a} {b}" for a, b in merges]


def make_gpt2():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    _train(tok, _byte_level_trainer(600, ["<|endoftext|>"]))
    d = json.loads(tok.to_str())
    _legacy_merges(d)
    return d


def make_neox():
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    _train(tok, _byte_level_trainer(600, ["<|endoftext|>", "<|padding|>"]))
    tok.add_special_tokens([AddedToken("<mask>", special=True, lstrip=True, normalized=False)])
    tok.add_tokens([
        AddedToken("[NAME]", single_word=True, normalized=False),
        AddedToken("@@", rstrip=True, normalized=False),
        AddedToken("cafe\u0301", normalized=True),   # matched after NFC, i.e. as "café"
        AddedToken("    ", normalized=True),           # NeoX has whitespace-run tokens
    ])
    return json.loads(tok.to_str())


def make_llama3():
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"]
    _train(tok, _byte_level_trainer(700, specials))
    bos = tok.token_to_id("<|begin_of_text|>")
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(
            single="<|begin_of_text|> $A",
            pair="<|begin_of_text|> $A <|begin_of_text|>:1 $B:1",
            special_tokens=[("<|begin_of_text|>", bos)]),
    ])
    d = json.loads(tok.to_str())
    # ignore_merges only shows when a whole pre-token is in the vocab but its
    # merges would not build it: add a few such tokens by hand.
    vocab = d["model"]["vocab"]
    assert d["model"]["ignore_merges"] is True
    next_id = max(max(vocab.values()), max(t["id"] for t in d["added_tokens"])) + 1
    for piece in ["Ġkvscope", "Ġunreachable", "hello", "Ġworld", "ĠHello"]:
        if piece not in vocab:
            vocab[piece] = next_id
            next_id += 1
    return d


def make_qwen2():
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_PATTERN), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    _train(tok, _byte_level_trainer(650, ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]))
    return json.loads(tok.to_str())


BYTE_TOKENS = [f"<0x{b:02X}>" for b in range(256)]


def _sentencepiece_like(vocab_size):
    """Trains on words split at the metaspace (like SentencePiece), and returns
    the JSON with the vocabulary laid out like Llama's: <unk>, <s>, </s>, the
    256 byte tokens, then the learned pieces."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="first",
                                                 split=True)
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=2, show_progress=False,
                                  special_tokens=["<unk>", "<s>", "</s>"])
    _train(tok, trainer)
    d = json.loads(tok.to_str())
    old = d["model"]["vocab"]
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in BYTE_TOKENS:
        vocab[b] = len(vocab)
    for piece, _ in sorted(old.items(), key=lambda kv: kv[1]):
        if piece not in vocab:
            vocab[piece] = len(vocab)
    d["model"]["vocab"] = vocab
    d["added_tokens"] = [
        {"id": i, "content": c, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}
        for i, c in enumerate(["<unk>", "<s>", "</s>"])
    ]
    return d


def _template(bos="<s>", bos_id=1):
    return {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": bos, "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}}],
        "pair": [{"SpecialToken": {"id": bos, "type_id": 0}},
                 {"Sequence": {"id": "A", "type_id": 0}},
                 {"SpecialToken": {"id": bos, "type_id": 1}},
                 {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {bos: {"id": bos, "ids": [bos_id], "tokens": [bos]}},
    }


def make_llama2():
    d = _sentencepiece_like(900)
    d["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"},
    ]}
    d["pre_tokenizer"] = None
    d["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "\u2581"}, "content": " "},
        {"type": "ByteFallback"},
        {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0},
    ]}
    d["post_processor"] = _template()
    _legacy_merges(d)
    return d


def make_mistral():
    d = _sentencepiece_like(800)
    d["normalizer"] = None
    d["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581",
                          "prepend_scheme": "first", "split": False}
    # ByteFallback first so <0xXX> runs become text; no Fuse, so the Metaspace
    # decoder still sees the first token on its own.
    d["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "ByteFallback"},
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "first", "split": False},
    ]}
    d["post_processor"] = _template()
    return d


TOKENIZERS = {
    "gpt2_bytelevel": make_gpt2,
    "neox_bytelevel": make_neox,
    "llama3_bytelevel": make_llama3,
    "qwen2_bytelevel": make_qwen2,
    "llama2_sentencepiece": make_llama2,
    "mistral_metaspace": make_mistral,
}


def _dump(obj, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(obj, ensure_ascii=False, indent=None, separators=(",", ":"))
    path.write_text(text + "\n", encoding="utf-8")


def goldens(tok, strings):
    cases = []
    for s in strings:
        with_sp = tok.encode(s, add_special_tokens=True)
        without = tok.encode(s, add_special_tokens=False)
        cases.append({
            "text": s,
            "ids": with_sp.ids,
            "tokens": with_sp.tokens,
            "ids_no_special": without.ids,
            "tokens_no_special": without.tokens,
            "decoded": tok.decode(with_sp.ids, skip_special_tokens=False),
            "decoded_skip_special": tok.decode(with_sp.ids, skip_special_tokens=True),
            "roundtrip": tok.decode(without.ids, skip_special_tokens=False),
        })
    return {"tokenizers_version": tokenizers.__version__, "cases": cases}


def main(out_dir):
    out = Path(out_dir)
    strings = hard_strings()
    _dump(strings, out / "hard_strings.json")
    for name, make in TOKENIZERS.items():
        d = make()
        tok_path = out / name / "tokenizer.json"
        tok_path.parent.mkdir(parents=True, exist_ok=True)
        # Through HF's own writer, so the file is exactly what HF would save.
        Tokenizer.from_str(json.dumps(d)).save(str(tok_path), pretty=False)
        if name in ("gpt2_bytelevel", "llama2_sentencepiece"):
            # HF 0.23 always writes pairs; keep the legacy "a b" spelling in
            # two files so both spellings stay tested.
            saved = json.loads(tok_path.read_text(encoding="utf-8"))
            _legacy_merges(saved)
            _dump(saved, tok_path)
        tok = Tokenizer.from_file(str(tok_path))  # goldens from the file as written
        _dump(goldens(tok, strings), out / name / "golden.json")
        print(f"{name}: vocab {tok.get_vocab_size(with_added_tokens=True)}")


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    main(sys.argv[1] if len(sys.argv) > 1 else here.parent / "tests" / "data" / "tokenizers")
