// Where the layers x heads grid puts its thumbnails: a pure function of the
// panel's size and the model's shape, so the rule is tested without a
// window (tests/gui/test_grid_layout.cpp).
//
// The rule: every head always fits across (a thumbnail shrinks rather than
// a head being clipped). If every layer also fits down at a legible size,
// the grid shows them all at once; otherwise thumbnails keep that legible
// size (or the width's limit, if smaller), the layers scroll, and a narrow
// overview column beside them shows every layer and where the view is.
#pragma once

namespace kvscope::gui {

struct GridLayoutInput {
  float width = 0, height = 0;  // the space the grid may use (below its caption line)
  float label_w = 0;            // the "L29" column on the left
  float header_h = 0;           // the head-number line above the columns
  float share_h = 0;            // the share line under each thumbnail
  float gap = 4;                // between thumbnails
  float min_thumb = 24;         // below this a thumbnail no longer reads: scroll instead
  float scrollbar_w = 14;       // taken by the vertical scrollbar when the layers scroll
  float overview_w = 12;        // the overview column shown when the layers scroll
  int layers = 0, heads = 0;
};

struct GridLayout {
  float thumb = 0;         // side of a thumbnail (square)
  float pitch_x = 0;       // thumbnail + gap across
  float pitch_y = 0;       // thumbnail + share line + gap down
  bool scrolls = false;    // the layers do not all fit: scroll, with the overview
  int visible_layers = 0;  // layers wholly visible at once
  float content_h = 0;     // the height of every layer row together (the scroll extent)
  float cells_w = 0;       // the width the thumbnails and labels take
};

GridLayout layout_grid(const GridLayoutInput& in);

// The first layer to show so that `layer` is visible, given the current
// first layer (scrolls as little as possible).
int first_layer_showing(int layer, int first, int visible_layers, int layers);

}  // namespace kvscope::gui
