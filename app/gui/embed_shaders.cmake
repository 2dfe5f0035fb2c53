# Writes OUT: one `{name, source}` entry per GLSL file in SHADERS, looked up
# with kvscope::gui::shader_source("heatmap.frag.glsl") (shader_sources.h).
set(body "// Generated from shaders/*.glsl by app/gui/embed_shaders.cmake; do not edit.\n#include \"shader_sources.h\"\n#include <cstring>\nnamespace kvscope::gui {\nnamespace {\nstruct Entry { const char* name; const char* source; };\nconst Entry kShaders[] = {\n")
foreach(f IN LISTS SHADERS)
  get_filename_component(name ${f} NAME)
  file(READ ${f} text)
  string(APPEND body "  {\"${name}\", R\"kvscope_glsl(${text})kvscope_glsl\"},\n")
endforeach()
string(APPEND body "  {nullptr, nullptr}};\n}  // namespace\nconst char* shader_source(const char* name) {\n  for (const Entry* e = kShaders; e->name; ++e)\n    if (std::strcmp(e->name, name) == 0) return e->source;\n  return nullptr;\n}\n}  // namespace kvscope::gui\n")
file(WRITE ${OUT}.tmp "${body}")
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
