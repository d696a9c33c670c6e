#!/usr/bin/env bash
# Strong- or weak-scaling study: one run.sbatch job per rank count, then a dependent job that writes
# scaling.csv (ranks, wall_s, label; `scripts/wh_analyze.py plot-scaling scaling.csv -o s.png [--weak]`).
#
#   WH_SCENARIO=inputs/llm/moe-32g.toml WH_RANKS="1" bash scripts/slurm/scaling.sh [SBATCH OPTIONS...]
#
# Settings (environment; defaults in brackets):
#   WH_MODE           strong (same scenario at every rank count) or weak (GPUs per rank fixed: the
#                     fabric is generated per size, topology.gpus = ranks × WH_GPUS_PER_RANK; .toml only) [strong]
#   WH_SCENARIO       scenario (required; a .toml scenario for weak scaling)
#   WH_RANKS          rank counts, space-separated [1]
#   WH_GPUS_PER_RANK  weak scaling: GPUs simulated per rank [16]
#   WH_REPEAT         runs per rank count (plot-scaling keeps the fastest) [1]
#   WH_SETS, WH_BIN   as in run.sbatch;  WH_OUT: parent of the study folder [$PWD/wormhole-runs]
# Further arguments are passed to every sbatch call.
#
# TODAY ONLY 1 RANK RUNS: wormhole has no distributed engine yet (issue 7); a rank count above 1 stops this
# script before anything is submitted (exit 2) rather than producing scaling figures of something that is
# not a parallel run. Outputs: $WH_OUT/<mode>-scaling-<date>-<time>-<pid>/ (never overwritten): one
# run.sbatch folder per run (r<ranks>-<k>-<job id>/), scaling.csv, slurm-*.out.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
die() { echo "scaling.sh: error: $*" >&2; exit 2; }
mode="${WH_MODE:-strong}"
case "$mode" in strong|weak) ;; *) die "WH_MODE=$mode: use strong or weak" ;; esac
ranks="${WH_RANKS:-1}"
for r in $ranks; do
  [[ "$r" =~ ^[1-9][0-9]*$ ]] || die "WH_RANKS: '$r' is not a rank count"
  [ "$r" -eq 1 ] || die "WH_RANKS=\"$ranks\": $r ranks need the distributed engine, which does not exist yet \
(issue 7); wormhole runs as 1 process today, and timing one process per rank count would not be a scaling study. \
Use WH_RANKS=1 (a single-rank baseline) until then"
done
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
jobs=()
for r in $ranks; do
  for k in $(seq 1 "${WH_REPEAT:-1}"); do
    sets="$base_sets"
    [ "$mode" = weak ] && sets="$sets topology.gpus=$((r * gpr))"
    j="$(WH_OUT="$study" WH_SETS="$sets" WH_BIN="$WH_BIN" WH_SCENARIO="$WH_SCENARIO" \
         sbatch --parsable --job-name="r$r-$k" --ntasks="$r" --output="$study/slurm-%j.out" "$@" "$here/run.sbatch")"
    jobs+=("${j%%;*}")
  done
done
dep="$(IFS=:; echo "${jobs[*]}")"
collect="$(sbatch --parsable --job-name=wh-scaling-collect --dependency=afterany:"$dep" --ntasks=1 \
  --output="$study/slurm-%j-collect.out" "$@" \
  --wrap="/usr/bin/python3 '$here/sweep_tool.py' scaling '$study' --label '$(basename "$WH_SCENARIO")' -o '$study/scaling.csv' && cat '$study/scaling.csv'")"
echo "scaling.sh: $mode scaling, ranks $ranks: jobs ${jobs[*]}, collect job ${collect%%;*}; outputs in $study"
echo "$study"
