#!/usr/bin/python3
"""Wormhole's accuracy against packet mode on congested and uncongested fabrics, judged as ensembles.

Usage: bench_accuracy.py [--build DIR] [--before DIR] [--runs N] [--jobs J] [--only NAME[,NAME]] [--big]
                         [--modes MODE[,MODE]] [--verify F] [--out FILE] [--keep]

A congested run is chaotic: which flow wins a collision moves every later ring step, so a 1-ns change of one
delay moves the iteration time by several % (GPT-7B on DCN+: 1.6 % standard deviation with DCQCN, 6.1 % with
HPCC). One accelerated run against one packet run can only be judged to within that. So every scenario is run
N times (--runs, default 4) in each mode, each run perturbed: a training workload's send_latency k ns longer
(k = 0..N-1), a flow file's SEED k + 1 (DCQCN's ECN draws; a flow file nothing random decides is
deterministic). A scenario whose first two packet-mode runs agree is deterministic: each mode runs once more.

Modes: packet (the truth); ff (fast-forward, WORMHOLE 1); memo (with memoization, cold); warm (run k
warm-started from cold run k's memo file); verify (one run, memo with WORMHOLE_VERIFY F, default 0.2: a
fifth of the skips and replays simulated and measured). --modes keeps some of them (packet mode always runs;
warm needs memo). --before DIR adds ff and memo runs of an earlier build (`DIR/wormhole`), sharing the packet
runs: the same table before and after a change.

Per mode against packet mode (scripts/wh_analysis/ensemble.py): the relative difference of the mean
iteration time (workloads) or makespan (flow files) and of the mean FCT, each with its standard error and
whether Welch's t-test calls it significant (95 %); the slowdown p50 and p99 of the size bin where they
differ most (run by run, averaged); the run's own estimated error, how many runs warned (contention frozen, or a
verified decision above the bound), verify's measured error;
median wall time and the speedup over packet mode's median. The packet row gives the noise: the standard
deviation of one run.

Scenarios (DCQCN unless said; the GPT ones without TP, θ 0.05 / l 2000 unless said):
  sx-gpt7b        GPT-7B, 64 GPUs, Spectrum-X (rail, uncongested)
  dcn-gpt7b       the same on DCN+ 1:1 (inputs/llm/gpt7b-64g-dcn.toml: ECMP collisions congest the rings)
  dcn-gpt7b-hpcc  the same with HPCC, θ 0.1
  dcn4-gpt7b      DCN+ 4:1 (2 spines for 8 GPUs per leaf), and dcn4-gpt7b-hpcc
  moe-32g         the MoE model (TP 4, EP 4), all traffic
  sx-gpt7b-l200   Spectrum-X with a 200-µs window (l = 200)
  rail128-l200    128 x 32 MiB on a 128-GPU rail fabric (8 rails, 16 spines, 400 Gb/s), the HPCC reference's
                  DCQCN settings, l = 200; and rail128-hpcc-l200
  perm64-l200     a 64-host permutation, 32 MiB each, 8 leaves x 8 hosts, 8 spines, 100 Gb/s, DCQCN, l = 200
  --big adds sx-gpt13b (GPT-13B, 128 GPUs, Spectrum-X), dcn-gpt13b and dcn-gpt13b-hpcc (DCN+ 1:1), dcn4-gpt13b
  and dcn4-gpt13b-hpcc (4:1), sx1024-gpt7b-l200 (the GPT-7B workload on 1,024 GPUs, DP 128, l = 200) and
  deepseek16b-128g (inputs/llm/deepseek16b-128g.toml: EP all-to-alls across the spines, then DP; about 7 min
  a run).
Time it takes on 2 cores, --runs 4, --jobs 2: about an hour without --big, several with it.
"""
import argparse
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
from wh_analysis import ensemble  # noqa: E402

