#!/usr/bin/env python3
"""Tiny random Hugging Face checkpoints and their golden outputs.

For every supported architecture variant this writes, under
tests/data/models/<name>/, a checkpoint made by transformers'
save_pretrained (config.json, safetensors, generation_config.json, plus a
small byte-level tokenizer.json trained here) and golden.npz-free outputs the
C++ tests read without Python:

  golden_ids.json      prompt ids, HF's 32-token greedy continuation,
                       the smallest top-1/top-2 logit margin seen (ties would
                       make the greedy test meaningless, so seeds are chosen
                       to keep it large)
  golden_logits.npy    float32 [n_prompt + 32, vocab]: logits of every
                       position of prompt + continuation (teacher forced)
  golden_attn.npy      float32 [layers, heads, n_prompt, n_prompt]: eager
                       attention probabilities over the prompt

All in fp32 with eager attention. Deterministic: rerunning gives the same
files. Usage: python3 tools/goldens_models.py [out_dir]
"""
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VOCAB = 320
N_PROMPT = 40
N_NEW = 32


def tiny_tokenizer(path):
    """A byte-level BPE over a fixed text, so each tiny model has a tokenizer."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    text = ("The quick brown fox jumps over the lazy dog. " * 20 +
            "Pack my box with five dozen liquor jugs! 0123456789 " * 10 +
            "Sphinx of black quartz, judge my vow. Hello world, hello kvscope. " * 10).split(". ")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=VOCAB - 1, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(text, trainer=trainer)
    tok.save(path)
    return tok


def variants():
    from transformers import (Gemma3TextConfig, GPT2Config, GPTJConfig, GPTNeoXConfig, LlamaConfig, MistralConfig,
                              MptConfig, OPTConfig, Phi3Config, Qwen2Config, Qwen3Config)
    common = dict(vocab_size=VOCAB, bos_token_id=0, eos_token_id=0)
    return {
        # GPT-2: learned positions, Conv1D, gelu_new, tied head.
        "gpt2": (GPT2Config(n_embd=48, n_layer=2, n_head=4, n_positions=128, n_inner=None,
                            initializer_range=0.2, **common), torch.float32),
        # Pythia-style: partial rotary (25%), parallel residual, untied head.
        "gpt_neox_parallel": (GPTNeoXConfig(hidden_size=48, num_hidden_layers=2, num_attention_heads=4,
                                            intermediate_size=96, max_position_embeddings=128, rotary_pct=0.5,
                                            use_parallel_residual=True, tie_word_embeddings=False,
                                            initializer_range=0.2, **common), torch.float32),
        # NeoX with sequential residual, a different rotary share, tied head, rotary_emb_base spelling.
        "gpt_neox_sequential": (GPTNeoXConfig(hidden_size=48, num_hidden_layers=2, num_attention_heads=2,
                                              intermediate_size=96, max_position_embeddings=128, rotary_pct=0.25,
                                              rotary_emb_base=500.0, use_parallel_residual=False,
                                              tie_word_embeddings=True, initializer_range=0.2, **common),
                                torch.float32),
        # Llama: GQA 2:1, head_dim != hidden/heads, untied head.
        "llama_gqa": (LlamaConfig(hidden_size=48, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                                  num_key_value_heads=2, head_dim=16, max_position_embeddings=128,
                                  tie_word_embeddings=False, initializer_range=0.2, **common), torch.float32),
        # Llama 3 rope scaling, MQA, tied head, attention and MLP biases; stored in bf16.
        "llama3_mqa_bf16": (LlamaConfig(hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                                        num_attention_heads=4, num_key_value_heads=1, max_position_embeddings=128,
                                        rope_theta=50000.0, attention_bias=True, mlp_bias=True,
                                        rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                                      "high_freq_factor": 4.0, "original_max_position_embeddings": 16},
                                        tie_word_embeddings=True, initializer_range=0.2, **common), torch.bfloat16),
        # Qwen2: q/k/v biases, GQA, stored in fp16, sharded into several files.
        "qwen2_fp16_sharded": (Qwen2Config(hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                                           num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
                                           rope_theta=10000.0, tie_word_embeddings=False, initializer_range=0.2,
                                           **common), torch.float16),
        # Mistral: GQA, linear rope scaling (no sliding window within 128).
        "mistral": (MistralConfig(hidden_size=48, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                                  num_key_value_heads=2, max_position_embeddings=128, sliding_window=None,
                                  rope_scaling={"rope_type": "linear", "factor": 2.0},
                                  tie_word_embeddings=False, initializer_range=0.2, **common), torch.float32),
        # Qwen3: q/k RMSNorm per head (plain weights), head_dim 24 independent
        # of hidden / heads (12), attention biases on q, k, v and o, GQA;
        # stored in bf16.
        "qwen3_bf16": (Qwen3Config(hidden_size=48, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                                   num_key_value_heads=2, head_dim=24, max_position_embeddings=128,
                                   attention_bias=True, rope_parameters={"rope_type": "default", "rope_theta": 20000.0},
                                   tie_word_embeddings=False, initializer_range=0.2, **common), torch.bfloat16),
        # GPT-J: interleaved partial rotary (rotary_dim 8 of head 12), one
        # norm for both parallel branches, a head bias; stored in fp16.
        "gptj_fp16": (GPTJConfig(n_embd=48, n_layer=2, n_head=4, n_positions=128, rotary_dim=8, n_inner=None,
                                 tie_word_embeddings=False, initializer_range=0.2, **common), torch.float16),
        # OPT-125m's layout: pre-norm, ReLU, biases, tied head, positions + 2.
        "opt": (OPTConfig(hidden_size=48, num_hidden_layers=2, num_attention_heads=4, ffn_dim=96,
                          max_position_embeddings=128, do_layer_norm_before=True, pad_token_id=1,
                          init_std=0.2, **common), torch.float32),
        # OPT-350m's: post-norm (no final norm), an embedding of 32 projected
        # in to 48 and out again; stored in bf16.
        "opt_postnorm_proj_bf16": (OPTConfig(hidden_size=48, num_hidden_layers=2, num_attention_heads=4, ffn_dim=96,
                                             max_position_embeddings=128, do_layer_norm_before=False,
                                             word_embed_proj_dim=32, pad_token_id=1, init_std=0.2, **common),
                                   torch.bfloat16),
        # Phi-3: fused qkv and gate/up, GQA, partial rotary (half of each head).
        "phi3": (Phi3Config(hidden_size=48, intermediate_size=96, num_hidden_layers=2, num_attention_heads=4,
                            num_key_value_heads=2, max_position_embeddings=128, pad_token_id=None,
                            rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                             "partial_rotary_factor": 0.5},
                            tie_word_embeddings=False, initializer_range=0.2, **common), torch.float32),
        # MPT: ALiBi over 6 heads (not a power of two: the interleaved
        # slopes), clip_qkv, tied head.
        "mpt": (MptConfig(d_model=48, n_heads=6, n_layers=2, max_seq_len=128,
                          attn_config={"clip_qkv": 1.5, "alibi": True, "alibi_bias_max": 8},
                          initializer_range=0.2, **common), torch.float32),
        # MPT with 4 heads, an explicit softmax_scale, stored in bf16.
        "mpt_scale_bf16": (MptConfig(d_model=48, n_heads=4, n_layers=2, max_seq_len=128,
                                     attn_config={"softmax_scale": 0.2}, initializer_range=0.2, **common),
                           torch.bfloat16),
        # Gemma 3: q/k norms, sandwich norms, GeGLU, scaled embedding, a
        # sliding window of 8 on layers 0 and 2 (the 72-token golden runs far
        # past it), per-layer-type RoPE (linear scaling on the full layer, its
        # own base on the sliding ones), query_pre_attn_scalar != head_dim.
        "gemma3": (Gemma3TextConfig(hidden_size=48, intermediate_size=96, num_hidden_layers=3,
                                    num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                                    query_pre_attn_scalar=24, sliding_window=8,
                                    layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                                    rope_parameters={"full_attention": {"rope_type": "linear", "factor": 2.0,
                                                                        "rope_theta": 50000.0},
                                                     "sliding_attention": {"rope_type": "default",
                                                                           "rope_theta": 500.0}},
                                    max_position_embeddings=128, tie_word_embeddings=True, pad_token_id=None,
                                    initializer_range=0.2, **common), torch.float32),
    }


def _rewrite(path, fn):
    with open(path) as f:
        cfg = json.load(f)
    fn(cfg)
    with open(path, "w") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)


def _neox_old(cfg):
    """Pythia's released configs: rotary_pct / rotary_emb_base, torch_dtype."""
    rp = cfg.pop("rope_parameters")
    cfg["rotary_pct"] = rp["partial_rotary_factor"]
    cfg["rotary_emb_base"] = rp["rope_theta"]
    cfg["torch_dtype"] = cfg.pop("dtype")


