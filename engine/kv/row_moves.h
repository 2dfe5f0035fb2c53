// Where a segment's cached rows go when eviction closes its holes, shared by
// the CPU and CUDA backends so both move the same (few) rows.
//
// A segment's slots are consecutive rows of its own region, starting at a
// start row that eviction may move: after evicting `gone` slots the kept
// ones either move down (those after the first hole) or up by `gone` rows
// (those before the last hole; the segment then starts later). A window or
// StreamingLLM step evicts the oldest unprotected slot, so moving up moves
// only the sinks, where moving down would rewrite the whole cache.
#pragma once

#include <cstddef>
#include <span>

namespace kvscope {

// Rows a segment's region holds for a cache of `capacity` slots: the
// capacity and some slack (at least 64 rows, or an eighth), which the start
// can move up through before the segment must go back to the first row.
int kv_region_rows(int capacity);
// The same rounded up to whole pages of `page_bytes` for rows of `head_dim`
// floats, so that regions laid end to end each start on a page: the CPU
// backend's cache, whose pages take memory once a row is stored in them
// (a region straddling a page with its neighbour's held one page more).
int kv_region_rows_paged(int capacity, int head_dim, std::size_t page_bytes);

struct RowMoves {
  int kept = 0;           // slots kept
  int gone = 0;           // slots evicted
  int first_hole = 0;     // kept slots before it keep their rows when moving down
  int in_place_tail = 0;  // kept slots from it on keep their rows when moving up
  int rows_down() const { return kept - first_hole; }
  int rows_up() const { return in_place_tail; }
  bool up_is_shorter() const { return rows_up() < rows_down(); }
};

// `keep`: the kept slots, strictly ascending, out of `old_len`.
RowMoves plan_row_moves(std::span<const int> keep, int old_len);

// Where the kept rows go when, after the move, `len_after` slots (the kept
// ones and the appends to come) must fit in the region's `region` rows
// from the new start: the new slot i lives in row dst_start + i, and the
// slots in [move_begin, move_end) change rows (the others already sit
// there). Of moving up, moving down and moving everything back to row 0,
// the fewest rows that fit; down on a tie.
struct RowPlacement {
  int dst_start = 0;
  int move_begin = 0, move_end = 0;
  // With compacted positions a key is re-rotated whenever its slot index
  // changes (the slots from the first hole on), moved or not: the slots in
  // [rotate_begin, rotate_end) are those and the moved ones; the others
  // in it already sit in their rows.
  int rotate_begin = 0, rotate_end = 0;
  int rows_moved() const { return move_end - move_begin; }
};
RowPlacement place_rows(const RowMoves& m, int start, int region, int len_after);

}  // namespace kvscope
