#!/usr/bin/env bash
# Regenerates everything on findings/README.md: datasets, sweeps, exports,
# figures, CSVs. About 30 CPU-minutes: roughly 18-25 minutes on an idle
# 2-core machine (see "Cost" on the page).
#
#   findings/run.sh                 # every stage
#   findings/run.sh sinks masks     # only the named stages
#
# Stages: data passkey kjv ablations streaming sinks masks plots gemma
# (gemma: the second real model, Gemma 3 270M, fetched the same way), and,
# run only when named, a2sf100 and tova100 (sections 4 and 3 on the 100-item sets), keyformer100 and streaming100
# (section 5 and the streaming-prefill check of section 2 on 100 KJV passages), kvpress100 (section 9: the policies taken from
# kvpress on the 100 pass-key items, about 22 minutes; kvpress100b its second half: CUR, PyramidKV, LagKV,
# ChunkKV, AdaKV and CriticalKV, about 30 minutes; kvpress100c the rest: LeverageScore and
# ExpectedAttention), gemma100 (section 8 on
# 100 long pass-key items: about 70 minutes) and passkey100
# kjv100: every policy x 5 budgets on 100
# items per set with $SEEDS seeds (default 3) for random and keyformer, for
# the tables with intervals (tables.py, pairs.py). One run per item for
# full, 5 per deterministic policy, 5 x SEEDS for random and keyformer: 56
# runs per item at SEEDS=3. Measured on a 2-core machine (2026-11-26, the
# prompt passes shared and the weights prepared once): passkey100 at
# SEEDS=3 took 3557 s wall, much of it beside builds and another sweep;
# KJV's answers are 3-4 times longer (about 20 tokens), so kjv100 costs
# about 3 times as much (findings/run.sh passkey100 kjv100 plots; RESUME=1
# goes on with an interrupted one).
# Needs: a built kvscope-cli (build/release), the Debian packages bible-kjv
# and bible-kjv-text (only for the `data` stage), python3 with numpy and
# matplotlib (for the `sinks`, `masks` and `plots` stages). RAY=N (with
# RAY_PYTHON=build/venv-ray/bin/python, tools/ray-venv.sh) runs each sweep as N
# shards on a local Ray cluster through tools/ray_sweep.py: the same files. The model is fetched with
# tools/get-model.sh into its usual cache ($KVSCOPE_MODELS to use another).
set -euo pipefail
cd "$(dirname "$0")/.."
F=findings
B=${KVSCOPE_CLI:-build/release/app/cli/kvscope-cli}
[ -x "$B" ] || { echo "run.sh: $B is missing; build it first (README quick start)" >&2; exit 1; }
M=$(tools/get-model.sh smollm2-135m)
W=${FINDINGS_WORK:-/tmp/kvscope-findings}     # big intermediate files (attention.npy ...) stay here
mkdir -p "$W" $F/data $F/figures
NICE="nice -n 10"
STAGES=${*:-data passkey kjv ablations streaming sinks masks plots gemma}
SEEDS=${SEEDS:-3}   # seeds per item for the policies that draw random numbers
has() { [[ " $STAGES " == *" $1 "* ]]; }
t0=$(date +%s)
stamp() { echo "[$(( $(date +%s) - t0 )) s] $*"; }

