// Slot scores from a segment's cached keys and values together (slot_stats.h:
// StatSource::Cur and StatSource::LagKv), one function each, written once
// for the CPU backend and the CUDA kernel (cache_scores.cu), which run this
// very code per segment: the same arithmetic in the same order.
// Sums run in slot order, then dimension order; the callers compile it
// without contraction into FMA (-ffp-contract=off, nvcc -fmad=false).
//
// CUR (Sengupta et al. 2025, CurDKV; kvpress's CURPress with its defaults,
// no random projection): k2_j = |k_j|^2, v2_j = |v_j|^2, each divided by
// its sum over its local window [c w, (c + 1) w) of slots (w = 0: no
// window), combined as k2 v2 (kv_product), k2, v2 or (k2 + v2) / 2, and
// the whole row divided by its sum over the segment.
//
// LagKV (Liang et al. 2025; kvpress's LagKVPress, cross_scoring off): with
// s sinks and lag l over len slots, end = s + floor((len - s) / l) l and
// partitions P_j = [s + j l, s + (j + 1) l). Each token of P_j (but the
// last partition) is scored against P_{j+1}: per channel,
// z = (x - min) / (max - min) over P_{j+1}'s tokens, the unbiased std of z
// over the channels, softmax over P_j, for keys and values alike; raw =
// (softmax_k + softmax_v) / 2 and the score is raw's rank in P_j (0 the
// lowest; equal raws rank by slot) divided by l. The sinks and the tail
// [end - l, len) score 1. Below s + 2 l slots: the sinks 1 and slot j >= s
// (j - s) / (len - s). A channel constant over P_{j+1} has z = 0 there
// (kvpress divides by zero).
#pragma once

#include <cmath>

#include "backend/slot_stats.h"
#include "common/float_math.h"

