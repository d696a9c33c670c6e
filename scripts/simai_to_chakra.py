#!/usr/bin/python3
"""Converts a SimAI / AICB workload into Chakra execution traces (one .et file per rank) that run on
wormhole exactly as the workload does (docs/workloads.md §8).

Usage: simai_to_chakra.py WORKLOAD --gpus N --gpus-per-server G -o PREFIX
Writes PREFIX.0.et .. PREFIX.<N-1>.et and PREFIX.comm_groups.json (ASTRA-sim's communicator groups);
run them with a scenario's `workload.chakra = "PREFIX"` and `workload.comm_groups = "PREFIX.comm_groups.json"`.

Each rank's graph is the SimAI program of one iteration (docs/workloads.md §1.6) for GPU r, PP taken as 1
(as `workload.pipeline = "none"`): per row forward a GPU COMP node (fwd compute), the fwd collective
(COMM_COLL on its group), a CPU COMP node (update delay); per row backward ig compute, ig collective,
update, wg compute, wg collective, update — the next row's ig compute depends on the wg compute, not on the
wg collective, which runs in the background. Collectives with nothing to send (op NONE, size 0, a group of
one GPU) are left out, as the driver completes them at once. Groups (TP, DP, EP, DP_EP) are SimAI's
(§5.1). Compute durations are written as duration_micros (rounded) and as our attribute duration_nanos
(exact). The schema is src/workload/chakra/et_def.proto, compiled with protoc (Debian protobuf-compiler)
into a temporary folder; python3-protobuf writes the messages.

Supported: HYBRID_TRANSFORMER* and other non-MICRO policies (TP, EP, all_gpus from the header; TP 0 = all
GPUs); the comm types of §1.4. Not supported: MICRO workloads, several iterations (a trace is one).
Refused as wormhole refuses the workload on N GPUs: TP not dividing N or G (nor a multiple of G), EP not
dividing DP. PREFIX.N.et and up, left by an earlier conversion to the same prefix, are removed.
"""
import argparse
import importlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROTO = REPO / "src" / "workload" / "chakra" / "et_def.proto"
MIN_FWD = 4096  # fwd sizes of 1..4095 B are issued as 4096 B (docs/workloads.md §1.5 item 5)


def load_schema():
    """The generated et_def_pb2 module (protoc into a temporary folder, removed once the module is loaded: nothing
    generated is kept)."""
    with tempfile.TemporaryDirectory(prefix="wh_chakra_pb_") as out:
        subprocess.run(["protoc", f"-I{PROTO.parent}", f"--python_out={out}", PROTO.name], check=True)
        sys.path.insert(0, out)
        try:
            return importlib.import_module("et_def_pb2")
        finally:
            sys.path.remove(out)


def parse_comm(kind, size, wg_column):
    """(op, group) as SimAI decodes a comm-type string (docs/workloads.md §1.4); op None when nothing is sent."""
    if size == 0:
        return None, None
    for prefix, op in (("ALLREDUCE", "ALL_REDUCE"), ("ALLTOALL", "ALL_TO_ALL"), ("ALLGATHER", "ALL_GATHER"),
                       ("REDUCESCATTER", "REDUCE_SCATTER")):
        if kind.startswith(prefix):
            rest = kind[len(prefix):]
            group = {"": "DP" if wg_column else "TP", "_EP": "EP", "_DP_EP": "DP_EP"}.get(rest)
            return op, group
    return None, None


