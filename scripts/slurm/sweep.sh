#!/usr/bin/env bash
# Parameter sweep as a Slurm job array sharing one memo database, then a dependent job that merges the
# memo files and writes the summary table.
#
#   WH_SCENARIO=inputs/hpcc-bundled-example/config_hpcc.txt bash scripts/slurm/sweep.sh [SBATCH OPTIONS...]
#
# Settings (environment; defaults in brackets):
#   WH_SCENARIO  scenario to sweep: an HPCC config.txt or a .toml scenario (required)
#   WH_GRID      the grid: space-separated axes KEY=V1,V2,... of any `wormhole run --set` key, the cartesian
#                product is swept [WORMHOLE_THETA=0.05,0.1 WORMHOLE_WINDOW=200,2000]; e.g. CC × buffer:
#                "CC_MODE=1,3 BUFFER_SIZE=4,32"
#   WH_SETS      extra "KEY=VALUE KEY=VALUE" overrides for every task [none]; separated by ';' instead when a
#                value holds spaces, e.g. "LINK_DOWN=100 64 72; SEED=2"
#   WH_BASELINE  1: also run packet mode (WORMHOLE=0) once per combination of the non-WORMHOLE_* axes, for
#                the error and speedup columns; 0: no baselines [1]
#   WH_MEMO_DB   the shared memo database: tasks warm-start from it, the final job merges into it
#                [$WH_OUT/memo-shared.h5]
#   WH_OUT       parent folder of the per-sweep folders [$PWD/wormhole-runs]
#   WH_BIN       wormhole binary [<repo>/build/wormhole]
#   WH_TIME      time limit of each task [01:00:00]
#   WH_CPUS_PER_TASK  CPUs per array task; Wormhole tasks use as many oneTBB threads (WORMHOLE_THREADS) [1]
# Further arguments are passed to both sbatch calls (e.g. --partition=..., --account=...).
#
# Every task runs Wormhole (WORMHOLE=1) with memoization, single-process (1 Slurm task each: a sweep is many
# small runs side by side; one run over N ranks is run.sbatch --ntasks=N, Wormhole included), warm-starting
# from WH_MEMO_DB when it exists; wormhole refuses a memo file
# without this task's settings (exit 2, "not for this run's settings") and the task then runs cold, saying
# so in its log. Outputs: $WH_OUT/sweep-<date>-<time>-<pid>/ (created fresh, never overwritten):
#   tasks.tsv            index, kind (wormhole | baseline), baseline index, settings
#   task-<i>/            fct.txt, pfc.txt, results.h5, memo.h5, log, exit_code (memo_warm if warm-started)
#   slurm-<job>_<i>.out  Slurm's output of each task
#   summary.csv          task, status, settings, theta, window, wall_s, fct_mean_us, iteration_us,
#                        skipped_pct, replays, memo_warm, baseline_wall_s, speedup, error, p99_error,
#                        iter_error (`scripts/wh_analyze.py plot-sweep summary.csv -o sweep.png` reads it)
#   sweep.png            error against speedup (when baselines ran), merge.log, jobs.txt
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
die() { echo "sweep.sh: error: $*" >&2; exit 2; }
: "${WH_SCENARIO:?set WH_SCENARIO to an HPCC config.txt or a .toml scenario}"
[ -f "$WH_SCENARIO" ] || die "scenario $WH_SCENARIO not found"
WH_SCENARIO="$(cd "$(dirname "$WH_SCENARIO")" && pwd)/$(basename "$WH_SCENARIO")"
WH_BIN="${WH_BIN:-$repo/build/wormhole}"
[ -x "$WH_BIN" ] || die "wormhole binary $WH_BIN not found (build it, or set WH_BIN)"
WH_BIN="$(cd "$(dirname "$WH_BIN")" && pwd)/$(basename "$WH_BIN")"
command -v sbatch >/dev/null || die "sbatch not found: this submits to Slurm"
WH_GRID="${WH_GRID:-WORMHOLE_THETA=0.05,0.1 WORMHOLE_WINDOW=200,2000}"
WH_BASELINE="${WH_BASELINE:-1}"
out_parent="${WH_OUT:-$PWD/wormhole-runs}"
mkdir -p "$out_parent"
out_parent="$(cd "$out_parent" && pwd)"
WH_MEMO_DB="${WH_MEMO_DB:-$out_parent/memo-shared.h5}"
mkdir -p "$(dirname "$WH_MEMO_DB")"
WH_MEMO_DB="$(cd "$(dirname "$WH_MEMO_DB")" && pwd)/$(basename "$WH_MEMO_DB")"
sweep="$out_parent/sweep-$(date +%Y%m%d-%H%M%S)-$$"
mkdir "$sweep" || die "$sweep exists; refusing to overwrite"
plan=(plan "$WH_GRID" -o "$sweep/tasks.tsv")
[ "$WH_BASELINE" = 1 ] || plan+=(--no-baseline)
if ! n="$(/usr/bin/python3 "$here/sweep_tool.py" "${plan[@]}")"; then
  rm -rf "$sweep"
  die "no task list (WH_GRID=\"$WH_GRID\")"
fi
export WH_SCENARIO WH_BIN WH_MEMO_DB WH_SWEEP_DIR="$sweep" WH_SETS="${WH_SETS:-}" WH_REPO="$repo"
array="$(sbatch --parsable --job-name=wh-sweep --array=0-$((n - 1)) --ntasks=1 --time="${WH_TIME:-01:00:00}" \
    --cpus-per-task="${WH_CPUS_PER_TASK:-1}" \
    --output="$sweep/slurm-%A_%a.out" "$@" "$here/sweep_task.sbatch")"
array="${array%%;*}"
merge="$(sbatch --parsable --job-name=wh-sweep-merge --dependency=afterany:"$array" --ntasks=1 \
    --time=00:30:00 --output="$sweep/slurm-%j-merge.out" "$@" "$here/sweep_merge.sbatch")" ||
  { scancel "${array%%;*}" 2>/dev/null; die "submitting the merge job failed; array job ${array%%;*} cancelled"; }
merge="${merge%%;*}"
printf 'array %s\nmerge %s\n' "$array" "$merge" > "$sweep/jobs.txt"
echo "sweep.sh: $n tasks ($(grep -c $'\twormhole\t' "$sweep/tasks.tsv") Wormhole, $(grep -c $'\tbaseline\t' "$sweep/tasks.tsv") baseline) as array job $array, merge job $merge; outputs in $sweep"
echo "$sweep"