LLM = REPO / "inputs" / "llm"
GPT7B, GPT13B, DCN = LLM / "gpt7b-64g.toml", LLM / "gpt13b-128g.toml", LLM / "gpt7b-64g-dcn.toml"
NO_TP = 'workload.ignore_groups=["TP"]'
HPCC = ["CC_MODE=3", "WORMHOLE_THETA=0.1"]
L200 = ["WORMHOLE_WINDOW=200"]
DCN13 = [NO_TP, "topology.generator=\"dcn+\"", "topology.gpus_per_leaf=8", "topology.spines=8"]
SCENARIOS = [
    ("sx-gpt7b", GPT7B, [NO_TP]),
    ("dcn-gpt7b", DCN, []),
    ("dcn-gpt7b-hpcc", DCN, HPCC),
    ("dcn4-gpt7b", DCN, ["topology.spines=2"]),
    ("dcn4-gpt7b-hpcc", DCN, ["topology.spines=2"] + HPCC),
    ("moe-32g", LLM / "moe-32g.toml", []),
    ("sx-gpt7b-l200", GPT7B, [NO_TP] + L200),
    ("rail128-l200", "rail128/config_dcqcn.txt", L200),
    ("rail128-hpcc-l200", "rail128/config_hpcc.txt", L200),
    ("perm64-l200", "perm64/config_dcqcn.txt", L200),
]
BIG = [
    ("sx-gpt13b", GPT13B, [NO_TP]),
    ("dcn-gpt13b", GPT13B, DCN13),
    ("dcn-gpt13b-hpcc", GPT13B, DCN13 + HPCC),
    ("dcn4-gpt13b", GPT13B, [NO_TP, "topology.generator=\"dcn+\"", "topology.gpus_per_leaf=8", "topology.spines=2"]),
    ("dcn4-gpt13b-hpcc", GPT13B, [NO_TP, "topology.generator=\"dcn+\"", "topology.gpus_per_leaf=8", "topology.spines=2"] + HPCC),
    ("sx1024-gpt7b-l200", "sx1024.toml", [NO_TP] + L200),
    ("deepseek16b-128g", LLM / "deepseek16b-128g.toml", []),
]
MODES = ("ff", "memo", "warm", "verify")
EST = re.compile(r"wormhole: estimated error (\d+\.\d+) % of the flows' bytes")
VERIFY = re.compile(r"(\d+) (fast-forwards|replays|replay continuations) simulated instead \(byte error mean (\d+\.\d+) %.*?"
                    r"max (\d+\.\d+) %")
# The HPCC reference's ring configs: every key, paths rewritten below.
REF_CONFIG = REPO / "inputs" / "hpcc-ring16-fattree-k4-1MB"


def write_flow_scenario(d, hosts_per_leaf, leaves, spines, rate, flows_per_host_shift):
    """A leaf-spine fabric (hosts 0.., leaves, spines; every leaf to every spine once) in HPCC's topology.txt,
    one 32-MiB flow per host to host (i + shift) mod hosts at 2 s, and the reference ring's configs with
    their paths pointing here."""
    d.mkdir(parents=True, exist_ok=True)
    hosts = hosts_per_leaf * leaves
    links = [(h, hosts + h % leaves) for h in range(hosts)]
    links += [(hosts + l, hosts + leaves + s) for l in range(leaves) for s in range(spines)]
    lines = [f"{hosts + leaves + spines} {leaves + spines} {len(links)}",
             " ".join(str(hosts + i) for i in range(leaves + spines))]
    lines += [f"{a} {b} {rate} 0.001ms 0" for a, b in links]
    (d / "topology.txt").write_text("\n".join(lines) + "\n")
    flows = [f"{h} {(h + flows_per_host_shift) % hosts} 3 100 33554432 2.000000000" for h in range(hosts)]
    (d / "flow.txt").write_text(f"{hosts}\n" + "\n".join(flows) + "\n")
    (d / "trace.txt").write_text("0\n")
    for cc in ("dcqcn", "hpcc"):
        text = (REF_CONFIG / f"config_{cc}.txt").read_text()
        for key, value in (("TOPOLOGY_FILE", "topology.txt"), ("FLOW_FILE", "flow.txt"), ("TRACE_FILE", "trace.txt")):
            text = re.sub(rf"^{key} .*$", f"{key} {value}", text, flags=re.M)
        (d / f"config_{cc}.txt").write_text(text)


def prepare(work):
    """The scenarios the repository does not ship, written into `work`."""
    # 128 GPUs as 16 servers x 8 rails: host h on rail leaf h % 8; each flow to the next server's next rail.
    write_flow_scenario(work / "rail128", 16, 8, 16, "400Gbps", 9)
    write_flow_scenario(work / "perm64", 8, 8, 8, "100Gbps", 9)
    text = (LLM / "workload_gpt7b_64g.txt").read_text().replace("all_gpus: 64", "all_gpus: 1024")
    (work / "w1024.txt").write_text(text)
    shutil.copy2(LLM / "SimAI.conf", work / "SimAI.conf")
    toml = GPT7B.read_text().replace("gpus = 64", "gpus = 1024").replace('"workload_gpt7b_64g.txt"', '"w1024.txt"')
    (work / "sx1024.toml").write_text(toml.replace('dir = "out/gpt7b-64g"', 'dir = "out/sx1024"'))


