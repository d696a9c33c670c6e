#!/usr/bin/env python3
"""Writes the congestion-control property scenarios in the HPCC ns-3 input format.

    python3 scripts/cc_scenarios.py [TARGET_DIR] [--only NAME ...]

TARGET_DIR defaults to inputs/cc-scenarios/ of this repository. Each scenario gets its own folder with
topology.txt, flow.txt, trace.txt ("0": no traced node) and one config_<cc>.txt per congestion control,
every config giving every key (docs/network-model.md §1: several defaults of the reference are broken) and writing
its outputs under out/<cc>/ (the folders are created here; `wormhole run ... -o DIR` ignores them).
Standard library only; the output is deterministic (no random numbers, fixed permutation).

Scenarios
  incast8        8 hosts -> 1 host through one switch, 100 Gb/s, 1 us links, 2 MB each, all at t = 2.0 s.
                 CCs: dcqcn, hpcc, timely, dctcp, hpccpint.
  permutation16  2-tier leaf-spine, 4 leaves x 4 hosts, 4 spines, 100 Gb/s, 1 us; a fixed derangement in
                 which every flow crosses the spine layer; 4 MB per flow at t = 2.0 s. CCs as incast8.
  hpcc800        4 hosts at 800 Gb/s -> one switch -> 1 host at 800 Gb/s, 1 us, 4 MB each. HPCC only
                 (the reference's INT encodes at most 400 Gb/s and reads an 800 Gb/s port as 25 Gb/s).

CC parameters: the upstream experiment script run.py (HPCC repo, simulation/run.py; docs/network-model.md §13)
for NIC rate B Gb/s (B = 100, or 800 for hpcc800):
  common   t_alpha 1 us, t_dec 4 us, RP_TIMER 300 us, FAST_RECOVERY_TIMES 1, MIN_RATE 1000 Mb/s,
           L2_CHUNK_SIZE 4000, L2_ACK_INTERVAL 1, GLOBAL_T 1, U_TARGET 0.95, MI_THRESH 0, MULTI_RATE 0,
           SAMPLE_FEEDBACK 0, RATE_BOUND 1, BUFFER_SIZE 16*B/50 MB (32 MB at 100 G, 256 MB at 800 G),
           ECN maps for the rates B and 4B: KMIN 100*B/25, KMAX 400*B/25 (x 1000 B), PMAX 0.2.
  dcqcn    CC_MODE 1, g 1/256, RATE_AI 5*B/25, RATE_HAI 50*B/25 Mb/s, no window, ACK_HIGH_PRIO 1.
  hpcc     CC_MODE 3, RATE_AI 10*B/25 Mb/s (run.py default, no --hpai), INT_MULTI B/25, HAS_WIN 1,
           VAR_WIN 1, FAST_REACT 1, ACK_HIGH_PRIO 0.
  hpccpint CC_MODE 10, as hpcc, PINT_LOG_BASE 1.01 (run.py default), PINT_PROB 1.0.
  timely   CC_MODE 7, RATE_AI 10*B/10 = 100 Mb/s, RATE_HAI 50*B/10 = 500 Mb/s at 100 G, HAS_WIN 0, VAR_WIN 0,
           ACK_HIGH_PRIO 1 (run.py "timely"; "timely_vwin" would add the window). T_low 50 us,
           T_high 500 us, beta 0.8, min RTT 20 us are compiled-in constants of the reference.
  dctcp    CC_MODE 8, g 1/16, DCTCP_RATE_AI 615 Mb/s (run.py: one 1 KB MTU per 13 us RTT; it is not
           scaled with B in run.py and every DCTCP scenario here is at B = 100, so it stays 615),
           KMIN = KMAX = 30*B/10 (x 1000 B: 300 KB at 100 G), PMAX 1 (step marking), HAS_WIN 1,
           VAR_WIN 1, ACK_HIGH_PRIO 0 -- exactly run.py "dctcp" (which keeps the window; we follow it).
The queue monitor is placed after the stop time (off), ENABLE_TRACE 0, SIMULATOR_STOP_TIME 2.1 s: 100 ms
after the flows start, 50x the slowest ideal makespan here, so a starving flow shows up as unfinished
instead of making a run long.
"""
import argparse
import sys
from pathlib import Path

GBPS = 1_000_000_000
START_S = "2.000000000"
STOP_TIME_S = "2.1"

