#include "launch_script.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "panels.h"
#include "screenshot.h"
#include "bundle/model_bundle.h"
#include "state_json.h"
#include "io/json_file.h"

namespace kvscope::gui {

namespace {

// Frames drawn after the engine went idle before the capture, so the views
// have uploaded the newest rows into their textures.
constexpr int kSettleFrames = 3;

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The demo the window opens with: the bundled model, the pass-key prompt,
// and an evicting policy so the mask has something to show.
void set_demo(AppState& s, const std::string& model) {
  s.shell.model_path = model;
  std::string prompt = read_text(kvscope::assets_dir() / "prompts" / "passkey.txt");
  while (!prompt.empty() && (prompt.back() == '\n' || prompt.back() == ' ')) prompt.pop_back();
  s.editing.prompt = prompt.empty() ? "The pass key is 94442. Remember it. What is the pass key? The pass key is" : prompt;
  s.editing.max_new_tokens = 48;
  s.editing.stop_at_eos = false;  // the tiny model says EOS early; a demo should keep going when Space is pressed
  s.pending.policy.kind = PolicyKind::H2O;
  s.pending.policy.budget = Amount{30, true};
  s.pending.fork_policy.kind = PolicyKind::TOVA;
  s.pending.fork_policy.budget = Amount{30, true};
}

}  // namespace

void LaunchScript::start(AppState& s, const AppSettings& settings) {
  errors_at_start_ = s.status.error_serial;
  set_demo(s, opts_.model.value_or(""));
  const std::string file = !opts_.lesson_path.empty() ? opts_.lesson_path : opts_.session;
  if (!file.empty()) {
    action_open_session_file(s, file, opts_.steps);
    return;
  }
  // Without arguments the last session comes back (when it still exists).
  if (!opts_.scripted() && !opts_.model && !settings.last_session.empty() &&
      std::filesystem::is_regular_file(settings.last_session)) {
    action_open_session_file(s, settings.last_session);
    return;
  }
  action_open_model(s, s.shell.model_path);
  if (opts_.steps > 0) s.worker->step(opts_.steps);
}

void LaunchScript::apply_selection(AppState& s) {
  if (opts_.lesson_step) {
    const int steps = s.lesson ? static_cast<int>(s.lesson->steps.size()) : 0;
    if (*opts_.lesson_step > steps) {
      std::fprintf(stderr, "kvscope: --lesson-step: the lesson has %d step%s\n", steps, steps == 1 ? "" : "s");
      exit_code_ = 2;
    } else {
      action_lesson_step(s, *opts_.lesson_step - 1);
    }
  }
  if (opts_.layer) s.layer = *opts_.layer;
  if (opts_.head) s.head = *opts_.head;
  if (opts_.layer || opts_.head) s.head_chosen = true;
  if (opts_.view_mode) s.view.mode = *opts_.view_mode;
}

bool LaunchScript::after_render(AppState& s, int fb_w, int fb_h) {
  const bool idle = s.worker->idle() && !s.shell.adopt_after_generation;
  switch (phase_) {
    case Phase::WaitForRun:
      if (!idle) return false;
      apply_selection(s);
      if (!opts_.export_dir.empty() && s.a) {
        const int layer = s.a->config.export_opts.layer_head_chosen() ? s.a->config.export_opts.csv_layer() : s.layer;
        const int head = s.a->config.export_opts.layer_head_chosen() ? s.a->config.export_opts.csv_head() : s.head;
        s.worker->export_all(opts_.export_dir, layer, head, FigureExportOptions::from(s.a->config.export_opts));
        phase_ = Phase::WaitForExport;
      } else {
        phase_ = Phase::Settle;
      }
      return false;
    case Phase::WaitForExport:
      if (idle) phase_ = Phase::Settle;
      return false;
    case Phase::Settle:
      // The views may ask the worker for a layer on their first frames;
      // wait for that too, and for the grid to finish downsampling a long
      // history (within reason: a view that asks every frame must not keep
      // the capture from happening).
      ++waited_frames_;
      if ((!idle || s.shell.grid_filling) && waited_frames_ < 600) {
        settle_frames_ = 0;
        return false;
      }
      if (++settle_frames_ < kSettleFrames) return false;
      finish(s, fb_w, fb_h);
      return opts_.exit_when_done;
    case Phase::Done:
      return false;
  }
  return false;
}

void LaunchScript::finish(AppState& s, int fb_w, int fb_h) {
  phase_ = Phase::Done;
  if (!opts_.screenshot.empty()) {
    const std::string err = write_framebuffer_png(opts_.screenshot, fb_w, fb_h);
    if (!err.empty()) {
      std::fprintf(stderr, "kvscope: --screenshot: %s\n", err.c_str());
      exit_code_ = 1;
    }
    const std::string sidecar = std::filesystem::path(opts_.screenshot).replace_extension(".json").string();
    if (!write_text_atomically(sidecar, json_text(state_json(s, fb_w, fb_h)) + "\n")) {
      std::fprintf(stderr, "kvscope: --screenshot: cannot write %s\n", sidecar.c_str());
      exit_code_ = 1;
    }
  }
  // An error while the script ran (a bad session file, a failed export)
  // is the run's result when it was meant to exit by itself.
  if (opts_.exit_when_done && s.status.error_serial != errors_at_start_ && !s.status.error.empty()) {
    std::fprintf(stderr, "kvscope: %s\n", s.status.error.c_str());
    exit_code_ = 1;
  }
}

}  // namespace kvscope::gui
