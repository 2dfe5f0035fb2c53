// One heatmap on screen: the shader-rendered cells shown with
// ImGui::Image, token labels on both axes where they fit (else step and
// position ticks), the timeline row and the hovered token marked, mouse
// wheel zoom around the cursor (each axis on its own over its labels), a
// right-drag box to zoom to, and drag to pan. The main view draws one
// (or three, A | B | A - B) with a shared camera.
#pragma once

#include <optional>
#include <string>

#include "app_state.h"
#include "views/heatmap_renderer.h"
#include "views/live_heatmap.h"
#include "views/views_gpu.h"

namespace kvscope::gui {

// Which cells the panel shows: the cell at the top-left pixel and the
// cells per screen pixel along each axis.
struct Camera {
  double x0 = 0, y0 = 0, cells_per_px_x = 1, cells_per_px_y = 1;
  bool operator==(const Camera&) const = default;
};

// The FBO of one panel and what it last rendered (redrawn only on change).
struct PanelRenderCache {
  RenderTarget target;
  std::string last;  // a description of the last render's inputs
  std::optional<ImVec2> box_from;  // a zoom box being drawn (right-button drag), from here
};

struct HeatmapPanelSpec {
  const char* id = "heatmap";
  const LiveHeatmap* cells = nullptr;
  HeatmapStyle style;
  int last_row = 0;          // the timeline row: later rows are not drawn
  int visible_cols = 0;      // positions seen so far
  const PublishedRun* run = nullptr;  // token text for labels
  std::string title;         // above the panel ("A", "B", "A − B"); "" none
  std::string notice;        // centred over the cells ("computing…"); "" none
  bool row_labels = true;    // false: a narrow margin (panels beside one that has them)
  bool row_tokens = true;    // room for the query token beside each step number
  float row_label_w = 0;     // the row labels' margin; 0: row_label_width(row_tokens)
  // A sliding-window layer (Gemma 3): row r's query at position
  // first_query + r sees keys above first_query + r - window; the edge is
  // drawn. 0: the layer sees the whole cache.
  int window = 0;
  int first_query = 0;
};

struct PanelHover {
  bool hovered = false;
  int row = -1, col = -1;
};

// Label margins (screen pixels) the panel reserves left of and above the cells.
// Step numbers alone, or with the query token when rows are a text line tall.
float row_label_width(bool with_tokens);
float row_margin(const HeatmapPanelSpec& spec);  // row_label_width(spec.row_tokens), or the narrow margin
float col_label_height();
// The smallest cell that carries its label: a column its token's text
// (narrower ones get position numbers every few columns), a row a text
// line (the step's query token beside its number). views/first_view.h
// opens long runs at these sizes.
float column_label_min_px();
float row_label_min_px();

// Draws the panel at the cursor in `size` (labels included) and handles
// zoom/pan on it, changing `cam`; returns the hovered cell. The cells are
// rendered with `gpu` into `cache` (only when what they show changed).
PanelHover draw_heatmap_panel(const HeatmapPanelSpec& spec, Camera& cam, PanelRenderCache& cache, ViewGpu& gpu,
                              ImVec2 size, AppState& s);

}  // namespace kvscope::gui
