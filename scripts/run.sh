#!/usr/bin/env bash
# Installs the packages, builds wormhole and runs the main job on a shipped scenario
# (default: one training iteration of the MoE workload on 32 GPUs, inputs/llm/moe-32g.toml).
# Usage: scripts/run.sh [SCENARIO.toml | CONFIG.txt] [wormhole run options]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
bash "$root/scripts/setup.sh"
[[ -x "$root/build/wormhole" ]] || echo "run.sh: building wormhole (first time: about 5 minutes on 2 idle cores, the tests included)" >&2
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/build" -j"$(nproc)" >"$root/build/build.log" 2>&1 ||
  { tail -n 30 "$root/build/build.log" >&2; echo "run.sh: build failed (full log: build/build.log)" >&2; exit 1; }
config="${1:-$root/inputs/llm/moe-32g.toml}"
shift || true
# The shipped HPCC configs write to out/<cc>/ beside them; the reference does not create directories.
# Not needed (nor wanted, e.g. in a read-only data folder) when -o/--output-dir says where outputs go.
wants_out_dirs=1
for a in "$@"; do [[ "$a" == -o || "$a" == --output-dir || "$a" == --output-dir=* || "$a" == -o?* ]] && wants_out_dirs=0; done
# Only beside a config that exists: a mistyped path gets wormhole's error and leaves no folders behind.
[[ "$config" == *.toml || $wants_out_dirs == 0 || ! -f "$config" ]] ||
  mkdir -p "$(dirname "$config")"/out/{dcqcn,hpcc,timely,dctcp,hpccpint}
exec "$root/build/wormhole" run "$config" "$@"
