// One error type for the whole engine. An error has up to three parts:
//   source  where the bad input came from (a file's path; empty for a
//           setting that was handed over in memory),
//   field   which setting or entry, as a neutral path ("policy.budget",
//           "sampling.top_p", "model.layers.3.q_proj.weight"),
//   problem what is wrong, one line.
// The engine never words a front end's names: each front end renames the
// field for its user before showing the message (the CLI names its flag,
// a session file its JSON path, the window its control), with `renamed`,
// `in_file` and `under`. what() is "<source>: <field>: <problem>", empty
// parts left out, so a message is always one line.
#pragma once

#include <stdexcept>
#include <string>

namespace kvscope {

class Error : public std::runtime_error {
 public:
  // A message already worded for its reader (no parts to rename).
  explicit Error(const std::string& message) : std::runtime_error(message), problem_(message) {}
  Error(const std::string& source, const std::string& field, const std::string& problem)
      : std::runtime_error(format(source, field, problem)), source_(source), field_(field), problem_(problem) {}

  // A bad setting: no file, a neutral field path.
  static Error setting(const std::string& field, const std::string& problem) { return Error("", field, problem); }

  const std::string& source() const { return source_; }
  const std::string& field() const { return field_; }
  const std::string& problem() const { return problem_; }
  // True for an error about a setting handed over in memory, whose field a
  // front end names in its own words.
  bool is_setting() const { return source_.empty() && !field_.empty(); }

  // The same error read from `source` (a session file): a setting error gets
  // the file in front; one that already names its source is kept.
  Error in_file(const std::string& source) const {
    if (!source_.empty() || source.empty()) return *this;
    return Error(source, field_, problem_);
  }
  // The field nested under `prefix` ("fork" + "policy.budget").
  Error under(const std::string& prefix) const {
    if (prefix.empty()) return *this;
    return Error(source_, field_.empty() ? prefix : prefix + "." + field_, problem_);
  }
  // The field as a front end names it (a CLI flag, a control's label).
  Error renamed(const std::string& name) const { return Error(source_, name, problem_); }

 private:
  static std::string format(const std::string& source, const std::string& field, const std::string& problem) {
    std::string m = source;
    if (!field.empty()) m += (m.empty() ? "" : ": ") + field;
    m += (m.empty() ? "" : ": ") + problem;
    return m;
  }

  std::string source_, field_, problem_;
};

}  // namespace kvscope
