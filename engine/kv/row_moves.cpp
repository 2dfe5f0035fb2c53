#include "kv/row_moves.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace kvscope {

int kv_region_rows(int capacity) { return capacity + std::max(64, capacity / 8); }

int kv_region_rows_paged(int capacity, int head_dim, std::size_t page_bytes) {
  const int64_t page_floats = int64_t(page_bytes / sizeof(float));
  const int64_t step = page_floats / std::gcd(page_floats, int64_t(head_dim));  // rows that fill whole pages
  return static_cast<int>((kv_region_rows(capacity) + step - 1) / step * step);
}

RowMoves plan_row_moves(std::span<const int> keep, int old_len) {
  RowMoves m;
  m.kept = static_cast<int>(keep.size());
  m.gone = old_len - m.kept;
  while (m.first_hole < m.kept && keep[m.first_hole] == m.first_hole) ++m.first_hole;
  m.in_place_tail = m.kept;
  while (m.in_place_tail > 0 && keep[m.in_place_tail - 1] == m.in_place_tail - 1 + m.gone) --m.in_place_tail;
  return m;
}

namespace {

RowPlacement placement(const RowMoves& m, int dst_start, int move_begin, int move_end) {
  RowPlacement p{dst_start, move_begin, move_end, move_begin, move_end};
  if (m.first_hole < m.kept) {
    p.rotate_begin = move_begin < move_end ? std::min(move_begin, m.first_hole) : m.first_hole;
    p.rotate_end = move_begin < move_end ? std::max(move_end, m.kept) : m.kept;
  }
  return p;
}

}  // namespace

RowPlacement place_rows(const RowMoves& m, int start, int region, int len_after) {
  const RowPlacement down = placement(m, start, m.first_hole, m.kept);
  const RowPlacement up = placement(m, start + m.gone, 0, m.in_place_tail);
  const RowPlacement to_zero = placement(m, 0, start == 0 ? m.first_hole : 0, m.kept);
  auto fits = [&](const RowPlacement& p) { return p.dst_start + len_after <= region; };
  const bool up_fits = m.gone > 0 && fits(up);
  if (up_fits && (m.up_is_shorter() || !fits(down))) return up;
  if (fits(down)) return down;
  return to_zero;
}

}  // namespace kvscope
