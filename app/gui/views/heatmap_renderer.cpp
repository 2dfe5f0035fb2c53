#include "views/heatmap_renderer.h"

#include <algorithm>
#include <string>

#include "figures/heatmap_panel.h"
#include "io/colormap.h"

namespace kvscope::gui {
namespace {

// GL state a heatmap pass changes, put back afterwards so ImGui's own
// rendering (and anything else drawing this frame) finds it as it was.
struct SavedGlState {
  GLint framebuffer = 0, program = 0, vao = 0, active_texture = 0, viewport[4] = {};
  GLboolean blend = GL_FALSE, scissor = GL_FALSE, depth = GL_FALSE, cull = GL_FALSE;
  GLint texture[5] = {};
  SavedGlState() {
    glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &framebuffer);
    glGetIntegerv(GL_CURRENT_PROGRAM, &program);
    glGetIntegerv(GL_VERTEX_ARRAY_BINDING, &vao);
    glGetIntegerv(GL_ACTIVE_TEXTURE, &active_texture);
    glGetIntegerv(GL_VIEWPORT, viewport);
    blend = glIsEnabled(GL_BLEND);
    scissor = glIsEnabled(GL_SCISSOR_TEST);
    depth = glIsEnabled(GL_DEPTH_TEST);
    cull = glIsEnabled(GL_CULL_FACE);
    for (int unit = 0; unit < 5; ++unit) {
      glActiveTexture(GL_TEXTURE0 + unit);
      glGetIntegerv(GL_TEXTURE_BINDING_2D, &texture[unit]);
    }
  }
  ~SavedGlState() {
    for (int unit = 0; unit < 5; ++unit) {
      glActiveTexture(GL_TEXTURE0 + unit);
      glBindTexture(GL_TEXTURE_2D, texture[unit]);
    }
    glActiveTexture(active_texture);
    glBindFramebuffer(GL_DRAW_FRAMEBUFFER, framebuffer);
    glUseProgram(program);
    glBindVertexArray(vao);
    glViewport(viewport[0], viewport[1], viewport[2], viewport[3]);
    auto set = [](GLenum cap, GLboolean on) { on ? glEnable(cap) : glDisable(cap); };
    set(GL_BLEND, blend);
    set(GL_SCISSOR_TEST, scissor);
    set(GL_DEPTH_TEST, depth);
    set(GL_CULL_FACE, cull);
  }
};

void set_rgb(GLint location, kvscope::Rgb c) { glUniform3f(location, c.r / 255.f, c.g / 255.f, c.b / 255.f); }

}  // namespace

void RenderTarget::ensure(int width, int height, GLint internal_format) {
  width = std::max(width, 1);
  height = std::max(height, 1);
  if (fbo_ && width == w_ && height == h_ && internal_format == format_) return;
  release();
  w_ = width;
  h_ = height;
  format_ = internal_format;
  color_ = internal_format == GL_RG32F ? make_nearest_texture(GL_RG32F, GL_RG, GL_FLOAT, w_, h_, nullptr)
                                       : make_nearest_texture(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, w_, h_, nullptr);
  GLint previous = 0;
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &previous);
  glGenFramebuffers(1, &fbo_);
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, color_, 0);
  glBindFramebuffer(GL_FRAMEBUFFER, previous);
}

void RenderTarget::release() {
  if (fbo_) glDeleteFramebuffers(1, &fbo_);
  if (color_) glDeleteTextures(1, &color_);
  fbo_ = color_ = 0;
  w_ = h_ = 0;
}

bool HeatmapRenderer::init(std::string& error) {
  release();
  for (int path = 0; path < kPaths; ++path)
    if (!programs_[path].build("fullscreen.vert.glsl", "heatmap.frag.glsl",
                               "#define HEATMAP_PATH " + std::to_string(path) + "\n")) {
      error = programs_[path].error();
      return false;
    }
  if (!pool_program_.build("fullscreen.vert.glsl", "heatmap_pool.frag.glsl")) {
    error = pool_program_.error();
    return false;
  }
  glGenVertexArrays(1, &vao_);
  return true;
}

