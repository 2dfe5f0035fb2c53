#!/usr/bin/env python3
"""Golden kept-KV indices from NVIDIA kvpress (one-shot prefill presses, AdaKVPress, DecodingPress) for kvscope.

For each tiny test checkpoint under tests/data/models/ this runs kvpress presses
on two random prompts (one prefill forward of the whole prompt, the way
kvpress' pipeline compresses a context) and writes, per case, exactly which KV
positions kvpress kept for every (layer, KV head) (for AdaKVPress, which
removes no row but masks (KV head, position) pairs: the positions it leaves
unmasked), and, for kvpress'
DecodingPress (which never touches the prompt but compresses the cache every
`compression_interval` decode steps down to `target_size` rows), which absolute
positions the cache holds after each compression of a teacher-forced decode:

    tests/data/kvpress/<model_dir_name>.json

Version 4 adds one-shot cases of ChunkKVPress, CriticalKVPress, LagKVPress,
ExpectedAttentionPress, CURPress and LeverageScorePress ("Version-4 presses").

Usage
-----
    tools/goldens_kvpress.sh [args]          # makes/uses its own venv, see below
    <venv>/bin/python tools/goldens_kvpress.py [--models a,b] [--out DIR] [--check]
    <venv>/bin/python tools/goldens_kvpress.py --smollm2 [--out FILE]

--check regenerates into memory and compares with the files on disk (exit 1
on any difference). --smollm2 writes ONLY the SmolLM2-135M file, from the GGUF
in ~/.cache/kvscope/models/smollm2-135m/ (needs PyPI `gguf`), by default to
~/.cache/kvscope/kvpress/smollm2-135m.json, outside the repo: CI does not use it.

Environment: this must run with kvpress' own pinned transformers (kvpress 0.5.5
requires transformers<5.3; the committed files were made with kvpress 0.5.5,
transformers 5.2.0, torch 2.15.0 on CPU). That is NOT the venv of
tools/make_goldens.py / goldens_models.py (transformers 5.23). A separate venv:

    python3 -m venv ~/.cache/kvscope/kvpress-venv
    ~/.cache/kvscope/kvpress-venv/bin/pip install kvpress==0.5.5 transformers==5.2.0

tools/goldens_kvpress.sh does exactly that (KVPRESS_VENV=/path overrides the
location, e.g. KVPRESS_VENV=/work/.venvs/kvpress) and then runs this script.

How the indices are captured (nothing of kvpress is reimplemented)
------------------------------------------------------------------
Prompts: PROMPT_LENS (48, 80) distinct random token ids in [1, vocab_size)
(torch.randperm, seed SEED), the same for every checkpoint of equal vocab.
Models load with dtype=float32 and attn_implementation="eager" (bf16/fp16
checkpoints are widened exactly; eager is what ObservedAttentionPress needs,
and it gives every press the plain softmax). The press instance's `compress`
(and `score`, when it has one) is wrapped on the instance; for each layer
(module.layer_idx) the wrapper keeps the keys going in and the keys coming out,
and every output key row (batch 0, per KV head) is mapped to the input row it
equals bit for bit. Exactly one input row must match (random weights make rows
unique; anything else aborts), and the value row at that index must equal the
output value row. The final DynamicCache length per layer must equal the
number of kept rows. Prefill is `model.model(input_ids=ids,
past_key_values=DynamicCache())` inside `with press(model):`, as in kvpress'
pipeline.py (no lm_head).

AdaKV cases (AdaKVPress, see below for its rule): AdaKVPress.compress asserts
that the attention is not eager, so these use a second load of the same
checkpoint with attn_implementation="sdpa" (still dtype=float32; a separate
model object, the eager one is untouched). For each prompt and each
(inner press, inner params, compression_ratio r, alpha_safeguard) of
adakv_configs() the press is AdaKVPress(press=Inner(compression_ratio=r,
**inner_params), alpha_safeguard=alpha), run as the one-shot cases are (one
prefill forward inside `with press(model):`). The inner press' `score` is
wrapped on its instance (a copy of the scores as returned, and the tensor
itself, which AdaKVPress then changes in place), and AdaKVPress' `compress` on
its instance: after it returns, the wrapper reads `module.masked_key_indices`
(batch, head, seq), the pairs AdaKVPress masks. Kept positions of a KV head =
0..n-1 minus the positions masked for that head. Checked on every case
(anything else aborts the case into "skipped"): compress returns the very
key / value tensors it got (nothing removed) and every layer's cache still
holds n rows after the prefill; no attention weights reach the press (sdpa);
the scores change only by entries set to float32 max, exactly n_safe per KV
head, each head's top n_safe by its own score (the "safeguarded" positions);
exactly n_kv_heads * (n - n_kept) distinct pairs are masked, all of batch 0,
none safeguarded, and no masked score (after the safeguard) exceeds a kept
one anywhere in the layer; the layer keeps n_kv_heads * n_kept pairs. Each
case also runs with alpha_safeguard=0 (same inner press): the cells whose kept
set differs are "safeguard_binds" (the cells the safeguard decides).

Decoding cases (DecodingPress): for each prompt / (compression_interval,
target_size, D steps) of decoding_configs() and each base press of
DECODE_BASES (KnormPress, KeyDiffPress, TOVAPress, built with their default
compression_ratio 0.0, which DecodingPress overrides), the prompt is prefilled
as above and then D continuation tokens are fed one per forward, all inside one
`with DecodingPress(...)(model):` and one DynamicCache: `model.model(input_ids=
[[tok]], past_key_values=cache, position_ids=[[n + step - 1]])`. The position
ids are absolute, as kvpress' pipeline.generate_answer passes them (context
length + i); cache_position is left to transformers, which derives it from the
(compressed) cache length, again as in the pipeline. transformers' default
position_ids (= cache_position) would rotate a new key to the compressed cache
length instead, and the kept sets differ from the first compression on.
Continuation ids: make_continuations(), D distinct ids in [1, vocab_size) not in
the prompt (torch.randperm, seed DECODE_SEED + prompt index). Every cache row
carries an absolute position: 0..n-1 after the prefill, n + step - 1 for the
token of decode step `step` (counted 1..D). DecodingPress' `compress` (on the
instance) is wrapped as above; at a compression every output key row is mapped
to the input row it equals bit for bit (same checks as the one-shot cases), and
each row keeps the position of the input row it came from. Checked as it runs:
nothing is compressed during the prefill, the rows going into a compression
are the cache before the step, bit for bit, plus the step's own key as the last
row, the cache afterwards is compress' output, its length per layer equals the
tracked positions after every step, and compressions happen exactly at the
steps stated below (anything else aborts the case into "skipped").

DecodingPress's schedule (kvpress 0.5.5, decoding_press.py; observed here)
---------------------------------------------------------------------------
- The prompt is never compressed: the forward hook returns at once while
  is_prefilling (cache_position[-1] + 1 == q_len), i.e. for the prefill forward.
- Each later forward of a layer adds 1 to that layer's step count (before the
  test). The forward whose count reaches compression_interval compresses, after
  its attention ran, then the count restarts at 0. So with one token a step,
  decode steps interval, 2*interval, 3*interval, ... (counted from 1) compress,
  every layer at the same step. (It also compresses whenever the forward feeds
  q_len >= target_size tokens at once; with one token a step that never
  happens for target_size > 1.)
- What is compressed is the layer's whole cache: the kept prompt and decode
  rows plus the current step's key (already appended, the last row). The
  current key is a candidate like any other: KnormPress and KeyDiffPress can
  drop it at once; TOVAPress scores it max + 1, so it always stays.
- It keeps exactly target_size rows: the base press runs with the compression
  ratio for which int(k_len * (1 - ratio)) == target_size (a binary search),
  and keeps its top-k scores per KV head. When the cache holds <= target_size
  rows (k_len <= target_size) the ratio is 0 and nothing is dropped, but the
  count still restarts (such no-op compressions are recorded, "n_in" <=
  "target_size").
- Scores see only that layer's cache at that moment: Knorm / KeyDiff from the
  keys (KeyDiff's anchor is the mean of the normalised keys then in the
  cache); TOVA from the eager attention weights of the step's query over the
  whole cache, itself included ([1, heads, 1, k_len]), averaged over query
  heads (one set for every KV head) with its own column set to max + 1.
- After a compression the cache rows are in top-k's order, not position order
  (it matters only for ties and float summation order; the file lists sorted
  positions).

AdaKVPress's rule (kvpress 0.5.5, adakv_press.py; observed and checked here)
---------------------------------------------------------------------------
With n prompt tokens, H KV heads, n_kept = max(1, int(n (1 - r))) (compute_n_kept,
the per-head count a plain press keeps) and n_safe = max(1, int(n_kept * alpha))
(0 when alpha is 0), per layer:
1. s = the inner press' score [1, H, n], the same score the inner press uses
   alone (SnapKVPress gets no attention weights under sdpa and computes its
   window queries' attention itself, compute_window_attention; its window is
   padded with the layer's max + 1, as in the eager cases).
2. Safeguard: each KV head's own top n_safe, torch.topk(s, n_safe, dim=-1), is
   set to float32 max (in place). Those are kept whatever the other heads score.
3. Layer-wide pruning: torch.topk(-s.reshape(1, H * n), H * (n - n_kept)), i.e.
   the H * (n - n_kept) lowest safeguarded scores of the layer, across all its
   KV heads (flat index head * n + position), are masked; everything else is
   kept. So the layer keeps H * n_kept pairs in total ("n_kept" = H * n_kept,
   asserted) but a head keeps anything from n_safe to n ("head_kept"): in the
   four files, of the 56 cells each of Knorm / SnapKV / KeyDiff at alpha 0.2,
   40 / 40 / 38 keep other than n_kept (e.g. llama_gqa, Knorm, r 0.5, prompt 0:
   head_kept [[32, 16], [28, 20]] where a plain press keeps 24 per head). The
   scores of different heads are compared as they are, unnormalised.
4. Nothing is removed: the cache keeps all n rows per head and
   module.masked_key_indices stays set after the prefill; in the decoding
   forwards attention_patch.py overwrites the masked keys with a fake key whose
   attention weight underflows to 0. So the kept positions are those of a
   per-(layer, KV head) eviction of the masked ones.
With one KV head (llama3_mqa_bf16) this is the inner press alone (observed: the
same kept sets as the eager cases of the same press and ratio). With these
random-weight checkpoints the heads' scores overlap so much that the safeguard
never changes a kept set at alpha 0.2 or 0.5 (each head keeps far more than
n_safe on its merit); alpha 0.9 (KnormPress) is in the list because there it
does: "safeguard_binds" lists the cells (12 in all files), where one head keeps
exactly n_safe (e.g. llama_gqa, r 0.5, prompt 0: head_kept [[27, 21], [27, 21]],
n_safe 21).
Ties (torch.topk's CPU rule, below): step 2 decides among a head's scores tied
at its n_safe-th place which get float32 max; that matters only if one of the
tied scores left unsafeguarded is then masked. Step 3 applies the rule to the
negated flat [H * n] vector (k = H * (n - n_kept), so nth_element here); a tie
at the layer's boundary (lowest kept vs highest masked safeguarded score)
decides which heads keep how many. Both are flagged per cell (below); neither
occurs in these files (the SnapKV window's max + 1 ties at the safeguard
boundary are all kept). ObservedAttentionPress cannot be the inner press: it
asserts attention weights ('Set attn_implementation="eager"'), which sdpa does
not return, and AdaKVPress refuses eager (its docstring: "AdaKVPress and
ObservedAttention are currently not supported"); its cases are in "skipped".

Version-4 presses (kvpress 0.5.5; observed and checked here)
------------------------------------------------------------
Captured as the one-shot cases (run_v4_press: one prefill forward inside
`with press(model):`, every output key row mapped to the one input row it
equals bit for bit, the values following, the cache holding what compress
returned), with wrappers on the press instances (kvpress calls them as
self.<name>): `score` of the press (if it is a ScorerPress) and of its inner
press, CriticalKVPress.vwl1norm and LagKVPress._get_states_score. A press with
an inner press is built as AdaKV's: Outer(press=Inner(compression_ratio=r,
**inner_params), **other params). All run on the eager model except
ChunkKVPress, which asserts that no attention weights reach it ("ChunkPress
does not support attentions.", eager returns them) and so runs on the sdpa
load, like AdaKV (its SnapKV inner press then computes its window attention
itself). Cases per prompt, in file order: v4_configs(). Below, n_kept =
compute_n_kept(n, r) = max(1, int(n (1 - r))), and "top k" is
scores.topk(k, dim=-1) per KV head, whose ties follow torch.topk's CPU rule
(last section).

ChunkKVPress (chunkkv_press.py; press = KnormPress / SnapKVPress(8, 5),
chunk_length L = 4 / 10, r = 0.25 / 0.5), one decision per layer:
  s = the inner press' score [H, n]. Chunks are [c L, min(n, (c + 1) L)), c =
  0 .. ceil(n / L) - 1, the last one shorter when L does not divide n (48 / 10:
  four of 10, one of 8). Chunk score = the mean over the chunk's own positions
  of s summed over the KV heads (sum first; a short chunk divides by its own
  length). The layer keeps the n_chunks_kept = max(1, int(n_chunks (1 - r)))
  chunks of highest score (torch.topk over the chunk scores), whole, and every
  KV head keeps the same positions. It is a count of chunks, not of tokens: a
  layer keeps n_chunks_kept L positions, or L - (n mod L) fewer when the short
  chunk is among them (mistral, Knorm, L 10, r 0.25, prompt 0: 5 chunks, 3
  kept, n_kept [28, 30]: layer 0 keeps the short chunk 4, layer 1 does not;
  compute_n_kept would give 36). With no complete chunk (n < L) it hands over
  to the inner press (not exercised here).
  Evidence, checked in every case: all KV heads of a layer keep the same
  positions, made of whole chunks, exactly n_chunks_kept of them, and no
  dropped chunk's score (recomputed here from the recorded inner scores with
  kvpress' own tensor ops, so bit for bit) beats a kept one. With SnapKV the
  chunks holding its window (scored max + 1) are kept in every case.

CriticalKVPress (criticalkv_press.py; press = KnormPress / SnapKVPress(8, 5),
epsilon 1e-4 (its default), first_stage_ratio f = 0.5 / 0.0, r = 0.25 / 0.5), a
ScorerPress: top n_kept per KV head of its score, which is, per layer:
  1. s = the inner press' score [H, n] (eager: SnapKV uses the attention weights).
  2. Stage 1: B = int((1 - r) n f) ("n_first_stage"; max(1, B) when f > 0);
     each KV head's own top B by s (torch.topk) are the picks.
  3. Stage 2: score = (s + epsilon) * w, w[h, i] = the mean over the query heads
     q of KV head h of || v[h, i] W_o[q] ||_1, W_o[q] = the [head_dim, hidden]
     block of query head q in o_proj.weight^T (vwl1norm: L1 norm over
     hidden_size, no bias). Then the picks are set to float32 max. B <= n_kept,
     so the picks are always kept and stage 2 fills the other n_kept - B.
  Evidence, checked in every case: at every position but the picks the final
  score equals (s + epsilon) * vwl1norm bit for bit; exactly B entries per head
  are float32 max, the head's top B by s, all kept. With KnormPress s = -||k||
  < 0, so the product favours SMALL w (kvpress does exactly that: keep the
  sign). In all 48 cases every cell keeps another set than the inner press
  alone at the same r (the eager KnormPress / SnapKVPress cases). With f 0 the
  SnapKV window is scored (max + 1 + epsilon) w like any position, no longer
  kept by construction; it was kept in every cell here all the same.
  qwen2_fp16_sharded: in "skipped": vwl1norm reads module.config.head_dim,
  which transformers 5.2.0's Qwen2Config lacks (AttributeError: kvpress 0.5.5
  fails so on such checkpoints; not worked around here).

LagKVPress (lagkv_press.py; n_sink S = 4, lag_size l = 8 / 16 / 24,
cross_scoring False, r = 0.25 / 0.5): a ScorerPress, top n_kept per KV head of:
  - n < S + 2 l ("lag_fallback"; l 24 on the 48-token prompt): 1 for the
    sinks, (i - S) / (n - S) for i >= S: the sinks and the last n_kept - S
    positions are kept (a StreamingLLM).
  - otherwise: end = S + floor((n - S) / l) l, partitions P_j = [S + j l, S +
    (j + 1) l) for j < m = (end - S) / l. P_0 .. P_{m-2} are scored, each
    against the next one; the sinks and the tail [end - l, n) (the last
    partition and the n - end rest: l + n - end positions) score 1. For keys
    (the cached, post-RoPE ones) and values alike: per channel, min and max
    over the l tokens of P_{j+1}; for a token of P_j, z = (x - min) / (max -
    min) per channel, its std over the head_dim channels (torch's default,
    unbiased: / (head_dim - 1)), softmax of those l stds over P_j. raw =
    (softmax of keys + softmax of values) / 2; the score is the rank of raw in
    its partition (argsort().argsort(), 0 = lowest) / l, so every scored
    partition holds exactly 0, 1/l, ..., (l - 1)/l once each.
  Evidence, checked in every case: sinks and tail score exactly 1; each scored
  partition's scores are exactly {k / l} and order its raw scores (from
  kvpress' own _get_states_score outputs; "rank_ties" lists heads with two raw
  scores of a partition within 1e-6 relative, where argsort would decide:
  none); the fallback scores exactly as above.
  Ties by construction: the top n_kept take the S + l + n - end positions
  scored 1, then the rank levels from the top down, each level one position
  of each of the m - 1 scored partitions. Unless n_kept - S - (l + n - end) is
  a multiple of m - 1 (and >= 0), the last level taken is split: q of its
  m - 1 positions are kept and WHICH q is decided by torch.topk's tie rule, not
  by a score; if n_kept < S + l + n - end, the positions scored 1 themselves
  tie. "boundary_ties" lists every such cell with the tied value, how many
  positions hold it and how many of those were kept. In the four files that is
  56 of the 168 LagKV cells (l 8: prompt 1 at r 0.25; l 16: every case but
  prompt 0 at r 0.25; l 24: none): a third of the cells depend on torch.topk's
  internals. E.g. llama_gqa, prompt 0, l 16, r 0.5: the 32 positions scored 1
  (sinks 0-3, tail 20-47) compete for 24 slots and kvpress keeps 24..47,
  DROPPING THE SINKS (as zeros(48).topk(24) keeps the last 24); prompt 1, l 8,
  r 0.25, layer 0, head 0: the 8 positions of rank 2/8 (5, 12, 24, 29, 37, 51,
  55, 61) compete for 4 slots, kvpress keeps 24, 29, 37, 61 (no index order).
  k 64 > n in every case here: std::nth_element, then std::sort, on (value,
  index) pairs in index order compared by value only (tie-rule section).
  Checked in every cell: torch.topk of the file's scores (float32, parsed from
  the JSON) gives the recorded kept set, so an engine running that libstdc++
  selection on the same float32 scores reproduces it; any other engine must
  treat "tied_cells" as don't-care.

ExpectedAttentionPress (expected_attention_press.py; defaults:
n_future_positions F = 512, n_sink S = 4, use_covariance, use_vnorm, epsilon 0;
r = 0.25 / 0.5), a ScorerPress, per layer:
  mu, Sigma = the mean and covariance (biased: / (n - S)) over positions S ..
  n - 1 of the pre-RoPE queries (q_proj of the layer's input, per query head);
  Rbar = the mean over positions p = n .. n + F - 1 of the RoPE matrix R_p =
  diag(cos_p) + diag(sin_p) P (P: rotate_half), from the model's own rotary
  embedding (its scaling included: linear for mistral, llama3 for
  llama3_mqa_bf16); mu' = Rbar mu, Sigma' = Rbar Sigma Rbar^T. For the cached
  (post-RoPE) keys k_i, i >= S: logit_i = k_i . mu' / sqrt(head_dim) + k_i^T
  Sigma' k_i / (2 head_dim), softmax over i in [S, n) per query head, mean over
  the query heads of each KV head, times ||v_i||_2. The sinks 0 .. S - 1 score
  the layer's max of those (over all its KV heads) + 1, so they are kept; then
  top n_kept per KV head. Nothing the tiny models lack is needed (q_proj, the
  rotary embedding kvpress attaches to each layer); deterministic.
  Evidence: sinks = the layer's max + 1 checked in every case; a float64
  re-derivation from the weights as written here (made while writing this, not
  part of the script) matched kvpress' scores to 1.5e-6 relative and gave every
  kept set at r 0.5.

CURPress (cur_press.py; defaults: leverage_type kv_product, use_random_leverage
False (no random projection, no RNG), use_local_approximation, num_sinks 4,
local_window_size w = 16, and w = 20 at r 0.5, whose last window of the 48-token
prompt is short; r = 0.25 / 0.5), a ScorerPress, per layer and KV head:
  k2_i = ||k_i||^2 (cached, post-RoPE keys), v2_i = ||v_i||^2; each divided by its
  sum over its window [j w, (j + 1) w) (the last one zero-padded, i.e. over its
  own positions); s = k2' v2', divided by its sum over all n positions; the
  first num_sinks set to 1.0 (so kept); top n_kept.
  Evidence: sinks exactly 1.0 checked in every case; a float64 re-derivation
  (as above, not in the script) matched to 1e-6 relative and gave every kept
  set (w 20, r 0.5).

LeverageScorePress (leverage_press.py; sketch_dimension 48, r = 0.25 / 0.5), a
ScorerPress, per layer and KV head: X = the pre-RoPE keys (k_proj of the
layer's input) centred over the positions; Y = X Phi, Phi [head_dim, 48] of
N(0, 1/48) entries from torch.randn on torch's global generator (one [1, H,
head_dim, 48] draw per layer, layer 0 first); score_i = y_i^T (Y^T Y + 0.01
I)^-1 y_i (a Cholesky solve with jitter 0.01: Y^T Y has rank <= head_dim < 48),
clamped at 0, z-scored over the whole layer (one affine map for all its heads:
no effect on a head's ranking); top n_kept. Seed handling: torch.manual_seed(SEED)
right before the forward ("sketch_seed"). The sketch decides nothing here: the
same case with torch.manual_seed(SEED + 1 .. SEED + 4) keeps the same sets in
every cell ("seed_dependent_cells": none), and the top n_kept of the exact
leverage of X, diag(X (X^T X)^-1 X^T) in float64, is the kept set in every cell
("exact_leverage_differs": none; smallest relative boundary gap of the exact
leverage 1.0e-3): with 48 >= head_dim the sketch spans X's columns, and X's
smallest squared singular value (at least 4.8 here) dwarfs the 0.01 jitter. So an
engine can use the exact leverage, without an RNG.

Per-position score lists of the version-4 cases ("scores", "inner_scores",
"wov_norm") are written once per group of cases for which kvpress computes them
from the same inputs (v4_score_group: the same press, inner press and params
but the ratio, ChunkKV's chunk_length and CriticalKV's first_stage_ratio /
epsilon; "wov_norm" once per prompt): the first case of the group (file order)
carries them and the others leave them out (checked equal; a list that differed
would stay). CriticalKV's "scores" (its final scores) are in every case.

File format
-----------
{"format": "kvscope-kvpress-goldens", "version": 4, "made_by", "kvpress",
 "transformers", "torch", "model", "dtype": "float32", "attn_implementation":
 "eager" (of every case without an "attn_implementation" of its own), "seed",
 "prompts": [[ids]...],
 "cases": [{"press", "params", "prompt" (index into prompts), "n" (prompt
            length), "n_kept": [per layer],
            "kept": [layer][kv_head] -> sorted kept positions,
            "scores": [layer][kv_head][position] -> the press' score (float32
                      printed with 9 significant digits, so it parses back to
                      the same float32; null if not finite); absent when the
                      press has no score() or the file would grow too big,
            "tied_cells": [[layer, kv_head], ...] where the lowest kept score
                      and the highest dropped score differ by < 1e-6
                      (relative): there the choice is decided by top-k's tie
                      rule, not by the scores},
           ...; the AdaKV cases (version 3) come first, before the eager
           ones, and have these fields:
           {"press": "AdaKVPress", "params": {"press" (the inner press' class
                      name), "inner_params" (its other constructor params; it
                      is built with compression_ratio r plus these),
                      "compression_ratio" (r), "alpha_safeguard"},
            "prompt", "n", "attn_implementation": "sdpa",
            "n_kept": [per layer] -> kept (KV head, position) pairs SUMMED
                      over the layer's KV heads, = n_kv_heads * max(1,
                      int(n (1 - r))) (NOT the per-head count of the other
                      cases),
            "head_kept": [layer][kv_head] -> kept positions of that head,
            "kept": [layer][kv_head] -> sorted positions not masked,
            "n_safe": max(1, int(max(1, int(n (1 - r))) * alpha_safeguard)),
            "safeguarded": [layer][kv_head] -> sorted positions the safeguard
                      set to float32 max (the head's own top n_safe),
            "scores": [layer][kv_head][position] -> the inner press' score
                      BEFORE the safeguard (format as above),
            "tied_cells": [[layer, kv_head], ...] whose kept set top-k's tie
                      rule decides: (a) the layer's lowest kept and highest
                      masked score after the safeguard differ by < 1e-6
                      relative (the heads holding a score within that band),
                      or (b) the head's n_safe-th and (n_safe+1)-th scores
                      differ by < 1e-6 relative and a score within that band
                      was left unsafeguarded and masked,
            "safeguard_ties": [[layer, kv_head], ...] whose n_safe-th and
                      (n_safe+1)-th scores differ by < 1e-6 relative, whether
                      or not it changes the kept set (the SnapKV window's
                      max + 1 when n_safe < window_size: harmless),
            "safeguard_binds": [[layer, kv_head], ...] whose kept set
                      differs from AdaKVPress with alpha_safeguard=0},
           ...; the version-4 cases (section "Version-4 presses") come first
           of all, before the AdaKV ones (per prompt, v4_configs() order),
           with the fields of the eager cases ("n_kept" per layer = the kept
           positions of each KV head; "scores" per the rule above) and:
           ChunkKVPress: "params": {"press", "inner_params",
                      "compression_ratio" (as AdaKV's), "chunk_length"},
                      "attn_implementation": "sdpa", "n_chunks",
                      "n_chunks_kept", "chunks_kept": [layer] -> sorted kept
                      chunk indices (chunk c = positions [c L, min(n, (c+1) L))),
                      "chunk_scores": [layer][chunk] -> its score (format as
                      "scores"), "scores": the INNER press' scores, "n_kept":
                      [per layer] (the same for every KV head; the layers
                      differ when one keeps the short chunk), "tied_cells":
                      every KV head of a layer whose lowest kept and highest
                      dropped chunk scores differ by < 1e-6 relative;
           CriticalKVPress: "params": {"press", "inner_params",
                      "compression_ratio", "epsilon", "first_stage_ratio"},
                      "scores": the final scores, the ones that decide (the
                      stage-1 picks are float32 max, written 3.40282347e+38),
                      "inner_scores": the inner press' scores, "wov_norm":
                      vwl1norm's w [layer][kv_head][position], "n_first_stage"
                      (B), "first_stage": [layer][kv_head] -> sorted picks,
                      "first_stage_ties": [[layer, kv_head], ...] whose B-th and
                      (B+1)-th inner scores differ by < 1e-6 relative ("tied_cells"
                      has them too if a position of that band was dropped);
           LagKVPress: "params": {"compression_ratio", "n_sink", "lag_size",
                      "cross_scoring"}, "lag_fallback" (n < n_sink + 2
                      lag_size), "boundary_ties": [[layer, kv_head, tied score,
                      positions holding it, of those kept], ...] for every tied
                      cell, "rank_ties": [[layer, kv_head], ...];
           ExpectedAttentionPress, CURPress: "params" with every default
                      spelled out, nothing more;
           LeverageScorePress: "sketch_seed", "seed_dependent_cells",
                      "exact_leverage_differs" ([[layer, kv_head], ...])}],
 "decoding_cases": [{"base_press" (KnormPress / KeyDiffPress / TOVAPress),
            "interval" (compression_interval), "target_size", "prompt" (index
            into prompts), "n" (prompt length), "steps" (D),
            "continuation": [D token ids fed at decode steps 1..D],
            "compressions": [{"step" (1..D, the decode step whose forward
                      compressed), "n_in" (rows going in, the same in every
                      layer), "kept": [layer][kv_head] -> sorted absolute
                      positions the cache holds after that compression,
                      "tied_cells": [[layer, kv_head], ...] with a boundary
                      gap < 1e-6 relative at that compression (a tie there
                      also makes everything after it in that layer, and the
                      layers above, a don't-care)}, ...],
            "final_kept": [layer][kv_head] -> sorted absolute positions held
                      after step D}]; no scores (version 2 added this list),
 "skipped": [{"press", "params", "prompt", "reason"}]  (a decoding case that
            fails: press "DecodingPress", params {"base_press",
            "compression_interval", "target_size"}; an AdaKV case: press
            "AdaKVPress" and its params as above; a version-4 case: its press
            and params as above, these entries first)}
Rerunning writes identical bytes (fixed seeds, one thread, deterministic
algorithms, sorted keys, fixed float formatting).

torch.topk tie rule (CPU, observed with torch 2.15.0 and checked against C++)
----------------------------------------------------------------------------
kvpress keeps `scores.topk(n_kept, dim=-1).indices`. On CPU, torch.topk does
NOT break ties by index: e.g. tensor([1,1,1,0]).topk(2) -> [1, 2];
tensor([1,1,1,1,1,1,1,1]).topk(3) -> [6, 5, 4]; tensor([0,1,0,1,0,1,0,1]).topk(5)
-> [1, 7, 5, 3, 2]; zeros(48).topk(24) -> the last 24, zeros(48).topk(12) ->
a scattered set. The rule is libstdc++'s selection algorithm on (value, index)
pairs built in index order, compared by value only:
    if k*64 <= n: std::partial_sort(q, q+k, q+n, greater_by_value)
    else:         std::nth_element(q, q+k-1, q+n, greater_by_value);
                  std::sort(q, q+k-1, greater_by_value)
(aten/src/ATen/native/TopKImpl.h). A C++ emulation of exactly that, built with
g++ 12, reproduced torch's indices (order included) on 3000 random tie-heavy
vectors (n 4..1000, all k). So a C++ engine only matches kvpress on a tied
boundary if it uses the same libstdc++ calls; otherwise treat "tied_cells" as
don't-care. In these goldens the ties kvpress creates on purpose (SnapKV /
PyramidKV window and TOVA's last token scored max+1, StreamingLLM's 0/1
scores) never straddle the kept/dropped boundary, except version 4's
LagKVPress ranks (see its section: a third of its cells).
"""
import argparse
import importlib.metadata as md
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FORMAT = "kvscope-kvpress-goldens"
VERSION = 4
SEED = 20240607
PROMPT_LENS = (48, 80)
DECODE_SEED = SEED + 1  # continuation ids: DECODE_SEED + prompt index
DECODE_BASES = ("KnormPress", "KeyDiffPress", "TOVAPress")
ADAKV_ATTN = "sdpa"  # AdaKVPress asserts the attention implementation is not eager
MODELS = ("llama_gqa", "mistral", "qwen2_fp16_sharded", "llama3_mqa_bf16")
EXPECT = {"kvpress": "0.5.5", "transformers": "5.2.0"}
MAX_FILE_BYTES = 450_000  # 300_000 up to version 3
TIE_REL = 1e-6
LEVERAGE_SEEDS = 5  # LeverageScorePress also runs with torch.manual_seed(SEED + 1 .. SEED + 4): seed_dependent_cells
SCORE_FIELDS = ("scores", "inner_scores", "wov_norm")  # per-position lists the size limit may drop
SMOLLM2_DIR = os.path.expanduser("~/.cache/kvscope/models/smollm2-135m")


