#!/usr/bin/python3
"""Analyse wormhole runs: summaries, plots and run-against-run comparisons of results.h5 / fct.txt files.

Sub-commands (each has --help; --json prints the figures as JSON instead of text):
  summary FILE                  run summary: flows, FCT (µs) and slowdown mean/p50/p99/max, makespan, events,
                                ECN/drops, PFC pauses, workload iteration times and exposed communication,
                                Wormhole statistics (FILE: results .h5, or an HPCC fct.txt for the flow part)
                                (wherever a command takes a results .h5, a run's output folder names its results.h5)
  plot-fct FILE... -o DIR       DIR/fct_slowdown_cdf.png and DIR/fct_slowdown_by_size.png; several files: overlaid
  plot-overlay FILE... -o PNG   FCT slowdown CDFs of several runs on one plot (--label per FILE)
  plot-layers RESULTS -o PNG    per-layer exposed communication of one iteration (/workload/layers); by layer type
                                above 60 rows
  plot-runs RESULTS... -o PNG   iteration times and exposed communication (report and slowest GPU) of N workload runs
  plot-links RUN -o PNG         link-utilisation heatmap of the port monitor (monitor.h5, PORT_MON 1)
  plot-queues RUN -o PNG        egress queues over time of chosen ports (monitor.h5)
  plot-pfc RESULTS -o PNG       PFC pauses over time (/pfc); or plot-pfc --pfc pfc.txt -o PNG
  trace TRACE [--text N]        decode a packet trace: record counts, per-flow data packets, sizes and ACKs
  compare A B [--noise RUN...]  two runs (results .h5 or fct.txt each, A the baseline), flow by flow and by distributions:
                                FCT errors, iteration time, slowdown p50/p90/p99 per size, KS; --noise / --noise-b:
                                more runs of each, compared as ensembles (means against their standard error)
  plot-scaling TABLE -o PNG     speedup and parallel efficiency against MPI ranks
  plot-sweep TABLE -o PNG       error against speedup over a θ × l sweep (bench_wormhole.py --out works)

Units: FCTs and times printed in µs (the results file stores ns in /flows and /pfc, ps in /workload);
slowdown = FCT / true ideal FCT (results files), or FCT / the reference's standalone FCT (fct.txt, and compare);
errors are fractions printed as %. Plot commands take --format png|pdf|svg (default: the output's suffix).
Exit status: 0 done, 2 bad input (missing file, not HDF5, missing dataset, column or field; the message
names the file), 130 interrupted. Needs h5py, numpy and matplotlib (Debian python3-h5py, python3-numpy,
python3-matplotlib: run it with /usr/bin/python3).

Example:
  ref=tests/data/refruns/hpcc-incast16to1-leafspine64-1MB/out_dcqcn/fct.txt
  /usr/bin/python3 scripts/wh_analyze.py compare $ref out/incast/results.h5 --plot incast.png
"""
import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from wh_analysis import compare as cmp  # noqa: E402
from wh_analysis import distribution, ensemble  # noqa: E402
from wh_analysis import load, monplots, overlay, plots, summary, tables, trace  # noqa: E402
from wh_analysis.common import AnalysisError, json_clean  # noqa: E402


def emit(args, data, lines):
    """Prints data as JSON (--json) or the text lines."""
    if args.json:
        print(json.dumps(json_clean(data), indent=1, ensure_ascii=False))
    else:
        print("\n".join(lines))


def out_path(path, is_dir=False, fmt=None):
    """The output path, its directory (or, is_dir, itself) created if missing; with `fmt` (png, pdf, svg) a file
    gets that suffix."""
    p = Path(path)
    if fmt and not is_dir:
        p = p.with_suffix("." + fmt)
    (p if is_dir else p.parent).mkdir(parents=True, exist_ok=True)
    return p


def cmd_summary(args):
    s = summary.summarize(args.file)
    emit(args, s, summary.text(s))