void HeatmapRenderer::release() {
  for (GlProgram& p : programs_) p.destroy();
  pool_program_.destroy();
  levels_.clear();
  if (vao_) glDeleteVertexArrays(1, &vao_);
  vao_ = 0;
}

int HeatmapRenderer::reduced_level_for(double cells_per_px) {
  int level = 0;
  while (level < 30 && double(1 << level) < cells_per_px) ++level;
  return level;
}

const HeatmapRenderer::ReducedLevel& HeatmapRenderer::reduced_level(const HeatmapTile& tile,
                                                                    const HeatmapViewport& view, int level_x,
                                                                    int level_y) {
  const std::uint64_t serial = texture_serial(texture_id(tile.values));
  const int visible_cols = std::min(view.visible_cols, tile.col0 + tile.cols);
  const int last_row = std::min(view.last_row, tile.row0 + tile.rows - 1);
  ReducedLevel* slot = nullptr;
  for (auto& l : levels_)
    if (l->values == tile.values && l->level_x == level_x && l->level_y == level_y) slot = l.get();
  if (slot && slot->serial == serial && slot->visible_cols == visible_cols && slot->last_row == last_row) {
    slot->used = ++uses_;
    return *slot;
  }
  if (!slot) {
    // A few levels: the A, B and A - B panels, and a zoom that goes back
    // and forth across a power of two, each keep theirs.
    constexpr std::size_t kMostLevels = 6;
    if (levels_.size() < kMostLevels) {
      levels_.push_back(std::make_unique<ReducedLevel>());
      slot = levels_.back().get();
    } else {
      slot = std::min_element(levels_.begin(), levels_.end(), [](const auto& a, const auto& b) {
               return a->used < b->used;
             })->get();
    }
  }
  slot->values = tile.values;
  slot->serial = serial;
  slot->visible_cols = visible_cols;
  slot->last_row = last_row;
  slot->level_x = level_x;
  slot->level_y = level_y;
  slot->used = ++uses_;
  const int w = (tile.cols + (1 << level_x) - 1) >> level_x, h = (tile.rows + (1 << level_y) - 1) >> level_y;
  slot->target.ensure(w, h, GL_RG32F);

  SavedGlState saved;
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, slot->target.framebuffer());
  glViewport(0, 0, w, h);
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_CULL_FACE);
  glUseProgram(pool_program_.id());
  glBindVertexArray(vao_);
  GlProgram& p = pool_program_;
  glUniform2f(p.uniform("u_target_size"), float(w), float(h));
  glUniform2i(p.uniform("u_tile_origin"), tile.col0, tile.row0);
  glUniform2i(p.uniform("u_tile_size"), tile.cols, tile.rows);
  glUniform2i(p.uniform("u_limit"), visible_cols, last_row);
  glUniform2i(p.uniform("u_block"), 1 << level_x, 1 << level_y);
  glUniform1i(p.uniform("u_values"), 0);
  glActiveTexture(GL_TEXTURE0);
  glBindTexture(GL_TEXTURE_2D, tile.values);
  glDrawArrays(GL_TRIANGLES, 0, 3);
  return *slot;
}

