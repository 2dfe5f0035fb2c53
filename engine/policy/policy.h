// An eviction policy: which statistic the backend accumulates for it each
// step, and how slots are ranked for keeping. The rules are in docs/policies.md;
// each policy is one small file (full.cpp, h2o.cpp, ...). Choosing the slots
// from the ranking — budgets, sinks, the recent window, granularity — is
// shared by all of them (selection.h).
#pragma once

#include <memory>

#include "kv/kv_layout.h"
#include "policy/params.h"

namespace kvscope {

// Where the decoding is, for the statistics that depend on it.
struct StepContext {
  int step = 0;              // 0 for the prompt, then 1, 2, ... per generated token
  int planned_new_tokens = 1;  // T in Keyformer's temperature schedule
};

enum class Ranking {
  None,       // never ranks (full)
  Statistic,  // keep the highest per-slot statistic
  Recency,    // keep the newest
  Random,     // keep a seeded random choice
};

class Policy {
 public:
  explicit Policy(ResolvedPolicy r) : r_(std::move(r)) {}
  virtual ~Policy() = default;
  virtual Ranking ranking() const = 0;
  // The statistic to accumulate during the forward call of this step.
  virtual SlotStatRule stat_rule(const StepContext&) const { return {}; }
  // The budget of the KV segments of model layer `layer` of `n_layers`:
  // k for every layer, unless the policy shapes budgets by depth (PyramidKV).
  virtual int layer_budget(int layer, int n_layers) const {
    (void)layer, (void)n_layers;
    return r_.k;
  }
  // layer_budget of a segment of `layout` (its owning layer's).
  int segment_budget(const KvLayout& layout, int seg) const {
    return layer_budget(layout.owners[seg / layout.n_kv_heads], layout.n_layers);
  }
  // Whether slots are ranked by a function of the statistic rather than the
  // statistic itself (kvpress's normalisations and pooling), and that
  // function for one segment: `stat` and `pos` (ascending) of its `len`
  // slots, of which [j0, j1) compete and the rest are protected; `newest`
  // is the latest position. Writes out[0, len).
  virtual bool rescores() const { return false; }
  virtual void rescore(const float* stat, const int* pos, int len, int j0, int j1, int newest, float* out) const {
    (void)stat, (void)pos, (void)len, (void)j0, (void)j1, (void)newest, (void)out;
  }
  const ResolvedPolicy& resolved() const { return r_; }
  PolicyKind kind() const { return r_.params.kind; }
  // Whether slots are really dropped (false for full and ideal).
  bool evicts() const { return r_.evicts; }

 protected:
  ResolvedPolicy r_;
};

// The policy of r.params.kind (the policy table's make function).
std::unique_ptr<Policy> make_policy(const ResolvedPolicy& r);

// Keyformer's temperature at step t: tau_init + t (tau_end - tau_init) / T,
// or tau_init throughout with the constant schedule.
float keyformer_tau(const PolicyParams& p, const StepContext& ctx);

}  // namespace kvscope
