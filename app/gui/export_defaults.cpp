#include "export_defaults.h"

#include <cstdlib>
#include <system_error>

namespace kvscope::gui {

namespace fs = std::filesystem;

fs::path default_export_dir(const std::string& xdg_documents_dir, const std::string& home, bool documents_exists,
                            const std::string& session_file) {
  const fs::path leaf = "kvscope-export";
  if (!xdg_documents_dir.empty() && fs::path(xdg_documents_dir).is_absolute())
    return fs::path(xdg_documents_dir) / leaf;
  if (!home.empty() && documents_exists) return fs::path(home) / "Documents" / leaf;
  if (!session_file.empty() && fs::path(session_file).has_parent_path())
    return fs::absolute(fs::path(session_file)).parent_path() / leaf;
  if (!home.empty()) return fs::path(home) / leaf;
  return fs::temp_directory_path() / leaf;  // no home at all: still not the current directory
}

fs::path default_export_dir(const std::string& session_file) {
  const char* xdg = std::getenv("XDG_DOCUMENTS_DIR");
  const char* home = std::getenv("HOME");
  std::error_code ec;
  const bool docs = home && *home && fs::is_directory(fs::path(home) / "Documents", ec);
  return default_export_dir(xdg ? xdg : "", home ? home : "", docs, session_file);
}

fs::path default_session_save_path(const fs::path& export_dir) {
  return export_dir.parent_path() / (export_dir.filename().string() + "-session.json");
}

}  // namespace kvscope::gui
