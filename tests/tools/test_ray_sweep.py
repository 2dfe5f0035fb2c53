#!/usr/bin/env python3
"""RaySweep: tools/ray_sweep.py on a local Ray cluster of two workers, one
of them killed in the middle of its shard, gives the same files as one
`kvscope-cli sweep` on one machine, byte for byte.

    test_ray_sweep.py CLI WORKDIR

The sweep: the tiny Llama checkpoint of the test data, a generated set of
short key-value prompts, five policies (random with two seeds) at three
budgets, in 4 shards on 2 Ray workers. When shard 0 has written a few of
its cells, its kvscope-cli is stopped and the Ray worker running it is
killed (SIGKILL; the CLI dies with it). Ray runs the task again on a new
worker, which goes on with --resume from the cells shard 0 had finished.
Exit 0 when every file is equal and the kill and the resume happened;
1 with the differences otherwise; 77 (skipped) without the ray package.
"""
import filecmp
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARDS = 4


def fail(msg):
    print(f"RaySweep: FAILED: {msg}", flush=True)
    sys.exit(1)


def write_inputs(work):
    """The session file and the dataset (deterministic)."""
    session = os.path.join(work, "session.json")
    with open(session, "w") as f:
        json.dump({"format": "kvscope-session", "version": 1,
                   "model": os.path.join(ROOT, "tests/data/models/llama_gqa"), "prompt": "unused",
                   "max_new_tokens": 16, "policy": {"name": "full"}, "recording": {"metrics": False}, "seed": 0}, f)
    data = os.path.join(work, "items.jsonl")
    r = random.Random(7)
    with open(data, "w") as f:
        for _ in range(300):
            keys = ["".join(r.choice("abcdefgh") for _ in range(2)) for _ in range(8)]
            vals = [r.randrange(10, 99) for _ in keys]
            q = r.randrange(len(keys))
            prompt = " ".join(f"{k}={v}." for k, v in zip(keys, vals)) + f" {keys[q]}="
            f.write(json.dumps({"prompt": prompt, "answer": f"{vals[q]}."}) + "\n")
    return session, data


def children(pid):
    """Processes whose parent is pid."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid:
                out.append(int(entry))
        except OSError:
            continue
    return out


def cells_done(folder):
    cells = os.path.join(folder, "cells")
    if not os.path.isdir(cells):
        return 0
    return sum(1 for n in os.listdir(cells) if n.endswith(".json") and n != "sweep.json")


def compare_trees(a, b):
    """Relative paths that differ between two output folders (kvscope's own
    lock and staging files aside)."""
    def files(root):
        out = set()
        for base, _, names in os.walk(root):
            for n in names:
                out.add(os.path.relpath(os.path.join(base, n), root))
        return out
    fa, fb = files(a), files(b)
    differ = sorted(fa ^ fb)
    differ += [p for p in sorted(fa & fb) if not filecmp.cmp(os.path.join(a, p), os.path.join(b, p), shallow=False)]
    return differ


def main():
    cli, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    try:
        import ray  # noqa: F401
    except ImportError:
        print("RaySweep: skipped: the ray package is missing (tools/test.sh installs it into build/venv-ray)")
        sys.exit(77)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    session, data = write_inputs(work)
    sweep = [session, "--policies", "h2o,tova,knorm,keyformer,random", "--budgets", "25%,50%,75%",
             "--seeds", "2", "--dataset", data, "--dpi", "60"]
    env = dict(os.environ, KVSCOPE_THREADS="1")

    # One machine.
    one = os.path.join(work, "one")
    t0 = time.time()
    done = subprocess.run([cli, "sweep", *sweep, "--out", one], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        fail(f"the one-machine sweep failed:\n{done.stderr}")
    print(f"RaySweep: one process: {time.time() - t0:.1f} s", flush=True)

    # Ray, two workers, shard 0's worker killed after a few of its cells.
    merged, shards = os.path.join(work, "ray"), os.path.join(work, "ray.shards")
    driver = subprocess.Popen([sys.executable, os.path.join(ROOT, "tools/ray_sweep.py"), "--shards", str(SHARDS),
                               "--local-cpus", "2", "--retries", "2", "--out", merged, "--work", shards,
                               "--cli", cli, "--", *sweep], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    folder0, pid_file = os.path.join(shards, "shard-0"), os.path.join(shards, "shard-0.pid")
    killed, deadline = None, time.time() + 300
    while killed is None and driver.poll() is None and time.time() < deadline:
        try:
            with open(pid_file) as f:
                worker = int(f.read())
        except (OSError, ValueError):
            time.sleep(0.002)
            continue
        clis = children(worker)
        if clis and cells_done(folder0) >= 2:
            for c in clis:
                os.kill(c, signal.SIGSTOP)  # no cell more from here on
            if cells_done(folder0) == 0:  # finished between the check and the stop
                break
            os.kill(worker, signal.SIGKILL)
            killed = (worker, cells_done(folder0))
            break
        time.sleep(0.002)
    out, _ = driver.communicate(timeout=600)
    print(out, flush=True)
    if driver.returncode != 0:
        fail(f"ray_sweep.py exited {driver.returncode}")
    if killed is None:
        fail("shard 0 finished before its worker could be killed; make the sweep longer")
    print(f"RaySweep: killed Ray worker {killed[0]} with {killed[1]} cells of shard 0 done", flush=True)
    with open(pid_file) as f:
        again = int(f.read())
    if again == killed[0]:
        fail("shard 0 was not run again by another worker")
    with open(os.path.join(shards, "shard-0.log")) as f:
        log = f.read()
    if "--resume" not in log:
        fail("the retried shard 0 did not resume from its finished cells:\n" + log)

    differ = compare_trees(one, merged)
    if differ:
        fail("the merged sweep differs from the one-machine sweep in: " + ", ".join(differ))
    n = sum(len(names) for _, _, names in os.walk(one))
    print(f"RaySweep: passed: the merged sweep's {n} files equal the one-machine sweep's byte for byte", flush=True)


if __name__ == "__main__":
    main()
