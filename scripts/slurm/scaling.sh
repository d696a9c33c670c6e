#!/usr/bin/env bash
# Strong- or weak-scaling study: one run.sbatch job per rank count (--ntasks=<ranks>), then a dependent job
# that writes scaling.csv (`scripts/wh_analyze.py plot-scaling scaling.csv -o s.png [--weak]`) and draws
# scaling.png.
#
#   WH_SCENARIO=inputs/llm/moe-32g.toml WH_RANKS="1 2 4" bash scripts/slurm/scaling.sh [SBATCH OPTIONS...]
#
# Settings (environment; defaults in brackets):
#   WH_MODE           strong (same scenario at every rank count) or weak (GPUs per rank fixed: the
#                     fabric is generated per size, topology.gpus = ranks × WH_GPUS_PER_RANK; .toml only) [strong]
#   WH_SCENARIO       scenario (required; a .toml scenario for weak scaling)
#   WH_RANKS          rank counts, space-separated [1]
#   WH_GPUS_PER_RANK  weak scaling: GPUs simulated per rank [16]. The workload file must be for that many
#                     GPUs (wormhole checks all_gpus): give one per size with {gpus} in WH_SETS, replaced by
#                     ranks × WH_GPUS_PER_RANK, e.g. WH_SETS="workload.file=/data/allreduce_{gpus}g.txt"
#   WH_REPEAT         runs per rank count (plot-scaling keeps the fastest) [1]
#   WH_LAUNCH         how run.sbatch starts the ranks, the same at every count: srun (`srun --mpi=pmix`) or
#                     mpirun [srun]
#   WH_SETS, WH_BIN, WH_LINEAR, WH_RANK_MAP   as in run.sbatch;  WH_OUT: parent of the study folder [$PWD/wormhole-runs]
# Further arguments are passed to every sbatch call (e.g. --partition=..., --account=..., --time=...).
#
# Every run is packet-level in EVENT_ORDER portable (WORMHOLE=0 comes before WH_SETS, and EVENT_ORDER=portable
# for 1 rank, unless WH_SETS sets these keys itself): the distributed engine runs only so, and the 1-rank
# run then simulates the very events the distributed runs do (their fct.txt are identical), so the rows
# compare the same work. A rank count above 1 runs distributed over that many MPI ranks (see run.sbatch).
# Outputs: $WH_OUT/<mode>-scaling-<date>-<time>-<pid>/ (never overwritten): one run.sbatch folder per run
# (r<ranks>-<k>-<job id>/), scaling.csv (ranks, wall_s, label, run, then the per-rank means windows,
# compute_mean_s, compute_max_s, wait_mean_s, communicate_mean_s of the distributed runs' logs; wall_s is the
# run's own /run wall_s, the log's "events N in W s wall"), scaling-ranks.csv (one row per rank: events,
# compute_s, wait_s, communicate_s, windows), scaling.png, slurm-*.out.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
die() { echo "scaling.sh: error: $*" >&2; exit 2; }
mode="${WH_MODE:-strong}"
case "$mode" in strong|weak) ;; *) die "WH_MODE=$mode: use strong or weak" ;; esac
ranks="${WH_RANKS:-1}"
for r in $ranks; do
  [[ "$r" =~ ^[1-9][0-9]*$ ]] || die "WH_RANKS: '$r' is not a rank count"
done
launch="${WH_LAUNCH:-srun}"
case "$launch" in srun|mpirun) ;; *) die "WH_LAUNCH=$launch: use srun or mpirun (the same launcher at every rank count)" ;; esac
: "${WH_SCENARIO:?set WH_SCENARIO to a scenario}"
[ -f "$WH_SCENARIO" ] || die "scenario $WH_SCENARIO not found"
WH_SCENARIO="$(cd "$(dirname "$WH_SCENARIO")" && pwd)/$(basename "$WH_SCENARIO")"
[ "$mode" = strong ] || [[ "$WH_SCENARIO" == *.toml ]] || die "weak scaling generates the fabric per size: \
WH_SCENARIO must be a .toml scenario ([topology] gpus), not $WH_SCENARIO"
gpr="${WH_GPUS_PER_RANK:-16}"
[[ "$gpr" =~ ^[1-9][0-9]*$ ]] || die "WH_GPUS_PER_RANK=$gpr is not a positive integer"
WH_BIN="${WH_BIN:-$repo/build/wormhole}"
[ -x "$WH_BIN" ] || die "wormhole binary $WH_BIN not found (build it, or set WH_BIN)"
WH_BIN="$(cd "$(dirname "$WH_BIN")" && pwd)/$(basename "$WH_BIN")"
command -v sbatch >/dev/null || die "sbatch not found: this submits to Slurm"
[[ "${WH_REPEAT:-1}" =~ ^[1-9][0-9]*$ ]] || die "WH_REPEAT=${WH_REPEAT}: give a count >= 1"
out_parent="${WH_OUT:-$PWD/wormhole-runs}"
mkdir -p "$out_parent"
study="$(cd "$out_parent" && pwd)/$mode-scaling-$(date +%Y%m%d-%H%M%S)-$$"
mkdir "$study" || die "$study exists; refusing to overwrite"
base_sets="${WH_SETS:-}"
sep=" "   # WH_SETS's separator, as run.sbatch splits it: ';' when it has one (values with spaces)
[[ "$base_sets" == *";"* ]] && sep="; "
# Packet mode in portable order unless WH_SETS says otherwise (a key given twice makes wormhole warn). A
# distributed run sets EVENT_ORDER=portable itself, so only the 1-rank runs get it here.
[[ " $base_sets" =~ [[:space:]\;](network\.)?(WORMHOLE|wormhole\.enabled)= ]] || base_sets="WORMHOLE=0$sep$base_sets"
order=""
[[ " $base_sets" =~ [[:space:]\;](network\.)?EVENT_ORDER= ]] || order="EVENT_ORDER=portable"
jobs=()
for r in $ranks; do
  for k in $(seq 1 "${WH_REPEAT:-1}"); do
    sets="$base_sets"
    [ "$r" -eq 1 ] && [ -n "$order" ] && sets="$sets$sep$order"
    [ "$mode" = weak ] && sets="${sets//\{gpus\}/$((r * gpr))}${sep}topology.gpus=$((r * gpr))"
    j="$(WH_OUT="$study" WH_SETS="$sets" WH_BIN="$WH_BIN" WH_SCENARIO="$WH_SCENARIO" WH_LAUNCH="$launch" \
         sbatch --parsable --job-name="r$r-$k" --ntasks="$r" --output="$study/slurm-%j.out" "$@" "$here/run.sbatch")"
    jobs+=("${j%%;*}")
  done
done
dep="$(IFS=:; echo "${jobs[*]}")"
collect="$(sbatch --parsable --job-name=wh-scaling-collect --dependency=afterany:"$dep" --ntasks=1 \
  --output="$study/slurm-%j-collect.out" "$@" \
  --wrap="/usr/bin/python3 '$here/sweep_tool.py' scaling '$study' --label '$(basename "$WH_SCENARIO")' \
-o '$study/scaling.csv' --png '$study/scaling.png' $([ "$mode" = weak ] && echo --weak)")"
echo "scaling.sh: $mode scaling, ranks $ranks: jobs ${jobs[*]}, collect job ${collect%%;*}; outputs in $study"
echo "$study"
