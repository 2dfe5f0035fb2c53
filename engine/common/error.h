// One error type for the whole engine. Every message names the file (or
// other source) and the field that is wrong, so the CLI can print it as one
// line and the app can show it without a stack trace.
#pragma once

#include <stdexcept>
#include <string>

namespace kvscope {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  // "<source>: <field>: <what>"; an empty field is left out.
  Error(const std::string& source, const std::string& field, const std::string& what)
      : std::runtime_error(format(source, field, what)) {}

 private:
  static std::string format(const std::string& source, const std::string& field,
                            const std::string& what) {
    std::string m = source;
    if (!field.empty()) m += (m.empty() ? "" : ": ") + field;
    m += (m.empty() ? "" : ": ") + what;
    return m;
  }
};

}  // namespace kvscope
