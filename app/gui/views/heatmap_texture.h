// One heatmap's cells on the GPU: an R32F value texture and an R8UI code
// texture (mask codes, or comparison codes), allocated once for the whole
// planned size of a session (recorder rows x positions) and filled a row
// range at a time with glTexSubImage2D. Larger than GL_MAX_TEXTURE_SIZE in
// either direction, it is split into tiles that the renderer draws one by
// one.
#pragma once

#include <cstdint>
#include <vector>

#include "views/gl.h"

namespace kvscope::gui {

struct HeatmapTile {
  GLuint values = 0, codes = 0;
  int col0 = 0, row0 = 0, cols = 0, rows = 0;
};

class HeatmapTexture {
 public:
  HeatmapTexture() = default;
  HeatmapTexture(const HeatmapTexture&) = delete;
  HeatmapTexture& operator=(const HeatmapTexture&) = delete;
  ~HeatmapTexture() { release(); }

  // (Re)allocates rows x cols cells, all NaN / code 0 ("not seen").
  void allocate(int rows, int cols);
  void release();
  // Writes rows [row0, row0 + n) from row-major buffers `cols` wide.
  void upload(int row0, int n, const float* values, const uint8_t* codes);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  const std::vector<HeatmapTile>& tiles() const { return tiles_; }

  // The largest side a tile may have (GL_MAX_TEXTURE_SIZE of the current
  // context; a test hook may lower it to exercise tiling).
  static int max_tile_side();
  static void set_max_tile_side_for_tests(int side);

 private:
  int rows_ = 0, cols_ = 0;
  std::vector<HeatmapTile> tiles_;
};

}  // namespace kvscope::gui
