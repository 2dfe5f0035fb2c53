// Engine errors in the window's words: a setting's field ("policy.budget",
// "sampling.top_p") becomes the label of the control that sets it
// ("budget k", "top p"), so nobody reads a CLI flag or a JSON path they
// never typed. Errors about a file keep the file and its field.
#pragma once

#include <string>

#include "common/error.h"

namespace kvscope::gui {

// The control's label for a setting's field; "" when no control sets it.
std::string control_for_field(const std::string& field);
// The message as the window shows it.
std::string in_window_words(const Error& e);

}  // namespace kvscope::gui