# A session file for the sweeps: the model and the per-policy settings;
# the dataset gives prompts and answers. Metrics off (no shadow full-cache
# run): the sweeps need only the answers' NLL and accuracy.
session() {  # session NAME POLICY_JSON [MODEL, default SmolLM2]
  cat > "$W/$1.json" <<JSON
{"format": "kvscope-session", "version": 1, "model": "${3:-$M}", "prompt": "unused",
 "max_new_tokens": 32, "policy": $2, "recording": {"metrics": false}, "seed": 0}
JSON
}
sweep() {  # sweep NAME SESSION DATASET POLICIES BUDGETS [more sweep flags]
  # RESUME=1 goes on with an interrupted sweep of the same settings (its
  # finished cells are kept in $W/sweep_NAME/cells) instead of starting over.
  # RAY=N runs it as N shards on a local Ray cluster (tools/ray_sweep.py,
  # RAY_PYTHON: a python with the ray package, RAY_CPUS workers, default
  # all cores, one thread each): the same files, merged.
  local resume=()
  if [ -n "${RAY:-}" ]; then
    rm -rf "$W/sweep_$1" "$W/sweep_$1.shards"
    KVSCOPE_THREADS=1 $NICE "${RAY_PYTHON:-python3}" tools/ray_sweep.py --shards "$RAY" ${RAY_CPUS:+--local-cpus "$RAY_CPUS"} \
      --cli "$(realpath "$B")" --out "$W/sweep_$1" -- "$W/$2.json" --policies "$4" --budgets "$5" --dataset "$3" \
      --dpi 110 "${@:6}" >&2
  else
    if [ -n "${RESUME:-}" ] && [ -f "$W/sweep_$1/cells/sweep.json" ]; then resume=(--resume); else rm -rf "$W/sweep_$1"; fi
    $NICE "$B" sweep "$W/$2.json" --policies "$4" --budgets "$5" --dataset "$3" --out "$W/sweep_$1" --dpi 110 "${@:6}" "${resume[@]}" >/dev/null
  fi
  cp "$W/sweep_$1/sweep.csv" "$F/data/sweep_$1.csv"
  cp "$W/sweep_$1/sweep_items.csv" "$F/data/sweep_$1_items.csv"
}
ALL=full,window,sink,h2o,tova,keyformer,a2sf,random
BUDGETS=10%,30%,50%,70%,90%

if has data; then
  if command -v bible >/dev/null; then
    stamp "datasets"
    python3 $F/make_datasets.py
  else
    stamp "datasets: 'bible' (Debian bible-kjv) is not installed; using the committed files"
  fi
fi

if has passkey; then
  stamp "pass-key sweep: every policy x 5 budgets x 6 items"
  session base '{"name": "full"}'
  sweep passkey base assets/eval/passkey_smollm.jsonl $ALL $BUDGETS
  cp "$W/sweep_passkey/sweep_accuracy.png" $F/figures/passkey_accuracy.png
  cp "$W/sweep_passkey/sweep_answer_nll.png" $F/figures/passkey_answer_nll.png
fi

if has kjv; then
  stamp "KJV sweep: every policy x 5 budgets x 5 passages"
  session base '{"name": "full"}'
  sweep kjv base assets/eval/kjv.jsonl $ALL $BUDGETS
  cp "$W/sweep_kjv/sweep_answer_nll.png" $F/figures/kjv_answer_nll.png
fi

if has passkey100; then
  stamp "pass-key sweep: every policy x 5 budgets x 100 items, $SEEDS seeds for random and keyformer"
  session base '{"name": "full"}'
  sweep passkey100 base assets/eval/passkey_smollm_100.jsonl $ALL $BUDGETS --seeds "$SEEDS"
  cp "$W/sweep_passkey100/sweep_accuracy.png" $F/figures/passkey100_accuracy.png
  cp "$W/sweep_passkey100/sweep_answer_nll.png" $F/figures/passkey100_answer_nll.png
fi

if has kjv100; then
  stamp "KJV sweep: every policy x 5 budgets x 100 passages, $SEEDS seeds for random and keyformer"
  session base '{"name": "full"}'
  sweep kjv100 base assets/eval/kjv_100.jsonl $ALL $BUDGETS --seeds "$SEEDS"
  cp "$W/sweep_kjv100/sweep_answer_nll.png" $F/figures/kjv100_answer_nll.png
fi

if has kvpress100; then
  # The policies kvscope took from kvpress (docs/policies.md, "kvpress's
  # presses in kvscope") beside H2O and TOVA on the same 100 items; H2O's
  # mean score (ObservedAttention) is a setting of h2o, so a second sweep.
  stamp "pass-key sweep: kvpress's policies x 5 budgets x 100 items"
  session base '{"name": "full"}'
  sweep passkey100_kvpress base assets/eval/passkey_smollm_100.jsonl full,h2o,tova,snapkv,knorm,keydiff $BUDGETS
  session h2o_mean '{"name": "h2o", "h2o_score": "mean"}'
  sweep passkey100_h2o_mean h2o_mean assets/eval/passkey_smollm_100.jsonl h2o $BUDGETS
  # SnapKV's observation window at 16 (the question and a little before
  # it) beside kvpress's default 64 (mostly filler on these prompts).
  session snapkv_w16 '{"name": "snapkv", "window": 16}'
  sweep passkey100_snapkv_w16 snapkv_w16 assets/eval/passkey_smollm_100.jsonl snapkv $BUDGETS
  cp "$W/sweep_passkey100_kvpress/sweep_accuracy.png" $F/figures/passkey100_kvpress_accuracy.png
