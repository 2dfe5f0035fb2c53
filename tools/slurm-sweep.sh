#!/usr/bin/env bash
# One kvscope sweep as a Slurm job array: task i runs shard i of N
# (`kvscope-cli sweep ... --shard i/N`), and a job that depends on the whole
# array merges the shards (`kvscope-cli sweep-merge`). kvscope schedules
# nothing itself; Slurm places, requeues and limits the tasks.
#
#   tools/slurm-sweep.sh submit N OUT -- SESSION.json --policies ... --budgets ... [--dataset ...] [sweep flags]
#       submits the array (sbatch --array=0-(N-1)) and the merge (afterok on
#       it); extra sbatch options go in $SBATCH_ARGS (e.g. "-p cpu -t 2:00:00 -c 8").
#   tools/slurm-sweep.sh task N OUT -- ARGS...     what array task $SLURM_ARRAY_TASK_ID runs
#   tools/slurm-sweep.sh merge N OUT -- ARGS...    what the merge job runs
#
# Shard i goes to OUT.shards/shard-i. A task that is requeued (preempted,
# node lost) finds that folder's finished cells and goes on with --resume,
# so it costs only its unfinished cells. The session file, model and
# dataset are read by path: put them (and kvscope-cli, $KVSCOPE_CLI) on
# storage every node sees. The outputs equal one `sweep --out OUT` run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cli=${KVSCOPE_CLI:-$here/../build/release/app/cli/kvscope-cli}
usage() {
  echo "usage: tools/slurm-sweep.sh submit|task|merge N OUT -- SESSION.json [sweep flags]" >&2
  exit 2
}

[ $# -ge 4 ] || usage
mode=$1 n=$2 out=$3
shift 3
[ "$1" = "--" ] || usage
shift
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "slurm-sweep.sh: N must be a positive number, got '$n'" >&2; exit 2; }
for a in "$@"; do
  case $a in --out|--out=*|--shard|--shard=*|--resume)
    echo "slurm-sweep.sh: $a is the script's to set; leave it out of the sweep's flags" >&2; exit 2 ;;
  esac
done
shards=$out.shards

case $mode in
  task)
    i=${SLURM_ARRAY_TASK_ID:?"slurm-sweep.sh task: SLURM_ARRAY_TASK_ID is not set (run as an array task)"}
    dir=$shards/shard-$i
    resume=()
    # Finished cells from an earlier attempt of this task: go on from them.
    [ -f "$dir/cells/sweep.json" ] && resume=(--resume)
    mkdir -p "$shards"
    exec "$cli" sweep "$@" --shard "$i/$n" --out "$dir" "${resume[@]}"
    ;;
  merge)
    dirs=()
    for ((i = 0; i < n; i++)); do dirs+=("$shards/shard-$i"); done
    exec "$cli" sweep-merge "$out" "${dirs[@]}"
    ;;
  submit)
    command -v sbatch >/dev/null || { echo "slurm-sweep.sh: sbatch not found (not on a Slurm login node?)" >&2; exit 1; }
    mkdir -p "$shards"
    # The same script runs each task and the merge, with these arguments.
    quoted=$(printf ' %q' "$@")
    # shellcheck disable=SC2086  # SBATCH_ARGS is a list of options
    array=$(sbatch --parsable --requeue --array="0-$((n - 1))" --job-name=kvscope-sweep \
      --output="$shards/slurm-%A_%a.out" ${SBATCH_ARGS:-} \
      --wrap="$(printf '%q' "$0") task $n $(printf '%q' "$out") --$quoted")
    merge=$(sbatch --parsable --dependency="afterok:${array%%;*}" --job-name=kvscope-merge \
      --output="$shards/slurm-merge-%j.out" ${SBATCH_ARGS:-} \
      --wrap="$(printf '%q' "$0") merge $n $(printf '%q' "$out") --$quoted")
    echo "submitted array $array ($n shards into $shards) and merge $merge (into $out)"
    ;;
  *) usage ;;
esac
