#include "views/heatmap_texture.h"

#include <algorithm>
#include <limits>

namespace kvscope::gui {
namespace {

int g_max_side_override = 0;

}  // namespace

int HeatmapTexture::max_tile_side() {
  if (g_max_side_override > 0) return g_max_side_override;
  // Asked of the driver each time (a texture is allocated only when a
  // picture changes size, and the query is a lookup in the context).
  GLint side = 0;
  glGetIntegerv(GL_MAX_TEXTURE_SIZE, &side);
  return side > 0 ? side : 1024;  // 1024: what GL 3.3 guarantees
}

void HeatmapTexture::set_max_tile_side_for_tests(int side) { g_max_side_override = side; }

void HeatmapTexture::release() {
  for (const HeatmapTile& t : tiles_) {
    glDeleteTextures(1, &t.values);
    glDeleteTextures(1, &t.codes);
  }
  tiles_.clear();
  rows_ = cols_ = 0;
}

void HeatmapTexture::allocate(int rows, int cols) {
  release();
  rows_ = std::max(rows, 1);
  cols_ = std::max(cols, 1);
  const int side = max_tile_side();
  // NaN everywhere until rows arrive: the shader draws NaN as background.
  std::vector<float> nan_fill;
  std::vector<uint8_t> zero_fill;
  for (int r0 = 0; r0 < rows_; r0 += side)
    for (int c0 = 0; c0 < cols_; c0 += side) {
      HeatmapTile t;
      t.col0 = c0;
      t.row0 = r0;
      t.cols = std::min(side, cols_ - c0);
      t.rows = std::min(side, rows_ - r0);
      nan_fill.assign(std::size_t(t.cols) * t.rows, std::numeric_limits<float>::quiet_NaN());
      zero_fill.assign(nan_fill.size(), 0);
      t.values = make_nearest_texture(GL_R32F, GL_RED, GL_FLOAT, t.cols, t.rows, nan_fill.data());
      t.codes = make_nearest_texture(GL_R8UI, GL_RED_INTEGER, GL_UNSIGNED_BYTE, t.cols, t.rows, zero_fill.data());
      tiles_.push_back(t);
    }
  glBindTexture(GL_TEXTURE_2D, 0);
}

void HeatmapTexture::upload(int row0, int n, const float* values, const uint8_t* codes) {
  if (n <= 0) return;
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, cols_);  // the buffers are whole rows; a tile takes its columns
  for (const HeatmapTile& t : tiles_) {
    const int r_begin = std::max(row0, t.row0), r_end = std::min(row0 + n, t.row0 + t.rows);
    if (r_begin >= r_end) continue;
    const std::size_t offset = std::size_t(r_begin - row0) * cols_ + t.col0;
    note_texture_written(t.values);
    note_texture_written(t.codes);
    glBindTexture(GL_TEXTURE_2D, t.values);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, r_begin - t.row0, t.cols, r_end - r_begin, GL_RED, GL_FLOAT, values + offset);
    glBindTexture(GL_TEXTURE_2D, t.codes);
    glTexSubImage2D(GL_TEXTURE_2D, 0, 0, r_begin - t.row0, t.cols, r_end - r_begin, GL_RED_INTEGER, GL_UNSIGNED_BYTE,
                    codes + offset);
  }
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glBindTexture(GL_TEXTURE_2D, 0);
}

}  // namespace kvscope::gui
