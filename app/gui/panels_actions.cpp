// What buttons, keys and menus do, written once so Space and the Play
// button cannot drift apart. Every action only posts a command to the
// worker; none waits for the engine.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "panels.h"
#include "bundle/model_bundle.h"

namespace kvscope::gui {

namespace {

int latest_row(const AppState& s) { return s.a ? s.a->rows - 1 : -1; }
bool scrubbed(const AppState& s) { return s.timeline_row >= 0 && s.timeline_row < latest_row(s); }

// The next published A (a new generation) takes over the settings it runs
// with; with `view_block`, also its session file's view and lesson blocks.
void adopt_next_session(AppState& s, bool view_block) {
  s.shell.adopt_after_generation = s.a ? s.a->generation : 0;
  s.shell.adopt_view_block = view_block;
}

}  // namespace

void action_step(AppState& s) {
  if (!s.worker) return;
  if (scrubbed(s)) {
    // Going on from a scrubbed row forks the run there (the worker drops
    // the later rows and says so in its message).
    s.worker->step_from(s.timeline_row, 1);
  } else {
    s.worker->step(1);
  }
  s.timeline_row = -1;
}

void action_step_back(AppState& s) {
  const int latest = latest_row(s);
  if (latest <= 0) return;
  const int row = s.timeline_row < 0 ? latest : s.timeline_row;
  s.timeline_row = std::max(0, row - 1);
  s.view.follow_latest = false;
}

void action_toggle_play(AppState& s) {
  if (!s.worker) return;
  const bool playing = s.status.playing;
  if (!playing && scrubbed(s)) s.worker->step_from(s.timeline_row, 1);  // play on from the scrubbed row
  s.worker->play(!playing);
  if (!playing) {
    s.timeline_row = -1;
    s.view.follow_latest = true;
  }
}

void action_reset(AppState& s) {
  if (!s.worker) return;
  s.worker->reset();
  s.timeline_row = -1;
  s.alerts.clear();
}

void action_fork(AppState& s) {
  if (!s.worker || !s.a) return;
  std::optional<int> at;
  if (scrubbed(s)) at = s.timeline_row;
  s.worker->fork(s.pending.fork_policy, at);
  s.shell.fork_editor_open = true;
}

SessionConfig config_from_panels(const AppState& s) {
  SessionConfig cfg = s.editing;
  cfg.model = s.shell.model_path;
  cfg.policy = s.pending.policy;
  cfg.sharing = s.pending.sharing;
  cfg.policy_changes.clear();  // a new session starts with one policy
  cfg.fork.reset();
  cfg.source.clear();
  // One seed keys every draw (as a session file's "seed" does).
  cfg.sampling.seed = cfg.seed;
  cfg.policy.seed = cfg.seed;
  return cfg;
}

void action_open_model(AppState& s, const std::string& model) {
  if (!s.worker) return;
  s.shell.model_path = model;
  SessionConfig cfg = config_from_panels(s);
  cfg.model = model;
  s.worker->open(cfg);
  if (!model.empty()) {  // newest first, no duplicates, a short list
    std::erase(s.recent_models, model);
    s.recent_models.insert(s.recent_models.begin(), model);
    if (s.recent_models.size() > 8) s.recent_models.resize(8);
  }
  adopt_next_session(s, false);
  s.timeline_row = -1;
}

void action_open_session_file(AppState& s, const std::string& path, int steps) {
  if (!s.worker) return;
  s.shell.session_path = path;
  s.worker->open_file(path, steps);
  adopt_next_session(s, true);
  s.timeline_row = -1;
  s.lesson.reset();
  s.lesson_step = -1;
}

void action_open_lesson(AppState& s, const LessonEntry& lesson) { action_open_session_file(s, lesson.path); }

void action_select_layer(AppState& s, int delta) {
  if (!s.a) return;
  const int layers = s.a->session->model_config().n_layers;
  s.layer = std::clamp(s.layer + delta, 0, std::max(0, layers - 1));
  s.head_chosen = true;
}

void action_select_head(AppState& s, int delta) {
  if (!s.a) return;
  const int heads = s.a->session->model_config().n_heads;
  s.head = std::clamp(s.head + delta, 0, std::max(0, heads - 1));
  s.head_chosen = true;
}

std::vector<LessonEntry> find_lessons() {
  namespace fs = std::filesystem;
  std::vector<LessonEntry> out;
  std::error_code ec;
  const fs::path dir = kvscope::assets_dir() / "lessons";
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() != ".json") continue;
    LessonEntry e{it->path().stem().string(), it->path().stem().string(), it->path().string()};
    // Only the title is read here; the file is checked properly when opened.
    try {
      std::ifstream in(it->path());
      const auto j = nlohmann::json::parse(in);
      if (j.contains("lesson") && j["lesson"].contains("title") && j["lesson"]["title"].is_string())
        e.title = j["lesson"]["title"].get<std::string>();
    } catch (const std::exception&) {
    }
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const LessonEntry& a, const LessonEntry& b) { return a.name < b.name; });
  return out;
}

}  // namespace kvscope::gui