fi

if has kvpress100b; then
  # The second half of section 9: the policies taken from kvpress with its
  # goldens of version 3 and 4 (CUR, LagKV, ChunkKV, AdaKV) and PyramidKV,
  # on the same 100 items. LagKV's default lag of 128 needs prompts of 260
  # tokens before it scores anything (below that it keeps the newest, a
  # sliding window), so it runs at lag 32 here; ChunkKV around SnapKV at
  # kvpress's chunk of 10 tokens (one decision per layer); AdaKV around
  # SnapKV with kvpress's safeguard of 0.2; CriticalKV around SnapKV with
  # its first stage of 0.5.
  stamp "pass-key sweep: CUR, PyramidKV, LagKV, ChunkKV(SnapKV), AdaKV(SnapKV), CriticalKV(SnapKV) x 5 budgets x 100 items"
  session base '{"name": "full"}'
  sweep passkey100_kvpress2 base assets/eval/passkey_smollm_100.jsonl cur,pyramidkv $BUDGETS
  session lagkv_l32 '{"name": "lagkv", "lag": 32}'
  sweep passkey100_lagkv_l32 lagkv_l32 assets/eval/passkey_smollm_100.jsonl lagkv $BUDGETS
  session chunk_snapkv '{"name": "snapkv", "granularity": "layer", "chunk_length": 10}'
  sweep passkey100_chunk_snapkv chunk_snapkv assets/eval/passkey_smollm_100.jsonl snapkv $BUDGETS
  session adakv_snapkv '{"name": "snapkv", "head_budgets": "adaptive"}'
  sweep passkey100_adakv_snapkv adakv_snapkv assets/eval/passkey_smollm_100.jsonl snapkv $BUDGETS
  session critical_snapkv '{"name": "snapkv", "critical_kv": "on"}'
  sweep passkey100_critical_snapkv critical_snapkv assets/eval/passkey_smollm_100.jsonl snapkv $BUDGETS
fi

if has kvpress100c; then
  # The last of section 9: LeverageScore and ExpectedAttention (goldens of
  # version 4) at their defaults (ExpectedAttention: 4 sinks, 512 future
  # positions, covariance and value norm on), on the same 100 items.
  stamp "pass-key sweep: LeverageScore, ExpectedAttention x 5 budgets x 100 items"
  session base '{"name": "full"}'
  sweep passkey100_kvpress3 base assets/eval/passkey_smollm_100.jsonl leverage,expected $BUDGETS
  # kvpress's DecodingPress schedule: the prompt stays whole, the cache is
  # cut to the budget after decode steps 2, 4, 6, ... (the answers are 5 to
  # 8 tokens, so a cut falls inside every answer).
  stamp "pass-key sweep: TOVA, KeyDiff, Knorm, H2O, SnapKV under the decoding schedule (interval 2) x 5 budgets x 100 items"
  session decoding2 '{"name": "tova", "compression_interval": 2}'
  sweep passkey100_decoding2 decoding2 assets/eval/passkey_smollm_100.jsonl tova,keydiff,knorm,h2o,snapkv $BUDGETS
fi

if has ablations; then
  AB=30%,50%
  stamp "TOVA per KV head (per layer is in the main sweeps)"
  session tova_head '{"name": "tova", "granularity": "kv_head"}'
  sweep tova_head_kjv tova_head assets/eval/kjv.jsonl tova $BUDGETS
  sweep tova_head_passkey tova_head assets/eval/passkey_smollm.jsonl tova $BUDGETS
  stamp "A2SF forgetting factor"
  for a in 0 0.1 0.5 0.9 1; do
    session a2sf_$a "{\"name\": \"a2sf\", \"alpha\": $a}"
    sweep a2sf_${a}_kjv a2sf_$a assets/eval/kjv.jsonl a2sf $AB
  done
  stamp "Keyformer noise and temperature"
  for n in gaussian none; do
    session kf_$n "{\"name\": \"keyformer\", \"noise\": \"$n\"}"
    sweep kf_noise_${n}_kjv kf_$n assets/eval/kjv.jsonl keyformer $AB
  done
  for t in 1 2; do
    session kf_tau$t "{\"name\": \"keyformer\", \"tau_init\": $t, \"tau_end\": $t, \"tau_schedule\": \"constant\"}"
    sweep kf_tau_const${t}_kjv kf_tau$t assets/eval/kjv.jsonl keyformer $AB
  done