# Every key of the shipped configs (inputs/hpcc-ring16-fattree-k4-1MB/config_hpcc.txt), in their order.
KEYS = [
    "ENABLE_QCN", "USE_DYNAMIC_PFC_THRESHOLD", "PACKET_PAYLOAD_SIZE", "TOPOLOGY_FILE", "FLOW_FILE",
    "TRACE_FILE", "TRACE_OUTPUT_FILE", "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE", "SIMULATOR_STOP_TIME",
    "CC_MODE", "ALPHA_RESUME_INTERVAL", "RATE_DECREASE_INTERVAL", "CLAMP_TARGET_RATE", "RP_TIMER",
    "EWMA_GAIN", "FAST_RECOVERY_TIMES", "RATE_AI", "RATE_HAI", "MIN_RATE", "DCTCP_RATE_AI",
    "ERROR_RATE_PER_LINK", "L2_CHUNK_SIZE", "L2_ACK_INTERVAL", "L2_BACK_TO_ZERO", "HAS_WIN", "GLOBAL_T",
    "VAR_WIN", "FAST_REACT", "U_TARGET", "MI_THRESH", "INT_MULTI", "MULTI_RATE", "SAMPLE_FEEDBACK",
    "PINT_LOG_BASE", "PINT_PROB", "RATE_BOUND", "ACK_HIGH_PRIO", "LINK_DOWN", "ENABLE_TRACE", "KMAX_MAP",
    "KMIN_MAP", "PMAX_MAP", "BUFFER_SIZE", "QLEN_MON_FILE", "QLEN_MON_START", "QLEN_MON_END",
]
# Blank lines before these keys, as in the shipped configs (cosmetic).
GROUP_STARTS = {"PACKET_PAYLOAD_SIZE", "TOPOLOGY_FILE", "SIMULATOR_STOP_TIME", "CC_MODE", "ERROR_RATE_PER_LINK",
                "HAS_WIN", "RATE_BOUND", "ACK_HIGH_PRIO", "LINK_DOWN", "ENABLE_TRACE", "KMAX_MAP"}

CC_MODES = {"dcqcn": 1, "hpcc": 3, "timely": 7, "dctcp": 8, "hpccpint": 10}

# Fixed derangement of permutation16 (src -> dst). Leaf of host h = h // 4; every dst is on another leaf,
# so all 16 flows cross a spine and ECMP (4 spines) decides where they collide.
PERMUTATION16 = [9, 6, 13, 4, 14, 0, 11, 2, 5, 12, 15, 7, 1, 10, 3, 8]


def num(x):
    """Whole numbers without a fraction part (run.py's Python 2 integer division), others as given."""
    return str(int(x)) if float(x) == int(x) else repr(float(x))


def ecn_map(pairs):
    return f"{len(pairs)} " + " ".join(f"{rate} {v}" for rate, v in pairs)


