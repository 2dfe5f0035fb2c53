#version 330 core
// One reduced level of a heatmap's cells for zoomed-out views: each texel
// holds the largest and the smallest finite value (NaN, NaN when it has
// none) of a block of u_block cells (a power of two on each axis, on its
// own: rows and columns zoom apart). Cells outside what is visible (columns
// >= u_limit.x, rows > u_limit.y, the timeline) are left out, so a block at
// the edge never shows a cell the view hides. heatmap.frag.glsl reads at
// most 2 x 2 of these per pixel instead of up to 4 x 4 cells.

out vec2 frag_value;

uniform sampler2D u_values;  // R32F cells of one tile
uniform ivec2 u_tile_origin;  // (column, row) of the tile's texel (0, 0)
uniform ivec2 u_tile_size;
uniform ivec2 u_limit;        // columns >= x and rows > y are not visible
uniform ivec2 u_block;        // cells per texel along x and y

void main() {
  // Texel (x, y) of the level: GL's row 0 is the texture's row 0, as in the cells.
  ivec2 texel = ivec2(gl_FragCoord.xy);
  ivec2 first = texel * u_block;
  ivec2 end = min(first + u_block, min(u_tile_size, ivec2(u_limit.x, u_limit.y + 1) - u_tile_origin));
  float high = uintBitsToFloat(0xff800000u);  // -infinity
  float low = uintBitsToFloat(0x7f800000u);   // +infinity
  for (int y = first.y; y < end.y; ++y)
    for (int x = first.x; x < end.x; ++x) {
      float v = texelFetch(u_values, ivec2(x, y), 0).r;
      bool seen = !isnan(v);
      high = seen ? max(high, v) : high;
      low = seen ? min(low, v) : low;
    }
  float none = uintBitsToFloat(0x7fc00000u);  // NaN
  frag_value = high >= low ? vec2(high, low) : vec2(none);
}