def _llama_old(cfg):
    """transformers 4.x spelling: rope_theta and rope_scaling with "type"."""
    rp = cfg.pop("rope_parameters")
    cfg["rope_theta"] = rp.pop("rope_theta")
    rtype = rp.pop("rope_type")
    if rtype != "default":
        cfg["rope_scaling"] = dict(rp, type=rtype)
    cfg["torch_dtype"] = cfg.pop("dtype")


def _gemma3_old(cfg):
    """Gemma 3's released configs (transformers 4.5x): rope_theta,
    rope_local_base_freq, rope_scaling and sliding_window_pattern instead of
    rope_parameters per layer type and layer_types."""
    rp = cfg.pop("rope_parameters")
    full, local = dict(rp["full_attention"]), rp["sliding_attention"]
    cfg["rope_theta"] = full.pop("rope_theta")
    cfg["rope_local_base_freq"] = local["rope_theta"]
    cfg["rope_scaling"] = full
    types = cfg.pop("layer_types")
    assert types == ["sliding_attention", "full_attention", "sliding_attention"]
    cfg["sliding_window_pattern"] = 2  # layers 1-based: every 2nd is full
    cfg["torch_dtype"] = cfg.pop("dtype")


# Checkpoints whose config.json is rewritten into the older key spellings
# (same meaning), so both spellings are checked against HF's outputs.
OLD_SPELLINGS = {
    "gpt_neox_sequential": lambda p: _rewrite(p, _neox_old),
    "mistral": lambda p: _rewrite(p, _llama_old),
    "gemma3": lambda p: _rewrite(p, _gemma3_old),
}


