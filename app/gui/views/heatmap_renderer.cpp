#include "views/heatmap_renderer.h"

#include "figures/heatmap_panel.h"
#include "io/colormap.h"

namespace kvscope::gui {
namespace {

// GL state a heatmap pass changes, put back afterwards so ImGui's own
// rendering (and anything else drawing this frame) finds it as it was.
struct SavedGlState {
  GLint framebuffer = 0, program = 0, vao = 0, active_texture = 0, viewport[4] = {};
  GLboolean blend = GL_FALSE, scissor = GL_FALSE, depth = GL_FALSE, cull = GL_FALSE;
  GLint texture[4] = {};
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
    for (int unit = 0; unit < 4; ++unit) {
      glActiveTexture(GL_TEXTURE0 + unit);
      glGetIntegerv(GL_TEXTURE_BINDING_2D, &texture[unit]);
    }
  }
  ~SavedGlState() {
    for (int unit = 0; unit < 4; ++unit) {
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

void RenderTarget::ensure(int width, int height) {
  width = std::max(width, 1);
  height = std::max(height, 1);
  if (fbo_ && width == w_ && height == h_) return;
  release();
  w_ = width;
  h_ = height;
  color_ = make_nearest_texture(GL_RGBA8, GL_RGBA, GL_UNSIGNED_BYTE, w_, h_, nullptr);
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
  if (!program_.build("fullscreen.vert.glsl", "heatmap.frag.glsl")) {
    error = program_.error();
    return false;
  }
  glGenVertexArrays(1, &vao_);
  return true;
}

void HeatmapRenderer::release() {
  program_.destroy();
  if (vao_) glDeleteVertexArrays(1, &vao_);
  vao_ = 0;
}

void HeatmapRenderer::render(RenderTarget& target, const HeatmapTexture& cells, const HeatmapViewport& view,
                             const HeatmapStyle& style, const PaletteTextures& textures) {
  if (!program_.ok() || !target.framebuffer()) return;
  note_texture_written(target.texture());
  SavedGlState saved;
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, target.framebuffer());
  glViewport(0, 0, target.width(), target.height());
  glDisable(GL_BLEND);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_CULL_FACE);
  const kvscope::Rgb background = kvscope::kNanColor;
  glClearColor(background.r / 255.f, background.g / 255.f, background.b / 255.f, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);

  glUseProgram(program_.id());
  glBindVertexArray(vao_);
  GlProgram& p = program_;
  glUniform2f(p.uniform("u_target_size"), float(target.width()), float(target.height()));
  glUniform4f(p.uniform("u_view"), float(view.x0), float(view.y0), float(view.cells_per_px_x),
              float(view.cells_per_px_y));
  glUniform2i(p.uniform("u_limit"), view.visible_cols, view.last_row);
  glUniform1i(p.uniform("u_categorical"), style.coloring == CellColoring::Codes);
  glUniform1i(p.uniform("u_pool_magnitude"), style.pool_by_magnitude ? 1 : 0);
  glUniform1i(p.uniform("u_log_scale"), style.scale.kind == kvscope::ScaleKind::log);
  glUniform1f(p.uniform("u_lo"), float(style.scale.lo));
  glUniform1f(p.uniform("u_hi"), float(style.scale.hi));
  glUniform1i(p.uniform("u_mark"), style.outline_evicted ? 1 : 0);
  const kvscope::Colormap& cmap = kvscope::colormap(kvscope::unknown_colormap(style.colormap).empty() ? style.colormap : "viridis");
  set_rgb(p.uniform("u_evicted_color"), kvscope::evicted_outline_color(cmap));
  set_rgb(p.uniform("u_protected_color"), kvscope::protected_outline_color(cmap));
  set_rgb(p.uniform("u_background"), background);
  glUniform1i(p.uniform("u_values"), 0);
  glUniform1i(p.uniform("u_codes"), 1);
  glUniform1i(p.uniform("u_colormap"), 2);
  glUniform1i(p.uniform("u_palette"), 3);
  glActiveTexture(GL_TEXTURE2);
  glBindTexture(GL_TEXTURE_2D, textures.colormap(style.colormap));
  glActiveTexture(GL_TEXTURE3);
  glBindTexture(GL_TEXTURE_2D, textures.palette());
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
