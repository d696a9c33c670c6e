#!/usr/bin/python3
"""SimAI tutorial busbw tables: wormhole next to the upstream SimAI-Simulation (ns-3) numbers.

Usage: simai_tutorial.py [--wormhole PATH] [--sizes all|16M,32M,...] [--out DIR]

Reproduces the two busbw tables of SimAI's docs/Tutorial.md (values in reference_results.csv, see
docs/workloads.md §6) and prints ours beside them:
  ring_vs_nvls_32g       32 x H100, TP-8 AllReduce (fwd column), SimAI `--ro -g 32 -gt H100 -bw 400Gbps
                         -nvbw 1440Gbps` = our spectrum-x generator, AS_SEND_LAT=2. We model RING only (no
                         NVLS, no PXN; PXN is moot for a TP group inside one server), so the reference NVLS
                         column is shown for context only.
  spectrumx_vs_dcn_256g  256 x H100, DP AllReduce (wg column; TP 8 -> 8 DP rings of 32 ranks, one rank per
                         server), `-topo Spectrum-X -g 256` vs `-topo DCN+ -g 256 -psn 64 -bw 400Gbps`,
                         AS_SEND_LAT=2. One run per size and topology; busbw = mean over the 8 DP groups.
busbw is taken per collective from collectives.csv (busbw_GiBps). The reference CSV says "GB/s" but SimAI
divides by 2^30: the check below recomputes docs/workloads.md §6's example both ways.
Standard library only; run with /usr/bin/python3.
"""
import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TUT = REPO / "tests" / "data" / "simai" / "SimAI" / "docs" / "Tutorial.md.inline"
MIB = 1 << 20


def size_bytes(s):
    """'16M' -> 16 MiB (the tutorial's M are MiB: its workload rows hold 16777216 ...)."""
    m = re.fullmatch(r"(\d+)([KMG]?)", s.strip().upper())
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {s!r}; use e.g. 16M")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def read_reference(path):
    """{table: {size_bytes: (name_a, a, name_b, b)}} from reference_results.csv (skipping # lines)."""
    with open(path) as f:
        rows = [r for r in csv.reader(l for l in f if not l.startswith("#")) if r]
    ref = {}
    for r in rows:
        ref.setdefault(r[0], {})[size_bytes(r[1])] = (r[2], float(r[3]), r[4], float(r[5]))
    return ref


def toml_str(s):
    # A TOML basic string is a JSON string for our paths (no control characters).
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_scenario(path, topo, workload, conf):
    lines = ["[topology]"] + [f"{k} = {toml_str(v) if isinstance(v, str) else v}" for k, v in topo.items()]
    # send_latency 2us = AS_SEND_LAT=2 (SimAI's value is in µs with ns-3's ns resolution, §5.8).
    lines += ["", "[workload]", f"file = {toml_str(workload)}", 'send_latency = "2us"',
              "", "[network]", f"config = {toml_str(conf)}", ""]
    path.write_text("\n".join(lines))


