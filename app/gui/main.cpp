// kvscope, the window: GLFW + OpenGL 3.3 core + Dear ImGui 1.86. This file
// is the plumbing only (window, context, fonts, the frame loop, settings);
// what a frame shows is app_frame.cpp, what the command line asks for is
// launch_script.cpp.
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include <GL/gl.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>

#include "app_frame.h"
#include "app_settings.h"
#include "fonts.h"
#include "launch_options.h"
#include "frame_bench.h"
#include "frame_damage.h"
#include "frame_present.h"
#include "launch_script.h"
#include "panels.h"
#include "reports/provenance.h"
#include "state_json.h"
#include "views/heatmap_renderer.h"
#include "io/json_file.h"

namespace gui = kvscope::gui;

namespace {

std::string g_last_glfw_error;

void on_glfw_error(int code, const char* what) { g_last_glfw_error = what ? what : std::to_string(code); }

// A folder or a .gguf file dropped on the window opens as a model; a .json
// file as a session file.
void on_drop(GLFWwindow* window, int count, const char** paths) {
  auto* s = static_cast<gui::AppState*>(glfwGetWindowUserPointer(window));
  if (!s || count < 1) return;
  const std::filesystem::path p = paths[0];
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec) || p.extension() == ".gguf") gui::action_open_model(*s, p.string());
  else if (p.extension() == ".json") gui::action_open_session_file(*s, p.string());
  else s->shell.error_banner = p.string() + ": drop a model folder, a .gguf file or a session .json file";
}

// Queues key presses for keyboard.cpp (see ShellState::pressed_keys).
// Installed before ImGui's backend, which chains to it.
void on_key(GLFWwindow* window, int key, int, int action, int mods) {
  auto* s = static_cast<gui::AppState*>(glfwGetWindowUserPointer(window));
  if (s && action != GLFW_RELEASE) s->shell.pressed_keys.push_back({key, mods});
}

// The window system lost the window's contents (uncovered, resized): the
// next frame is drawn whatever it shows.
gui::FrameDamage* g_frame_damage = nullptr;
void on_refresh(GLFWwindow*) {
  if (g_frame_damage) g_frame_damage->invalidate();
}

// Remembers what the next start restores; a scripted run leaves it alone.
void save_settings(GLFWwindow* window, const gui::AppState& s, gui::AppSettings settings) {
  glfwGetWindowSize(window, &settings.window_width, &settings.window_height);
  settings.recent_models = s.recent_models;
  settings.presenter = s.presenter;
  settings.view = s.view;
  if (!s.shell.session_path.empty() && std::filesystem::is_regular_file(s.shell.session_path))
    settings.last_session = std::filesystem::absolute(s.shell.session_path).string();
  gui::save_app_settings(settings);
}

}  // namespace

