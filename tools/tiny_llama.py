"""A small Llama-architecture model in plain PyTorch, with MLKV layer sharing.

Written out here (instead of using transformers' LlamaForCausalLM for
training) so that the MLKV variant — K/V projections only in some layers,
the others reading the nearest owning layer below — is the same code.
Parameter names follow Hugging Face's Llama checkpoints, so the state dict
is saved as-is and transformers loads the MHA/GQA model unchanged.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def owning_layers(n_layers, n_kv_layers):
    """MLKV's owning layers: [0] + [floor((i+1)·L/m) for i in 0..m-2]."""
    return [0] + [((i + 1) * n_layers) // n_kv_layers for i in range(n_kv_layers - 1)]


def kv_source_layer(layer, owners):
    """A non-owning layer reads the nearest owning layer at or below it."""
    return max(o for o in owners if o <= layer)


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(x.dtype)


def rope_cos_sin(seq_len, head_dim, theta, device):
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, device=device).float() / head_dim))
    t = torch.arange(seq_len, device=device).float()
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat([freqs, freqs], dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)


class Attention(nn.Module):
    def __init__(self, cfg, owns_kv):
        super().__init__()
        d, h, kvh, hd = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
        self.h, self.kvh, self.hd = h, kvh, hd
        self.q_proj = nn.Linear(d, h * hd, bias=False)
        if owns_kv:
            self.k_proj = nn.Linear(d, kvh * hd, bias=False)
            self.v_proj = nn.Linear(d, kvh * hd, bias=False)
        self.o_proj = nn.Linear(h * hd, d, bias=False)
        self.owns_kv = owns_kv

    def kv(self, x, cos, sin):
        b, n, _ = x.shape
        k = self.k_proj(x).view(b, n, self.kvh, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, n, self.kvh, self.hd).transpose(1, 2)
        k = k * cos + rotate_half(k) * sin
        return k, v

    def forward(self, x, cos, sin, kv, probs_out=None):
        b, n, _ = x.shape
        q = self.q_proj(x).view(b, n, self.h, self.hd).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k, v = kv
        rep = self.h // self.kvh
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        if probs_out is None:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # eager attention, keeping the probabilities (golden files)
            scores = (q @ k.transpose(-1, -2)) * self.hd ** -0.5
            mask = torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1)
            p = scores.masked_fill(mask, float("-inf")).softmax(-1)
            probs_out.append(p)
            y = p @ v
        return self.o_proj(y.transpose(1, 2).reshape(b, n, self.h * self.hd))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        d, ff = cfg["hidden_size"], cfg["intermediate_size"]
        self.gate_proj = nn.Linear(d, ff, bias=False)
        self.up_proj = nn.Linear(d, ff, bias=False)
        self.down_proj = nn.Linear(ff, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    def __init__(self, cfg, owns_kv):
        super().__init__()
        self.input_layernorm = RMSNorm(cfg["hidden_size"], cfg["rms_norm_eps"])
        self.self_attn = Attention(cfg, owns_kv)
        self.post_attention_layernorm = RMSNorm(cfg["hidden_size"], cfg["rms_norm_eps"])
        self.mlp = MLP(cfg)


class Inner(nn.Module):
    def __init__(self, cfg, owners):
        super().__init__()
        self.embed_tokens = nn.Embedding(cfg["vocab_size"], cfg["hidden_size"])
        self.layers = nn.ModuleList([Block(cfg, i in owners) for i in range(cfg["num_hidden_layers"])])
        self.norm = RMSNorm(cfg["hidden_size"], cfg["rms_norm_eps"])


class TinyLlama(nn.Module):
    """cfg keys as in HF LlamaConfig; cfg['num_key_value_layers'] < layers makes it MLKV."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        n_layers = cfg["num_hidden_layers"]
        self.owners = owning_layers(n_layers, cfg.get("num_key_value_layers", n_layers))
        self.model = Inner(cfg, self.owners)
        self.lm_head = nn.Linear(cfg["hidden_size"], cfg["vocab_size"], bias=False)
        if cfg.get("tie_word_embeddings", True):
            self.lm_head.weight = self.model.embed_tokens.weight
        self.apply(self._init)
        # GPT-2 style scaled init of the residual projections keeps early training stable.
        for name, p in self.named_parameters():
            if name.endswith("o_proj.weight") or name.endswith("down_proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * n_layers))

    @staticmethod
    def _init(m):
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, std=0.02)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids, probs_out=None):
        """Logits [b, n, vocab]; with probs_out (a list), eager attention per layer is appended."""
        n = ids.shape[1]
        cos, sin = rope_cos_sin(n, self.cfg["head_dim"], self.cfg["rope_theta"], ids.device)
        x = self.model.embed_tokens(ids)
        kv_by_layer = {}
        for i, layer in enumerate(self.model.layers):
            h = layer.input_layernorm(x)
            if layer.self_attn.owns_kv:
                kv_by_layer[i] = layer.self_attn.kv(h, cos, sin)
            kv = kv_by_layer[kv_source_layer(i, self.owners)]
            x = x + layer.self_attn(h, cos, sin, kv, probs_out)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return self.lm_head(self.model.norm(x))

    def hf_state_dict(self):
        """Parameters under HF Llama names; the tied head is left out, as HF saves it."""
        sd = {k: v.detach().clone().contiguous() for k, v in self.state_dict().items()}
        if self.cfg.get("tie_word_embeddings", True):
            sd.pop("lm_head.weight", None)
        return sd
