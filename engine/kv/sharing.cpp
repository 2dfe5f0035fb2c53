#include "kv/sharing.h"

#include <cstdlib>
#include <map>

#include "common/error.h"

namespace kvscope {
namespace {

int parse_count(const std::string& s, const std::string& text) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v <= 0 || v > 1 << 20)
    throw Error::setting("sharing", "expected a positive count in '" + text + "'");
  return static_cast<int>(v);
}

}  // namespace

SharingLayout SharingLayout::parse(const std::string& text) {
  SharingLayout s;
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  const std::string& name = parts[0];
  if (name == "native" && parts.size() == 1) s.kind = Kind::Native;
  else if (name == "mha" && parts.size() == 1) s.kind = Kind::MHA;
  else if (name == "mqa" && parts.size() == 1) s.kind = Kind::MQA;
  else if (name == "gqa" && parts.size() == 2) {
    s.kind = Kind::GQA;
    s.kv_heads = parse_count(parts[1], text);
  } else if (name == "mlkv" && (parts.size() == 2 || parts.size() == 3)) {
    s.kind = Kind::MLKV;
    s.kv_layers = parse_count(parts[1], text);
    if (parts.size() == 3) s.kv_heads = parse_count(parts[2], text);
  } else {
    throw Error::setting("sharing", "unknown sharing layout '" + text +
                                     "' (choose from native, mha, gqa:G, mqa, mlkv:M, mlkv:M:G)");
  }
  return s;
}

std::string SharingLayout::str() const {
  switch (kind) {
    case Kind::Native: return "native";
    case Kind::MHA: return "mha";
    case Kind::MQA: return "mqa";
    // Appending (not "literal" + string) sidesteps a GCC 12 -Wrestrict false positive.
    case Kind::GQA: {
      std::string out = "gqa:";
      out += std::to_string(kv_heads);
      return out;
    }
    case Kind::MLKV: {
      std::string out = "mlkv:";
      out += std::to_string(kv_layers);
      if (kv_heads) {
        out += ':';
        out += std::to_string(kv_heads);
      }
      return out;
    }
  }
  return "?";
}

std::pair<int, int> SharingLayout::resolve(const ModelConfig& c) const {
  switch (kind) {
    case Kind::Native: return {c.n_kv_layers, c.n_kv_heads};
    case Kind::MHA: return {c.n_layers, c.n_heads};
    case Kind::MQA: return {c.n_kv_layers, 1};
    case Kind::GQA: return {c.n_kv_layers, kv_heads};
    case Kind::MLKV: return {kv_layers, kv_heads ? kv_heads : c.n_kv_heads};
  }
  return {c.n_kv_layers, c.n_kv_heads};
}

std::pair<int, int> check_sharing(const ModelConfig& cfg, const SharingLayout& layout) {
  const auto [m, g] = layout.resolve(cfg);
  const int m0 = cfg.n_kv_layers, g0 = cfg.n_kv_heads, H = cfg.n_heads, L = cfg.n_layers;
  const std::string what = "layout " + layout.str() + " (" + std::to_string(m) + " KV layers x " +
                           std::to_string(g) + " KV heads)";
  if (m == m0 && g == g0) return {m, g};
  if (g < 1 || H % g != 0)
    throw Error::setting("sharing", what + ": KV heads must divide the " + std::to_string(H) + " query heads");
  if (m < 1 || m > L) throw Error::setting("sharing", what + ": KV layers must be between 1 and " + std::to_string(L));
  // Layers sharing one KV must attend alike: a key rotated with one RoPE
  // base, normalised by one layer's k_norm, masked by one window.
  if (m != m0 && (!cfg.layers_alike() || cfg.qk_norm))
    throw Error::setting("sharing", what + ": " + cfg.model_type +
                                     "'s layers differ (sliding windows, RoPE bases or per-layer key norms), so they "
                                     "cannot share KV across layers; change the KV heads only");
  if (g0 % g != 0 && g % g0 != 0)
    throw Error::setting("sharing", what + ": cannot merge or duplicate the checkpoint's " + std::to_string(g0) +
                                     " KV heads into " + std::to_string(g));
  return {m, g};
}

