// Heatmap figures of float matrices (attention rows x key positions, scores
// per step): colormap lookup on a linear or log scale, NaN cells ("no
// value", e.g. the causal upper triangle) in a neutral colour, an optional
// per-cell overlay (evicted / protected tokens), axes with tick labels, a
// title and a labelled colorbar; and grids of such panels (all heads of a
// layer) sharing one colour range and colorbar. The layout is public so
// tests and other renderers (io/svg_writer.h) can find every cell.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/figure_layout.h"
#include "io/image.h"

namespace kvscope {

enum class HeatmapScale { linear, log };

// Overlay codes, one uint8 per cell (0 and 1 draw nothing).
inline constexpr uint8_t kOverlayNone = 0;
inline constexpr uint8_t kOverlayKept = 1;
inline constexpr uint8_t kOverlayProtected = 2;   // sink / recent window: region outlined
inline constexpr uint8_t kOverlayEvicted = 3;     // evicted earlier: hatched or dimmed
inline constexpr uint8_t kOverlayEvictedNow = 4;  // evicted at this step: cross-hatched / dimmed + hatched
inline constexpr uint8_t kOverlayOutsideTopK = 5;  // still cached, outside the oracle's top k: dotted

// How evicted cells are marked: `hatch` keeps the colour visible under
// diagonal lines; `dim` washes it out towards white.
enum class EvictedStyle { hatch, dim };

struct HeatmapOptions {
  std::string title;
  std::string x_label = "key position";
  std::string y_label = "query step";
  std::string value_label;           // colorbar caption, e.g. "attention weight"
  std::string colormap = "viridis";  // see io/colormap.h
  HeatmapScale scale = HeatmapScale::linear;
  std::optional<double> vmin, vmax;  // colour range; default: from the finite data
  double log_floor = 1e-6;           // log scale: values below it (zero, negatives) clamp to it
  int cell_width = 0, cell_height = 0;  // pixels per cell; 0: automatic
  int target_size = 0;               // automatic cells aim for this many pixels along the longer
                                     // side (0: 512 for one heatmap, 256 per grid panel)
  int x_first = 0, y_first = 0;      // index labelled at column 0 / row 0
  Rgb nan_color{220, 220, 220};
  EvictedStyle evicted_style = EvictedStyle::hatch;
  Rgb protected_color{255, 40, 200};
  bool colorbar = true;
  int font_scale = 2;                // bitmap-font scale for all text
};

// One panel of a grid: a rows x cols matrix (row-major) and its overlay
// (empty, or one code per cell).
struct HeatmapPanel {
  std::span<const float> values;
  std::span<const uint8_t> overlay;
  std::string title;  // e.g. "L2 H5"
};

struct HeatmapLegendEntry {
  Rect swatch;
  uint8_t code = 0;
};

struct HeatmapLayout {
  int width = 0, height = 0;  // the whole image
  int rows = 0, cols = 0;     // of every panel's matrix
  int cell_w = 0, cell_h = 0;
  int font_scale = 2;
  int tick_len = 0;
  std::vector<Rect> panels;  // matrix area of each panel
  Rect colorbar;             // the colour ramp; empty when there is none
  HeatmapScale scale = HeatmapScale::linear;
  double vmin = 0, vmax = 1;  // the colour range actually used
  double log_floor = 1e-6;
  std::vector<Tick> x_ticks;         // pos: pixel offset of the cell centre from a panel's left edge
  std::vector<Tick> y_ticks;         // pos: offset from a panel's top edge
  std::vector<Tick> colorbar_ticks;  // pos: image row
  std::vector<TextItem> texts;       // every label, title and tick label
  std::vector<HeatmapLegendEntry> legend;  // overlay legend swatches (labels are in texts)

  // Pixel rectangle of cell (row i, column j) of a panel.
  Rect cell_rect(int i, int j, int panel = 0) const;
  // Position of a value in the colour range, in [0, 1]: linear, or log10
  // after clamping to the floor. NaN stays NaN.
  double normalize(double v) const;
  // Image row of the colorbar showing value v (top row: vmax, bottom: vmin).
  int colorbar_row(double v) const;
  // Colormap entry (0..255) drawn at colorbar row `row`.
  int colorbar_index(int row) const;
};

// Throws kvscope::Error("heatmap", field, ...) when sizes do not match, the
// matrix is empty, the colormap is unknown or the colour range is invalid.
HeatmapLayout layout_heatmap(std::span<const float> values, int rows, int cols, const HeatmapOptions& opt,
                             std::span<const uint8_t> overlay = {});
// grid_columns = 0: about square (ceil(sqrt(n))). All panels share the
// shape, the colour range (default: over all panels) and one colorbar.
HeatmapLayout layout_heatmap_grid(std::span<const HeatmapPanel> panels, int rows, int cols, int grid_columns,
                                  const HeatmapOptions& opt);

struct Heatmap {
  Image image;
  HeatmapLayout layout;
};

Heatmap render_heatmap(std::span<const float> values, int rows, int cols, const HeatmapOptions& opt,
                       std::span<const uint8_t> overlay = {});
Heatmap render_heatmap_grid(std::span<const HeatmapPanel> panels, int rows, int cols, int grid_columns,
                            const HeatmapOptions& opt);

// Text shown in the overlay legend for a code ("evicted", ...).
std::string overlay_label(uint8_t code);

}  // namespace kvscope