def press_configs():
    """(press class name, params) in file order."""
    out = []
    for r in (0.25, 0.5, 0.75):
        out.append(("KnormPress", {"compression_ratio": r}))
    for w, k in ((8, 5), (16, 3)):
        for r in (0.25, 0.5):
            out.append(("SnapKVPress", {"compression_ratio": r, "window_size": w, "kernel_size": k}))
    for r in (0.25, 0.5, 0.75):
        out.append(("ObservedAttentionPress", {"compression_ratio": r}))
    out.append(("TOVAPress", {"compression_ratio": 0.5}))
    out.append(("StreamingLLMPress", {"compression_ratio": 0.5, "n_sink": 4}))
    for r in (0.25, 0.5):
        out.append(("PyramidKVPress", {"compression_ratio": r, "window_size": 8, "kernel_size": 5}))
    out.append(("KeyDiffPress", {"compression_ratio": 0.5}))
    return out


def adakv_configs():
    """(inner press class name, inner params without compression_ratio, compression_ratio, alpha_safeguard) of
    the AdaKVPress cases, in file order (per prompt)."""
    out = []
    for inner, inner_params in (("KnormPress", {}), ("SnapKVPress", {"window_size": 8, "kernel_size": 5}),
                                ("KeyDiffPress", {}), ("ObservedAttentionPress", {})):
        for r in (0.25, 0.5):
            out.append((inner, inner_params, r, 0.2))
    for alpha in (0.5, 0.9):  # 0.9: where the safeguard decides cells of these checkpoints (0.2, 0.5 never do)
        for r in (0.25, 0.5):
            out.append(("KnormPress", {}, r, alpha))
    return out


