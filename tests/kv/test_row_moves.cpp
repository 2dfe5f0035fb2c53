// Where eviction moves a segment's cached rows (kv/row_moves.h), the plan
// both backends follow: the shorter side, and room for what comes next.
// The CUDA compaction kernel walks each column in the order the placement
// implies, kBatch loads before their stores; walked_column() replays that
// order on the host so the no-overwrite argument is checked without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "kv/row_moves.h"

namespace kvscope {
namespace {

std::vector<int> all_but(int len, std::initializer_list<int> gone) {
  std::vector<int> keep;
  for (int j = 0; j < len; ++j)
    if (std::find(gone.begin(), gone.end(), j) == gone.end()) keep.push_back(j);
  return keep;
}

TEST(RowMoves, RegionLeavesSlackForTheStartToMove) {
  EXPECT_EQ(kv_region_rows(16), 16 + 64);
  EXPECT_EQ(kv_region_rows(4096), 4096 + 512);
}

// Regions of whole pages: 64-float rows fill a 4 KiB page 16 at a time;
// 80-float rows (320 bytes) only 64 at a time (5 pages); a page of 64 KiB
// takes 256 rows of 64 floats.
TEST(RowMoves, APagedRegionIsTheRegionToWholePages) {
  EXPECT_EQ(kv_region_rows_paged(16, 64, 4096), 80);
  EXPECT_EQ(kv_region_rows_paged(58, 64, 4096), 128);  // 122 rows
  EXPECT_EQ(kv_region_rows_paged(58, 80, 4096), 128);
  EXPECT_EQ(kv_region_rows_paged(100, 80, 4096), 192);  // 164 rows
  EXPECT_EQ(kv_region_rows_paged(4096, 128, 4096), 4608);
  EXPECT_EQ(kv_region_rows_paged(58, 64, 65536), 256);
  for (int cap : {1, 37, 1001, 32768})
    for (int hd : {16, 64, 80, 96, 128, 256}) {
      const int rows = kv_region_rows_paged(cap, hd, 4096);
      EXPECT_GE(rows, kv_region_rows(cap));
      EXPECT_EQ(std::size_t(rows) * hd * sizeof(float) % 4096, 0u) << cap << " " << hd;
      EXPECT_LT(rows - kv_region_rows(cap), 1024 / std::gcd(1024, hd)) << cap << " " << hd;
    }
}

TEST(RowMoves, TheWindowsEvictionMovesOnlyTheSinks) {
  // Four sinks, then the oldest of the window goes: up moves 4 rows, down would move 995.
  const RowMoves m = plan_row_moves(all_but(1000, {4}), 1000);
  EXPECT_EQ(m.kept, 999);
  EXPECT_EQ(m.gone, 1);
  EXPECT_EQ(m.first_hole, 4);
  EXPECT_EQ(m.in_place_tail, 4);
  EXPECT_TRUE(m.up_is_shorter());
  const RowPlacement p = place_rows(m, 10, 1128, 1000);
  EXPECT_EQ(p.dst_start, 11);
  EXPECT_EQ(p.move_begin, 0);
  EXPECT_EQ(p.move_end, 4);
  // With compacted positions every key from the hole on changes slot: all
  // are re-rotated, the sinks moved with them.
  EXPECT_EQ(p.rotate_begin, 0);
  EXPECT_EQ(p.rotate_end, 999);
}

TEST(RowMoves, AHoleNearTheEndMovesTheTailDown) {
  const RowMoves m = plan_row_moves(all_but(1000, {990}), 1000);
  EXPECT_FALSE(m.up_is_shorter());
  const RowPlacement p = place_rows(m, 10, 1128, 1000);
  EXPECT_EQ(p.dst_start, 10);
  EXPECT_EQ(p.move_begin, 990);
  EXPECT_EQ(p.move_end, 999);
  EXPECT_EQ(p.rows_moved(), 9);
}

TEST(RowMoves, EvictingTheNewestMovesNothing) {
  const RowMoves m = plan_row_moves(all_but(100, {98, 99}), 100);
  const RowPlacement p = place_rows(m, 3, 164, 99);
  EXPECT_EQ(p.dst_start, 3);
  EXPECT_EQ(p.rows_moved(), 0);
  EXPECT_EQ(p.rotate_end - p.rotate_begin, 0);
}

TEST(RowMoves, ATieMovesDown) {
  // Slot 50 of 101 goes: 50 rows either way.
  const RowMoves m = plan_row_moves(all_but(101, {50}), 101);
  EXPECT_EQ(m.rows_up(), m.rows_down());
  EXPECT_EQ(place_rows(m, 0, 165, 101).dst_start, 0);
}

TEST(RowMoves, NoRoomAboveMovesDownOrBackToRowZero) {
  const RowMoves m = plan_row_moves(all_but(100, {2}), 100);  // up is shorter
  // Start 60 of a 164-row region, 104 slots after the appends: up would end
  // at 61 + 104 > 164, down fits; with 103, up fits.
  EXPECT_EQ(place_rows(m, 60, 164, 104).dst_start, 60);
  EXPECT_EQ(place_rows(m, 60, 164, 103).dst_start, 61);
  // A long append after it: neither side fits, every kept row goes to row 0.
  const RowPlacement p = place_rows(m, 60, 164, 150);
  EXPECT_EQ(p.dst_start, 0);
  EXPECT_EQ(p.move_begin, 0);
  EXPECT_EQ(p.move_end, 99);
  // Nothing evicted, appends that do not fit: the same.
  RowMoves none;
  none.kept = none.first_hole = 100;
  const RowPlacement q = place_rows(none, 60, 164, 120);
  EXPECT_EQ(q.dst_start, 0);
  EXPECT_EQ(q.rows_moved(), 100);
  EXPECT_EQ(place_rows(none, 60, 164, 104).rows_moved(), 0);
}

// One column of a segment's region after the CUDA kernel's walk: slots
// [begin, end) from row start + keep[i] to row dst_start + i, ascending
// when moving down, descending when moving up, kBatch sources loaded before
// they are stored.
std::vector<int> walked_column(std::vector<int> col, const std::vector<int>& keep, int start, int dst_start,
                               int begin, int end) {
  constexpr int kBatch = 8;
  const bool descending = dst_start > start;
  const int count = end - begin;
  auto slot = [&](int k) { return descending ? end - 1 - k : begin + k; };
  for (int k = 0; k < count; k += kBatch) {
    int v[kBatch];
    for (int b = 0; b < kBatch && k + b < count; ++b) v[b] = col[start + keep[slot(k + b)]];
    for (int b = 0; b < kBatch && k + b < count; ++b) col[dst_start + slot(k + b)] = v[b];
  }
  return col;
}

TEST(RowMoves, EveryKeptRowLandsInItsNewSlotWhateverTheHoles) {
  // Random evictions, starts and appends: after the walk, new slot i holds
  // what old slot keep[i] held, whichever placement was chosen.
  std::mt19937 rng(7);
  int seen_up = 0, seen_down = 0, seen_zero = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    const int cap = 8 + int(rng() % 200), region = kv_region_rows(cap);
    const int old_len = 1 + int(rng() % cap);
    const int start = int(rng() % (region - old_len + 1));
    std::vector<int> keep;
    const int pattern = int(rng() % 3);
    for (int j = 0; j < old_len; ++j) {
      const bool drop = pattern == 0 ? rng() % 2 == 0 : pattern == 1 ? j == int(rng() % old_len) : rng() % 9 == 0;
      if (!drop) keep.push_back(j);
    }
    const int appends = int(rng() % (cap - int(keep.size()) + 1));
    const int len_after = int(keep.size()) + appends;
    const RowMoves m = plan_row_moves(keep, old_len);
    const RowPlacement p = place_rows(m, start, region, len_after);
    ASSERT_LE(p.dst_start + len_after, region) << "trial " << trial;
    ASSERT_GE(p.dst_start, 0);
    std::vector<int> col(region, -1);
    for (int j = 0; j < old_len; ++j) col[start + j] = j;  // each row holds its old slot
    // A value column, and a rotary key column (the wider range of slots).
    const std::vector<int> after = walked_column(col, keep, start, p.dst_start, p.move_begin, p.move_end);
    const std::vector<int> rotated = walked_column(col, keep, start, p.dst_start, p.rotate_begin, p.rotate_end);
    for (int i = 0; i < int(keep.size()); ++i) {
      ASSERT_EQ(after[p.dst_start + i], keep[i]) << "trial " << trial << " new slot " << i;
      ASSERT_EQ(rotated[p.dst_start + i], keep[i]) << "trial " << trial << " new slot " << i;
      if (keep[i] != i)  // its slot index changes: compacted positions re-rotate its key
        ASSERT_TRUE(i >= p.rotate_begin && i < p.rotate_end) << "trial " << trial << " new slot " << i;
    }
    if (m.gone == 0) continue;
    if (p.dst_start > start) ++seen_up;
    else if (p.dst_start == start) ++seen_down;
    else ++seen_zero;
  }
  EXPECT_GT(seen_up, 100);
  EXPECT_GT(seen_down, 100);
  EXPECT_GT(seen_zero, 10);
}

}  // namespace
}  // namespace kvscope