def config(cc, bw_gbps):
    """Full key -> value map for one CC at NIC rate bw_gbps (run.py conventions, see the module docstring)."""
    b = bw_gbps
    rates = [b * GBPS, 4 * b * GBPS]  # run.py's two map entries: the NIC rate and a 4x fabric rate
    c = {
        "ENABLE_QCN": "1",
        "USE_DYNAMIC_PFC_THRESHOLD": "1",
        "PACKET_PAYLOAD_SIZE": "1000",
        "TOPOLOGY_FILE": "topology.txt",
        "FLOW_FILE": "flow.txt",
        "TRACE_FILE": "trace.txt",
        "TRACE_OUTPUT_FILE": f"out/{cc}/mix.tr",
        "FCT_OUTPUT_FILE": f"out/{cc}/fct.txt",
        "PFC_OUTPUT_FILE": f"out/{cc}/pfc.txt",
        "SIMULATOR_STOP_TIME": STOP_TIME_S,
        "CC_MODE": str(CC_MODES[cc]),
        "ALPHA_RESUME_INTERVAL": "1",
        "RATE_DECREASE_INTERVAL": "4",
        "CLAMP_TARGET_RATE": "0",
        "RP_TIMER": "300",
        "EWMA_GAIN": "0.00390625",
        "FAST_RECOVERY_TIMES": "1",
        "RATE_AI": None,
        "RATE_HAI": None,
        "MIN_RATE": "1000Mb/s",
        "DCTCP_RATE_AI": "1000Mb/s",
        "ERROR_RATE_PER_LINK": "0.0000",
        "L2_CHUNK_SIZE": "4000",
        "L2_ACK_INTERVAL": "1",
        "L2_BACK_TO_ZERO": "0",
        "HAS_WIN": "0",
        "GLOBAL_T": "1",
        "VAR_WIN": "0",
        "FAST_REACT": "0",
        "U_TARGET": "0.95",
        "MI_THRESH": "0",
        "INT_MULTI": "1",
        "MULTI_RATE": "0",
        "SAMPLE_FEEDBACK": "0",
        "PINT_LOG_BASE": "1.01",
        "PINT_PROB": "1.0",
        "RATE_BOUND": "1",
        "ACK_HIGH_PRIO": "0",
        "LINK_DOWN": "0 0 0",
        "ENABLE_TRACE": "0",
        "KMAX_MAP": ecn_map([(r, num(400 * r // GBPS / 25)) for r in rates]),
        "KMIN_MAP": ecn_map([(r, num(100 * r // GBPS / 25)) for r in rates]),
        "PMAX_MAP": ecn_map([(r, "0.20") for r in rates]),
        "BUFFER_SIZE": num(16 * b / 50),
        "QLEN_MON_FILE": f"out/{cc}/qlen.txt",
        "QLEN_MON_START": "5000000000",  # after the stop time: no queue monitor
        "QLEN_MON_END": "5000000000",
    }
    if cc == "dcqcn":
        c.update(RATE_AI=f"{num(5 * b / 25)}Mb/s", RATE_HAI=f"{num(50 * b / 25)}Mb/s", ACK_HIGH_PRIO="1")
    elif cc in ("hpcc", "hpccpint"):
        ai = f"{num(10 * b / 25)}Mb/s"
        c.update(RATE_AI=ai, RATE_HAI=ai, HAS_WIN="1", VAR_WIN="1", FAST_REACT="1", INT_MULTI=num(b / 25))
    elif cc == "timely":
        c.update(RATE_AI=f"{num(10 * b / 10)}Mb/s", RATE_HAI=f"{num(50 * b / 10)}Mb/s", ACK_HIGH_PRIO="1")
    elif cc == "dctcp":
        k = [(r, num(30 * r // GBPS / 10)) for r in rates]
        c.update(RATE_AI="10Mb/s", RATE_HAI="10Mb/s", EWMA_GAIN="0.0625", DCTCP_RATE_AI="615Mb/s",
                 HAS_WIN="1", VAR_WIN="1", KMAX_MAP=ecn_map(k), KMIN_MAP=ecn_map(k),
                 PMAX_MAP=ecn_map([(r, "1.00") for r in rates]))
    else:
        raise ValueError(cc)
    assert list(c) == KEYS and all(v is not None for v in c.values()), cc
    return c


def config_text(c):
    lines = []
    for k in KEYS:
        if k in GROUP_STARTS:
            lines.append("")
        lines.append(f"{k} {c[k]}")
    return "\n".join(lines).lstrip("\n") + "\n"


def topology_text(n_nodes, switches, links):
    """links: (a, b, gbps); every link 1 us, error rate 0."""
    out = [f"{n_nodes} {len(switches)} {len(links)}", " ".join(map(str, switches))]
    out += [f"{a} {b} {g}Gbps 0.001ms 0" for a, b, g in links]
    return "\n".join(out) + "\n"


def flow_text(flows, dport):
    """flows: (src, dst, size_bytes), all starting at START_S in priority group 3."""
    return "\n".join([str(len(flows))] + [f"{s} {d} 3 {dport} {size} {START_S}" for s, d, size in flows]) + "\n"


def incast8():
    # hosts 0..7 send to host 8 through switch 9.
    links = [(h, 9, 100) for h in range(9)]
    flows = [(h, 8, 2_000_000) for h in range(8)]
    return 100, ["dcqcn", "hpcc", "timely", "dctcp", "hpccpint"], topology_text(10, [9], links), flow_text(flows, 200)


def permutation16():
    # hosts 0..15, leaves 16..19 (host h on leaf 16 + h // 4), spines 20..23, every leaf to every spine.
    perm = PERMUTATION16
    assert sorted(perm) == list(range(16)) and all(perm[h] // 4 != h // 4 for h in range(16))
    links = [(h, 16 + h // 4, 100) for h in range(16)]
    links += [(16 + leaf, 20 + spine, 100) for leaf in range(4) for spine in range(4)]
    flows = [(h, perm[h], 4_000_000) for h in range(16)]
    return (100, ["dcqcn", "hpcc", "timely", "dctcp", "hpccpint"],
            topology_text(24, list(range(16, 24)), links), flow_text(flows, 100))


def hpcc800():
    # hosts 0..3 send to host 4 through switch 5, every link 800 Gb/s.
    links = [(h, 5, 800) for h in range(5)]
    flows = [(h, 4, 4_000_000) for h in range(4)]
    return 800, ["hpcc"], topology_text(6, [5], links), flow_text(flows, 200)


SCENARIOS = {"incast8": incast8, "permutation16": permutation16, "hpcc800": hpcc800}


def write_scenario(name, target):
    bw, ccs, topo, flows = SCENARIOS[name]()
    d = Path(target) / name
    d.mkdir(parents=True, exist_ok=True)
    (d / "topology.txt").write_text(topo)
    (d / "flow.txt").write_text(flows)
    (d / "trace.txt").write_text("0\n")
    for cc in ccs:
        text = config_text(config(cc, bw))
        if bw >= 400:
            # Ours, after the reference's keys: whole-ns serialisation would run 800 G links 4.6 % fast.
            text += "\nNS_TRUNCATION 0\n"
        (d / f"config_{cc}.txt").write_text(text)
        (d / "out" / cc).mkdir(parents=True, exist_ok=True)
    return d


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("target", nargs="?", default=str(Path(__file__).resolve().parents[1] / "inputs" / "cc-scenarios"))
    ap.add_argument("--only", nargs="+", choices=sorted(SCENARIOS), help="write only these scenarios")
    a = ap.parse_args(argv)
    for name in a.only or SCENARIOS:
        print(write_scenario(name, a.target))
    return 0


if __name__ == "__main__":
    sys.exit(main())