fi

if has a2sf100; then
  # Section 4 on the 100 KJV passages: A2SF's forgetting factor at 30% and
  # 50% (alpha = 0.2 is in the kjv100 sweep); a2sf draws no random numbers.
  stamp "A2SF forgetting factor, 100 KJV passages"
  for a in 0 0.1 0.5 0.9 1; do
    session a2sf_$a "{\"name\": \"a2sf\", \"alpha\": $a}"
    sweep a2sf_${a}_kjv100 a2sf_$a assets/eval/kjv_100.jsonl a2sf 30%,50%
  done
fi

if has tova100; then
  # Section 3 on the 100-item sets: TOVA per KV head (per layer is in the
  # passkey100 and kjv100 sweeps).
  stamp "TOVA per KV head, 100 items per set"
  session tova_head '{"name": "tova", "granularity": "kv_head"}'
  sweep tova_head_kjv100 tova_head assets/eval/kjv_100.jsonl tova $BUDGETS
  sweep tova_head_passkey100 tova_head assets/eval/passkey_smollm_100.jsonl tova $BUDGETS
fi

if has keyformer100; then
  # Section 5 on the 100 KJV passages: Keyformer's noise (Gaussian, none)
  # and a fixed temperature (1, 2) at 30% and 50%, $SEEDS seeds each (the
  # default, Gumbel with tau 1 -> 2, is in the kjv100 sweep).
  stamp "Keyformer noise and temperature, 100 KJV passages, $SEEDS seeds"
  for n in gaussian none; do
    session kf_$n "{\"name\": \"keyformer\", \"noise\": \"$n\"}"
    sweep kf_noise_${n}_kjv100 kf_$n assets/eval/kjv_100.jsonl keyformer 30%,50% --seeds "$SEEDS"
  done
  for t in 1 2; do
    session kf_tau$t "{\"name\": \"keyformer\", \"tau_init\": $t, \"tau_end\": $t, \"tau_schedule\": \"constant\"}"
    sweep kf_tau_const${t}_kjv100 kf_tau$t assets/eval/kjv_100.jsonl keyformer 30%,50% --seeds "$SEEDS"
  done
fi

if has streaming100; then
  # Section 2's streaming-prefill check (TOVA's language-modelling
  # protocol) on the 100 KJV passages at 30%: every prompt token is a
  # decoding step, so about five times a one-shot cell.
  stamp "streaming prefill at 30%, 100 KJV passages"
  session stream '{"name": "full", "prefill": "streaming"}'
  sweep stream_kjv100 stream assets/eval/kjv_100.jsonl tova,h2o,sink,a2sf 30%
fi

if has streaming; then
  stamp "streaming prefill (TOVA's language-modelling protocol) at 30%"
  session stream '{"name": "full", "prefill": "streaming"}'
  sweep stream_kjv stream assets/eval/kjv.jsonl tova,h2o,sink,a2sf 30%
fi

if has sinks; then
  stamp "attention sinks: 300 tokens of Ruth 1 read with teacher forcing, attention of every layer and head"
  rm -rf "$W/sinks"
  # 16 tokens of prompt, then every later token is one decoding step whose
  # attention row (every layer and head) is recorded
  $NICE "$B" score "$M" --text-file $F/data/sinks_text.txt --prompt-tokens 16 --no-metrics \
    --export "$W/sinks" --export-layer 15 --export-head 0 --dpi 110 > "$W/sinks_score.txt"
  python3 $F/sinks.py "$W/sinks" $F
fi

if has masks; then
  stamp "kept sets of every policy on one prompt"
  P=$(python3 -c "import json; print(json.loads(open('assets/eval/passkey_smollm.jsonl').readline())['prompt'])")
  for p in window sink h2o tova keyformer a2sf random; do
    rm -rf "$W/mask_$p"
    $NICE "$B" generate "$M" --prompt "$P" --max-new-tokens 8 --policy $p --budget 30% \
      --export "$W/mask_$p" --export-layer 15 --export-head 0 --dpi 110 > /dev/null
  done
  cp "$W/mask_h2o/attention_L15_H0.png" $F/figures/heatmap_h2o_L15_H0.png
  cp "$W/mask_tova/attention_L15_H0.png" $F/figures/heatmap_tova_L15_H0.png
  python3 $F/masks.py "$W" $F
