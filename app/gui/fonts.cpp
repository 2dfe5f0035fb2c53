#include "fonts.h"

#include <filesystem>

#include <imgui.h>

namespace kvscope::gui {

namespace {

constexpr float kBaseFontPixels = 15.0f;

// Latin, Latin Extended, Greek (tau, alpha), Cyrillic, general
// punctuation, arrows, mathematical operators, box drawing and geometric
// shapes (the UI's own signs).
const ImWchar kRanges[] = {
    0x0020, 0x00FF, 0x0100, 0x024F, 0x0370, 0x03FF, 0x0400, 0x052F, 0x2000, 0x206F,
    0x2190, 0x21FF, 0x2200, 0x22FF, 0x2500, 0x257F, 0x25A0, 0x25FF, 0,
};

const char* find_first(std::initializer_list<const char*> paths) {
  for (const char* p : paths)
    if (std::filesystem::exists(p)) return p;
  return nullptr;
}

ImFont* add_font(const char* dejavu, const char* cjk, float pixels) {
  ImGuiIO& io = ImGui::GetIO();
  ImFontConfig cfg;
  cfg.OversampleH = 2;
  ImFont* font = io.Fonts->AddFontFromFileTTF(dejavu, pixels, &cfg, kRanges);
  if (font && cjk) {
    ImFontConfig merge;
    merge.MergeMode = true;
    merge.OversampleH = 1;  // CJK atlases are large; keep them lean
    // The common Chinese set also covers most kanji; kana from the Japanese one.
    io.Fonts->AddFontFromFileTTF(cjk, pixels, &merge, io.Fonts->GetGlyphRangesChineseSimplifiedCommon());
    io.Fonts->AddFontFromFileTTF(cjk, pixels, &merge, io.Fonts->GetGlyphRangesJapanese());
  }
  return font;
}

}  // namespace

FontSet load_fonts(float scale) {
  ImGuiIO& io = ImGui::GetIO();
  FontSet set;
  const char* dejavu = find_first({"/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
                                   "/usr/share/fonts/dejavu/DejaVuSans.ttf"});
  const char* cjk = find_first({"/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
                                "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
                                "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
                                "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"});
  if (dejavu) {
    set.normal = add_font(dejavu, cjk, kBaseFontPixels * scale);
    set.presenter = add_font(dejavu, cjk, kBaseFontPixels * scale * kPresenterFontFactor);
  }
  if (!set.normal || !set.presenter) {
    // No DejaVu: ImGui's own font (ASCII), scaled for presenter mode.
    io.Fonts->Clear();
    ImFontConfig cfg;
    cfg.SizePixels = 13.0f * scale;
    set.normal = io.Fonts->AddFontDefault(&cfg);
    cfg.SizePixels = 13.0f * scale * kPresenterFontFactor;
    set.presenter = io.Fonts->AddFontDefault(&cfg);
    return set;
  }
  set.unicode = true;
  io.FontDefault = set.normal;
  return set;
}

}  // namespace kvscope::gui
