#include "views/view_caches.h"

namespace kvscope::gui {

void MainViewCache::Picture::release() {
  cells.clear();
  panel.target.release();
  strip.target.release();
  panel.last.clear();
  strip.last.clear();
}

void ViewCaches::init() { gpu.init(); }

void ViewCaches::release() {
  for (MainViewCache::Picture* p : {&main_view.a, &main_view.b, &main_view.diff}) p->release();
  grid.atlas.release();
  grid.target.release();
  grid.rendered.clear();
  gpu.release();
}

}  // namespace kvscope::gui
