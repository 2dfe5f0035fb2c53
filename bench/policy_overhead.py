#!/usr/bin/env python3
"""Policy + recorder overhead per decoded token on the default model, for
every evicting policy, as the Markdown table of bench/README.md:

  python3 bench/policy_overhead.py [--cli build/release/app/cli/kvscope-cli] [--device cpu]

Each row is one `kvscope-cli bench --policy P --budget 50% --json` run (best
of --repeats, default 15, interleaved runs of the bare backend, the
full-cache session and the policy session, everything recorded). The last
column is the median over the repeats of each repeat's own policy/backend
ratio, which a drifting machine disturbs less than the ratio of best times. Run it on
an idle machine; `--budget 90%` shows the policies' own cost where the
smaller cache pays for little.
"""
import argparse
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
POLICIES = ["h2o", "tova", "keyformer", "a2sf", "sink", "window", "random", "ideal"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "release", "app", "cli", "kvscope-cli"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--budget", default="50%")
    ap.add_argument("--prompt-tokens", type=int, default=256)
    ap.add_argument("--decode-tokens", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    print(f"| policy ({args.budget}) | backend, full cache, nothing recorded | session, full, all recorded "
          "| session, policy, all recorded | overhead vs backend (best times) | overhead, median of paired runs |")
    print("|---|---:|---:|---:|---:|---:|")
    for p in POLICIES:
        cmd = [args.cli, "bench", "--policy", p, "--budget", args.budget, "--device", args.device,
               "--prompt-tokens", str(args.prompt_tokens), "--decode-tokens", str(args.decode_tokens),
               "--repeats", str(args.repeats), "--json"]
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        print(f"| {p} | {r['backend_decode_ms_per_token']:.3f} ms | {r['full_recorded_decode_ms_per_token']:.3f} ms "
              f"| {r['policy_recorded_decode_ms_per_token']:.3f} ms | {100 * r['policy_and_recorder_overhead']:+.0f}% "
              f"| {100 * r['policy_and_recorder_overhead_paired_median']:+.0f}% |",
              flush=True)


if __name__ == "__main__":
    main()
