#!/usr/bin/python3
"""Wormhole's accuracy against packet mode on congested and uncongested fabrics, with its own error figures.

Usage: bench_accuracy.py [--build DIR] [--only NAME[,NAME]] [--big] [--verify F] [--out FILE] [--keep]

Every scenario is run, one run at a time and by the same binary, as:
  packet   packet mode: the truth
  seed2    packet mode with SEED 2, and
  lat+1ns  packet mode with the workload's send_latency 1 ns longer: the noise floor. A congested run is
           chaotic: which flow wins a collision moves every later ring step, so a 1-ns change moves the
           iteration time by up to ~10 % (HPCC on DCN+), and SEED (DCQCN's ECN draws) does as much; an
           accelerated run cannot be judged closer than that
  ff       fast-forward alone (WORMHOLE 1)
  memo     fast-forward + memoization, cold (WORMHOLE_MEMO 1)
  warm     memo, warm-started from the cold run's memo.h5
  verify   memo with WORMHOLE_VERIFY F (default 0.2): a fifth of the skips and replays simulated and measured
Reported per accelerated run against packet mode: iteration-time error (workloads; makespan for flow files),
the largest relative difference of the slowdown p50 and p99 over the size bins, the KS statistic of the
slowdown distribution, each beside the noise floor (the larger of seed2's and lat+1ns's); the run's own estimated error and whether it
warned; verify's mean measured error; wall times and the speedup over packet mode.

Scenarios (DCQCN unless said, TP not simulated in the GPT ones, θ 0.05 / l 2000 unless said):
  sx-gpt7b        GPT-7B, 64 GPUs, Spectrum-X (rail, uncongested)
  dcn-gpt7b       the same on DCN+ 1:1 (inputs/llm/gpt7b-64g-dcn.toml: ECMP collisions congest the rings)
  dcn-gpt7b-hpcc  the same with HPCC, θ 0.1
  dcn4-gpt7b      DCN+ 4:1 (2 spines for 8 GPUs per leaf)
  moe-32g         the MoE model (TP 4, EP 4), all traffic
  sx-gpt7b-l200   Spectrum-X with a 200-µs window (l = 200)
  --big adds dcn-gpt13b (GPT-13B, 128 GPUs, DCN+ 1:1) and sx1024-gpt7b-l200 (the GPT-7B workload on 1,024 GPUs,
  DP 128, l = 200: about 6 minutes in packet mode).
Time it takes: about 15 minutes without --big on 2 cores (the DCN+ runs take about a minute each in packet mode).
"""
import argparse
import json
import math
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
from wh_analysis import compare as cmp  # noqa: E402
from wh_analysis import distribution  # noqa: E402

LLM = REPO / "inputs" / "llm"
GPT7B = LLM / "gpt7b-64g.toml"
NO_TP = 'workload.ignore_groups=["TP"]'
SCENARIOS = [
    ("sx-gpt7b", GPT7B, [NO_TP]),
    ("dcn-gpt7b", LLM / "gpt7b-64g-dcn.toml", []),
    ("dcn-gpt7b-hpcc", LLM / "gpt7b-64g-dcn.toml", ["CC_MODE=3", "wormhole.theta=0.1"]),
    ("dcn4-gpt7b", LLM / "gpt7b-64g-dcn.toml", ["topology.spines=2"]),
    ("moe-32g", LLM / "moe-32g.toml", []),
    ("sx-gpt7b-l200", GPT7B, [NO_TP, "wormhole.window=200"]),
]
BIG = [
    ("dcn-gpt13b", LLM / "gpt13b-128g.toml", [NO_TP, "topology.generator=dcn+", "topology.gpus_per_leaf=8",
                                              "topology.spines=8"]),
    ("sx1024-gpt7b-l200", None, [NO_TP, "wormhole.window=200"]),
]
EST = re.compile(r"wormhole: estimated error (\d+\.\d+) % of the flows' bytes")
VERIFY = re.compile(r"verify: (\d+) fast-forwards simulated instead \(byte error mean (\d+\.\d+) %.*?; (\d+) replays "
                    r"simulated instead \(byte error mean (\d+\.\d+) %")


def scenario_1024(work):
    """The GPT-7B workload on 1,024 GPUs (DP 128) on Spectrum-X: its file with all_gpus raised."""
    text = (LLM / "workload_gpt7b_64g.txt").read_text().replace("all_gpus: 64", "all_gpus: 1024")
    (work / "w1024.txt").write_text(text)
    shutil.copy2(LLM / "SimAI.conf", work / "SimAI.conf")
    toml = GPT7B.read_text().replace("gpus = 64", "gpus = 1024").replace('"workload_gpt7b_64g.txt"', '"w1024.txt"')
    (work / "sx1024.toml").write_text(toml)
    return work / "sx1024.toml"


def perturbed_latency(scenario, sets):
    """The `workload.send_latency=...` setting 1 ns longer than the scenario's (6 µs if it names none)."""
    m = re.search(r'^send_latency\s*=\s*"(\d+(?:\.\d+)?)(ns|us)"', Path(scenario).read_text(), re.M)
    ns = (float(m.group(1)) * (1000 if m.group(2) == "us" else 1)) if m else 6000
    return f'workload.send_latency="{int(round(ns)) + 1}ns"'


