#!/usr/bin/env python3
"""Runs one kvscope sweep as n shards on a Ray cluster, then merges them.

    tools/ray_sweep.py --shards N --out OUT [--work DIR] [--address ADDR]
                       [--retries R] [--ship-files] [--cli PATH]
                       -- SESSION.json --policies ... --budgets ... [--dataset ...] [other sweep flags]

Everything after `--` is `kvscope-cli sweep`'s own arguments, less --out
(and --shard and --resume, which this driver adds). Shard i runs as one
Ray task, `kvscope-cli sweep ARGS --shard i/N --out WORK/shard-i`, with
--resume when that folder already holds finished cells, so a task that
Ray retries after a lost worker or a preempted node goes on from its
finished cells instead of starting over. When every shard is done,
`kvscope-cli sweep-merge OUT WORK/shard-0 ... WORK/shard-(N-1)` writes the
same files a one-machine `sweep --out OUT` writes.

Files: by default the session file, its model and the dataset are read by
path, so they must be on storage every node sees (a shared file system, as
on most clusters). --ship-files puts them into Ray's object store instead:
each node that lacks one of them gets it written at the same absolute
path (refusing to replace a different file that is already there), so the
commands, and so the outputs' provenance, are the same as on the driver's
machine.

kvscope itself never schedules anything: Ray places the tasks, retries
them (--retries, default 3) and this driver shows progress as shards
finish. Needs the `ray` package (pip install ray) and a kvscope-cli built
at the same path on every node (--cli, default build/release/app/cli/kvscope-cli
resolved to an absolute path). With no --address, a local Ray cluster is
started with one worker per core (--local-cpus to choose).
"""
import argparse
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def parse_args(argv):
    if "--" not in argv:
        sys.exit("ray_sweep.py: give the sweep's own arguments after --, e.g. "
                 "-- session.json --policies h2o,tova --budgets 10%,50%")
    cut = argv.index("--")
    p = argparse.ArgumentParser(prog="ray_sweep.py", description=__doc__.split("\n\n")[0])
    p.add_argument("--shards", type=int, required=True, help="number of shards (Ray tasks)")
    p.add_argument("--out", required=True, help="where the merged sweep goes (as sweep --out)")
    p.add_argument("--work", help="where the shards' folders go (default OUT.shards); on shared storage "
                                   "unless every task of a shard runs on one node")
    p.add_argument("--address", help="Ray cluster address (default: start a local cluster)")
    p.add_argument("--local-cpus", type=int, help="CPUs of the local cluster (default: all)")
    p.add_argument("--retries", type=int, default=3, help="retries of a failed or lost shard task (default 3)")
    p.add_argument("--ship-files", action="store_true",
                   help="send the session file, model and dataset through Ray's object store")
    p.add_argument("--cli", default=os.path.join(ROOT, "build/release/app/cli/kvscope-cli"),
                   help="kvscope-cli, at the same path on every node")
    args = p.parse_args(argv[:cut])
    args.sweep = argv[cut + 1:]
    if args.shards < 1:
        p.error("--shards must be at least 1")
    for flag in ("--out", "--shard", "--resume"):
        if any(a == flag or a.startswith(flag + "=") for a in args.sweep):
            p.error(f"{flag} is the driver's: leave it out of the sweep's arguments")
    if not args.sweep:
        p.error("no session file after --")
    args.cli = os.path.abspath(args.cli)
    args.out = os.path.abspath(args.out)
    args.work = os.path.abspath(args.work or args.out + ".shards")
    return args


def sweep_files(sweep_args):
    """The files a sweep reads: its session file, the model the session
    names, and the dataset (--dataset), as absolute paths."""
    session = os.path.abspath(sweep_args[0])
    with open(session, encoding="utf-8") as f:
        model = json.load(f).get("model", "")
    files = [session]
    if model:
        files.append(os.path.abspath(os.path.join(os.path.dirname(session), model)) if not os.path.isabs(model)
                     else model)
    for i, a in enumerate(sweep_args):
        if a == "--dataset" and i + 1 < len(sweep_args):
            files.append(os.path.abspath(sweep_args[i + 1]))
        elif a.startswith("--dataset="):
            files.append(os.path.abspath(a.split("=", 1)[1]))
    return files


