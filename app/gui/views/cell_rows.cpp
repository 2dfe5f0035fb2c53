#include "views/cell_rows.h"
#include "common/nan.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "views/cell_codes.h"

namespace kvscope::gui {

int segment_of(const PublishedRun& run, int layer, int head) {
  return run.session->recorder().layout().segment_of(layer, head);
}

int available_rows(CellKind kind, const CellInputs& in) {
  if (!in.a || !in.a->session) return 0;
  switch (kind) {
    case CellKind::Mask:
    case CellKind::Statistic: return in.a->rows;
    case CellKind::Attention:
    case CellKind::Ideal: return in.attention_a.rows();
    case CellKind::DiffFull:
      if (!in.full || in.full->layer != in.layer || in.full->generation != in.a->generation) return 0;
      return std::min(in.attention_a.rows(), in.full->rows);
    case CellKind::DiffFork:
      if (!in.b || !in.b->session) return 0;
      return std::min(in.attention_a.rows(), in.attention_b.rows());
  }
  return 0;
}

HeatmapKey make_key(CellKind kind, const CellInputs& in) {
  HeatmapKey k;
  k.source = in.a ? in.a->session.get() : nullptr;
  k.generation = in.a ? in.a->generation : 0;
  k.layer = in.layer;
  k.head = in.head;
  k.kind = static_cast<int>(kind);
  if (kind == CellKind::DiffFull) k.extra = in.full;
  else if (kind == CellKind::DiffFork) k.extra = in.b ? in.b->session.get() : nullptr;
  else k.extra = in.attention_a.source();  // a replayed layer arriving changes the data
  return k;
}

void ideal_codes(const uint8_t* mask, const float* attention, int positions, uint8_t* out, std::vector<int>& scratch) {
  // k = what the policy holds at this row (kept + protected): the budget
  // per unit, read from the mask itself so a policy changed mid-run is
  // compared with the budget it had at that step.
  scratch.clear();
  int k = 0;
  for (int p = 0; p < positions; ++p) {
    if (mask[p] == kNotSeen) continue;
    scratch.push_back(p);
    k += is_kept(mask[p]);
  }
  k = std::min<int>(k, static_cast<int>(scratch.size()));
  // The top k by attention; ties go to the earlier position so the picture
  // is the same on every run.
  auto better = [&](int x, int y) { return attention[x] > attention[y] || (attention[x] == attention[y] && x < y); };
  if (k > 0 && k < static_cast<int>(scratch.size()))
    std::nth_element(scratch.begin(), scratch.begin() + (k - 1), scratch.end(), better);
  for (int p = 0; p < positions; ++p) out[p] = kNotSeen;
  for (int i = 0; i < static_cast<int>(scratch.size()); ++i) {
    const int p = scratch[i];
    const bool top = i < k, kept = is_kept(mask[p]);
    out[p] = kept && top ? kIdealBoth : kept ? kIdealKeptOnly : top ? kIdealTopKOnly : kIdealNeither;
  }
}

RowFiller make_row_filler(CellKind kind, const CellInputs& in) {
  const PublishedRun& a = *in.a;
  const Recorder& rec = a.session->recorder();
  const int P = rec.positions(), seg = segment_of(a, in.layer, in.head), head = in.head;
  switch (kind) {
    case CellKind::Attention:
      return [&rec, att = in.attention_a, P, seg, head](int r, float* v, uint8_t* c) {
        const float* row = att.row(r, head);
        for (int p = 0; p < P; ++p) {
          c[p] = rec.mask(r, seg, p);
          v[p] = c[p] == kNotSeen || !row ? kNaNf : row[p];
        }
      };
    case CellKind::Mask:
      return [&rec, P, seg](int r, float* v, uint8_t* c) {
        for (int p = 0; p < P; ++p) {
          c[p] = rec.mask(r, seg, p);
          v[p] = kNaNf;
        }
      };
    case CellKind::Statistic:
      return [&rec, P, seg](int r, float* v, uint8_t* c) {
        for (int p = 0; p < P; ++p) {
          c[p] = rec.mask(r, seg, p);
          v[p] = c[p] == kNotSeen ? kNaNf : rec.score(r, seg, p);
        }
      };
    case CellKind::DiffFull: {
      const FullReference* full = in.full;
      return [&rec, att = in.attention_a, full, P, seg, head](int r, float* v, uint8_t* c) {
        const float* row = att.row(r, head);
        const bool have = full && r < full->rows && head < full->heads;
        const float* ref = have ? full->attention.data() + (std::size_t(r) * full->heads + head) * full->positions : nullptr;
        for (int p = 0; p < P; ++p) {
          c[p] = rec.mask(r, seg, p);
          const bool seen = c[p] != kNotSeen && row && ref && p < full->positions;
          v[p] = seen ? row[p] - ref[p] : kNaNf;
        }
      };
    }
    case CellKind::DiffFork: {
      const Recorder& rec_b = in.b->session->recorder();
      const int seg_b = segment_of(*in.b, in.layer, in.head);
      return [&rec, &rec_b, att_a = in.attention_a, att_b = in.attention_b, P, seg, seg_b, head](int r, float* v,
                                                                                                 uint8_t* c) {
        const float* ra = att_a.row(r, head);
        const float* rb = att_b.row(r, head);
        const int Pb = rec_b.positions();
        for (int p = 0; p < P; ++p) {
          const uint8_t ma = rec.mask(r, seg, p), mb = p < Pb ? rec_b.mask(r, seg_b, p) : uint8_t(kNotSeen);
          c[p] = fork_code(ma, mb);
          v[p] = c[p] == kNotSeen || !ra || !rb ? kNaNf : ra[p] - rb[p];
        }
      };
    }
    case CellKind::Ideal:
      return [&rec, att = in.attention_a, P, seg, head, scratch = std::vector<int>(),
              mask = std::vector<uint8_t>()](int r, float* v, uint8_t* c) mutable {
        const float* row = att.row(r, head);
        mask.resize(P);
        for (int p = 0; p < P; ++p) {
          mask[p] = rec.mask(r, seg, p);
          v[p] = mask[p] == kNotSeen || !row ? kNaNf : row[p];
        }
        if (row) ideal_codes(mask.data(), row, P, c, scratch);
        else std::fill(c, c + P, uint8_t(kNotSeen));
      };
  }
  return {};
}

}  // namespace kvscope::gui