def perturbation(scenario, k):
    """The --set of the k-th perturbed run: a workload's send_latency k ns longer, a flow file's SEED k + 1."""
    if str(scenario).endswith(".toml"):
        m = re.search(r'^send_latency\s*=\s*"(\d+(?:\.\d+)?)(ns|us)"', Path(scenario).read_text(), re.M)
        ns = (float(m.group(1)) * (1000 if m.group(2) == "us" else 1)) if m else 6000
        return f'workload.send_latency="{int(round(ns)) + k}ns"'
    return f"SEED={k + 1}"


def run(binary, scenario, out, sets, extra=()):
    cmd = [str(binary), "run", str(scenario), "-o", str(out), *[x for kv in sets for x in ("--set", kv)], *extra]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"bench_accuracy: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    r = ensemble.summarize(out / "results.h5")
    m = EST.search(p.stdout)
    r.update(wall=wall, estimated=float(m.group(1)) / 100 if m else math.nan,
             warned="froze flows contending" in p.stderr or "verify mode found" in p.stderr, verify=None)
    line = next((x for x in p.stdout.splitlines() if x.startswith("verify:")), "")
    if found := VERIFY.findall(line):  # per kind: (count, kind, mean error, max error)
        r["verify"] = {kind: (int(n), float(mean) / 100, float(mx) / 100) for n, kind, mean, mx in found}
    return r


def pct(x, digits=2):
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:+.{digits}f} %"


def diff_text(d):
    if not d:
        return "–"
    return f"{100 * d['rel']:+.2f} ± {100 * d['rel_se']:.2f} %" + (" *" if d["significant"] else "")


def row(name, mode, runs, packet):
    """A table row of `runs` of `mode` against the packet runs."""
    c = ensemble.compare(packet, runs)
    key = "iteration_us" if "iteration_us" in c else "makespan_us"
    p50, p99 = ensemble.worst_bin(c, 50), ensemble.worst_bin(c, 99)
    walls = statistics.median(r["wall"] for r in runs)
    speedup = statistics.median(r["wall"] for r in packet) / walls
    est = [r["estimated"] for r in runs if not math.isnan(r["estimated"])]
    v = runs[0]["verify"]
    vtext = "–" if not v else "; ".join(f"{n} {kind}: mean {100 * mean:.2f} %, max {100 * mx:.2f} %"
                                        for kind, (n, mean, mx) in v.items() if n)
    cells = [name, mode, str(len(runs)), f"{walls:.1f} s", f"{speedup:.2f}x", diff_text(c.get(key)),
             diff_text(c.get("mean_fct_us")), pct(p50["rel"]) if p50 else "–", pct(p99["rel"]) if p99 else "–",
             f"{100 * statistics.mean(est):.3f} %" if est else "–", str(sum(r["warned"] for r in runs)), vtext]
    data = {"runs": len(runs), "wall_s": walls, "speedup": speedup, "compare": c,
            "estimated": statistics.mean(est) if est else None, "warned": sum(r["warned"] for r in runs), "verify": v}
    return cells, data


