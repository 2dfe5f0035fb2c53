#include "views/bookmark_alerts.h"

#include <algorithm>

#include "imgui.h"
#include "views/token_text.h"

namespace kvscope::gui {
namespace {

constexpr double kFlashSeconds = 1.5, kAlertSeconds = 6;

}  // namespace

void watch_bookmarks(AppState& s) {
  BookmarkWatch& w = s.bookmark_watch;
  const std::shared_ptr<const PublishedRun> a = s.a;
  if (!a || !a->session) return;
  if (w.session != a->session.get() || w.generation != a->generation) {
    // A new session (reset, replay, open): its past evictions are history,
    // not news; only what happens from here on alerts.
    w.session = a->session.get();
    w.generation = a->generation;
    w.seen_events = a->events.size();
    return;
  }
  const double now = ImGui::GetTime();
  for (std::size_t i = w.seen_events; i < a->events.size(); ++i) {
    const EvictionEvent& e = a->events[i];
    if (std::find(s.bookmarks.begin(), s.bookmarks.end(), e.position) == s.bookmarks.end()) continue;
    const std::string text = "step " + std::to_string(e.step) + ": layer " + std::to_string(e.layer) + " KV head " +
                             std::to_string(e.kv_head) + " evicted bookmarked '" +
                             display_token(a->token_text, e.position) + "' (pos " + std::to_string(e.position) + ")";
    s.alerts.push_back(text);
    w.flashed_at[e.position] = now;
    w.last_alert = text;
    w.last_alert_at = now;
  }
  w.seen_events = a->events.size();
}

float eviction_flash(const AppState& s, int position) {
  const BookmarkWatch& w = s.bookmark_watch;
  const auto it = w.flashed_at.find(position);
  if (it == w.flashed_at.end()) return 0;
  const double age = ImGui::GetTime() - it->second;
  return age < 0 || age > kFlashSeconds ? 0.f : float(1 - age / kFlashSeconds);
}

std::string fresh_alert(const AppState& s) {
  const BookmarkWatch& w = s.bookmark_watch;
  return ImGui::GetTime() - w.last_alert_at < kAlertSeconds ? w.last_alert : "";
}

}  // namespace kvscope::gui
