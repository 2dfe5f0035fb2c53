#include "launch_options.h"

#include "common/error.h"
#include "bundle/downloaded_models.h"

#include <cstdio>
#include <filesystem>

#include <CLI/CLI.hpp>

#include "panels.h"
#include "state_json.h"
#include "session/session_config.h"

namespace kvscope::gui {

namespace {

int bad_argument(const std::string& flag, const std::string& what) {
  std::fprintf(stderr, "kvscope: %s: %s\n", flag.c_str(), what.c_str());
  return 2;
}

std::string lesson_names(const std::vector<LessonEntry>& lessons) {
  std::string names;
  for (const auto& l : lessons) names += (names.empty() ? "" : ", ") + l.name;
  return names.empty() ? "none installed" : names;
}

}  // namespace

std::optional<int> parse_launch_options(int argc, char** argv, LaunchOptions& o) {
  CLI::App app{"kvscope: a playground for KV-cache eviction in transformer decoding"};
  std::string model, lesson, size, view;
  int layer = -1, head = -1;
  auto* model_opt =
      app.add_option("--model", model,
                     "Model directory, .gguf file or a name fetched by tools/get-model.sh (default: the bundled kvscope-tiny)")
          ->check(CLI::Validator(
              [](std::string& m) -> std::string {
                if (m.empty()) return "";  // the bundled model
                try {
                  const std::string path = kvscope::resolve_model_reference(m);
                  std::error_code ec;
                  return std::filesystem::exists(path, ec) ? "" : "no such model directory or file: " + m;
                } catch (const kvscope::Error& e) {
                  return e.what();
                }
              },
              "MODEL"));
  auto* session_opt = app.add_option("--session", o.session, "Session file to open")->check(CLI::ExistingFile);
  auto* lesson_opt = app.add_option("--lesson", lesson, "Lesson to open (a file name in assets/lessons, without .json)");
  app.add_option("--steps", o.steps, "Decoding steps to run before --screenshot / --export / --exit")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--screenshot", o.screenshot, "Write the window as PNG (plus OUT.json with the state) when done");
  app.add_flag("--exit", o.exit_when_done, "Quit when the steps, export and screenshot are done");
  app.add_option("--state-file", o.state_file, "Write the state as JSON whenever it changes (for tests)");
  app.add_option("--export", o.export_dir, "Export everything into DIR when the steps are done");
  app.add_option("--bench-frames", o.bench_frames,
                 "After the run, draw N frames still, panning and zooming, print the frame times and quit")
      ->check(CLI::PositiveNumber);
  app.add_flag("--presenter", o.presenter, "Presenter mode: large fonts, expert panels hidden");
  auto* size_opt = app.add_option("--size", size, "Window size WxH (default: the remembered one)");
  auto* layer_opt = app.add_option("--layer", layer, "Layer shown first")->check(CLI::NonNegativeNumber);
  auto* head_opt = app.add_option("--head", head, "Query head shown first")->check(CLI::NonNegativeNumber);
  auto* view_opt = app.add_option("--view", view, "View mode: attention, mask, statistic, diff_full, diff_fork, ideal");
  int lesson_step = 0;
  auto* lesson_step_opt = app.add_option("--lesson-step", lesson_step,
                                         "Show step N of the lesson (1 = its first step after the introduction), as "
                                         "if Next had been pressed N times")
                              ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "kvscope: %s\n", e.what());
    return 2;
  }

  // A session file or a lesson names its own model.
  if (session_opt->count() && lesson_opt->count())
    return bad_argument("--lesson", "cannot be combined with --session (a lesson is a session file)");
  if (model_opt->count() && (session_opt->count() || lesson_opt->count()))
    return bad_argument("--model", "cannot be combined with --session or --lesson (the session file names its model)");
  if (model_opt->count()) o.model = model;
  if (lesson_opt->count()) {
    const auto lessons = find_lessons();
    for (const auto& l : lessons)
      if (l.name == lesson || l.title == lesson) o.lesson_path = l.path;
    if (o.lesson_path.empty()) return bad_argument("--lesson", "no lesson '" + lesson + "' (" + lesson_names(lessons) + ")");
  }
  if (size_opt->count()) {
    int w = 0, h = 0;
    char tail = 0;
    if (std::sscanf(size.c_str(), "%dx%d%c", &w, &h, &tail) != 2 || w < 320 || h < 240 || w > 16384 || h > 16384)
      return bad_argument("--size", "expected WxH with W >= 320 and H >= 240, e.g. 1600x1000 (got '" + size + "')");
    o.width = w;
    o.height = h;
  }
  if (lesson_step_opt->count()) {
    if (!lesson_opt->count() && !session_opt->count())
      return bad_argument("--lesson-step", "needs --lesson (or a --session with a lesson block)");
    o.lesson_step = lesson_step;
  }
  if (layer_opt->count()) o.layer = layer;
  if (head_opt->count()) o.head = head;
  if (view_opt->count()) {
    o.view_mode = parse_view_mode(view);
    if (!o.view_mode)
      return bad_argument("--view", "unknown mode '" + view + "' (attention, mask, statistic, diff_full, diff_fork, ideal)");
  }
  if (!o.screenshot.empty() && std::filesystem::path(o.screenshot).extension() != ".png")
    return bad_argument("--screenshot", "the file must end in .png (got '" + o.screenshot + "')");
  if (!o.screenshot.empty()) {
    const auto dir = std::filesystem::absolute(o.screenshot).parent_path();
    if (!std::filesystem::is_directory(dir)) return bad_argument("--screenshot", "no directory " + dir.string());
    // The screenshot's state goes beside it as OUT.json: never over a file
    // of the user's (a session file of the same name, say).
    const std::string sidecar = std::filesystem::path(o.screenshot).replace_extension(".json").string();
    if (!may_replace_state_file(sidecar))
      return bad_argument("--screenshot", sidecar +
                                              " exists and is not a window state kvscope wrote (the screenshot's "
                                              "state goes there): move it or name the screenshot otherwise");
  }
  if (!o.state_file.empty() && !may_replace_state_file(o.state_file))
    return bad_argument("--state-file", o.state_file + " exists and is not a window state kvscope wrote");
  return std::nullopt;
}

}  // namespace kvscope::gui