def decoding_configs():
    """(prompt index, compression_interval, target_size, decode steps) in file order, for every base press."""
    return [(0, 4, 24, 14), (0, 3, 40, 14), (1, 5, 64, 16), (1, 2, 84, 12)]


def v4_configs():
    """(press class name, params) of the version-4 cases, in file order (per prompt). A press with an inner press
    records it as AdaKVPress does: "press" (the inner class name), "inner_params" (its other constructor params),
    "compression_ratio" (the inner press' ratio, which the outer press reads and writes through)."""
    inners = (("KnormPress", {}), ("SnapKVPress", {"window_size": 8, "kernel_size": 5}))
    out = []
    for inner, inner_params in inners:
        for chunk_length in (4, 10):
            for r in (0.25, 0.5):
                out.append(("ChunkKVPress", {"press": inner, "inner_params": inner_params, "compression_ratio": r,
                                             "chunk_length": chunk_length}))
    for inner, inner_params in inners:
        for first_stage_ratio in (0.5, 0.0):
            for r in (0.25, 0.5):
                out.append(("CriticalKVPress", {"press": inner, "inner_params": inner_params, "compression_ratio": r,
                                                "epsilon": 1e-4, "first_stage_ratio": first_stage_ratio}))
    # lag_size 24: LagKV's fallback (q_len < n_sink + 2 * lag_size) on the 48-token prompt, a tail of 28 on the 80.
    for lag_size in (8, 16, 24):
        for r in (0.25, 0.5):
            out.append(("LagKVPress", {"compression_ratio": r, "n_sink": 4, "lag_size": lag_size,
                                       "cross_scoring": False}))
    for r in (0.25, 0.5):
        out.append(("ExpectedAttentionPress", {"compression_ratio": r, "n_future_positions": 512, "n_sink": 4,
                                               "use_covariance": True, "use_vnorm": True, "epsilon": 0.0}))
    # local_window_size 20: a padded last window on the 48-token prompt (16 divides both prompt lengths).
    for r, w in ((0.25, 16), (0.5, 16), (0.5, 20)):
        out.append(("CURPress", {"compression_ratio": r, "num_sinks": 4, "leverage_type": "kv_product",
                                 "use_random_leverage": False, "use_local_approximation": True,
                                 "local_window_size": w}))
    for r in (0.25, 0.5):
        out.append(("LeverageScorePress", {"compression_ratio": r, "sketch_dimension": 48}))
    return out