def build(name, cfg, dtype, out_root, tok_path):
    from transformers import AutoModelForCausalLM
    out = os.path.join(out_root, name)
    os.makedirs(out, exist_ok=True)
    for seed in range(100):
        torch.manual_seed(1000 + seed)
        model = AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").eval()
        # Biases and norm weights start at 0/1; perturb them so they are tested.
        with torch.no_grad():
            for n, p in model.named_parameters():
                if p.dim() == 1:
                    p.add_(torch.randn_like(p) * 0.1)
            if dtype != torch.float32:  # golden = the stored low-precision weights, computed in fp32
                for p in model.parameters():
                    p.copy_(p.to(dtype).float())
        g = torch.Generator().manual_seed(seed)
        prompt = torch.randint(1, VOCAB, (1, N_PROMPT), generator=g)
        ids = prompt
        margin = float("inf")
        with torch.no_grad():
            for _ in range(N_NEW):
                logits = model(ids).logits[0, -1]
                top2 = torch.topk(logits, 2).values
                margin = min(margin, float(top2[0] - top2[1]))
                ids = torch.cat([ids, logits.argmax().view(1, 1)], dim=1)
            full = model(ids, output_attentions=True)
            attn = model(prompt, output_attentions=True).attentions
        if margin > 2e-3:
            break
    print(f"{name}: seed {seed}, min top-1 margin {margin:.4g}")
    save_kwargs = {"safe_serialization": True}
    if name.endswith("sharded"):
        save_kwargs["max_shard_size"] = "40KB"
    model.to(dtype).save_pretrained(out, **save_kwargs)
    if name in OLD_SPELLINGS:
        OLD_SPELLINGS[name](os.path.join(out, "config.json"))
        # The rewritten config must mean the same model to transformers.
        again = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32, attn_implementation="eager").eval()
        with torch.no_grad():
            assert torch.equal(again(ids).logits, full.logits), name
    import shutil
    shutil.copy(tok_path, os.path.join(out, "tokenizer.json"))
    np.save(os.path.join(out, "golden_logits.npy"), full.logits[0].float().numpy().astype(np.float32))
    np.save(os.path.join(out, "golden_attn.npy"),
            torch.stack([a[0] for a in attn]).float().numpy().astype(np.float32))
    with open(os.path.join(out, "golden_ids.json"), "w") as f:
        json.dump({"prompt": prompt[0].tolist(), "greedy": ids[0, N_PROMPT:].tolist(),
                   "min_top1_margin": margin, "dtype": str(dtype).replace("torch.", "")}, f, indent=1)


