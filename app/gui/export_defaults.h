// Where the window's exports and saved sessions go unless the user types a
// folder: under the user's documents folder ($XDG_DOCUMENTS_DIR, else
// ~/Documents when it exists), else beside the open session file, else the
// home folder — never the current directory, which is often the
// repository the app was started from.
#pragma once

#include <filesystem>
#include <string>

namespace kvscope::gui {

// A pure function of its inputs (the caller reads the environment) so the
// rule is tested without touching the user's folders. `documents_exists`:
// whether home/Documents is a folder.
std::filesystem::path default_export_dir(const std::string& xdg_documents_dir, const std::string& home,
                                         bool documents_exists, const std::string& session_file);
// The same, from the environment.
std::filesystem::path default_export_dir(const std::string& session_file);

// The session file Save session writes by default: beside the export
// folder, never the export's own session.json.
std::filesystem::path default_session_save_path(const std::filesystem::path& export_dir);

}  // namespace kvscope::gui