def v4_stat_key(press_name, params):
    """The line of the printed statistics a version-4 case counts in."""
    short = press_name[:-len("Press")]
    inner = params.get("press", "").replace("Press", "")
    if press_name == "ChunkKVPress":
        return f"{short}/{inner}/L{params['chunk_length']}"
    if press_name == "CriticalKVPress":
        return f"{short}/{inner}/f{params['first_stage_ratio']:g}"
    if press_name == "LagKVPress":
        return f"{short}/lag{params['lag_size']}"
    if press_name == "CURPress":
        return f"{short}/w{params['local_window_size']}"
    return short


def v4_attn(press_name):
    """The attention implementation a version-4 press runs under: ChunkKVPress asserts that no attention
    weights reach it ("ChunkPress does not support attentions."), which eager returns."""
    return "sdpa" if press_name == "ChunkKVPress" else "eager"


def setup_torch():
    import torch
    torch.manual_seed(0)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    import transformers
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    import logging
    logging.getLogger("kvpress").setLevel(logging.ERROR)
    return torch


def versions():
    v = {name: md.version(name) for name in ("kvpress", "transformers", "torch")}
    for name, want in EXPECT.items():
        if v[name] != want:
            print(f"warning: {name} {v[name]} here, the committed goldens used {want}", file=sys.stderr)
    return v


def load_model(path, gguf_file=None, attn_implementation="eager"):
    import torch
    from transformers import AutoModelForCausalLM
    kw = {"gguf_file": gguf_file} if gguf_file else {}
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, attn_implementation=attn_implementation,
                                                 **kw)
    if model.config._attn_implementation != attn_implementation:
        raise RuntimeError(f"asked for {attn_implementation} attention, got {model.config._attn_implementation}")
    return model.eval()


def make_prompts(vocab_size, seed=SEED, lens=PROMPT_LENS):
    import torch
    # Distinct ids within a prompt: a repeated id gives layer 0 two keys that differ only by
    # RoPE, a rotation, so KnormPress would see norms equal up to an ulp (a near-tie that only
    # bit-identical RoPE arithmetic could reproduce).
    g = torch.Generator().manual_seed(seed)
    return [(torch.randperm(vocab_size - 1, generator=g)[:n] + 1).tolist() for n in lens]


def make_continuations(vocab_size, prompts, steps):
    """Per prompt, `steps` distinct ids in [1, vocab_size) that are not in the prompt (torch.randperm, seed
    DECODE_SEED + prompt index): a repeated id would give layer-0 keys equal norms up to an ulp, as above."""
    import torch
    out = []
    for p, ids in enumerate(prompts):
        g = torch.Generator().manual_seed(DECODE_SEED + p)
        used = set(ids)
        perm = (torch.randperm(vocab_size - 1, generator=g) + 1).tolist()
        out.append([t for t in perm if t not in used][:steps])
    return out


def map_rows(rows_in, rows_out, what):
    """Index into rows_in of each row of rows_out, by exact equality; exactly one match each."""
    import torch
    eq = (rows_out[:, None, :] == rows_in[None, :, :]).all(-1)  # [n_out, n_in]
    counts = eq.sum(1)
    if not bool((counts == 1).all()):
        bad = [(r, int(c)) for r, c in enumerate(counts.tolist()) if c != 1]
        raise RuntimeError(f"{what}: output rows without exactly one equal input row (row, matches): {bad[:8]}")
    return eq.to(torch.int64).argmax(1).tolist()


def run_case(model, press_name, params, ids):
    """Run one press on one prompt; return (n_kept, kept, scores or None)."""
    import torch
    import kvpress
    from transformers import DynamicCache
    press = getattr(kvpress, press_name)(**params)
    rec, scores = {}, {}
    orig_compress = press.compress
    has_score = hasattr(press, "score")

    def compress(module, hidden_states, keys, values, attentions, kwargs):
        k_out, v_out = orig_compress(module, hidden_states, keys, values, attentions, kwargs)
        rec[module.layer_idx] = (keys.detach().clone(), values.detach().clone(),
                                 k_out.detach().clone(), v_out.detach().clone())
        return k_out, v_out
    press.compress = compress
    if has_score:
        orig_score = press.score

        def score(module, *args, **kwargs):
            s = orig_score(module, *args, **kwargs)
            scores[module.layer_idx] = s.detach().to(torch.float32).clone()
            return s
        press.score = score

    cache = DynamicCache()
    with torch.no_grad(), press(model):
        model.model(input_ids=torch.tensor([ids]), past_key_values=cache)

    n_layers = model.config.num_hidden_layers
    if sorted(rec) != list(range(n_layers)):
        raise RuntimeError(f"compress ran on layers {sorted(rec)}, expected 0..{n_layers - 1}")
    n_kept, kept, sc = [], [], []
    for li in range(n_layers):
        k_in, v_in, k_out, v_out = rec[li]
        if k_in.shape[2] != len(ids):
            raise RuntimeError(f"layer {li}: {k_in.shape[2]} keys in, prompt has {len(ids)}")
        n_kept.append(int(k_out.shape[2]))
        if cache.layers[li].keys.shape[2] != k_out.shape[2]:
            raise RuntimeError(f"layer {li}: cache holds {cache.layers[li].keys.shape[2]}, compress gave {k_out.shape[2]}")
        heads = []
        for h in range(k_in.shape[1]):
            idx = map_rows(k_in[0, h], k_out[0, h], f"layer {li} head {h} keys")
            if not torch.equal(v_in[0, h][idx], v_out[0, h]):
                raise RuntimeError(f"layer {li} head {h}: values do not follow the keys' indices")
            if len(set(idx)) != len(idx):
                raise RuntimeError(f"layer {li} head {h}: a position kept twice")
            heads.append(sorted(idx))
        kept.append(heads)
        if has_score:
            if li not in scores:
                raise RuntimeError(f"layer {li}: score() not called")
            s = scores[li]
            if tuple(s.shape) != (1, k_in.shape[1], len(ids)):
                raise RuntimeError(f"layer {li}: scores shape {tuple(s.shape)}")
            sc.append(s[0].tolist())
    return n_kept, kept, (sc if has_score else None)


def boundary_gaps(kept, scores):
    """Per (layer, head): relative gap lowest kept score - highest dropped score (None: nothing dropped)."""
    out = []
    for li, heads in enumerate(kept):
        row = []
        for h, idx in enumerate(heads):
            s = scores[li][h]
            ks = set(idx)
            kept_s = [s[i] for i in idx]
            drop_s = [s[i] for i in range(len(s)) if i not in ks]
            if not drop_s:
                row.append(None)
                continue
            lo, hi = min(kept_s), max(drop_s)
            if lo < hi:
                raise RuntimeError(f"layer {li} head {h}: a dropped score {hi!r} beats a kept one {lo!r}")
            row.append((lo - hi) / max(abs(lo), abs(hi), 1e-30))
        out.append(row)
    return out


def rel_gap(s, idx):
    """Relative gap lowest kept score - highest dropped score of one head (None: nothing dropped)."""
    ks = set(idx)
    kept_s = [s[i] for i in idx]
    drop_s = [s[i] for i in range(len(s)) if i not in ks]
    if not drop_s:
        return None
    lo, hi = min(kept_s), max(drop_s)
    if lo < hi:
        raise RuntimeError(f"a dropped score {hi!r} beats a kept one {lo!r}")
    return (lo - hi) / max(abs(lo), abs(hi), 1e-30)