def cmd_plot_fct(args):
    labels = overlay.run_labels(args.file, args.label)
    fmt = args.format or "png"
    if len(args.file) > 1:
        r = overlay.plot_fct_overlay(args.file, labels, out_path(args.output, is_dir=True), fmt)
        lines = [f"{r['cdf']}, {r['by_size']}: {len(r['runs'])} runs, slowdown = FCT / {r['slowdown_over']}"]
        lines += [f"  {x['label']}: {x['flows']:,} flows, slowdown p50 {x['p50']:.4f}, p99 {x['p99']:.4f}, "
                  f"max {x['max']:.4f}" for x in r["runs"]]
        return emit(args, r, lines)
    r = plots.plot_fct(load.load_flows(args.file[0]), out_path(args.output, is_dir=True), fmt, labels[0])
    sd = r["slowdown"]
    lines = [f"{r['cdf']}: {sd['flows']:,} flows, slowdown p50 {sd['p50']:.4f}, p99 {sd['p99']:.4f}, "
             f"max {sd['max']:.4f}",
             f"{r['by_size']}: {len(r['bins'])} size bins"]
    for b in r["bins"]:
        size = f"{b['size_lo']:,} B" if b["size_lo"] == b["size_hi"] else f"{b['size_lo']:,}-{b['size_hi']:,} B"
        lines.append(f"  {size}: {b['flows']:,} flows, slowdown p50 {b['p50']:.4f}, p99 {b['p99']:.4f}")
    emit(args, r, lines)


def cmd_plot_overlay(args):
    if args.label and len(args.label) != len(args.files):
        raise AnalysisError(f"{len(args.label)} labels for {len(args.files)} files: give one --label per file, or none")
    labels = args.label or [plots.short(f) for f in args.files]
    r = plots.plot_overlay([(lab, load.load_flows(f)) for lab, f in zip(labels, args.files)], out_path(args.output))
    lines = [f"{r['png']}:"] + [f"  {x['label']}: {x['flows']:,} flows, slowdown p50 {x['p50']:.4f}, p99 {x['p99']:.4f}, "
                                f"mean FCT {x['mean_fct_us']:.3f} us" for x in r["runs"]]
    emit(args, r, lines)


def cmd_plot_layers(args):
    by_type = True if args.by_type else False if args.by_row else None
    with load.open_results(args.file) as f:
        r = plots.plot_layers(f, args.iteration, out_path(args.output, fmt=args.format), by_type, args.job)
    e = r["exposed_us"]
    lines = [f"{r['file']}: iteration {r['iteration']}, {r['rows']} workload rows at GPU {r['report_gpu']}: exposed "
             f"communication {r['exposed_total_us']:.3f} us (fwd {e['fwd']:.3f}, ig {e['ig']:.3f}, wg {e['wg']:.3f}); "
             f"collectives took {sum(r['comm_us'].values()):.3f} us in all"
             + (f"; {len(r['types'])} layer types" if r["by_type"] else "")]
    if r["by_type"]:
        lines += [f"  most exposed: {t['type']}: {t['exposed_us']:.3f} us" for t in r["top"] if t["exposed_us"] > 0]
    else:
        lines += [f"  most exposed: row {t['layer']} {t['name']}: {t['exposed_us']:.3f} us" for t in r["top"]
                  if t["exposed_us"] > 0]
    emit(args, r, lines)


def cmd_plot_runs(args):
    labels = overlay.run_labels(args.file, args.label)
    r = overlay.plot_runs(args.file, labels, out_path(args.output, fmt=args.format), args.job)
    lines = [f"{r['file']}: {len(r['runs'])} runs"]
    for x in r["runs"]:
        its = ", ".join(f"{t / 1e9:.3f}" for t in x["iterations_ps"])
        if "report" not in x:
            lines.append(f"  {x['label']}: iterations {its} ms; exposed communication not computed (a Chakra trace)")
            continue
        rep = sum(x["report"].values()) / 1e9
        slow = sum(x["slowest"].values()) / 1e9 if "slowest" in x else float("nan")

        def pp(who):  # the pipeline's share, named only when there is one
            b = x.get(f"{who}_bubble_ps", 0)
            return f" (PP {x[who]['pp'] / 1e9:.3f}, bubble {b / 1e9:.3f})" if who in x and (x[who]["pp"] or b) else ""
        lines.append(f"  {x['label']}: iterations {its} ms; exposed communication at GPU {x['report_gpu']} (report) "
                     f"{rep:.3f} ms{pp('report')}, at GPU {x.get('slowest_gpu', '?')} (slowest) {slow:.3f} ms"
                     f"{pp('slowest')}")
    emit(args, r, lines)