void HeatmapRenderer::render(RenderTarget& target, const HeatmapTexture& cells, const HeatmapViewport& view,
                             const HeatmapStyle& style, const PaletteTextures& textures) {
  if (!programs_[kPathCodes].ok() || !target.framebuffer()) return;
  // The way this view reads its cells: the shader's cells per pixel are
  // these floats, so "a cell is at least a pixel" is decided on them.
  // Reduced levels: one tile (tiles would need blocks across their seams),
  // values coloured by the colormap, and cells under a pixel.
  const int level_x = reduced_level_for(view.cells_per_px_x), level_y = reduced_level_for(view.cells_per_px_y);
  const bool one_cell = float(view.cells_per_px_x) <= 1.f && float(view.cells_per_px_y) <= 1.f;
  const bool reduced = view.reduced_levels && cells.tiles().size() == 1 && (level_x > 0 || level_y > 0);
  const Path path = style.coloring == CellColoring::Codes ? kPathCodes
                    : one_cell                            ? kPathOneCell
                    : reduced                             ? kPathPooled
                                                          : kPathSampled;
  note_texture_written(target.texture());
  SavedGlState saved;
  const ReducedLevel* level =
      path == kPathPooled ? &reduced_level(cells.tiles().front(), view, level_x, level_y) : nullptr;
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, target.framebuffer());
  glViewport(0, 0, target.width(), target.height());
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_CULL_FACE);
  const kvscope::Rgb background = kvscope::kNanColor;
  glClearColor(background.r / 255.f, background.g / 255.f, background.b / 255.f, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);

  GlProgram& p = programs_[path];
  glUseProgram(p.id());
  glBindVertexArray(vao_);
  // (A uniform the path does not read has no location: setting it does nothing.)
  glUniform2f(p.uniform("u_target_size"), float(target.width()), float(target.height()));
  glUniform4f(p.uniform("u_view"), float(view.x0), float(view.y0), float(view.cells_per_px_x),
              float(view.cells_per_px_y));
  glUniform2i(p.uniform("u_limit"), view.visible_cols, view.last_row);
  glUniform1i(p.uniform("u_pool_magnitude"), style.pool_by_magnitude ? 1 : 0);
  glUniform1i(p.uniform("u_log_scale"), style.scale.kind == kvscope::ScaleKind::log);
  glUniform1f(p.uniform("u_lo"), float(style.scale.lo));
  glUniform1f(p.uniform("u_hi"), float(style.scale.hi));
  glUniform1i(p.uniform("u_mark"), style.outline_evicted ? 1 : 0);
  glUniform1f(p.uniform("u_min_outline_px"), kMinOutlineCellPixels);
  const kvscope::Colormap& cmap = kvscope::colormap(kvscope::unknown_colormap(style.colormap).empty() ? style.colormap : "viridis");
  set_rgb(p.uniform("u_evicted_color"), kvscope::evicted_outline_color(cmap));
  set_rgb(p.uniform("u_protected_color"), kvscope::protected_outline_color(cmap));
  set_rgb(p.uniform("u_background"), background);
  glUniform1i(p.uniform("u_values"), 0);
  glUniform1i(p.uniform("u_codes"), 1);
  glUniform1i(p.uniform("u_colormap"), 2);
  glUniform1i(p.uniform("u_palette"), 3);
  glUniform1i(p.uniform("u_pooled"), 4);
  glActiveTexture(GL_TEXTURE2);
  glBindTexture(GL_TEXTURE_2D, textures.colormap(style.colormap));
  glActiveTexture(GL_TEXTURE3);
  glBindTexture(GL_TEXTURE_2D, textures.palette());
  if (level) {
    glUniform2i(p.uniform("u_pool_level"), level_x, level_y);
    glUniform2i(p.uniform("u_pool_size"), level->target.width(), level->target.height());
    glActiveTexture(GL_TEXTURE4);
    glBindTexture(GL_TEXTURE_2D, level->target.texture());
  }
  for (const HeatmapTile& tile : cells.tiles()) {
    glActiveTexture(GL_TEXTURE0);
    glBindTexture(GL_TEXTURE_2D, tile.values);
    glActiveTexture(GL_TEXTURE1);
    glBindTexture(GL_TEXTURE_2D, tile.codes);
    glUniform2i(p.uniform("u_tile_origin"), tile.col0, tile.row0);
    glUniform2i(p.uniform("u_tile_size"), tile.cols, tile.rows);
    glDrawArrays(GL_TRIANGLES, 0, 3);
  }
}

}  // namespace kvscope::gui