def run_decoding_case(model, base_name, interval, target, ids, continuation, gaps):
    """Prefill `ids` and teacher-force `continuation` one token a step under DecodingPress(base_name());
    return (compressions, final_kept) with absolute positions, appending each compression's boundary gaps
    (per layer, KV head) to `gaps` as (step, layer, kv_head, gap)."""
    import torch
    import kvpress
    from transformers import DynamicCache
    base = getattr(kvpress, base_name)()
    press = kvpress.DecodingPress(base_press=base, compression_interval=interval, target_size=target)
    calls, scores = [], {}
    orig_compress, orig_score = press.compress, base.score

    def compress(module, hidden_states, keys, values, attentions, kwargs):
        k_out, v_out = orig_compress(module, hidden_states, keys, values, attentions, kwargs)
        calls.append((module.layer_idx, keys.detach().clone(), values.detach().clone(),
                      k_out.detach().clone(), v_out.detach().clone()))
        return k_out, v_out
    press.compress = compress

    def score(module, *args, **kwargs):
        s = orig_score(module, *args, **kwargs)
        scores[module.layer_idx] = s.detach().to(torch.float32).clone()
        return s
    base.score = score

    n, n_layers = len(ids), model.config.num_hidden_layers
    cache = DynamicCache()
    compressions = []
    with torch.no_grad(), press(model):
        model.model(input_ids=torch.tensor([ids]), past_key_values=cache)
        if calls:
            raise RuntimeError("DecodingPress compressed during the prefill")
        if [cache.layers[li].keys.shape[2] for li in range(n_layers)] != [n] * n_layers:
            raise RuntimeError("prefill cache is not the whole prompt")
        n_heads = cache.layers[0].keys.shape[1]
        pos = [[list(range(n)) for _ in range(n_heads)] for _ in range(n_layers)]
        for step in range(1, len(continuation) + 1):
            before = [cache.layers[li].keys.clone() for li in range(n_layers)]
            calls.clear()
            scores.clear()
            # Absolute RoPE positions, as kvpress' pipeline.generate_answer passes them (position_ids =
            # context length + i); cache_position is left to transformers (from the cache length).
            model.model(input_ids=torch.tensor([[continuation[step - 1]]]), past_key_values=cache,
                        position_ids=torch.tensor([[n + step - 1]]))
            for heads in pos:
                for p in heads:
                    p.append(n + step - 1)
            if calls:
                if [c[0] for c in calls] != list(range(n_layers)):
                    raise RuntimeError(f"step {step}: compress ran on layers {[c[0] for c in calls]}")
                kept, n_in = [], calls[0][1].shape[2]
                for li, k_in, v_in, k_out, v_out in calls:
                    # What is compressed: the whole cache before this step plus this step's key, last.
                    if k_in.shape[2] != before[li].shape[2] + 1 or not torch.equal(k_in[:, :, :-1], before[li]):
                        raise RuntimeError(f"step {step} layer {li}: compress did not get the cache + this step's key")
                    if k_in.shape[2] != n_in or k_out.shape[2] != min(target, n_in):
                        raise RuntimeError(f"step {step} layer {li}: {k_in.shape[2]} rows in, {k_out.shape[2]} out")
                    if not torch.equal(cache.layers[li].keys, k_out):
                        raise RuntimeError(f"step {step} layer {li}: the cache is not compress's output")
                    heads = []
                    for h in range(n_heads):
                        idx = map_rows(k_in[0, h], k_out[0, h], f"step {step} layer {li} head {h} keys")
                        if not torch.equal(v_in[0, h][idx], v_out[0, h]):
                            raise RuntimeError(f"step {step} layer {li} head {h}: values do not follow the keys")
                        if len(set(idx)) != len(idx):
                            raise RuntimeError(f"step {step} layer {li} head {h}: a row kept twice")
                        pos[li][h] = [pos[li][h][i] for i in idx]  # cache row order: top-k's order
                        heads.append(sorted(pos[li][h]))
                        if n_in > target:
                            if li not in scores or tuple(scores[li].shape) != (1, n_heads, n_in):
                                raise RuntimeError(f"step {step} layer {li}: no score of shape (1, {n_heads}, {n_in})")
                            g = rel_gap(scores[li][0, h].tolist(), idx)
                            if g is not None:
                                gaps.append((step, li, h, g))
                        elif scores:
                            raise RuntimeError(f"step {step}: scored although {n_in} <= target_size {target}")
                    kept.append(heads)
                compressions.append({"step": step, "n_in": n_in, "kept": kept})
            for li in range(n_layers):
                if cache.layers[li].keys.shape[2] != len(pos[li][0]):
                    raise RuntimeError(f"step {step} layer {li}: cache holds {cache.layers[li].keys.shape[2]} "
                                       f"rows, tracked {len(pos[li][0])}")
    # The schedule observed must be the one the docstring states.
    want = [s for s in range(1, len(continuation) + 1) if s % interval == 0]
    if [c["step"] for c in compressions] != want:
        raise RuntimeError(f"compressions at steps {[c['step'] for c in compressions]}, expected {want}")
    return compressions, [[sorted(p) for p in heads] for heads in pos]


def run_adakv_case(model, inner_name, inner_params, ratio, alpha, ids):
    """Prefill `ids` under AdaKVPress(inner_name(compression_ratio=ratio, **inner_params), alpha) on an sdpa
    model. AdaKVPress removes no row: it sets module.masked_key_indices to the pruned (KV head, position)
    pairs. Returns a dict: n_kept (per layer, summed over KV heads), head_kept, kept, n_safe, safeguarded,
    scores (the inner press' scores before the safeguard scatter, [layer][kv_head][position] floats),
    layer_gaps (per layer, relative gap lowest kept - highest pruned safeguarded score; None: nothing pruned),
    tied_cells, safeguard_ties. Everything the docstring states about the rule is checked here."""
    import torch
    import kvpress
    from kvpress.utils import compute_n_kept
    from transformers import DynamicCache
    inner = getattr(kvpress, inner_name)(compression_ratio=ratio, **inner_params)
    press = kvpress.AdaKVPress(press=inner, alpha_safeguard=alpha)
    rec, live = {}, {}
    orig_compress, orig_score = press.compress, inner.score

    def score(module, *args, **kwargs):
        s = orig_score(module, *args, **kwargs)
        # A copy as scored, and the tensor itself: AdaKVPress scatters the safeguard into it in place.
        live[module.layer_idx] = (s.detach().clone(), s)
        return s
    inner.score = score

    def compress(module, hidden_states, keys, values, attentions, kwargs):
        module.masked_key_indices = None
        k_out, v_out = orig_compress(module, hidden_states, keys, values, attentions, kwargs)
        if k_out is not keys or v_out is not values:
            raise RuntimeError(f"layer {module.layer_idx}: AdaKVPress changed the keys / values")
        if module.layer_idx not in live:
            raise RuntimeError(f"layer {module.layer_idx}: the inner press' score() was not called")
        pre, post = live.pop(module.layer_idx)
        rec[module.layer_idx] = (keys.shape[2], attentions is None, pre, post.detach().clone(),
                                 module.masked_key_indices)
        return k_out, v_out
    press.compress = compress

    n, n_layers = len(ids), model.config.num_hidden_layers
    cache = DynamicCache()
    with torch.no_grad(), press(model):
        model.model(input_ids=torch.tensor([ids]), past_key_values=cache)
    if sorted(rec) != list(range(n_layers)):
        raise RuntimeError(f"compress ran on layers {sorted(rec)}, expected 0..{n_layers - 1}")

    n_kept_head = compute_n_kept(n, ratio)
    n_safe = max(1, int(n_kept_head * alpha)) if alpha > 0 else 0
    fmax = torch.finfo(torch.float32).max
    out = {"n_kept": [], "head_kept": [], "kept": [], "n_safe": n_safe, "safeguarded": [], "scores": [],
           "layer_gaps": [], "tied_cells": [], "safeguard_ties": []}
    for li in range(n_layers):
        k_len, no_attn, pre, post, masked = rec[li]
        attn = model.model.layers[li].self_attn
        if k_len != n or cache.layers[li].keys.shape[2] != n:
            raise RuntimeError(f"layer {li}: {k_len} keys in, cache holds {cache.layers[li].keys.shape[2]}, "
                               f"prompt has {n}")
        if not no_attn:
            raise RuntimeError(f"layer {li}: the attention weights reached the press under {ADAKV_ATTN}")
        if getattr(attn, "masked_key_indices", None) is not masked or masked is None:
            raise RuntimeError(f"layer {li}: module.masked_key_indices not set / not kept after the forward")
        if pre.dtype != torch.float32 or pre.dim() != 3 or tuple(pre.shape)[::2] != (1, n):
            raise RuntimeError(f"layer {li}: scores {pre.dtype} {tuple(pre.shape)}")
        n_heads = pre.shape[1]
        # The safeguard, as observed: exactly n_safe entries per KV head set to float32 max, each head's top
        # n_safe by its own score; nothing else touched.
        if not bool((pre.isfinite() & (pre < fmax)).all()):
            raise RuntimeError(f"layer {li}: a score is not finite or is float32 max before the safeguard")
        changed = post != pre
        if not torch.equal(changed, post == fmax):
            raise RuntimeError(f"layer {li}: the scores changed other than to float32 max")
        safe, heads, sc = [], [], []
        b, hh, ss = (t.tolist() for t in masked)
        if set(b) != {0} or len(b) != n_heads * (n - n_kept_head):
            raise RuntimeError(f"layer {li}: {len(b)} masked pairs, expected {n_heads} * ({n} - {n_kept_head})")
        pruned = set(zip(hh, ss))
        if len(pruned) != len(b):
            raise RuntimeError(f"layer {li}: a (head, position) masked twice")
        pre_l, post_l = pre[0].tolist(), post[0].tolist()
        for h in range(n_heads):
            sg = [i for i in range(n) if post_l[h][i] == fmax]
            if len(sg) != n_safe:
                raise RuntimeError(f"layer {li} head {h}: {len(sg)} safeguarded, expected {n_safe}")
            sgs = set(sg)
            rest = [pre_l[h][i] for i in range(n) if i not in sgs]
            if sg and rest and min(pre_l[h][i] for i in sg) < max(rest):
                raise RuntimeError(f"layer {li} head {h}: the safeguard is not the head's top {n_safe}")
            safe.append(sg)
            kept = [i for i in range(n) if (h, i) not in pruned]
            heads.append(kept)
            if not set(sg) <= set(kept):
                raise RuntimeError(f"layer {li} head {h}: a safeguarded position was pruned")
            sc.append(pre_l[h])
        # The pruning, as observed: the layer's n_heads * (n - n_kept) lowest safeguarded scores, across heads.
        kept_s = [post_l[h][i] for h in range(n_heads) for i in heads[h]]
        drop_s = [post_l[h][i] for h, i in sorted(pruned)]
        if sum(len(k) for k in heads) != n_heads * n_kept_head:
            raise RuntimeError(f"layer {li}: {sum(len(k) for k in heads)} kept, expected {n_heads * n_kept_head}")
        tied = set()
        if drop_s:
            lo, hi = min(kept_s), max(drop_s)
            if lo < hi:
                raise RuntimeError(f"layer {li}: a pruned score {hi!r} beats a kept one {lo!r}")
            gap = (lo - hi) / max(abs(lo), abs(hi), 1e-30)
            out["layer_gaps"].append(gap)
            if gap < TIE_REL:  # the heads holding a score in the tie band decide by top-k's tie rule
                tol = TIE_REL * max(abs(lo), abs(hi))
                tied |= {h for h in range(n_heads) if any(hi - tol <= x <= lo + tol for x in post_l[h])}
        else:
            out["layer_gaps"].append(None)
        for h in range(n_heads):
            if not 0 < n_safe < n:
                continue
            desc = sorted(pre_l[h], reverse=True)
            a, z = desc[n_safe - 1], desc[n_safe]
            if (a - z) / max(abs(a), abs(z), 1e-30) < TIE_REL:
                out["safeguard_ties"].append([li, h])
                # It decides the kept set only if a score of that tie group was left unsafeguarded and pruned.
                tol = TIE_REL * max(abs(a), abs(z))
                if any((h, i) in pruned for i in range(n) if z - tol <= pre_l[h][i] <= a + tol):
                    tied.add(h)
        out["tied_cells"] += [[li, h] for h in sorted(tied)]
        out["n_kept"].append(sum(len(k) for k in heads))
        out["head_kept"].append([len(k) for k in heads])
        out["kept"].append(heads)
        out["safeguarded"].append(safe)
        out["scores"].append(sc)
    return out


