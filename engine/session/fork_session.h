// Building the fork B of a run: the second configuration that goes on from
// row at_step of A under another policy (a session file's "fork" block,
// the window's Fork). Both front ends build it here. The window branches B
// off the running A (A itself when it is at that row, else A replayed to
// it); `kvscope-cli run` runs B from the prompt as a session of its own
// (fork_branch_config). The two are the same run bit for bit
// (Fork.WithANewPolicyEqualsTheSessionFileFork), and both check the fork
// against A the same way before any work, naming the fork block's fields.
#pragma once

#include <functional>
#include <memory>

#include "session/session.h"

namespace kvscope {

// Throws kvscope::Error naming A's source and "fork.at_step" when `at_step`
// is outside A's run (0..planned new tokens), and "fork.policy.<field>"
// when `p` cannot run on A's prompt (a budget larger than the context...).
void check_fork(const Session& a, int at_step, const PolicyParams& p);

// B from a running A: a fork of `a` when it is at `at_row`, else a replay of
// it to there; then `p` from step at_row + 1. nullptr when `progress`
// (Session::replay_to's) cancels the replay.
std::unique_ptr<Session> branch_session(Session& a, int at_row, const PolicyParams& p,
                                        const std::function<bool(int)>& progress = {});

// B of A's fork block (a.config().fork), from the prompt, on `bundle` (A's
// model), after check_fork: what `kvscope-cli run` exports to DIR/fork.
std::unique_ptr<Session> fork_session_from_prompt(std::shared_ptr<const ModelBundle> bundle, const Session& a);

}  // namespace kvscope
