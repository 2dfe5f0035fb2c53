#include "views/views.h"

#include <vector>

#include "views/heatmap_renderer.h"
#include "views/palette.h"
#include "views/views_gpu.h"

namespace kvscope::gui {
namespace {

bool g_ready = false;
std::string g_error;
std::vector<void (*)()>& releasers() {
  static std::vector<void (*)()> list;
  return list;
}

}  // namespace

bool views_gpu_ready() { return g_ready; }
const std::string& views_gpu_error() { return g_error; }

void on_views_shutdown(void (*release)()) {
  for (auto r : releasers())
    if (r == release) return;
  releasers().push_back(release);
}

void init_views() {
  init_palette_textures();
  g_ready = init_heatmap_renderer(g_error);
}

void shutdown_views() {
  for (auto release : releasers()) release();
  releasers().clear();
  release_heatmap_renderer();
  release_palette_textures();
  g_ready = false;
}

}  // namespace kvscope::gui