def pack(path):
    """A file as (relative name, bytes) pairs; a folder (a Hugging Face
    checkpoint) as all of its files."""
    if os.path.isfile(path):
        with open(path, "rb") as f:
            return [("", f.read())]
    out = []
    for base, _, names in os.walk(path):
        for n in sorted(names):
            full = os.path.join(base, n)
            with open(full, "rb") as f:
                out.append((os.path.relpath(full, path), f.read()))
    return out


def materialise(path, parts):
    """Writes a shipped file or folder at `path` on this node, unless the
    same bytes are there already; never replaces a different file."""
    for rel, data in parts:
        dest = os.path.join(path, rel) if rel else path
        if os.path.exists(dest):
            with open(dest, "rb") as f:
                if hashlib.sha256(f.read()).digest() != hashlib.sha256(data).digest():
                    raise RuntimeError(f"{dest} exists on this node with other contents; not replacing it")
            continue
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        tmp = f"{dest}.ray-{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, dest)


def shard_command(cli, sweep_args, i, n, folder):
    cmd = [cli, "sweep", *sweep_args, "--shard", f"{i}/{n}", "--out", folder]
    # A folder with finished cells is a shard that ran before (a retry).
    if os.path.exists(os.path.join(folder, "cells", "sweep.json")):
        cmd.append("--resume")
    return cmd


def die_with_parent():
    """The CLI dies with the Ray worker that started it (Linux): a lost
    worker must not leave its shard running and holding the folder's lock."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def run_shard(cli, sweep_args, i, n, folder, shipped):
    """One Ray task: shard i of n into `folder`. Returns its wall time."""
    for path, parts in shipped:
        materialise(path, parts)
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    # Who runs the shard now: the worker-kill test reads it.
    with open(folder + ".pid", "w") as f:
        f.write(f"{os.getpid()}\n")
    t0 = time.time()
    cmd = shard_command(cli, sweep_args, i, n, folder)
    # Each attempt's command and output, appended: folder.log tells what a
    # retry did (resumed, and from how many cells).
    with open(folder + ".log", "a") as log:
        log.write(f"$ {' '.join(cmd)}\n")
        log.flush()
        done = subprocess.run(cmd, preexec_fn=die_with_parent, stdout=log, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        with open(folder + ".log") as log:
            raise RuntimeError(f"shard {i}/{n} failed (exit {done.returncode}):\n{log.read()[-2000:]}")
    return time.time() - t0


def main(argv):
    args = parse_args(argv)
    if not os.access(args.cli, os.X_OK):
        sys.exit(f"ray_sweep.py: no kvscope-cli at {args.cli} (build it, or give --cli)")
    try:
        import ray
    except ImportError:
        sys.exit("ray_sweep.py: the ray package is missing (pip install ray)")
    if args.address:
        ray.init(address=args.address, log_to_driver=False)
    else:
        ray.init(num_cpus=args.local_cpus, log_to_driver=False, include_dashboard=False)
    shipped = []
    if args.ship_files:
        shipped = ray.put([(path, pack(path)) for path in sweep_files(args.sweep)])
    task = ray.remote(num_cpus=1, max_retries=args.retries, retry_exceptions=True)(run_shard)
    os.makedirs(args.work, exist_ok=True)
    folders = [os.path.join(args.work, f"shard-{i}") for i in range(args.shards)]
    t0 = time.time()
    pending = {task.remote(args.cli, args.sweep, i, args.shards, folders[i], shipped): i for i in range(args.shards)}
    times = {}
    print(f"ray_sweep: {args.shards} shards on {ray.cluster_resources().get('CPU', 0):g} CPUs", flush=True)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        i = pending.pop(ready[0])
        try:
            times[i] = ray.get(ready[0])
        except Exception as e:  # retries exhausted
            ray.shutdown()
            sys.exit(f"ray_sweep: shard {i} failed after {args.retries} retries: {e}")
        print(f"ray_sweep: shard {i} done in {times[i]:.1f} s ({len(times)}/{args.shards}, "
              f"{time.time() - t0:.1f} s so far)", flush=True)
    ray.shutdown()
    merge = [args.cli, "sweep-merge", args.out, *folders]
    if subprocess.run(merge).returncode != 0:
        sys.exit("ray_sweep: the merge failed; the shards are kept in " + args.work)
    print(f"ray_sweep: merged into {args.out} in {time.time() - t0:.1f} s wall; "
          f"the longest shard took {max(times.values()):.1f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
