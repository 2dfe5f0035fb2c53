#version 330 core
// Colours one heatmap (rows = steps, columns = positions) from a float value
// texture and a mask-code texture, for the window's main view and the grid.
//
// Each fragment covers cells_per_pixel cells; when zoomed out it takes the
// largest value (or, for differences, the largest in magnitude) of the
// cells under it (so a thin bright stripe of attention does not vanish
// between samples): from a reduced level of blocks about a pixel in size
// where the view has one (the main view), else of up to 4 x 4 sampled
// cells; and the mask code of its corner cell. Two ways to colour:
//   values: value -> [lo, hi] on a linear or log scale -> the
//     256-entry colormap texture, entry floor(t * 256) exactly like
//     engine/io/colormap (so window and exported figures agree), with the
//     evicted cells marked without hiding their colour: outlined where
//     cells are large enough, a flat tint where they are not;
//   PATH_CODES: the mask code (or a comparison code) -> the palette.
// NaN values and "not seen" codes are background.
//
// The program is built once per way of reading the cells (HEATMAP_PATH,
// defined by HeatmapRenderer before this text), not branched on at run
// time: a software rasteriser runs every branch of a fragment shader under
// a mask, so one program with all four paths cost the mask view twice the
// time of its own path (bench/README.md).
#define PATH_CODES 0     // the palette colour of the cell's code
#define PATH_ONE_CELL 1  // a cell is at least a pixel on both axes: its one value
#define PATH_POOLED 2    // zoomed out with a reduced level: 2 x 2 of its texels
#define PATH_SAMPLED 3   // zoomed out without one (tiles, the grid): up to 4 x 4 cells

in vec2 v_pixel;
out vec4 frag_color;

uniform sampler2D u_values;     // R32F, one texel per cell of this tile
uniform usampler2D u_codes;     // R8UI, common/mask_codes.h (+ comparison codes)
uniform sampler2D u_colormap;   // 256 x 1 RGBA8
uniform sampler2D u_palette;    // 32 x 1 RGBA8, by code
uniform ivec2 u_tile_origin;    // (column, row) of the tile's texel (0, 0)
uniform ivec2 u_tile_size;      // columns, rows held by the tile

uniform vec4 u_view;            // x0, y0 (cells at the top-left pixel), cells per pixel x, y
uniform ivec2 u_limit;          // columns >= x and rows > y are background (timeline row)

// Zoomed out in the value views: a reduced level (heatmap_pool.frag.glsl),
// blocks of 2^level cells at least the pixel's size on each axis, so the
// pixel's cells lie in at most 2 x 2 texels (each texel a block's largest
// and smallest value): every peak shows, blurred by at most a block.
uniform sampler2D u_pooled;     // RG32F (largest, smallest) per block
uniform ivec2 u_pool_level;     // log2 of the block's columns, rows
uniform ivec2 u_pool_size;      // texels of the level

uniform int u_pool_magnitude;   // 1: zoomed out, keep the value largest in magnitude (differences: a
                                // negative peak must not vanish behind a small positive one)
uniform int u_log_scale;
uniform float u_lo, u_hi;
uniform int u_mark;             // 0 none, 1 mark evicted regions (outline, or a tint when cells are small)
uniform vec3 u_evicted_color, u_protected_color;
uniform vec3 u_background;

const uint kNotSeen = 0u;
const uint kMaskProtected = 2u;
const uint kEvictedNow = 3u;
const uint kEvictedEarlier = 4u;

bool in_tile(ivec2 cell) {
  ivec2 local = cell - u_tile_origin;
  return all(greaterThanEqual(local, ivec2(0))) && all(lessThan(local, u_tile_size));
}

bool visible(ivec2 cell) { return cell.x < u_limit.x && cell.y <= u_limit.y; }

uint code_at(ivec2 cell) {
  if (!in_tile(cell) || !visible(cell)) return kNotSeen;
  return texelFetch(u_codes, cell - u_tile_origin, 0).r;
}

