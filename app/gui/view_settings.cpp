#include "view_settings.h"

#include <cmath>

#include "io/colormap.h"
#include "session/session_config.h"

namespace kvscope::gui {
namespace {

const char* const kEvictedMarks[] = {"outline", "strip", "none"};     // EvictedMark order
const char* const kScales[] = {"linear", "log"};                      // ColorScaleKind order
const char* const kForkDifferences[] = {"attention", "masks"};        // ForkDifference order

// The index of `name` in `names`, or -1.
template <std::size_t N>
int index_of(const char* const (&names)[N], const std::string& name) {
  for (std::size_t i = 0; i < N; ++i)
    if (name == names[i]) return static_cast<int>(i);
  return -1;
}

}  // namespace

const char* view_mode_name(ViewMode m) {
  switch (m) {
    case ViewMode::Attention: return "attention";
    case ViewMode::Mask: return "retained mask";
    case ViewMode::Statistic: return "policy statistic";
    case ViewMode::DiffFull: return "A - full cache";
    case ViewMode::DiffFork: return "A vs B (fork)";
    case ViewMode::IdealOverlay: return "ideal overlay";
  }
  return "?";
}

// kViewModes lists the names in the order of the ViewMode enum.
const char* view_mode_key(ViewMode m) { return kViewModes[static_cast<int>(m)]; }

std::optional<ViewMode> parse_view_mode(const std::string& name) {
  const int i = index_of(kViewModes, name);
  if (i < 0) return std::nullopt;
  return static_cast<ViewMode>(i);
}

nlohmann::json view_settings_to_json(const ViewSettings& v) {
  return {{"mode", view_mode_key(v.mode)},
          {"evicted", kEvictedMarks[static_cast<int>(v.evicted)]},
          {"scale", kScales[static_cast<int>(v.scale)]},
          {"colormap", v.colormap},
          {"auto_range", v.auto_range},
          {"range", {v.range_lo, v.range_hi}},
          {"shared_range", v.shared_range},
          {"fork_difference", kForkDifferences[static_cast<int>(v.fork_difference)]},
          {"follow_latest", v.follow_latest}};
}

void view_settings_from_json(const nlohmann::json& j, ViewSettings& into) {
  if (!j.is_object()) return;
  auto text = [&](const char* key) -> std::string {
    return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
  };
  auto flag = [&](const char* key, bool& out) {
    if (j.contains(key) && j[key].is_boolean()) out = j[key].get<bool>();
  };
  if (const auto m = parse_view_mode(text("mode"))) into.mode = *m;
  if (const int i = index_of(kEvictedMarks, text("evicted")); i >= 0) into.evicted = static_cast<EvictedMark>(i);
  if (const int i = index_of(kScales, text("scale")); i >= 0) into.scale = static_cast<ColorScaleKind>(i);
  if (const std::string c = text("colormap"); !c.empty() && kvscope::unknown_colormap(c).empty()) into.colormap = c;
  flag("auto_range", into.auto_range);
  if (j.contains("range") && j["range"].is_array() && j["range"].size() == 2 && j["range"][0].is_number() &&
      j["range"][1].is_number()) {
    const float lo = j["range"][0].get<float>(), hi = j["range"][1].get<float>();
    if (std::isfinite(lo) && std::isfinite(hi) && lo < hi) {
      into.range_lo = lo;
      into.range_hi = hi;
    }
  }
  flag("shared_range", into.shared_range);
  if (const int i = index_of(kForkDifferences, text("fork_difference")); i >= 0)
    into.fork_difference = static_cast<ForkDifference>(i);
  flag("follow_latest", into.follow_latest);
}

void fit_view(ViewSettings& v) {
  v.zoom = 0;
  v.view_x0 = v.view_y0 = 0;
  v.follow_latest = true;
  v.open_on_columns.reset();
  v.open_first_view = false;
  v.fit_while_legible = false;  // the user's fit stays
}

}  // namespace kvscope::gui
