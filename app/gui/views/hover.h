// The token under the mouse, shared by every view: a view that has the
// mouse over a position notes it this frame; s.hovered_position then holds
// it for the next frame's drawing (so the panel drawn first still sees what
// a panel drawn later hovered), and -1 when nothing was hovered.
#pragma once

#include "app_state.h"
#include "imgui.h"

namespace kvscope::gui {

// Call at the top of every view: on a new frame, publishes last frame's note.
void begin_view_frame(AppState& s);
void note_hovered_position(AppState& s, int position);

}  // namespace kvscope::gui