bool evicted(uint code) { return code == kEvictedNow || code == kEvictedEarlier; }

// Two cells lie in one marked region when both are evicted or both
// protected (or both neither): outlines run only where that changes.
bool same_region(uint a, uint b) { return evicted(a) == evicted(b) && (a == kMaskProtected) == (b == kMaskProtected); }

// Below u_min_outline_px pixels per cell (either axis) a one-pixel
// outline is a third of the cell, and outlines of scattered cells become a
// texture: a tint instead (kMinOutlineCellPixels in heatmap_renderer.h).
uniform float u_min_outline_px;
// The tint: halfway toward a darkened mark colour, so the evicted region
// recedes behind the kept cells while its values still show through.
const float kEvictedTint = 0.5;
const float kEvictedTintShade = 0.6;

float normalized(float v) {
  if (u_log_scale == 1) {
    if (v <= u_lo) return 0.0;
    return clamp((log(v) - log(u_lo)) / (log(u_hi) - log(u_lo)), 0.0, 1.0);
  }
  return clamp((v - u_lo) / (u_hi - u_lo), 0.0, 1.0);
}

vec3 colormap(float t) {
  int entry = min(int(floor(t * 256.0)), 255);
  return texelFetch(u_colormap, ivec2(entry, 0), 0).rgb;
}