def read_workload(path):
    try:
        tokens = Path(path).read_text().split("\n", 1)
    except OSError as e:
        sys.exit(f"{path}: cannot read the workload ({e.strerror})")
    header = tokens[0].split()
    policy = header[0]
    if policy == "MICRO":
        sys.exit(f"{path}:1: MICRO workloads are not supported by the converter")
    keys = {}
    if policy.startswith("HYBRID_TRANSFORMER"):
        for i in range(1, len(header) - 1):
            if header[i] in ("model_parallel_NPU_group:", "ep:", "pp:", "all_gpus:"):
                keys[header[i]] = int(float(header[i + 1]))
    rest = tokens[1].split()
    count = int(rest[0])
    fields = rest[1:]
    rows = []
    for r in range(min(count, len(fields) // 12)):
        f = fields[12 * r:12 * r + 12]
        rows.append({"name": f[0], "fwd": int(f[2]), "fwd_comm": (f[3], int(f[4])), "ig": int(f[5]),
                     "ig_comm": (f[6], int(f[7])), "wg": int(f[8]), "wg_comm": (f[9], int(f[10])), "update": int(f[11])})
    return keys.get("model_parallel_NPU_group:", 1), keys.get("ep:", 1), keys.get("all_gpus:", 0), keys.get("pp:", 1), rows


def group_members(kind, gpu, gpus, tp, ep):
    """SimAI's groups (docs/workloads.md §5.1): TP consecutive, DP stride TP, EP, DP_EP."""
    dp = gpus // tp
    t, k = gpu // tp, gpu % tp
    if kind == "TP":
        return [t * tp + i for i in range(tp)]
    if kind == "DP":
        return [k + j * tp for j in range(dp)]
    if kind == "EP":
        a = t // ep
        return [(a * ep + l) * tp + k for l in range(ep)]
    if kind == "DP_EP":
        b = t % ep
        return [(b + j * ep) * tp + k for j in range(dp // ep)]
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload")
    ap.add_argument("--gpus", type=int, required=True, help="GPUs of the topology it will run on")
    ap.add_argument("--gpus-per-server", type=int, required=True)
    ap.add_argument("-o", "--output", required=True, help="prefix of the .et files")
    a = ap.parse_args()
    pb = load_schema()
    tp, ep, all_gpus, pp, rows = read_workload(a.workload)
    gpus, gps = a.gpus, a.gpus_per_server
    tp = gpus if tp == 0 else tp  # SimAI: TP 0 = all GPUs
    # The checks wormhole makes of the same workload on the same GPUs (docs/workloads.md §5.1): groups that
    # do not tile the GPUs would name ranks without a trace.
    def fail(problem, fix):
        sys.exit(f"{a.workload}:1: {problem} (fix: {fix})")
    if gpus < 1 or gps < 1:
        sys.exit("--gpus and --gpus-per-server must be at least 1")
    if a.output.endswith(("/", "\\")) or Path(a.output).is_dir():
        sys.exit(f"-o {a.output}: give a prefix for the files (e.g. {a.output.rstrip('/')}/t), not a folder")
    if gpus % gps != 0:
        sys.exit(f"--gpus {gpus} is not a whole number of {gps}-GPU servers (fix: a multiple of --gpus-per-server)")
    if tp < 0 or ep < 0:
        fail(f"TP {tp} or EP {ep} is negative", "give model_parallel_NPU_group: of 0 (all GPUs) or more and ep: of 1 or more")
    if gpus % tp != 0:
        fail(f"GPU count {gpus} not divisible by TP {tp}", "use a TP (model_parallel_NPU_group) that divides --gpus")
    if gps % tp != 0 and tp % gps != 0:
        fail(f"TP {tp} not dividing GPUs per server {gps} (and not a multiple of it)", f"use a TP that divides {gps} or is a multiple of it")
    dp = gpus // tp
    if ep == 0:
        fail("EP is 0", f"set ep: to 1 (no expert parallelism) or to a divisor of DP {dp}")
    if dp % ep != 0:
        fail(f"EP {ep} not dividing DP {dp} (DP = GPUs {gpus} / TP {tp})", f"use an ep: that divides {dp}, or other --gpus")
    if pp > 1:
        print(f"{a.workload}:1: note: pp {pp} is taken as 1: the traces hold no pipeline stages or transfers, so they "
              "run as wormhole runs this workload with pipeline = \"none\"", file=sys.stderr)
    if all_gpus and all_gpus != gpus:
        print(f"{a.workload}:1: note: all_gpus {all_gpus} differs from --gpus {gpus}: using {gpus} (DP = {dp}), as "
              "wormhole and SimAI's ns-3 backend do", file=sys.stderr)
    groups = {}

    def pg(kind, members):
        name = f"{kind}{members[0]}"
        groups[name] = members
        return name

    Path(a.output).parent.mkdir(parents=True, exist_ok=True)
    for g in range(gpus):
        nodes = []

        def node(name, ntype, deps, **attrs):
            n = pb.Node(id=len(nodes), name=name, type=ntype)
            n.ctrl_deps.extend([d for d in deps if d is not None])
            for k, v in attrs.items():
                if isinstance(v, bool):
                    n.attr.append(pb.AttributeProto(name=k, bool_val=v))
                elif isinstance(v, str):
                    n.attr.append(pb.AttributeProto(name=k, string_val=v))
                else:
                    n.attr.append(pb.AttributeProto(name=k, int64_val=v))
            nodes.append(n)
            return n.id

        def compute(name, ns, dep, cpu=False):
            nid = node(name, pb.COMP_NODE, [dep], is_cpu_op=cpu, duration_nanos=ns)
            nodes[nid].duration_micros = (ns + 500) // 1000
            return nid

        def coll(name, comm, dep, wg_column, fwd=False):
            op, kind = parse_comm(comm[0], comm[1], wg_column)
            size = comm[1]
            if fwd and 0 < size < MIN_FWD:
                size = MIN_FWD
            members = group_members(kind, g, gpus, tp, ep) if op else []
            if len(members) <= 1:
                return dep
            return node(name, pb.COMM_COLL_NODE, [dep], comm_type=getattr(pb, op), comm_size=size, pg_name=pg(kind, members))

        prev = None
        for i, r in enumerate(rows):
            c = compute(f"{r['name']}.{i}.fwd", r["fwd"], prev)
            c = coll(f"{r['name']}.{i}.fwd_comm", r["fwd_comm"], c, False, fwd=True)
            prev = compute(f"{r['name']}.{i}.fwd_update", r["update"], c, cpu=True)
        for i in range(len(rows) - 1, -1, -1):
            r = rows[i]
            c = compute(f"{r['name']}.{i}.ig", r["ig"], prev)
            c = coll(f"{r['name']}.{i}.ig_comm", r["ig_comm"], c, False)
            u = compute(f"{r['name']}.{i}.ig_update", r["update"], c, cpu=True)
            w = compute(f"{r['name']}.{i}.wg", r["wg"], u)
            c = coll(f"{r['name']}.{i}.wg_comm", r["wg_comm"], w, True)
            if c != w:  # the wg collective's update delay, in the background
                compute(f"{r['name']}.{i}.wg_update", r["update"], c, cpu=True)
            prev = w
        with open(f"{a.output}.{g}.et", "wb") as f:
            for msg in [pb.GlobalMetadata(version="0.0.4")] + nodes:
                data = msg.SerializeToString()
                n = len(data)
                while True:  # the varint length prefix Chakra's protolib writes
                    b = n & 0x7F
                    n >>= 7
                    f.write(bytes([b | (0x80 if n else 0)]))
                    if not n:
                        break
                f.write(data)
    Path(f"{a.output}.comm_groups.json").write_text(json.dumps(groups, indent=1) + "\n")
    # wormhole reads PREFIX.0.et, PREFIX.1.et, ... as long as they exist: an earlier conversion's higher ranks
    # would join these.
    stale = []
    while Path(f"{a.output}.{gpus + len(stale)}.et").exists():
        stale.append(Path(f"{a.output}.{gpus + len(stale)}.et"))
    for f in stale:
        f.unlink()
    if stale:
        print(f"removed {len(stale)} traces of an earlier conversion to this prefix ({stale[0]} .. {stale[-1].name})")
    print(f"{gpus} traces {a.output}.0.et .. {a.output}.{gpus - 1}.et, {len(groups)} groups in "
          f"{a.output}.comm_groups.json")


if __name__ == "__main__":
    main()