def run_v4_press(model, press_name, params, ids, seed=None):
    """Prefill `ids` under the version-4 press `press_name` built from `params` (an inner press as AdaKV's:
    Inner(compression_ratio=r, **inner_params), passed as press=). If `seed` is given, torch.manual_seed(seed)
    right before the forward (LeverageScorePress draws its sketch from torch's global generator). Returns
    (kept, cap): kept [layer][kv_head] -> sorted kept positions, mapped as in run_case (bit-equal key rows,
    values following, the cache holding what compress returned); cap[layer] -> what the wrappers on the press
    instances saw: "score" (the press' own score(), if it is a ScorerPress), "inner" (the inner press'
    score()), "hidden" (the hidden states passed to the first score() call), "wov" (CriticalKVPress.vwl1norm's
    result), "states" (LagKVPress._get_states_score's results, in call order: keys', then values')."""
    import torch
    import kvpress
    from kvpress.presses.scorer_press import ScorerPress
    from transformers import DynamicCache
    p = dict(params)
    if "press" in p:
        inner = getattr(kvpress, p.pop("press"))(compression_ratio=p.pop("compression_ratio"), **p.pop("inner_params"))
        press = getattr(kvpress, press_name)(press=inner, **p)
    else:
        inner = None
        press = getattr(kvpress, press_name)(**p)
    cur, cap, rec = {}, {}, {}

    def wrap(obj, attr, key, hidden_arg=False):
        orig = getattr(obj, attr)

        def f(*args, **kwargs):
            out = orig(*args, **kwargs)
            if hidden_arg and "hidden" not in cur:
                cur["hidden"] = args[1].detach().clone()
            cur.setdefault(key, []).append(out.detach().clone())
            return out
        setattr(obj, attr, f)  # on the instance: kvpress calls these as self.<attr>(...)
    if isinstance(press, ScorerPress):
        wrap(press, "score", "score", hidden_arg=True)
    if inner is not None:
        wrap(inner, "score", "inner", hidden_arg=True)
    if press_name == "CriticalKVPress":
        wrap(press, "vwl1norm", "wov")
    if press_name == "LagKVPress":
        wrap(press, "_get_states_score", "states")
    orig_compress = press.compress

    def compress(module, hidden_states, keys, values, attentions, kwargs):
        cur.clear()
        k_out, v_out = orig_compress(module, hidden_states, keys, values, attentions, kwargs)
        rec[module.layer_idx] = (keys.detach().clone(), values.detach().clone(),
                                 k_out.detach().clone(), v_out.detach().clone())
        cap[module.layer_idx] = dict(cur)
        return k_out, v_out
    press.compress = compress

    cache = DynamicCache()
    if seed is not None:
        torch.manual_seed(seed)
    with torch.no_grad(), press(model):
        model.model(input_ids=torch.tensor([ids]), past_key_values=cache)
    n_layers = model.config.num_hidden_layers
    if sorted(rec) != list(range(n_layers)):
        raise RuntimeError(f"compress ran on layers {sorted(rec)}, expected 0..{n_layers - 1}")
    kept = []
    for li in range(n_layers):
        k_in, v_in, k_out, v_out = rec[li]
        if k_in.shape[2] != len(ids):
            raise RuntimeError(f"layer {li}: {k_in.shape[2]} keys in, prompt has {len(ids)}")
        if cache.layers[li].keys.shape[2] != k_out.shape[2]:
            raise RuntimeError(f"layer {li}: cache holds {cache.layers[li].keys.shape[2]}, compress gave {k_out.shape[2]}")
        heads = []
        for h in range(k_in.shape[1]):
            idx = map_rows(k_in[0, h], k_out[0, h], f"layer {li} head {h} keys")
            if not torch.equal(v_in[0, h][idx], v_out[0, h]):
                raise RuntimeError(f"layer {li} head {h}: values do not follow the keys' indices")
            if len(set(idx)) != len(idx):
                raise RuntimeError(f"layer {li} head {h}: a position kept twice")
            heads.append(sorted(idx))
        kept.append(heads)
        for key, want in (("score", isinstance(press, ScorerPress)), ("inner", inner is not None)):
            got = len(cap[li].get(key, []))
            if got != int(want):
                raise RuntimeError(f"layer {li}: {key} score() called {got} times, expected {int(want)}")
    return kept, cap


def head_rows(t, n, what):
    """[1, H, n] float32 scores -> list of H lists of floats."""
    import torch
    if t.dtype != torch.float32 or t.dim() != 3 or t.shape[0] != 1 or t.shape[2] != n:
        raise RuntimeError(f"{what}: {t.dtype} {tuple(t.shape)}")
    return t[0].tolist()


def rounded(rows_per_layer):
    return [[[fmt_score(x) for x in row] for row in layer] for layer in rows_per_layer]


