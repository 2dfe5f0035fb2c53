// Bookmarked tokens watched for eviction: the moment any head (KV segment)
// evicts one, an alert line goes to s.alerts and the token flashes red in
// the token strip. Reads the run's eviction events as they are published;
// what it has read and when each token was evicted is s.bookmark_watch.
#pragma once

#include "app_state.h"
#include "imgui.h"

namespace kvscope::gui {

// Looks at the events published since the last call (a new session
// generation starts over without alerting on its history).
void watch_bookmarks(AppState& s);
// 1 right after `position` was evicted, fading to 0 over a second and a half.
float eviction_flash(const AppState& s, int position);
// The latest alert while it is fresh (a few seconds), else "".
std::string fresh_alert(const AppState& s);

}  // namespace kvscope::gui