SharingLayout SharingLayout::with_kind(Kind k, const ModelConfig& cfg) const {
  SharingLayout out = *this;
  out.kind = k;
  // Counts that work on this model: its own KV heads, and half its layers
  // owning KV (MLKV's smallest saving that still shares).
  if (k == Kind::GQA && out.kv_heads <= 0) out.kv_heads = cfg.n_kv_heads;
  if (k == Kind::MLKV) {
    if (out.kv_layers <= 0 || out.kv_layers > cfg.n_layers) out.kv_layers = std::max(1, cfg.n_layers / 2);
    if (out.kv_heads <= 0) out.kv_heads = cfg.n_kv_heads;
  }
  return out;
}

void convert_sharing(ModelConfig& cfg, ModelWeights& w, const SharingLayout& layout) {
  const auto [m, g] = check_sharing(cfg, layout);
  const int m0 = cfg.n_kv_layers, g0 = cfg.n_kv_heads, L = cfg.n_layers, hd = cfg.head_dim;
  if (m == m0 && g == g0) return;
  const auto old_src = cfg.kv_source();   // layer -> index into old owners
  const auto old_owners = cfg.owning_layers();
  ModelConfig target = cfg;
  target.n_kv_layers = m;
  target.n_kv_heads = g;
  const auto new_src = target.kv_source();
  const auto new_owners = target.owning_layers();
  const int64_t d = cfg.hidden;

  // Old K/V as fp32 per owning layer.
  struct Proj { std::vector<float> wk, wv, bk, bv; };
  std::vector<Proj> old(old_owners.size());
  for (std::size_t i = 0; i < old_owners.size(); ++i) {
    const auto& Lw = w.layers[old_owners[i]];
    old[i].wk = Lw.wk.to_f32();
    old[i].wv = Lw.wv.to_f32();
    if (!Lw.bk.empty()) old[i].bk = Lw.bk.to_f32();
    if (!Lw.bv.empty()) old[i].bv = Lw.bv.to_f32();
  }
  const bool bias = !old[0].bk.empty();
  for (auto& lw : w.layers) lw.wk = lw.wv = lw.bk = lw.bv = WeightTensor{};

  for (int o = 0; o < m; ++o) {
    // The old KV sources read by the layers this new owner serves, counted per reading layer.
    std::map<int, int> sources;
    for (int l = 0; l < L; ++l)
      if (new_src[l] == o) ++sources[old_src[l]];
    int total = 0;
    for (auto& [src, n] : sources) total += n;
    std::vector<float> wk(size_t(g) * hd * d, 0.f), wv(wk.size(), 0.f), bk(bias ? size_t(g) * hd : 0, 0.f),
        bv(bk.size(), 0.f);
    for (int j = 0; j < g; ++j) {
      // Old heads feeding new head j: merge (g < g0) or the one it copies (g > g0).
      std::vector<int> heads;
      if (g <= g0) {
        for (int k = 0; k < g0 / g; ++k) heads.push_back(j * (g0 / g) + k);
      } else {
        heads.push_back(j / (g / g0));
      }
      const float wgt = 1.0f / static_cast<float>(heads.size() * total);
      for (auto& [src, n] : sources) {
        for (int oh : heads) {
          const float f = wgt * static_cast<float>(n);
          for (int64_t r = 0; r < hd; ++r) {
            const size_t dst = (size_t(j) * hd + r) * d, from = (size_t(oh) * hd + r) * d;
            for (int64_t c = 0; c < d; ++c) {
              wk[dst + c] += f * old[src].wk[from + c];
              wv[dst + c] += f * old[src].wv[from + c];
            }
            if (bias) {
              bk[size_t(j) * hd + r] += f * old[src].bk[size_t(oh) * hd + r];
              bv[size_t(j) * hd + r] += f * old[src].bv[size_t(oh) * hd + r];
            }
          }
        }
      }
    }
    auto& lw = w.layers[new_owners[o]];
    lw.wk = WeightTensor::owned_f32(std::move(wk), {int64_t(g) * hd, d});
    lw.wv = WeightTensor::owned_f32(std::move(wv), {int64_t(g) * hd, d});
    if (bias) {
      lw.bk = WeightTensor::owned_f32(std::move(bk), {int64_t(g) * hd});
      lw.bv = WeightTensor::owned_f32(std::move(bv), {int64_t(g) * hd});
    }
  }
  cfg = target;
}

}  // namespace kvscope