def packet_row(name, packet):
    key = "iteration_us" if packet[0].get("iteration_us") else "makespan_us"
    vals = [r[key] for r in packet]
    sd = statistics.stdev(vals) / statistics.mean(vals) if len(vals) > 1 else 0.0
    fct = [r["mean_fct_us"] for r in packet]
    sdf = statistics.stdev(fct) / statistics.mean(fct) if len(fct) > 1 else 0.0
    return [name, "packet", str(len(packet)), f"{statistics.median(r['wall'] for r in packet):.1f} s", "1.00x",
            f"{statistics.mean(vals) / 1e3:.3f} ms, sd {100 * sd:.2f} %", f"{statistics.mean(fct):.1f} us, sd {100 * sdf:.2f} %",
            "–", "–", "–", "–", "–"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=str(REPO / "build"), help="build folder holding the wormhole binary")
    ap.add_argument("--before", help="build folder of an earlier wormhole: its ff and memo runs too")
    ap.add_argument("--runs", type=int, default=4, help="perturbed runs per mode (default 4)")
    ap.add_argument("--jobs", type=int, default=1, help="runs at a time (default 1; walls are then per-process)")
    ap.add_argument("--only", help="comma-separated scenario names to keep")
    ap.add_argument("--big", action="store_true", help="also the GPT-13B and 1,024-GPU scenarios")
    ap.add_argument("--modes", default=",".join(MODES), help=f"modes to run besides packet (default {','.join(MODES)})")
    ap.add_argument("--verify", type=float, default=0.2, help="WORMHOLE_VERIFY of the verify run (0: none)")
    ap.add_argument("--out", help="also write the table (Markdown) here and the figures as JSON beside it")
    ap.add_argument("--keep", action="store_true", help="keep the runs' outputs (printed)")
    args = ap.parse_args()
    modes_wanted = [m for m in args.modes.split(",") if m]
    if bad := [m for m in modes_wanted if m not in MODES]:
        ap.error(f"--modes {','.join(bad)}: no such mode (choose from {','.join(MODES)})")
    if "warm" in modes_wanted and "memo" not in modes_wanted:
        ap.error("--modes warm needs memo too: a warm run starts from the cold memo run's file")
    binary = Path(args.build) / "wormhole"
    before = Path(args.before) / "wormhole" if args.before else None
    work = Path(tempfile.mkdtemp(prefix="wh_bench_acc_"))
    prepare(work)
    scenarios = SCENARIOS + (BIG if args.big else [])
    if args.only:  # names from either list: --only picks the big ones without --big
        keep = args.only.split(",")
        unknown = [k for k in keep if k not in {s[0] for s in SCENARIOS + BIG}]
        if unknown:
            ap.error(f"--only {','.join(unknown)}: no such scenario (see --help)")
        scenarios = [s for s in SCENARIOS + BIG if s[0] in keep]
    head = ["scenario", "mode", "runs", "wall (median)", "speedup", "iteration or makespan: Δ mean ± SE",
            "mean FCT: Δ ± SE", "slowdown p50 (worst bin)", "slowdown p99 (worst bin)", "estimated error",
            "warned", "verify: measured error"]
    rows, data = [], {}
    pool = ThreadPoolExecutor(args.jobs)
    try:
        for name, scenario, sets in scenarios:
            scenario = scenario if Path(scenario).is_absolute() else work / scenario
            d = work / name
            print(f"== {name}", file=sys.stderr, flush=True)
            batch = lambda b, mode, extra_sets, n, extra=(): list(pool.map(  # noqa: E731
                lambda k: run(b, scenario, d / f"{mode}{k}", sets + extra_sets + [perturbation(scenario, k)], extra),
                range(n)))
            # Two packet runs first: if they agree the scenario is deterministic and every mode runs once.
            packet = batch(binary, "packet", [], min(2, args.runs))
            key = "iteration_us" if packet[0].get("iteration_us") else "makespan_us"
            n = args.runs if len({(r[key], r["mean_fct_us"]) for r in packet}) > 1 else 1
            if n > 2:
                packet += list(pool.map(lambda k: run(binary, scenario, d / f"packet{k}", sets + [perturbation(scenario, k)]),
                                        range(2, n)))
            on, memo = ["WORMHOLE=1"], ["WORMHOLE=1", "WORMHOLE_MEMO=1"]
            modes = {}
            if "ff" in modes_wanted:
                modes["ff"] = batch(binary, "ff", on, n)
            if "memo" in modes_wanted:
                modes["memo"] = batch(binary, "memo", memo, n)
            if "warm" in modes_wanted:
                modes["warm"] = list(pool.map(  # run k warm-started from cold run k's memo file
                    lambda k: run(binary, scenario, d / f"warm{k}", sets + memo + [perturbation(scenario, k)],
                                  ("--memo", d / f"memo{k}" / "memo.h5")), range(n)))
            if "verify" in modes_wanted and args.verify > 0:
                modes["verify"] = batch(binary, "verify", memo + [f"WORMHOLE_VERIFY={args.verify}"], 1)
            if before:
                modes["ff (before)"] = batch(before, "ffb", on, n)
                modes["memo (before)"] = batch(before, "memob", memo, n)
            rows.append(packet_row(name, packet))
            data[name] = {"packet": {"runs": len(packet), "wall_s": statistics.median(r["wall"] for r in packet),
                                     key: [r[key] for r in packet], "mean_fct_us": [r["mean_fct_us"] for r in packet]}}
            for mode, runs in modes.items():
                cells, figures = row(name, mode, runs, packet)
                rows.append(cells)
                data[name][mode] = figures
                print("| " + " | ".join(cells) + " |", file=sys.stderr, flush=True)
    finally:
        pool.shutdown()
        if args.keep:
            print(f"outputs kept in {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]
    lines.append("")
    lines.append("Δ: relative difference of the mode's mean from packet mode's, ± its standard error; * = significant "
                 "(Welch's t-test, 95 %). packet rows: the mean and the standard deviation of one run.")
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
        Path(args.out).with_suffix(".json").write_text(json.dumps(data, indent=1, default=str))


if __name__ == "__main__":
    main()