def cmd_plot_links(args):
    r = monplots.plot_links(args.file, out_path(args.output, fmt=args.format), args.top, args.link)
    lines = [f"{r['file']}: {r['ports_shown']} ports x {r['rows']:,} intervals from {r['monitor']}"]
    busiest = sorted(r["ports"], key=lambda x: -x["mean_utilisation"])[:5]
    lines += [f"  {x['name']} ({x['link']}): mean utilisation {x['mean_utilisation']:.3f}, max "
              f"{x['max_utilisation']:.3f}" + (f", frozen {x['frozen_intervals']} intervals" if x["frozen_intervals"]
                                                else "") for x in busiest]
    emit(args, r, lines)


def cmd_plot_queues(args):
    r = monplots.plot_queues(args.file, out_path(args.output, fmt=args.format), args.port, args.top)
    lines = [f"{r['file']}: {len(r['ports'])} ports from {r['monitor']}"]
    lines += [f"  {x['name']}: peak {x['peak_bytes']:,} B, mean {x['mean_bytes']:,.0f} B" for x in r["ports"]]
    emit(args, r, lines)


def cmd_plot_pfc(args):
    if (args.file is None) == (args.pfc is None):
        raise AnalysisError("plot-pfc: give either a results file or --pfc pfc.txt (one of them)")
    if args.file is not None:
        with load.open_results(args.file) as f:
            pfc = load.pfc_from_results(f)
            end = int(load.attrs(f, "run", ("sim_end_ns",))["sim_end_ns"])
            starts = load.table(f, "flows", ("start_ns",))["start_ns"]
        source = args.file
    else:
        pfc, source = load.pfc_from_txt(args.pfc), args.pfc
        end = int(pfc["time_ns"].max()) if len(pfc["time_ns"]) else 0
        starts = []
    firsts = [int(pfc["time_ns"].min())] if len(pfc["time_ns"]) else []
    firsts += [int(min(starts))] if len(starts) else []
    t0 = min(firsts) if firsts else 0
    r = plots.plot_pfc(pfc, end, t0, out_path(args.output, fmt=args.format), source,
                       overlay.run_labels([source])[0])
    lines = [f"{r['file']}: {r['frames']:,} PFC frames ({r['pause_frames']:,} PAUSE, {r['resume_frames']:,} RESUME) "
             f"on {r['ports']} ports; {r['pauses']:,} pauses, paused port-time {r['paused_port_time_us']:.3f} us, "
             f"longest {r['longest_pause_us']:.3f} us, at most {r['max_paused_at_once']} ports paused at once"]
    emit(args, dict(r, t0_ns=t0, end_ns=end), lines)


def cmd_trace(args):
    header, rec = trace.read_trace(args.file)
    flows = trace.per_flow(rec)
    if args.flow:
        flows = {f: d for f, d in flows.items() if f in set(args.flow)}
    lines = [f"{args.file}: {len(rec):,} records ({'complete' if header['complete'] else 'INCOMPLETE: the run did not end'}"
             f"), {header['nodes']} nodes, {header['ports']} ports"]
    for ev, by_type in trace.counts(rec).items():
        lines.append(f"  {ev}: " + ", ".join(f"{n:,} {t}" for t, n in by_type.items()))
    shown = sorted(flows)[: (len(flows) if args.flow else 20)]
    for f in shown:
        d = flows[f]
        lines.append(f"  flow {f}: {d['data_packets']:,} data packets sent by node {d['sender']} "
                     f"({d['payload_bytes']:,} B of payload, {d['wire_bytes']:,} B on the wire; sizes "
                     f"{', '.join(map(str, d['sizes']))} B), {d['acks_received']:,} ACKs and {d['nacks_received']:,} "
                     f"NACKs back (sizes {', '.join(map(str, d['ack_sizes'])) or '-'} B)"
                     + (f", {d['retransmitted_after_timeout']} resent after a timeout"
                        if d["retransmitted_after_timeout"] else ""))
    for f in sorted(set(args.flow or ()) - set(flows)):  # asked for, but no packet of it is in the trace
        lines.append(f"  flow {f}: not in the trace (its sender's node is not traced (TRACE_FILE), it sent "
                     f"nothing in the traced time, or there is no such flow)")
    if len(shown) < len(flows):
        lines.append(f"  ... {len(flows) - len(shown):,} more flows (--flow ID to pick)")
    if args.text:
        lines += [trace.line(r) for r in rec[: args.text]]
    emit(args, {"file": args.file, "header": header, "counts": trace.counts(rec),
                "flows": {str(f): flows[f] for f in shown}}, lines)