def run_v4_case(model, press_name, params, ids, keep_scores):
    """One version-4 case: the case dict (fields as the docstring lists them) and its statistics (cells,
    tied cells, min relative boundary gap, and press-specific counts). Everything the docstring states about
    a press' rule is checked here (a failure aborts the case into "skipped")."""
    import torch
    from kvpress.utils import compute_n_kept
    n = len(ids)
    r = params["compression_ratio"]
    seed = SEED if press_name == "LeverageScorePress" else None
    kept, cap = run_v4_press(model, press_name, params, ids, seed=seed)
    n_layers = len(kept)
    case = {"press": press_name, "params": params, "n": n}  # the caller adds "prompt"
    st = {"cells": sum(len(h) for h in kept), "tied": 0, "min_gap": math.inf}
    fmax = torch.finfo(torch.float32).max
    tied = []

    def per_head_gaps(score_rows):
        for li, (heads, rows) in enumerate(zip(kept, score_rows)):
            for h, idx in enumerate(heads):
                g = rel_gap(rows[h], idx)
                if g is None:
                    continue
                st["min_gap"] = min(st["min_gap"], g)
                if g < TIE_REL:
                    tied.append([li, h])

    if press_name == "ChunkKVPress":
        L = params["chunk_length"]
        n_full, rem = n // L, n % L
        n_chunks = n_full + (rem > 0)
        n_chunks_kept = max(1, int(n_chunks * (1 - r)))
        if n_full == 0:
            raise RuntimeError("no complete chunk: ChunkKVPress would delegate to the inner press")
        chunks_kept, chunk_scores, inner_rows = [], [], []
        for li in range(n_layers):
            s = cap[li]["inner"][0]
            inner_rows.append(head_rows(s, n, f"layer {li} inner scores"))
            # The chunk scores with kvpress' own ops (bit for bit): summed over KV heads, mean over the chunk.
            cs = s[..., :n_full * L].sum(dim=1).view(-1, n_full, L).mean(dim=-1)
            if rem:
                cs = torch.cat([cs, s[..., -rem:].sum(dim=1).mean(dim=-1, keepdim=True)], dim=-1)
            cs = cs[0].tolist()
            heads = kept[li]
            if any(k != heads[0] for k in heads):
                raise RuntimeError(f"layer {li}: the KV heads keep different positions")
            ks = set(heads[0])
            ck = []
            for c in range(n_chunks):
                span = set(range(c * L, min(n, (c + 1) * L)))
                if span <= ks:
                    ck.append(c)
                elif span & ks:
                    raise RuntimeError(f"layer {li}: chunk {c} kept in part")
            if len(ck) != n_chunks_kept or sum(min(n, (c + 1) * L) - c * L for c in ck) != len(ks):
                raise RuntimeError(f"layer {li}: chunks kept {ck}, expected {n_chunks_kept} whole chunks")
            g = rel_gap(cs, ck)  # raises if a dropped chunk outscores a kept one
            if g is not None:
                st["min_gap"] = min(st["min_gap"], g)
                if g < TIE_REL:
                    tied += [[li, h] for h in range(len(heads))]
            chunks_kept.append(ck)
            chunk_scores.append([fmt_score(x) for x in cs])
        case.update({"attn_implementation": v4_attn(press_name), "n_chunks": n_chunks, "n_chunks_kept": n_chunks_kept,
                     "chunks_kept": chunks_kept, "chunk_scores": chunk_scores})
        if keep_scores:
            case["scores"] = rounded(inner_rows)
    elif press_name == "CriticalKVPress":
        fsr, eps = params["first_stage_ratio"], params["epsilon"]
        budget = int((1 - r) * n * fsr)
        if fsr > 0:
            budget = max(1, budget) if r < 1.0 else 0
        n_kept = compute_n_kept(n, r)
        finals, inners, wovs, firsts, first_ties = [], [], [], [], []
        for li in range(n_layers):
            s, f, w = cap[li]["inner"][0], cap[li]["score"][0], cap[li]["wov"]
            if len(w) != 1:
                raise RuntimeError(f"layer {li}: vwl1norm called {len(w)} times")
            w = w[0]
            picked = f == fmax
            # Stage 2 as observed: (inner + epsilon) * |W_o v|_1 (kvpress' ops, bit for bit) off the stage-1 picks.
            if not torch.equal(f[~picked], ((s + eps) * w)[~picked]):
                raise RuntimeError(f"layer {li}: final scores are not (inner + epsilon) * vwl1norm")
            s_rows, f_rows = head_rows(s, n, "inner"), head_rows(f, n, "final")
            fl = []
            for h in range(len(s_rows)):
                pk = [i for i in range(n) if f_rows[h][i] == fmax]
                if len(pk) != budget:
                    raise RuntimeError(f"layer {li} head {h}: {len(pk)} stage-1 picks, expected {budget}")
                rest = [s_rows[h][i] for i in range(n) if i not in set(pk)]
                if pk and rest and min(s_rows[h][i] for i in pk) < max(rest):
                    raise RuntimeError(f"layer {li} head {h}: the stage-1 picks are not the top {budget} inner scores")
                if not set(pk) <= set(kept[li][h]):
                    raise RuntimeError(f"layer {li} head {h}: a stage-1 pick was dropped")
                fl.append(pk)
                if 0 < budget < n:
                    desc = sorted(s_rows[h], reverse=True)
                    a, z = desc[budget - 1], desc[budget]
                    if (a - z) / max(abs(a), abs(z), 1e-30) < TIE_REL:
                        first_ties.append([li, h])
                        tol = TIE_REL * max(abs(a), abs(z))
                        if any(i not in kept[li][h] for i in range(n) if z - tol <= s_rows[h][i] <= a + tol):
                            tied.append([li, h])
            firsts.append(fl)
            finals.append(f_rows)
            inners.append(s_rows)
            wovs.append(head_rows(w, n, "vwl1norm"))
        if any(len(k) != n_kept for heads in kept for k in heads):
            raise RuntimeError(f"a head keeps other than {n_kept}")
        per_head_gaps(finals)
        st["first_stage_ties"] = len(first_ties)
        case.update({"n_first_stage": budget, "first_stage": firsts, "first_stage_ties": first_ties})
        if keep_scores:
            case.update({"scores": rounded(finals), "inner_scores": rounded(inners), "wov_norm": rounded(wovs)})
    elif press_name == "LagKVPress":
        n_sink, lag = params["n_sink"], params["lag_size"]
        rows, rank_ties, boundary_ties = [], [], []
        fallback = n < n_sink + 2 * lag
        for li in range(n_layers):
            s = cap[li]["score"][0]
            sr = head_rows(s, n, "score")
            states = cap[li].get("states", [])
            if fallback:
                if states:
                    raise RuntimeError(f"layer {li}: lag scoring ran although q_len < n_sink + 2 * lag_size")
                want = torch.ones_like(s)
                want[:, :, n_sink:] = (torch.arange(n - n_sink) / (n - n_sink)).to(s.dtype)
                if not torch.equal(s, want):
                    raise RuntimeError(f"layer {li}: fallback scores are not 1 (sinks), i / (n - n_sink) (rest)")
            else:
                end_idx = n_sink + ((n - n_sink) // lag) * lag
                n_part = (end_idx - n_sink) // lag - 1  # partitions scored (the last one is the tail's)
                if len(states) != 2:
                    raise RuntimeError(f"layer {li}: _get_states_score called {len(states)} times")
                raw = (states[0] + states[1]) / 2  # kvpress' op: [1, H, n_part, lag]
                if tuple(raw.shape) != (1, s.shape[1], n_part, lag):
                    raise RuntimeError(f"layer {li}: raw lag scores {tuple(raw.shape)}")
                body = s[:, :, n_sink:n_sink + n_part * lag].reshape(1, s.shape[1], n_part, lag)
                ranks = torch.arange(lag, dtype=s.dtype) / lag
                if not (bool((s[:, :, :n_sink] == 1).all()) and bool((s[:, :, n_sink + n_part * lag:] == 1).all())):
                    raise RuntimeError(f"layer {li}: sinks / tail not scored 1")
                if not torch.equal(body.sort(dim=-1).values, ranks.expand_as(body)):
                    raise RuntimeError(f"layer {li}: a partition's scores are not the ranks 0..lag-1 over lag")
                # A position's rank is the place of its raw score in its partition, ascending; raw scores of
                # one partition within TIE_REL of each other make argsort's order (not the scores) decide.
                for h in range(s.shape[1]):
                    x, ranks_h = raw[0, h].tolist(), body[0, h].tolist()
                    ties = False
                    for part in range(n_part):
                        o = sorted(range(lag), key=lambda j: x[part][j])
                        v = [x[part][j] for j in o]
                        if any((b - a) / max(abs(a), abs(b), 1e-30) < TIE_REL for a, b in zip(v, v[1:])):
                            ties = True
                        elif [round(ranks_h[part][j] * lag) for j in o] != list(range(lag)):
                            raise RuntimeError(f"layer {li} head {h} partition {part}: ranks not by raw score")
                    if ties:
                        rank_ties.append([li, h])
            # torch.topk of the file's (rounded) scores must give the same kept set: ties are reproducible from it.
            nk = len(kept[li][0])
            for h in range(len(sr)):
                again = torch.tensor([fmt_score(x) for x in sr[h]], dtype=torch.float32).topk(nk).indices
                if sorted(again.tolist()) != kept[li][h]:
                    raise RuntimeError(f"layer {li} head {h}: topk of the recorded scores keeps another set")
                g = rel_gap(sr[h], kept[li][h])
                if g is not None and g < TIE_REL:
                    v = min(sr[h][i] for i in kept[li][h])
                    ks = set(kept[li][h])
                    same = [i for i in range(n) if sr[h][i] == v]
                    boundary_ties.append([li, h, fmt_score(v), len(same), sum(i in ks for i in same)])
            rows.append(sr)
        per_head_gaps(rows)
        st["rank_ties"] = len(rank_ties)
        case.update({"lag_fallback": fallback, "boundary_ties": boundary_ties, "rank_ties": rank_ties})
        if keep_scores:
            case["scores"] = rounded(rows)
    else:
        rows = []
        for li in range(n_layers):
            s = cap[li]["score"][0]
            sr = head_rows(s, n, "score")
            if press_name == "ExpectedAttentionPress":
                ns = params["n_sink"]
                pad = torch.tensor(s[:, :, ns:].max().item() + 1, dtype=torch.float32)
                if not bool((s[:, :, :ns] == pad).all()):
                    raise RuntimeError(f"layer {li}: sinks not scored the layer's max + 1")
            elif press_name == "CURPress":
                if not bool((s[:, :, :params["num_sinks"]] == 1).all()):
                    raise RuntimeError(f"layer {li}: sinks not scored 1")
            rows.append(sr)
        per_head_gaps(rows)
        if press_name == "LeverageScorePress":
            from kvpress.utils import get_prerope_key_states
            # The kept set under other sketches: torch.manual_seed(SEED + j) before the forward.
            dep = set()
            for j in range(1, LEVERAGE_SEEDS):
                other, _ = run_v4_press(model, press_name, params, ids, seed=SEED + j)
                dep |= {(li, h) for li in range(n_layers) for h in range(len(kept[li])) if other[li][h] != kept[li][h]}
            # The unsketched leverage of the centred pre-RoPE keys (float64): diag(X (X^T X)^-1 X^T).
            differs, exact_gap = [], math.inf
            for li in range(n_layers):
                mod = model.model.layers[li].self_attn
                with torch.no_grad():
                    k = get_prerope_key_states(mod, cap[li]["hidden"]).double()
                x = k - k.mean(dim=-2, keepdim=True)
                lev = (x * torch.linalg.solve(x.transpose(-2, -1) @ x, x.transpose(-2, -1)).transpose(-2, -1)).sum(-1)
                for h in range(len(kept[li])):
                    lv = lev[0, h].tolist()
                    top = sorted(sorted(range(n), key=lambda i: -lv[i])[:len(kept[li][h])])
                    if top != kept[li][h]:
                        differs.append([li, h])
                    g = rel_gap(lv, top)
                    if g is not None:
                        exact_gap = min(exact_gap, g)
            st["seed_dependent"] = len(dep)
            st["exact_differs"] = len(differs)
            st["exact_min_gap"] = exact_gap
            case.update({"sketch_seed": SEED, "seed_dependent_cells": [list(c) for c in sorted(dep)],
                         "exact_leverage_differs": differs})
        if keep_scores:
            case["scores"] = rounded(rows)
    case["n_kept"] = [len(heads[0]) for heads in kept]
    case["kept"] = kept
    case["tied_cells"] = sorted(tied)
    st["tied"] = len(tied)
    return case, st


def v4_score_group(field, case):
    """Cases whose `field` (a per-position list) kvpress computes from the same inputs: the params it does not
    depend on are left out of the key (the ratio, ChunkKV's chunk_length, CriticalKV's first_stage_ratio and
    epsilon; W_o v depends on no param at all). None: always recorded (CriticalKV's final scores)."""
    params = dict(case["params"])
    if case["press"] == "CriticalKVPress" and field == "scores":
        return None
    if case["press"] == "CriticalKVPress" and field == "wov_norm":
        params = {}
    for key in ("compression_ratio", "chunk_length", "first_stage_ratio", "epsilon"):
        params.pop(key, None)
    return (field, case["press"], case["prompt"], dumps(params))


def dedupe_v4_scores(v4_cases, stats):
    """Leave a version-4 case's per-position list out when it equals, value for value, the same list of the
    first case of its v4_score_group (file order): only that first case carries it. A list that differs stays
    (counted as "score_groups_differ" in the statistics; none do in the committed files)."""
    first = {}
    for case in v4_cases:
        for field in SCORE_FIELDS:
            if field not in case:
                continue
            key = v4_score_group(field, case)
            if key is None:
                continue
            if key not in first:
                first[key] = case[field]
            elif case[field] == first[key]:
                del case[field]
            else:
                st = stats.setdefault("score_groups_differ", {"cases": 0, "cells": 0, "tied": 0, "min_gap": math.inf})
                st["cases"] += 1


def fmt_score(x):
    if not math.isfinite(x):
        return None
    return float(f"{x:.9g}")


def dumps(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False)


def render(doc):
    """JSON with one prompt / case / skip per line, keys sorted: small diffs, identical bytes."""
    lines = ["{"]
    keys = sorted(doc)
    for i, key in enumerate(keys):
        comma = "," if i + 1 < len(keys) else ""
        val = doc[key]
        if key in ("cases", "decoding_cases", "prompts", "skipped") and val:
            lines.append(f"{json.dumps(key)}:[")
            lines += [dumps(v) + ("," if j + 1 < len(val) else "") for j, v in enumerate(val)]
            lines.append("]" + comma)
        else:
            lines.append(f"{json.dumps(key)}:{dumps(val)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def build(model, sdpa_model, model_label, vers, prompts, stats, keep_scores=True, max_bytes=MAX_FILE_BYTES):
    cases, skipped = [], []
    for p, ids in enumerate(prompts):
        n = len(ids)
        for press_name, params in press_configs():
            from kvpress.utils import compute_n_kept
            w = params.get("window_size")
            if press_name == "SnapKVPress" and compute_n_kept(n, params["compression_ratio"]) < w:
                reason = f"n_kept {compute_n_kept(n, params['compression_ratio'])} < window_size {w}"
                print(f"  skip {press_name} {params} prompt {p}: {reason}")
                skipped.append({"press": press_name, "params": params, "prompt": p, "reason": reason})
                continue
            try:
                n_kept, kept, scores = run_case(model, press_name, params, ids)
            except Exception as e:  # recorded, the run goes on
                reason = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                print(f"  skip {press_name} {params} prompt {p}: {reason}")
                skipped.append({"press": press_name, "params": params, "prompt": p, "reason": reason})
                continue
            case = {"press": press_name, "params": params, "prompt": p, "n": n, "n_kept": n_kept, "kept": kept}
            tied = []
            st = stats.setdefault(press_name, {"cases": 0, "cells": 0, "tied": 0, "min_gap": math.inf})
            st["cases"] += 1
            st["cells"] += sum(len(h) for h in kept)
            if scores is not None:
                rounded = [[[fmt_score(x) for x in row] for row in layer] for layer in scores]
                gaps = boundary_gaps(kept, scores)
                for li, row in enumerate(gaps):
                    for h, g in enumerate(row):
                        if g is None:
                            continue
                        st["min_gap"] = min(st["min_gap"], g)
                        if g < TIE_REL:
                            tied.append([li, h])
                if keep_scores:
                    case["scores"] = rounded
            st["tied"] += len(tied)
            case["tied_cells"] = tied
            cases.append(case)
    decoding_cases = []
    steps_max = max(c[3] for c in decoding_configs())
    continuations = make_continuations(model.config.vocab_size, prompts, steps_max)
    for p, interval, target, steps in decoding_configs():
        ids, cont = prompts[p], continuations[p][:steps]
        for base_name in DECODE_BASES:
            params = {"base_press": base_name, "compression_interval": interval, "target_size": target}
            gaps = []
            try:
                compressions, final_kept = run_decoding_case(model, base_name, interval, target, ids, cont, gaps)
            except Exception as e:  # recorded, the run goes on
                reason = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                print(f"  skip DecodingPress {params} prompt {p}: {reason}")
                skipped.append({"press": "DecodingPress", "params": params, "prompt": p, "reason": reason})
                continue
            tied = {}
            st = stats.setdefault(f"Decoding/{base_name}", {"cases": 0, "cells": 0, "tied": 0, "min_gap": math.inf})
            st["cases"] += 1
            for step, li, h, g in gaps:
                st["min_gap"] = min(st["min_gap"], g)
                if g < TIE_REL:
                    tied.setdefault(step, []).append([li, h])
            for c in compressions:
                c["tied_cells"] = tied.get(c["step"], [])
                st["cells"] += sum(len(heads) for heads in c["kept"])
                st["tied"] += len(c["tied_cells"])
            decoding_cases.append({"base_press": base_name, "interval": interval, "target_size": target,
                                   "prompt": p, "n": len(ids), "steps": steps, "continuation": cont,
                                   "compressions": compressions, "final_kept": final_kept})
    from kvpress.utils import compute_n_kept
    adakv_cases = []
    for p, ids in enumerate(prompts):
        n = len(ids)
        for inner, inner_params, r, alpha in adakv_configs():
            params = {"press": inner, "inner_params": inner_params, "compression_ratio": r, "alpha_safeguard": alpha}
            try:
                res = run_adakv_case(sdpa_model, inner, inner_params, r, alpha, ids)
                # Which cells the safeguard decides: those AdaKVPress(alpha_safeguard=0) keeps otherwise.
                free = run_adakv_case(sdpa_model, inner, inner_params, r, 0.0, ids)["kept"]
            except Exception as e:  # recorded, the run goes on
                reason = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                print(f"  skip AdaKVPress {params} prompt {p}: {reason}")
                skipped.append({"press": "AdaKVPress", "params": params, "prompt": p, "reason": reason})
                continue
            st = stats.setdefault(f"AdaKV/{inner}/{alpha:g}",
                                  {"cases": 0, "cells": 0, "tied": 0, "min_gap": math.inf})
            st["cases"] += 1
            st["cells"] += sum(len(h) for h in res["kept"])
            st["tied"] += len(res["tied_cells"])
            st["min_gap"] = min([st["min_gap"]] + [g for g in res["layer_gaps"] if g is not None])
            for key in ("safeguard_ties", "uneven_cells", "binds"):
                st.setdefault(key, 0)
            st["safeguard_ties"] += len(res["safeguard_ties"])
            per_head = compute_n_kept(n, r)
            st["uneven_cells"] += sum(c != per_head for row in res["head_kept"] for c in row)
            binds = [[li, h] for li, heads in enumerate(res["kept"]) for h, k in enumerate(heads) if k != free[li][h]]
            st["binds"] += len(binds)
            case = {"press": "AdaKVPress", "params": params, "prompt": p, "n": n,
                    "attn_implementation": ADAKV_ATTN, "n_kept": res["n_kept"], "head_kept": res["head_kept"],
                    "kept": res["kept"], "n_safe": res["n_safe"], "safeguarded": res["safeguarded"],
                    "tied_cells": res["tied_cells"], "safeguard_ties": res["safeguard_ties"],
                    "safeguard_binds": binds}
            if keep_scores:
                case["scores"] = [[[fmt_score(x) for x in row] for row in layer] for layer in res["scores"]]
            adakv_cases.append(case)
    v4_cases, v4_skipped = [], []
    for p, ids in enumerate(prompts):
        for press_name, params in v4_configs():
            m = sdpa_model if v4_attn(press_name) == "sdpa" else model
            try:
                case, cst = run_v4_case(m, press_name, params, ids, keep_scores)
            except Exception as e:  # recorded, the run goes on
                reason = f"{type(e).__name__}: {e}".splitlines()[0][:300]
                print(f"  skip {press_name} {params} prompt {p}: {reason}")
                v4_skipped.append({"press": press_name, "params": params, "prompt": p, "reason": reason})
                continue
            case["prompt"] = p
            st = stats.setdefault(v4_stat_key(press_name, params),
                                  {"cases": 0, "cells": 0, "tied": 0, "min_gap": math.inf})
            st["cases"] += 1
            for key, val in cst.items():
                st[key] = min(st.get(key, math.inf), val) if key.endswith("min_gap") else st.get(key, 0) + val
            v4_cases.append(case)
    dedupe_v4_scores(v4_cases, stats)
    # The AdaKV cases come first in "cases", so that the eager cases after them keep their bytes (and commas);
    # the version-4 cases (and skips) come before those, for the same reason.
    cases[:0] = adakv_cases
    cases[:0] = v4_cases
    skipped[:0] = v4_skipped
    doc = {"format": FORMAT, "version": VERSION, "made_by": "tools/goldens_kvpress.py",
           "kvpress": vers["kvpress"], "transformers": vers["transformers"], "torch": vers["torch"],
           "model": model_label, "dtype": "float32", "attn_implementation": "eager", "seed": SEED,
           "prompts": prompts, "cases": cases, "decoding_cases": decoding_cases, "skipped": skipped}
    text = render(doc)
    # Too big: drop scores from the largest cases first until it fits (the version-4 cases' first, then the
    # AdaKV cases'; of a version-4 case all its per-position score lists go: SCORE_FIELDS).
    while len(text.encode()) > max_bytes:
        with_scores = ([c for c in v4_cases if "scores" in c] or [c for c in adakv_cases if "scores" in c]
                       or [c for c in cases if "scores" in c])
        if not with_scores:
            break
        big = max(with_scores, key=lambda c: (len(dumps({k: c[k] for k in SCORE_FIELDS if k in c})), -cases.index(c)))
        for key in SCORE_FIELDS:
            big.pop(key, None)
        print(f"  warning: scores of {big['press']} {big['params']} prompt {big['prompt']} left out (file size)")
        text = render(doc)
    return text


def report(stats, label):
    print(f"  {label}: press: cases, (layer, KV head) cells, cells with boundary gap < {TIE_REL:g} rel, min rel gap")
    for name, st in stats.items():
        mg = "-" if st["min_gap"] == math.inf else f"{st['min_gap']:.3g}"
        extra = ""
        if "safeguard_ties" in st:  # AdaKV: min gap is the layer-wide one
            extra = (f"  (safeguard ties {st['safeguard_ties']}, cells keeping other than n (1 - r): "
                     f"{st['uneven_cells']}, cells the safeguard decides: {st['binds']})")
        else:  # version 4: press-specific counts
            more = [f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in st.items()
                    if k not in ("cases", "cells", "tied", "min_gap")]
            extra = f"  ({', '.join(more)})" if more else ""
        print(f"    {name:24s} {st['cases']:3d} {st['cells']:5d} {st['tied']:4d}  {mg}{extra}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated dirs of tests/data/models")
    ap.add_argument("--out", help="output dir (default tests/data/kvpress); with --smollm2 the output file")
    ap.add_argument("--check", action="store_true", help="compare with the files on disk instead of writing")
    ap.add_argument("--smollm2", action="store_true", help="only SmolLM2-135M from its GGUF, to a separate file")
    args = ap.parse_args()
    setup_torch()
    vers = versions()
    print(f"kvpress {vers['kvpress']}, transformers {vers['transformers']}, torch {vers['torch']}")

    jobs = []  # (label, loader, out_path, keep_scores); loader(attn_implementation) -> model
    if args.smollm2:
        ggufs = sorted(f for f in os.listdir(SMOLLM2_DIR) if f.endswith(".gguf")) if os.path.isdir(SMOLLM2_DIR) else []
        if not ggufs:
            sys.exit(f"no GGUF in {SMOLLM2_DIR}")
        out = args.out or os.path.expanduser("~/.cache/kvscope/kvpress/smollm2-135m.json")
        label = os.path.join(SMOLLM2_DIR.replace(os.path.expanduser("~"), "~"), ggufs[0])
        jobs.append((label, lambda attn: load_model(SMOLLM2_DIR, gguf_file=ggufs[0], attn_implementation=attn),
                     out, False))
    else:
        out_dir = args.out or os.path.join(ROOT, "tests", "data", "kvpress")
        for name in [m for m in args.models.split(",") if m]:
            path = os.path.join(ROOT, "tests", "data", "models", name)
            jobs.append((f"tests/data/models/{name}", (lambda attn, p=path: load_model(p, attn_implementation=attn)),
                         os.path.join(out_dir, f"{name}.json"), True))

    total, failed = {}, False
    for label, loader, out, keep_scores in jobs:
        print(f"{label} -> {os.path.relpath(out, ROOT) if out.startswith(ROOT) else out}")
        model = loader("eager")
        sdpa_model = loader(ADAKV_ATTN)  # a separate load: AdaKVPress refuses eager attention
        prompts = make_prompts(model.config.vocab_size)
        stats = {}
        text = build(model, sdpa_model, label, vers, prompts, stats, keep_scores=keep_scores,
                     max_bytes=MAX_FILE_BYTES if keep_scores else math.inf)
        report(stats, f"{len(text.encode()) / 1000:.0f} KB")
        for name, st in stats.items():
            t = total.setdefault(name, {"cases": 0, "cells": 0, "tied": 0, "min_gap": math.inf})
            for key in st:
                if key.endswith("min_gap"):
                    t[key] = min(t.get(key, math.inf), st[key])
                else:
                    t[key] = t.get(key, 0) + st[key]
        if args.check:
            old = open(out, encoding="utf-8").read() if os.path.exists(out) else None
            if old != text:
                print(f"  DIFFERS from {out}")
                failed = True
        else:
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out, "w", encoding="utf-8") as f:
                f.write(text)
    print("all files")
    report(total, "total")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