namespace kvscope {

constexpr int kCacheScoreMaxHd = 256;  // head_dim the scratch holds
constexpr int kLagKvMaxLag = 1024;     // LagKV's largest lag (the policy table's limit)

struct LagKvScratch {
  float min_k[kCacheScoreMaxHd], max_k[kCacheScoreMaxHd], min_v[kCacheScoreMaxHd], max_v[kCacheScoreMaxHd];
  float raw[kLagKvMaxLag];
};

// `Rows` gives k(j) and v(j): pointers to slot j's key and value, whose
// elements convert to float with Rows::to_float(x).
template <class Rows, class T>
KVSCOPE_HD float squared_norm(const T* x, int hd) {
  float s = 0.0f;
  for (int d = 0; d < hd; ++d) s += Rows::to_float(x[d]) * Rows::to_float(x[d]);
  return s;
}

template <class Rows>
KVSCOPE_HD void cur_scores(const Rows& rows, int len, int hd, const SlotStatRule& rule, float* out) {
  const int w = rule.span > 0 ? rule.span : len;
  float total = 0.0f;
  for (int c0 = 0; c0 < len; c0 += w) {
    const int c1 = c0 + w < len ? c0 + w : len;
    float sum_k = 0.0f, sum_v = 0.0f;
    for (int j = c0; j < c1; ++j) {
      sum_k += squared_norm<Rows>(rows.k(j), hd);
      sum_v += squared_norm<Rows>(rows.v(j), hd);
    }
    for (int j = c0; j < c1; ++j) {
      const float k2 = sum_k > 0.0f ? squared_norm<Rows>(rows.k(j), hd) / sum_k : 0.0f;
      const float v2 = sum_v > 0.0f ? squared_norm<Rows>(rows.v(j), hd) / sum_v : 0.0f;
      float s;
      switch (static_cast<CurLeverage>(rule.variant)) {
        case CurLeverage::Key: s = k2; break;
        case CurLeverage::Value: s = v2; break;
        case CurLeverage::KvAverage: s = (k2 + v2) / 2.0f; break;
        default: s = k2 * v2; break;
      }
      out[j] = s;
      total += s;
    }
  }
  if (total > 0.0f)
    for (int j = 0; j < len; ++j) out[j] = out[j] / total;
}

namespace lagkv {

// The unbiased std over the channels of (x - min) / (max - min).
template <class Rows, class T>
KVSCOPE_HD float spread(const T* x, int hd, const float* mn, const float* mx) {
  float mean = 0.0f;
  for (int d = 0; d < hd; ++d) {
    const float den = mx[d] - mn[d];
    mean += den > 0.0f ? (Rows::to_float(x[d]) - mn[d]) / den : 0.0f;
  }
  mean = mean / static_cast<float>(hd);
  float var = 0.0f;
  for (int d = 0; d < hd; ++d) {
    const float den = mx[d] - mn[d];
    const float z = (den > 0.0f ? (Rows::to_float(x[d]) - mn[d]) / den : 0.0f) - mean;
    var += z * z;
  }
  return sqrtf(var / static_cast<float>(hd > 1 ? hd - 1 : 1));
}

// Per-channel min and max of keys (values) over slots [r0, r0 + l).
template <class Rows>
KVSCOPE_HD void ranges(const Rows& rows, int r0, int l, int hd, LagKvScratch& s) {
  for (int d = 0; d < hd; ++d) {
    s.min_k[d] = s.max_k[d] = Rows::to_float(rows.k(r0)[d]);
    s.min_v[d] = s.max_v[d] = Rows::to_float(rows.v(r0)[d]);
  }
  for (int j = r0 + 1; j < r0 + l; ++j)
    for (int d = 0; d < hd; ++d) {
      const float k = Rows::to_float(rows.k(j)[d]), v = Rows::to_float(rows.v(j)[d]);
      s.min_k[d] = k < s.min_k[d] ? k : s.min_k[d];
      s.max_k[d] = k > s.max_k[d] ? k : s.max_k[d];
      s.min_v[d] = v < s.min_v[d] ? v : s.min_v[d];
      s.max_v[d] = v > s.max_v[d] ? v : s.max_v[d];
    }
}

}  // namespace lagkv

template <class Rows>
KVSCOPE_HD void lagkv_scores(const Rows& rows, int len, int hd, const SlotStatRule& rule, LagKvScratch& s, float* out) {
  const int sinks = rule.sinks, l = rule.span;
  if (len < sinks + 2 * l) {
    for (int j = 0; j < len; ++j)
      out[j] = j < sinks ? 1.0f : static_cast<float>(j - sinks) / static_cast<float>(len - sinks);
    return;
  }
  const int end = sinks + (len - sinks) / l * l;
  for (int j = 0; j < sinks; ++j) out[j] = 1.0f;
  for (int j = end - l; j < len; ++j) out[j] = 1.0f;
  for (int p0 = sinks; p0 + l < end; p0 += l) {
    lagkv::ranges(rows, p0 + l, l, hd, s);
    // Softmax of the keys' spreads over the partition (into out), then of
    // the values' (into raw), each shifted by its maximum.
    float top_k = -INFINITY, top_v = -INFINITY;
    for (int j = 0; j < l; ++j) {
      out[p0 + j] = lagkv::spread<Rows>(rows.k(p0 + j), hd, s.min_k, s.max_k);
      s.raw[j] = lagkv::spread<Rows>(rows.v(p0 + j), hd, s.min_v, s.max_v);
      top_k = out[p0 + j] > top_k ? out[p0 + j] : top_k;
      top_v = s.raw[j] > top_v ? s.raw[j] : top_v;
    }
    float sum_k = 0.0f, sum_v = 0.0f;
    for (int j = 0; j < l; ++j) {
      out[p0 + j] = fm::exp_nonpos(out[p0 + j] - top_k);
      s.raw[j] = fm::exp_nonpos(s.raw[j] - top_v);
      sum_k += out[p0 + j];
      sum_v += s.raw[j];
    }
    for (int j = 0; j < l; ++j) s.raw[j] = (out[p0 + j] / sum_k + s.raw[j] / sum_v) / 2.0f;
    for (int j = 0; j < l; ++j) {
      int below = 0;
      for (int t = 0; t < l; ++t) below += s.raw[t] < s.raw[j] || (s.raw[t] == s.raw[j] && t < j);
      out[p0 + j] = static_cast<float>(below) / static_cast<float>(l);
    }
  }
}

}  // namespace kvscope