def cmd_compare(args):
    c = cmp.compare(args.a, args.b, args.ignore_start)
    if c["joined"] == 0:
        # No figure can be computed: say so (exit 2) instead of printing a table of n/a.
        raise AnalysisError(f"{args.a} and {args.b}: no finished flow joins on ({c['key']}); are they runs of the same "
                            f"scenario?" + (f" {c['hint']}" if c.get("hint") else " Try --ignore-start if start times "
                                            "moved (workload runs)."))
    lines = cmp.text(c)
    dist, _ = distribution.differences(args.a, args.b)
    lines += distribution.text(dist)
    c["distribution"] = dist
    if args.noise or args.noise_b:
        # Means of the ensembles {A, --noise ...} and {B, --noise-b ...}, against their standard error.
        e = ensemble.compare([ensemble.summarize(x) for x in [args.a, *(args.noise or [])]],
                             [ensemble.summarize(x) for x in [args.b, *(args.noise_b or [])]])
        lines += [f"ensembles: A and {len(args.noise or [])} other run(s) of its scenario, B and "
                  f"{len(args.noise_b or [])} other run(s) of its own:"] + ["  " + x for x in ensemble.text(e)]
        sig = ensemble.significant(e)
        lines.append("differences beyond the noise (Welch t-test, 95 %): " + (", ".join(sig) if sig else "none"))
        c["ensemble"] = dict(e, beyond_noise=sig)
    if args.plot:
        p = plots.plot_compare(c, out_path(args.plot, fmt=args.format))
        lines.append(f"{p['file']}: {p['points']:,} flows plotted")
        c["plot"] = p["file"]
    emit(args, {k: v for k, v in c.items() if not k.startswith("_")}, lines)


def cmd_plot_scaling(args):
    curves = tables.scaling(args.table, args.weak)
    tables.plot_scaling(curves, out_path(args.output), args.weak)
    lines = [f"{args.output}: {'weak' if args.weak else 'strong'} scaling, {len(curves)} curve(s)"]
    for label, pts in curves.items():
        for p in pts:
            lines.append(f"  {label + ' ' if label else ''}ranks {p['ranks']}: wall {p['wall_s']:.3f} s"
                         + ("" if args.weak else f", speedup {p['speedup']:.3f}")
                         + f", efficiency {p['efficiency']:.3f}")
    emit(args, {"file": args.output, "weak": args.weak, "curves": curves}, lines)


def cmd_plot_sweep(args):
    pts, skipped = tables.sweep(args.table, args.metric)
    tables.plot_sweep(pts, out_path(args.output), args.metric)
    lines = [f"{args.output}: {len(pts)} points ({args.metric} against speedup; * = Pareto-optimal)"]
    for p in sorted(pts, key=lambda p: (p["label"], p["theta"], p["window"])):
        lines.append(f"  {'*' if p['pareto'] else ' '} {p['label'] + ' ' if p['label'] else ''}theta {p['theta']:g} "
                     f"l {p['window']}: {args.metric} {100 * p['error']:.4g} %, speedup {p['speedup']:.3g}x")
    if skipped:
        lines.append(f"  rows left out (a value missing): {', '.join(map(str, skipped))}")
    emit(args, {"file": args.output, "metric": args.metric, "points": pts, "skipped_rows": skipped}, lines)