int main(int argc, char** argv) {
  gui::LaunchOptions opts;
  if (const auto code = gui::parse_launch_options(argc, argv, opts)) return *code;
  // What the window's exports and saved sessions record as their command
  // line; each adds its action ("kvscope (window): export to DIR").
  kvscope::set_command_line("kvscope (window)");

  std::string settings_warning;
  const gui::AppSettings settings = opts.scripted() ? gui::AppSettings{} : gui::load_app_settings(&settings_warning);

  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit()) {
    std::fprintf(stderr, "kvscope: cannot open a window (%s); is DISPLAY set? kvscope-cli works without one\n",
                 g_last_glfw_error.c_str());
    return 1;
  }
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  // An exact --size means framebuffer pixels (screenshots); otherwise let
  // a HiDPI monitor scale the remembered size.
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, opts.width > 0 ? GLFW_FALSE : GLFW_TRUE);
  const int width = opts.width > 0 ? opts.width : settings.window_width;
  const int height = opts.height > 0 ? opts.height : settings.window_height;
  GLFWwindow* window = glfwCreateWindow(width, height, "kvscope", nullptr, nullptr);
  if (!window) {
    std::fprintf(stderr, "kvscope: cannot create an OpenGL 3.3 core window (%s)\n", g_last_glfw_error.c_str());
    glfwTerminate();
    return 1;
  }
  glfwMakeContextCurrent(window);
  glfwSwapInterval(opts.scripted() ? 0 : 1);

  gui::AppState s;
  glfwSetWindowUserPointer(window, &s);
  glfwSetKeyCallback(window, on_key);
  glfwSetDropCallback(window, on_drop);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  // Scripted runs start from the default layout (screenshots and tests
  // must not depend on what a user moved) and write no imgui.ini.
  const std::string ini = opts.scripted() ? std::string() : gui::imgui_ini_path().string();
  if (!ini.empty()) std::filesystem::create_directories(gui::settings_dir());
  io.IniFilename = ini.empty() ? nullptr : ini.c_str();

  float xscale = 1, yscale = 1;
  glfwGetWindowContentScale(window, &xscale, &yscale);
  const float scale = std::max(1.0f, xscale);
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 3;
  style.FrameRounding = 2;
  style.ScaleAllSizes(scale);
  const gui::FontSet fonts = gui::load_fonts(scale);

  ImGui_ImplGlfw_InitForOpenGL(window, true);
  ImGui_ImplOpenGL3_Init("#version 330 core");
  std::optional<gui::AppFrame> frame;
  frame.emplace();  // the views' GL objects, now that the context exists
  gui::FramePresenter presenter;  // where frames are drawn and how they reach the window (frame_present.h)
  presenter.init();

  s.worker = std::make_unique<gui::EngineWorker>();
  s.presenter = opts.presenter || settings.presenter;
  s.view = settings.view;
  s.recent_models = settings.recent_models;
  s.shell.lessons = gui::find_lessons();
  s.shell.base_scale = scale;
  s.shell.partial_present = presenter.partial();
  s.shell.message_line = settings_warning;
  if (!fonts.unicode) s.shell.message_line = "DejaVu Sans not found (fonts-dejavu-core): token text beyond ASCII shows as '?'";
  gui::LaunchScript script(opts);
  script.start(s, settings);

  std::string last_state;
  bool was_presenter = s.presenter;
  gui::FrameBench bench(opts.bench_frames);
  bool benching = false;  // once the script's run is done
  gui::FrameDamage frame_damage;
  g_frame_damage = &frame_damage;
  glfwSetWindowRefreshCallback(window, on_refresh);
  bool last_drawn = true;  // the last frame drew something (and so swapped)
  while (!glfwWindowShouldClose(window) && !s.shell.want_quit) {
    // Sleep between events when nothing moves; keep frames coming while the
    // engine works, plays or the script waits, so new rows show at once.
    // A frame that drew nothing did not wait for the display either (no
    // swap, frame_damage.h): wait up to a 60 Hz frame's time instead.
    if (benching || script.active()) glfwPollEvents();
    else if (s.status.busy || s.status.playing || !s.worker->idle())
      last_drawn && !presenter.partial() ? glfwPollEvents() : glfwWaitEventsTimeout(1.0 / 60);
    else glfwWaitEventsTimeout(0.1);
    const auto frame_start = std::chrono::steady_clock::now();

    gui::refresh_from_worker(s);
    if (s.presenter != was_presenter) {
      s.shell.reset_layout = true;  // the panels' contents change size with the font
      was_presenter = s.presenter;
    }
    s.ui_scale = scale * (s.presenter ? gui::kPresenterFontFactor : 1.0f);

    if (benching) bench.before_frame(s);
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    // A scripted capture shows no hover tooltip wherever Xvfb left the pointer.
    if (script.active() && !opts.screenshot.empty()) io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    if (benching) bench.place_pointer(s, io.MousePos.x, io.MousePos.y);
    ImGui::NewFrame();
    ImGui::PushFont(s.presenter ? fonts.presenter : fonts.normal);
    frame->draw(s);
    s.shell.pressed_keys.clear();
    ImGui::PopFont();
    ImGui::Render();
    gui::note_window_over_error(s);

    int fb_w = 0, fb_h = 0;
    glfwGetFramebufferSize(window, &fb_w, &fb_h);
    // A scripted run draws every frame (its screenshots read the back
    // buffer, whose contents a swap leaves undefined).
    if (script.active() && !benching) frame_damage.invalidate();
    const auto built = std::chrono::steady_clock::now();
    const std::vector<gui::PixelRect> drawn =
        gui::draw_damaged(frame_damage, presenter.target(fb_w, fb_h, frame_damage), *ImGui::GetDrawData(), fb_w, fb_h);
    const float drawn_share = gui::drawn_share(drawn, fb_w, fb_h);
    const bool shown = presenter.present(drawn, fb_w, fb_h);

    if (!opts.state_file.empty()) {
      std::string state = kvscope::json_text(gui::state_json(s, fb_w, fb_h)) + "\n";
      if (state != last_state && gui::write_text_atomically(opts.state_file, state)) last_state = std::move(state);
    }
    bool quit = false;
    if (benching) glFinish();  // the rasteriser's work belongs to the frame (a partial present's copy included)
    else quit = script.after_render(s, fb_w, fb_h);
    const auto rasterised = std::chrono::steady_clock::now();
    last_drawn = drawn_share > 0;
    if (!shown) glfwSwapBuffers(window);
    if (bench.enabled() && !benching && !script.active() && s.worker->idle()) {
      benching = true;  // the run is drawn: from the next frame on, measure
      quit = false;
    }

    const auto done = std::chrono::steady_clock::now();
    using ms = std::chrono::duration<double, std::milli>;
    const gui::FramePhases phases{ms(built - frame_start).count(), ms(rasterised - built).count(),
                                  ms(done - rasterised).count(), drawn_share};
    // The status bar's frame time is that of the last frame drawn (a
    // skipped frame's would change the text, and so the frame, each time).
    if (drawn_share > 0) {
      s.frame_ms = phases.total();
      s.shell.frame_ms_smooth =
          s.shell.frame_ms_smooth == 0 ? s.frame_ms : 0.9 * s.shell.frame_ms_smooth + 0.1 * s.frame_ms;
      double& shown = s.shell.frame_ms_shown;
      if (shown == 0 || std::abs(s.shell.frame_ms_smooth - shown) > 0.2 * shown) shown = s.shell.frame_ms_smooth;
    }
    if (benching && bench.after_frame(phases)) break;
    if (quit) break;
  }

  g_frame_damage = nullptr;
  presenter.release();
  if (!opts.scripted()) save_settings(window, s, settings);
  frame.reset();  // frees the views' GL objects while the context exists
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  s.a.reset();
  s.b.reset();
  s.worker.reset();  // cancels and joins the engine thread
  glfwDestroyWindow(window);
  glfwTerminate();
  return script.exit_code();
}