fi

if has plots; then
  stamp "ablation plots (from the 100-item data of the passkey100, kjv100, tova100, a2sf100 and keyformer100 stages)"
  python3 $F/ablations.py $F
  python3 $F/tables.py $F
  # The paired comparisons the page's claims name, on the 100-item sets.
  PAIRS=h2o:random,keyformer:h2o,tova:h2o,a2sf:h2o,sink:window,tova:random,keyformer:random
  for set in passkey100 kjv100; do
    [ -f $F/data/sweep_${set}_items.csv ] && python3 $F/pairs.py $F/data/sweep_${set}_items.csv $PAIRS > $F/data/pairs_$set.md
  done
  for set in passkey100 kjv100; do  # section 6: the sink window against the plain window and the full cache
    [ -f $F/data/sweep_${set}_items.csv ] && python3 $F/pairs.py $F/data/sweep_${set}_items.csv \
      sink:window,sink:full,window:full,sink:h2o > $F/data/pairs_sink_window_$set.md
  done
  for set in kjv100 passkey100; do  # section 3 on the 100-item sets (stage tova100)
    [ -f $F/data/sweep_tova_head_${set}_items.csv ] || continue
    python3 $F/merge_items.py $F/data/tova_granularity_${set}_items.csv \
      $F/data/sweep_${set}_items.csv:tova=tova_layer $F/data/sweep_tova_head_${set}_items.csv:tova=tova_kv_head
    python3 $F/pairs.py $F/data/tova_granularity_${set}_items.csv tova_layer:tova_kv_head > $F/data/pairs_tova_granularity_$set.md
  done
  if [ -f $F/data/sweep_a2sf_1_kjv100_items.csv ]; then  # section 4 on 100 passages (stage a2sf100)
    specs=()
    for a in 0 0.1 0.5 0.9 1; do specs+=("$F/data/sweep_a2sf_${a}_kjv100_items.csv:a2sf=a2sf_$a"); done
    python3 $F/merge_items.py --budgets 30%,50% $F/data/a2sf_alpha_kjv100_items.csv "${specs[@]}" \
      $F/data/sweep_kjv100_items.csv:a2sf=a2sf_0.2 $F/data/sweep_kjv100_items.csv:h2o=h2o
    python3 $F/pairs.py $F/data/a2sf_alpha_kjv100_items.csv \
      a2sf_0:a2sf_0.2,a2sf_0.1:a2sf_0.2,a2sf_0.5:a2sf_0.2,a2sf_0.9:a2sf_0.2,a2sf_1:a2sf_0.2,a2sf_0.1:h2o,a2sf_0.5:h2o \
      > $F/data/pairs_a2sf_alpha_kjv100.md
  fi
  if [ -f $F/data/sweep_kf_tau_const2_kjv100_items.csv ]; then  # section 5 on 100 passages (stage keyformer100)
    specs=()
    for n in gaussian none; do specs+=("$F/data/sweep_kf_noise_${n}_kjv100_items.csv:keyformer=kf_$n"); done
    for t in 1 2; do specs+=("$F/data/sweep_kf_tau_const${t}_kjv100_items.csv:keyformer=kf_tau$t"); done
    python3 $F/merge_items.py --budgets 30%,50% $F/data/keyformer_ablation_kjv100_items.csv "${specs[@]}" \
      $F/data/sweep_kjv100_items.csv:keyformer=keyformer $F/data/sweep_kjv100_items.csv:h2o=h2o $F/data/sweep_kjv100_items.csv:full=full
    python3 $F/pairs.py $F/data/keyformer_ablation_kjv100_items.csv \
      kf_gaussian:keyformer,kf_none:keyformer,kf_tau1:keyformer,kf_tau2:keyformer,keyformer:h2o > $F/data/pairs_keyformer_ablation_kjv100.md
  fi
  if [ -f $F/data/sweep_stream_kjv100_items.csv ]; then  # section 2's streaming check on 100 passages (stage streaming100)
    specs=()
    for p in tova h2o sink a2sf; do specs+=("$F/data/sweep_stream_kjv100_items.csv:$p=${p}_stream" "$F/data/sweep_kjv100_items.csv:$p=$p"); done
    python3 $F/merge_items.py --budgets 30% $F/data/streaming_kjv100_items.csv "${specs[@]}"
    python3 $F/pairs.py $F/data/streaming_kjv100_items.csv \
      tova_stream:tova,h2o_stream:h2o,sink_stream:sink,a2sf_stream:a2sf,tova_stream:h2o_stream,tova_stream:sink_stream,tova_stream:a2sf_stream,tova:h2o,sink:tova \
      > $F/data/pairs_streaming_kjv100.md
  fi
  if [ -f $F/data/sweep_passkey100_kvpress_items.csv ]; then
    python3 $F/kvpress_merge.py $F/data > $F/data/kvpress100.md
    python3 $F/pairs.py $F/data/sweep_passkey100_kvpress_all_items.csv \
      keydiff:tova,keydiff:h2o,snapkv:h2o,snapkv_w16:snapkv,snapkv_w16:h2o,knorm:h2o,h2o_mean:h2o > $F/data/pairs_kvpress100.md
    [ -f $F/data/sweep_passkey100_critical_snapkv_items.csv ] && python3 $F/pairs.py $F/data/sweep_passkey100_kvpress_all_items.csv \
      cur:knorm,cur:keydiff,lagkv_l32:tova,pyramidkv:snapkv,chunkkv_snapkv:snapkv,adakv_snapkv:snapkv,criticalkv_snapkv:snapkv,cur:h2o \
      > $F/data/pairs_kvpress100b.md
    [ -f $F/data/sweep_passkey100_kvpress3_items.csv ] && python3 $F/pairs.py $F/data/sweep_passkey100_kvpress_all_items.csv \
      leverage:knorm,leverage:keydiff,leverage:cur,expected:snapkv,expected:tova,expected:h2o_mean,leverage:tova,tova_dec2:tova,keydiff_dec2:keydiff,knorm_dec2:knorm,h2o_dec2:h2o,snapkv_dec2:snapkv \
      > $F/data/pairs_kvpress100c.md
  fi
  [ -f $F/data/sweep_gemma_passkey100_items.csv ] && python3 $F/pairs.py $F/data/sweep_gemma_passkey100_items.csv \
    tova:h2o,a2sf:h2o,tova:a2sf,keyformer:h2o,tova:full,a2sf:full,h2o:random,keyformer:random,sink:window \
    > $F/data/pairs_gemma_passkey100.md