def parser():
    ap = argparse.ArgumentParser(prog="wh_analyze.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print the figures as JSON instead of text")
    raw = argparse.RawDescriptionHelpFormatter

    def add(name, func, doc, short):
        p = sub.add_parser(name, parents=[common], help=short, description=doc, formatter_class=raw)
        p.set_defaults(func=func)
        return p

    p = add("summary", cmd_summary, summary.__doc__, "print the run summary")
    p.add_argument("file", metavar="FILE", help="results .h5, or a run's output folder (or an HPCC fct.txt: flow "
                                                "statistics only)")
    fmt = argparse.ArgumentParser(add_help=False)
    fmt.add_argument("--format", choices=("png", "pdf", "svg"),
                     help="image format (default: the output's suffix, else png)")

    def add_plot(name, func, doc, short):
        p = sub.add_parser(name, parents=[common, fmt], help=short, description=doc, formatter_class=raw)
        p.set_defaults(func=func)
        return p

    def add_labels(p, text):
        # One form for every plot that names several runs: --label a b, or --label a --label b.
        p.add_argument("--label", action="extend", nargs="+", metavar="NAME", help=text)

    p = add_plot("plot-fct", cmd_plot_fct, plots.plot_fct.__doc__ + "\n    With several files: " +
                 overlay.plot_fct_overlay.__doc__, "FCT slowdown CDF and slowdown by flow size, one run or N overlaid")
    p.add_argument("file", metavar="FILE", nargs="+", help="results .h5 or HPCC fct.txt (several: overlaid)")
    p.add_argument("-o", "--output", required=True, metavar="DIR", help="output folder (created if missing)")
    add_labels(p, "run names, one per file in order (--label a b, or --label a --label b; default: each run's folder)")
    p = add("plot-overlay", cmd_plot_overlay, plots.plot_overlay.__doc__, "FCT slowdown CDFs of several runs overlaid")
    p.add_argument("files", metavar="FILE", nargs="+", help="results .h5 or HPCC fct.txt (a job's own fct.txt too)")
    p.add_argument("-o", "--output", required=True, metavar="PNG", help="output image (folder created if missing)")
    add_labels(p, "legend labels, one per file in order (--label a b, or --label a --label b)")
    p = add_plot("plot-layers", cmd_plot_layers, plots.plot_layers.__doc__, "per-layer exposed communication")
    p.add_argument("file", metavar="RESULTS", help="results .h5 of a training-workload run")
    p.add_argument("-o", "--output", required=True, metavar="IMAGE", help="output image (folder created if missing)")
    p.add_argument("--iteration", type=int, default=0, help="0-based iteration (default 0)")
    p.add_argument("--job", metavar="NAME", help="in a run of several jobs: the job to plot (/jobs/NAME)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--by-type", action="store_true", help="one bar per layer type (default above 60 rows)")
    g.add_argument("--by-row", action="store_true", help="one bar per workload row (default up to 60 rows)")
    p = add_plot("plot-runs", cmd_plot_runs, overlay.plot_runs.__doc__,
                 "iteration times and exposed communication of N workload runs")
    p.add_argument("file", metavar="RESULTS", nargs="+", help="results .h5 of training-workload runs")
    p.add_argument("--job", metavar="NAME", help="in runs of several jobs: the job to plot in each (/jobs/NAME)")
    p.add_argument("-o", "--output", required=True, metavar="IMAGE", help="output image (folder created if missing)")
    add_labels(p, "run names, one per file in order (--label a b, or --label a --label b; default: each run's folder)")
    p = add_plot("plot-links", cmd_plot_links, monplots.plot_links.__doc__, "link-utilisation heatmap (PORT_MON 1)")
    p.add_argument("file", metavar="RUN", help="monitor.h5, the results.h5 beside it, or the run's output folder")
    p.add_argument("-o", "--output", required=True, metavar="IMAGE", help="output image (folder created if missing)")
    p.add_argument("--top", type=int, default=48, help="the N busiest ports (default 48)")
    p.add_argument("--link", choices=("nic", "fabric", "nvlink"), help="only ports of this kind of link")
    p = add_plot("plot-queues", cmd_plot_queues, monplots.plot_queues.__doc__, "egress queues over time (PORT_MON 1)")
    p.add_argument("file", metavar="RUN", help="monitor.h5, the results.h5 beside it, or the run's output folder")
    p.add_argument("-o", "--output", required=True, metavar="IMAGE", help="output image (folder created if missing)")
    p.add_argument("--port", nargs="+", metavar="NODE:IF", help="these ports (default: the --top deepest queues)")
    p.add_argument("--top", type=int, default=5, help="the N ports with the largest queue (default 5)")
    p = add_plot("plot-pfc", cmd_plot_pfc, plots.plot_pfc.__doc__ + "\n    The frames come from the results file's /pfc, or "
            "from an HPCC pfc.txt given with --pfc\n    (`time_ns node node_type if_index type`, class 3 assumed).",
            "PFC pauses over time")
    p.add_argument("file", metavar="RESULTS", nargs="?", help="results .h5")
    p.add_argument("--pfc", metavar="PFC_TXT", help="read the frames from this HPCC pfc.txt instead")
    p.add_argument("-o", "--output", required=True, metavar="PNG", help="output image (folder created if missing)")
    p = add("trace", cmd_trace, trace.__doc__, "decode a packet trace: counts, per-flow packets and sizes, records")
    p.add_argument("file", metavar="TRACE", help="the packet trace (TRACE_OUTPUT_FILE of a run with ENABLE_TRACE 1)")
    p.add_argument("--flow", type=int, nargs="+", metavar="ID", help="only these flows (/flows rows)")
    p.add_argument("--text", type=int, default=0, metavar="N", help="also print the first N records as text")
    p = add_plot("compare", cmd_compare, cmp.__doc__, "per-flow FCT and iteration-time errors of B against A")
    p.add_argument("a", metavar="A", help="baseline: results .h5 or HPCC fct.txt")
    p.add_argument("b", metavar="B", help="compared run: results .h5 or HPCC fct.txt")
    p.add_argument("--plot", metavar="PNG", help="also write a log-log scatter of FCT A vs B")
    p.add_argument("--ignore-start", action="store_true", help="join on (sip, dip, sport, dport) only")
    p.add_argument("--noise", nargs="+", metavar="RUN",
                   help="other runs of A's scenario (other SEEDs, a latency 1 ns longer): the ensemble whose mean B's "
                        "is compared with, against the standard error")
    p.add_argument("--noise-b", nargs="+", metavar="RUN", help="other runs of B's mode, likewise perturbed")
    p = add("plot-scaling", cmd_plot_scaling, tables.__doc__, "speedup and efficiency against MPI ranks")
    p.add_argument("table", metavar="TABLE", help="CSV, JSON or Markdown table with ranks and wall_s")
    p.add_argument("-o", "--output", required=True, metavar="PNG", help="output image (folder created if missing)")
    p.add_argument("--weak", action="store_true", help="weak scaling: efficiency = wall_s(r0) / wall_s(r)")
    p = add("plot-sweep", cmd_plot_sweep, tables.__doc__, "error against speedup over a θ × l sweep")
    p.add_argument("table", metavar="TABLE", help="CSV, JSON or Markdown (bench_wormhole.py --out) sweep table")
    p.add_argument("-o", "--output", required=True, metavar="PNG", help="output image (folder created if missing)")
    p.add_argument("--metric", choices=("error", "p99_error", "iter_error"), default="error",
                   help="which error to plot against the speedup (default: error, the mean FCT error)")
    return ap


# The arguments that name a run's results: a run's output folder stands for its results.h5.
RUN_ARGS = {"summary": ("file",), "plot-fct": ("file",), "plot-overlay": ("files",), "plot-layers": ("file",),
            "plot-runs": ("file",), "plot-pfc": ("file",), "compare": ("a", "b", "noise", "noise_b")}


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        for name in RUN_ARGS.get(args.command, ()):
            value = getattr(args, name)
            if isinstance(value, list):
                setattr(args, name, [load.run_file(v) for v in value])
            elif value is not None:
                setattr(args, name, load.run_file(value))
        args.func(args)
        sys.stdout.flush()
        return 0
    except AnalysisError as e:
        print(f"wh_analyze: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `| head`: the reader is gone; nothing left to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        print(f"wh_analyze: error: {where}{e.strerror or e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("wh_analyze: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