def run(wormhole, scen, outdir, timeout):
    """Runs one scenario; returns (collective rows or None, wall seconds, error text)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([str(wormhole), "run", str(scen), "-o", str(outdir), "-q"],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - t0, f"timeout after {timeout} s"
    wall = time.monotonic() - t0
    if p.returncode != 0:
        return None, wall, f"exit {p.returncode}: {p.stderr.strip()[-300:]}"
    with open(outdir / "collectives.csv") as f:
        rows = list(csv.DictReader(f))
    for r in rows:  # our busbw must be bytes/duration in GiB/s x 2(n-1)/n, as SimAI's
        n, b, d = int(r["ranks"]), int(r["bytes"]), float(r["duration_us"])
        mine = b / (d * 1e-6) / 2**30 * 2 * (n - 1) / n
        if abs(mine - float(r["busbw_GiBps"])) > 1e-3 * mine + 2e-3:
            print(f"warning: busbw {r['busbw_GiBps']} != recomputed {mine:.3f} in {outdir}", file=sys.stderr)
    return rows, wall, ""


def stats(rows, size, phase):
    v = [float(r["busbw_GiBps"]) for r in rows or [] if int(r["bytes"]) == size and r["phase"] == phase]
    return (sum(v) / len(v), min(v), max(v)) if v else None


def fmt(x, w=8, p=2):
    return f"{x:{w}.{p}f}" if x is not None else f"{'-':>{w}}"


def ratio(ours, ref):
    return ours / ref if ours is not None and ref else None


def monotone(vals):
    v = [x for x in vals if x is not None]
    return "yes" if all(a < b for a, b in zip(v, v[1:])) else "NO"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wormhole", default="build/wormhole", help="wormhole binary (default build/wormhole, "
                    "relative to the current directory, else to the repository)")
    ap.add_argument("--sizes", default="all", help="comma-separated sizes out of 16M,32M,64M,128M,256M,512M "
                    "(default all)")
    ap.add_argument("--out", help="folder for scenarios and outputs (default: a new temporary folder, kept)")
    ap.add_argument("--ref", default=str(TUT / "reference_results.csv"), help="reference CSV; the workloads "
                    "are read from its folder")
    ap.add_argument("--conf", default=str(REPO / "inputs/llm/SimAI.conf"), help="network config")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per run (default 1800)")
    a = ap.parse_args()

    wormhole = Path(a.wormhole)
    if not wormhole.is_absolute() and not wormhole.exists():
        wormhole = REPO / wormhole
    if not wormhole.exists():
        sys.exit(f"no wormhole binary at {a.wormhole} (build it, or pass --wormhole PATH)")
    ref_path = Path(a.ref).resolve()
    ref, tut = read_reference(ref_path), ref_path.parent
    all_sizes = sorted(ref["ring_vs_nvls_32g"])
    sizes = all_sizes if a.sizes == "all" else sorted(size_bytes(s) for s in a.sizes.split(","))
    if set(sizes) - set(all_sizes):
        sys.exit(f"--sizes: the reference has only {','.join(f'{x // MIB}M' for x in all_sizes)}")
    out = Path(a.out or tempfile.mkdtemp(prefix="simai_tutorial_")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    conf = Path(a.conf).resolve()
    print(f"wormhole {wormhole}\nworkdir  {out}\nconfig   {conf}\n")

    # Unit check (§6): 16 MiB in 176.842 us, busbw x 2(n-1)/n = 14/8.
    b, t = 16 * MIB, 176.842e-6
    print(f"unit check: 16 MiB / 176.842 us = {b / t / 1e9:.2f} GB/s -> x14/8 = {b / t / 1e9 * 1.75:.2f};"
          f" = {b / t / 2**30:.2f} GiB/s -> x14/8 = {b / t / 2**30 * 1.75:.2f}")
    print("  SimAI's printed 154.62 is the 2^30 one, so the reference 'GB/s' are GiB/s; we compare with our"
          " busbw_GiBps as is.\n")
    t_start = time.monotonic()
    walls, results = [], {}

    # Table 1: one run with the tutorial's rows (blocking fwd AllReduces separated by 556 us of compute, so
    # they do not overlap); for a subset of sizes, a copy holding only those rows.
    wl = tut / "ring_vs_nvls_32g_workload.txt"
    lines = wl.read_text().splitlines(keepends=True)
    if sizes != all_sizes:
        keep = [l for l in lines[2:] if l.split() and int(l.split()[4]) in sizes]
        wl = out / "ring_vs_nvls_32g_workload.txt"
        wl.write_text(lines[0] + f"{len(keep)}\n" + "".join(keep))
    scen = out / "ring32.toml"
    write_scenario(scen, {"generator": "spectrum-x", "gpus": 32, "nvlink_rate": "1440Gbps",
                          "nic_rate": "400Gbps", "gpu_type": "H100"}, wl, conf)
    rows, wall, err = run(wormhole, scen, out / "ring32", a.timeout)
    walls.append((f"ring32 ({len(sizes)} sizes)", wall, err))
    for s in sizes:
        results[("ring", s)] = stats(rows, s, "fwd")

    # Table 2: per size a copy of the 256-GPU workload with only its wg size token replaced.
    base = (tut / "spectrumx_vs_dcn_256g_workload.txt").read_text()
    nl2 = base.index("\n", base.index("\n") + 1) + 1          # rows start after the header and count lines
    tok = list(re.finditer(r"\S+", base[nl2:]))[10]            # token 11 = wg_comm_size (§1.3)
    # Spectrum-X 256: one segment, a leaf per rail, so each 32-rank DP ring stays under one leaf (no spine
    # hop). DCN+: 4 leaves of 64 GPUs, so every ring crosses leaves 4 times (ECMP over the 64 spines).
    topos = {"sx": {"generator": "spectrum-x", "gpus": 256},   # SimAI defaults otherwise (§3.1)
             # -psn 64 -bw 400Gbps; gpus_per_leaf 64 and 400G spine links are DCN+ defaults -> 1:1 per leaf
             "dcn": {"generator": "dcn+", "gpus": 256, "spines": 64, "nic_rate": "400Gbps"}}
    for s in sizes:
        wl = out / f"spectrumx_vs_dcn_256g_{s // MIB}M.txt"
        wl.write_text(base[:nl2 + tok.start()] + str(s) + base[nl2 + tok.end():])
        for key, topo in topos.items():
            name = f"{key}256_{s // MIB}M"
            write_scenario(out / f"{name}.toml", topo, wl, conf)
            rows, wall, err = run(wormhole, out / f"{name}.toml", out / name, a.timeout)
            walls.append((name, wall, err))
            results[(key, s)] = stats(rows, s, "wg")
            print(f"  ran {name}: {wall:.1f} s {err}", flush=True)

    hdr = (f"{'table':<22}{'size':>6} {'ref A':>8} {'ours A':>8} {'ratio':>6}  {'ref B':>8} {'ours B':>8}"
           f" {'ratio':>6}   {'A min..max':>15} {'B min..max':>15}")
    print("\nring_vs_nvls_32g:      A = RING (ours: spectrum-x, NVLink 1440G), B = NVLS (reference only)")
    print("spectrumx_vs_dcn_256g: A = Spectrum-X, B = DCN+SingleToR (psn 64); ours = mean of 8 DP groups")
    print("busbw in GiB/s (the reference's 'GB/s', see the unit check)\n" + hdr + "\n" + "-" * len(hdr))
    mono = {}
    for table, ka, kb in (("ring_vs_nvls_32g", "ring", None), ("spectrumx_vs_dcn_256g", "sx", "dcn")):
        for s in sizes:
            na, ra, nb, rb = ref[table][s]
            if table == "ring_vs_nvls_32g":
                ra, rb = rb, ra        # the CSV's column a is NVLS, b is RING; we put RING first
            oa, ob = results.get((ka, s)), results.get((kb, s))
            mm = lambda o: f"{o[1]:6.2f}..{o[2]:6.2f}" if o else f"{'-':>15}"
            print(f"{table:<22}{str(s // MIB) + 'M':>6} {fmt(ra)} {fmt(oa and oa[0])} "
                  f"{fmt(ratio(oa and oa[0], ra), 6, 3)}  {fmt(rb)} {fmt(ob and ob[0])} "
                  f"{fmt(ratio(ob and ob[0], rb), 6, 3)}   {mm(oa)} {mm(ob)}")
            for k, r, o in ((ka, ra, oa), (kb, rb, ob)):
                if k:
                    mono.setdefault(k, ([], []))[0].append(r)
                    mono[k][1].append(o and o[0])

    print("\nOrdering checks (reference / ours):")
    for k, label in (("ring", "32g RING"), ("sx", "256g Spectrum-X"), ("dcn", "256g DCN+")):
        print(f"  busbw increasing with size, {label:<16}: {monotone(mono[k][0]):>3} / {monotone(mono[k][1])}")
    for s in sizes:
        rs, rd = ref["spectrumx_vs_dcn_256g"][s][1], ref["spectrumx_vs_dcn_256g"][s][3]
        os_, od = results.get(("sx", s)), results.get(("dcn", s))
        ours = "-" if not (os_ and od) else ("yes" if os_[0] > od[0] else "NO")
        print(f"  Spectrum-X > DCN+ at {s // MIB:>3}M: {'yes' if rs > rd else 'NO':>3} / {ours}")

    print("\nWall time per run:")
    for name, wall, err in walls:
        print(f"  {name:<22}{wall:8.1f} s  {err}")
    print(f"total wall time {time.monotonic() - t_start:.1f} s; outputs in {out}")
    return 1 if any(err for _, _, err in walls) else 0


if __name__ == "__main__":
    sys.exit(main())