void main() {
  vec2 cellf = u_view.xy + v_pixel * u_view.zw;
  ivec2 cell = ivec2(floor(cellf));
  if (!in_tile(cell)) discard;  // another tile draws it
  if (!visible(cell)) { frag_color = vec4(u_background, 1.0); return; }
  uint code = texelFetch(u_codes, cell - u_tile_origin, 0).r;

#if HEATMAP_PATH == PATH_CODES
  frag_color = code == kNotSeen ? vec4(u_background, 1.0) : vec4(texelFetch(u_palette, ivec2(int(code), 0), 0).rgb, 1.0);
#else
  // The largest finite value under this pixel.
  float best = 0.0;
  bool any = false;
#if HEATMAP_PATH == PATH_ONE_CELL
  // A cell at least a pixel on both axes: the cell under the pixel's
  // corner is the only one.
  best = texelFetch(u_values, cell - u_tile_origin, 0).r;
  any = !isnan(best);
#elif HEATMAP_PATH == PATH_POOLED
  // The cells under the pixel: from its corner cell to the last one its
  // footprint reaches, within the tile and what is visible.
  ivec2 first = cell - u_tile_origin;
  ivec2 last_visible = min(u_tile_size - 1, ivec2(u_limit.x - 1, u_limit.y) - u_tile_origin);
  ivec2 last = min(ivec2(ceil(cellf + u_view.zw)) - 1 - u_tile_origin, last_visible);
  ivec2 a = min(first >> u_pool_level, u_pool_size - 1), b = min(max(last, first) >> u_pool_level, u_pool_size - 1);
  vec2 t00 = texelFetch(u_pooled, a, 0).rg, t10 = texelFetch(u_pooled, ivec2(b.x, a.y), 0).rg;
  vec2 t01 = texelFetch(u_pooled, ivec2(a.x, b.y), 0).rg, t11 = texelFetch(u_pooled, b, 0).rg;
  // GLSL leaves max/min of a NaN undefined: blocks with nothing seen are skipped.
  best = uintBitsToFloat(0xff800000u);
  float low = uintBitsToFloat(0x7f800000u);
  if (!isnan(t00.r)) { best = max(best, t00.r); low = min(low, t00.g); }
  if (!isnan(t10.r)) { best = max(best, t10.r); low = min(low, t10.g); }
  if (!isnan(t01.r)) { best = max(best, t01.r); low = min(low, t01.g); }
  if (!isnan(t11.r)) { best = max(best, t11.r); low = min(low, t11.g); }
  any = best >= low;
  if (u_pool_magnitude == 1 && -low > best) best = low;
#else
  // Up to 4 x 4 cells sampled across the pixel's footprint.
  ivec2 steps = clamp(ivec2(ceil(u_view.zw)), ivec2(1), ivec2(4));
  vec2 stride = max(u_view.zw, vec2(1.0)) / vec2(steps);
  ivec2 last = ivec2(floor(cellf + vec2(steps - 1) * stride));
  if (in_tile(last) && visible(last)) {
    // The whole footprint lies in this tile and in what was seen (the
    // usual case): no per-sample bounds checks.
    ivec2 base = cell - u_tile_origin;
    vec2 frac = cellf - vec2(cell);
    best = uintBitsToFloat(0xff800000u);   // -infinity
    float low = uintBitsToFloat(0x7f800000u);  // +infinity
    for (int j = 0; j < steps.y; ++j) {
      int y = base.y + int(frac.y + float(j) * stride.y);
      for (int i = 0; i < steps.x; ++i) {
        float v = texelFetch(u_values, ivec2(base.x + int(frac.x + float(i) * stride.x), y), 0).r;
        bool seen = !isnan(v);  // NaN: no value
        best = seen ? max(best, v) : best;
        low = seen ? min(low, v) : low;
      }
    }
    any = best >= low;
    if (u_pool_magnitude == 1 && -low > best) best = low;
  } else {
    for (int j = 0; j < steps.y; ++j)
      for (int i = 0; i < steps.x; ++i) {
        ivec2 c = ivec2(floor(cellf + vec2(i, j) * stride));
        if (!in_tile(c) || !visible(c)) continue;
        float v = texelFetch(u_values, c - u_tile_origin, 0).r;
        if (isnan(v)) continue;
        bool better = u_pool_magnitude == 1 ? abs(v) > abs(best) : v > best;
        best = !any || better ? v : best;
        any = true;
      }
  }
#endif
  if (!any) { frag_color = vec4(u_background, 1.0); return; }
  vec3 color = colormap(normalized(best));

  if (u_mark == 1 && (evicted(code) || code == kMaskProtected)) {
    vec3 line = code == kMaskProtected ? u_protected_color : u_evicted_color;
#if HEATMAP_PATH == PATH_ONE_CELL
    vec2 pixels_per_cell = 1.0 / u_view.zw;
    if (min(pixels_per_cell.x, pixels_per_cell.y) >= u_min_outline_px) {
      // Outline: the pixels within `width` of an edge where the region
      // (evicted, or protected) ends.
      float width = clamp(min(pixels_per_cell.x, pixels_per_cell.y) * 0.12, 1.0, 3.0);
      vec2 inside = (cellf - vec2(cell)) * pixels_per_cell;  // pixels from the cell's top-left
      bool same_left = same_region(code, code_at(cell + ivec2(-1, 0)));
      bool same_right = same_region(code, code_at(cell + ivec2(1, 0)));
      bool same_up = same_region(code, code_at(cell + ivec2(0, -1)));
      bool same_down = same_region(code, code_at(cell + ivec2(0, 1)));
      bool edge = (!same_left && inside.x < width) || (!same_right && inside.x > pixels_per_cell.x - width) ||
                  (!same_up && inside.y < width) || (!same_down && inside.y > pixels_per_cell.y - width);
      if (edge) color = line;
    } else
#endif
    // (Zoomed out, a cell is under a pixel: never an outline; u_min_outline_px >= 1.)
    if (code != kMaskProtected) {
      // Cells too small to carry an outline: a flat tint toward the mark's
      // hue over every evicted pixel. Anything drawn per pixel (a hatch,
      // one-pixel outlines around scattered cells) beats against the cell
      // grid into moire once cells are a few pixels wide; a tint has no
      // pattern of its own at any zoom, and the value still shows through.
      color = mix(color, line * kEvictedTintShade, kEvictedTint);
    }
  }
  frag_color = vec4(color, 1.0);
#endif
}