def build_mlkv(out_root, tok_path):
    """MLKV has no transformers class: its golden comes from tools/tiny_llama.py
    (the same code that trains the default model's MLKV variant), in fp32
    with eager attention, after checking that the same code with every layer
    owning KV reproduces transformers' LlamaForCausalLM."""
    from safetensors.torch import save_file
    from transformers import LlamaConfig, LlamaForCausalLM
    from tiny_llama import TinyLlama
    cfg = dict(vocab_size=VOCAB, hidden_size=48, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
               num_key_value_heads=2, head_dim=12, rms_norm_eps=1e-6, rope_theta=10000.0, tie_word_embeddings=False,
               max_position_embeddings=128, bos_token_id=0, eos_token_id=0)
    torch.manual_seed(77)
    mha = TinyLlama(dict(cfg))
    with torch.no_grad():
        for p in mha.parameters():
            p.normal_(0, 0.2) if p.dim() > 1 else p.add_(torch.randn_like(p) * 0.1)
    hf = LlamaForCausalLM(LlamaConfig(**cfg, attn_implementation="eager")).eval()
    hf.load_state_dict(mha.state_dict(), strict=True)
    probe = torch.randint(1, VOCAB, (1, 24), generator=torch.Generator().manual_seed(5))
    with torch.no_grad():
        assert (hf(probe).logits - mha(probe)).abs().max() < 1e-4
    mlkv = TinyLlama(dict(cfg, num_key_value_layers=2)).eval()
    sd = {k: v for k, v in mha.state_dict().items() if k in mlkv.state_dict()}
    mlkv.load_state_dict(sd, strict=True)
    for seed in range(100):  # a prompt whose greedy path has no near-ties
        g = torch.Generator().manual_seed(seed)
        prompt = torch.randint(1, VOCAB, (1, N_PROMPT), generator=g)
        ids, margin = prompt, float("inf")
        with torch.no_grad():
            for _ in range(N_NEW):
                logits = mlkv(ids)[0, -1]
                top2 = torch.topk(logits, 2).values
                margin = min(margin, float(top2[0] - top2[1]))
                ids = torch.cat([ids, logits.argmax().view(1, 1)], dim=1)
        if margin > 2e-3:
            break
    with torch.no_grad():
        full = mlkv(ids)
        probs = []
        mlkv(prompt, probs_out=probs)
    print(f"llama_mlkv: min top-1 margin {margin:.4g}")
    out = os.path.join(out_root, "llama_mlkv")
    os.makedirs(out, exist_ok=True)
    save_file(mlkv.hf_state_dict(), os.path.join(out, "model.safetensors"), metadata={"format": "pt"})
    hf_cfg = dict(cfg, model_type="llama", architectures=["LlamaForCausalLM"], num_key_value_layers=2,
                  hidden_act="silu", torch_dtype="float32")
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(hf_cfg, f, indent=2, sort_keys=True)
    import shutil
    shutil.copy(tok_path, os.path.join(out, "tokenizer.json"))
    np.save(os.path.join(out, "golden_logits.npy"), full[0].numpy().astype(np.float32))
    np.save(os.path.join(out, "golden_attn.npy"), torch.stack([p[0] for p in probs]).numpy().astype(np.float32))
    with open(os.path.join(out, "golden_ids.json"), "w") as f:
        json.dump({"prompt": prompt[0].tolist(), "greedy": ids[0, N_PROMPT:].tolist(),
                   "min_top1_margin": margin, "dtype": "float32", "reference": "tools/tiny_llama.py"}, f, indent=1)


def main(out_root=None, only=None):
    out_root = out_root or os.path.join(ROOT, "tests", "data", "models")
    os.makedirs(out_root, exist_ok=True)
    torch.set_num_threads(1)
    tok_path = os.path.join(out_root, "tokenizer.json")
    tiny_tokenizer(tok_path)
    for name, (cfg, dtype) in variants().items():
        if only is None or name in only:
            build(name, cfg, dtype, out_root, tok_path)
    if only is None or "llama_mlkv" in only:
        build_mlkv(out_root, tok_path)
    os.remove(tok_path)


if __name__ == "__main__":
    # python3 tools/goldens_models.py [out_dir [name ...]]: every variant, or the named ones.
    main(sys.argv[1] if len(sys.argv) > 1 else None, set(sys.argv[2:]) or None)
