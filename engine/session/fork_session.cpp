#include "session/fork_session.h"

#include <string>

#include "common/error.h"

namespace kvscope {
namespace {

// A policy error of the fork, named by the fork block's field
// ("s.json: fork.policy.budget: ...").
Error fork_policy_error(const Error& e, const std::string& source) { return e.under("fork").in_file(source); }

}  // namespace

void check_fork(const Session& a, int at_step, const PolicyParams& p) {
  const std::string& source = a.config().source;
  if (at_step < 0 || at_step > a.planned_new_tokens())
    throw Error(source, "fork.at_step", "step " + std::to_string(at_step) + " is outside the run (0.." +
                                            std::to_string(a.planned_new_tokens()) + ")");
  // What Session::set_policy resolves when B takes the policy.
  try {
    resolve_policy(p, a.prompt_length(), a.model_config().max_positions);
  } catch (const Error& e) {
    throw fork_policy_error(e, source);
  }
}

std::unique_ptr<Session> branch_session(Session& a, int at_row, const PolicyParams& p,
                                        const std::function<bool(int)>& progress) {
  check_fork(a, at_row, p);
  std::unique_ptr<Session> b = at_row == a.current_row() ? a.fork() : a.replay_to(at_row, progress);
  if (!b) return nullptr;  // cancelled
  try {
    b->set_policy(p);
  } catch (const Error& e) {
    throw fork_policy_error(e, a.config().source);
  }
  return b;
}

std::unique_ptr<Session> fork_session_from_prompt(std::shared_ptr<const ModelBundle> bundle, const Session& a) {
  const SessionConfig& cfg = a.config();
  if (!cfg.fork) throw Error(cfg.source, "fork", "this session has no fork block");
  check_fork(a, cfg.fork->at_step, cfg.fork->policy);
  return std::make_unique<Session>(std::move(bundle), fork_branch_config(cfg));
}

}  // namespace kvscope