def run(binary, scenario, out, sets, extra=()):
    cmd = [str(binary), "run", str(scenario), "-o", str(out), *[x for kv in sets for x in ("--set", kv)], *extra]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"bench_accuracy: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return {"wall": wall, "stdout": p.stdout, "stderr": p.stderr, "results": out / "results.h5"}


def figures(truth, noises, r):
    """Errors of run `r` against `truth`, with the `noises` runs as the floor."""
    c = cmp.compare(truth["results"], r["results"], ignore_start=True)
    d = distribution.with_noise(truth["results"], r["results"], [n["results"] for n in noises])
    b = d["b"]
    worst = lambda p: max((abs(x[f"p{p}"][2]) for x in b["bins"] if not math.isnan(x[f"p{p}"][2])), default=math.nan)  # noqa: E731
    it = b.get("iteration", (0, 0, math.nan))[2]
    out = {"iteration": it, "p50": worst(50), "p99": worst(99), "ks": b["ks"], "fct_mean": c["error"]["mean"],
           "significant": d.get("significant", [])}
    m = EST.search(r["stdout"])
    out["estimated"] = float(m.group(1)) / 100 if m else math.nan
    out["warned"] = "estimated error" in r["stderr"] and "above the bound" in r["stderr"]
    v = VERIFY.search(r["stdout"])
    out["verify"] = (int(v.group(1)), float(v.group(2)) / 100, int(v.group(3)), float(v.group(4)) / 100) if v else None
    return out


def pct(x, digits=2):
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:+.{digits}f} %"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(REPO / "build"), help="build folder holding the wormhole binary")
    ap.add_argument("--only", help="comma-separated substrings of scenario names to keep")
    ap.add_argument("--big", action="store_true", help="also the GPT-13B and 1,024-GPU scenarios")
    ap.add_argument("--verify", type=float, default=0.2,
                    help="WORMHOLE_VERIFY of the verify run (default 0.2; 0: no verify run, e.g. for a binary without it)")
    ap.add_argument("--out", help="also write the table (Markdown) and the figures (JSON beside it) here")
    ap.add_argument("--keep", action="store_true", help="keep the runs' outputs (printed)")
    args = ap.parse_args()
    binary = Path(args.build) / "wormhole"
    work = Path(tempfile.mkdtemp(prefix="wh_bench_acc_"))
    scenarios = SCENARIOS + (BIG if args.big else [])
    if args.only:
        keep = args.only.split(",")
        scenarios = [s for s in scenarios if any(k in s[0] for k in keep)]
    rows, data = [], {}
    try:
        for name, scenario, sets in scenarios:
            scenario = scenario or scenario_1024(work)
            d = work / name
            print(f"== {name}", file=sys.stderr, flush=True)
            truth = run(binary, scenario, d / "packet", sets)
            noises = [run(binary, scenario, d / "seed2", sets + ["SEED=2"]),
                      run(binary, scenario, d / "lat1", sets + [perturbed_latency(scenario, sets)])]
            on = sets + ["wormhole.enabled=true"]
            runs = {"ff": run(binary, scenario, d / "ff", on),
                    "memo": run(binary, scenario, d / "memo", on + ["wormhole.memo=true"])}
            runs["warm"] = run(binary, scenario, d / "warm", on + ["wormhole.memo=true"], ["--memo", d / "memo" / "memo.h5"])
            if args.verify > 0:
                runs["verify"] = run(binary, scenario, d / "verify", on + ["wormhole.memo=true", f"wormhole.verify={args.verify}"])
            data[name] = {"packet_wall_s": truth["wall"]}
            for label, noise in (("seed2 (noise)", noises[0]), ("lat+1ns (noise)", noises[1])):
                floor = figures(truth, [], noise)
                data[name][label] = floor
                rows.append([name, label, f"{noise['wall']:.1f} s", "–", pct(floor["iteration"]), pct(floor["p50"]),
                             pct(floor["p99"]), f"{floor['ks']:.3f}", "–", "–", "–", "–"])
            for kind, r in runs.items():
                f = figures(truth, noises, r)
                data[name][kind] = dict(f, wall_s=r["wall"])
                v = f["verify"]
                vtext = "–" if not v else f"{v[0]} ff {100 * v[1]:.2f} %, {v[2]} replays {100 * v[3]:.2f} %"
                est = "–" if math.isnan(f["estimated"]) else f"{100 * f['estimated']:.3f} %"
                rows.append([name, kind, f"{r['wall']:.1f} s", f"{truth['wall'] / r['wall']:.2f}x", pct(f["iteration"]),
                             pct(f["p50"]), pct(f["p99"]), f"{f['ks']:.3f}", est, "yes" if f["warned"] else "no", vtext,
                             ", ".join(f["significant"]) or "none"])
    finally:
        if args.keep:
            print(f"outputs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    head = ["scenario", "run", "wall", "speedup", "iteration error", "slowdown p50 (worst bin)", "slowdown p99 (worst bin)",
            "KS", "estimated error", "warned", "verify: measured error", "above the noise floor"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
        Path(args.out).with_suffix(".json").write_text(json.dumps(data, indent=1, default=str))


if __name__ == "__main__":
    main()