fi
if has gemma; then
  stamp "Gemma 3 270M: long pass keys past its sliding window, every policy; each layer's share on the key"
  G=$(tools/get-model.sh gemma3-270m)
  session gemma '{"name": "full"}' "$G"
  sweep gemma_passkey gemma assets/eval/passkey_gemma.jsonl $ALL "10%,25%,50%"
  cp "$W/sweep_gemma_passkey/sweep_accuracy.png" $F/figures/gemma_passkey_accuracy.png
  P=$(python3 -c "import json; print(json.loads(open('assets/eval/passkey_gemma.jsonl').readline())['prompt'])")
  K=$(python3 -c "import json; print(json.loads(open('assets/eval/passkey_gemma.jsonl').readline())['answer'].strip(' .'))")
  rm -rf "$W/gemma_full"
  $NICE "$B" generate "$G" --prompt "$P" --max-new-tokens 6 --no-metrics --export "$W/gemma_full" --dpi 110 > /dev/null
  python3 $F/gemma_layers.py "$W/gemma_full" $F "$K"
fi
if has gemma100; then
  # Section 8 at the page's standard: the same sweep on 100 long pass-key
  # items (passkey_gemma_100.jsonl, seed 41), SEEDS seeds for random and
  # keyformer. About 34 runs of ~780 tokens per item at SEEDS=3: 3,400
  # runs took about 68 minutes wall on 2 cores (2026-11-26, partly beside
  # builds; about 1 s per run); RESUME=1 goes on (a policy's cells are
  # saved when all its items are done).
  stamp "Gemma 3 270M: 100 long pass keys, every policy, $SEEDS seeds"
  G=$(tools/get-model.sh gemma3-270m)
  session gemma '{"name": "full"}' "$G"
  sweep gemma_passkey100 gemma assets/eval/passkey_gemma_100.jsonl $ALL "10%,25%,50%" --seeds "$SEEDS"
  cp "$W/sweep_gemma_passkey100/sweep_accuracy.png" $F/figures/gemma_passkey100_accuracy.png
fi
stamp "done"
