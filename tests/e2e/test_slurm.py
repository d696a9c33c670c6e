#!/usr/bin/python3
"""The Slurm batch scripts (scripts/slurm/) on a real single-node Slurm.

Installs slurmctld, slurmd, slurm-client and munge when they are missing and this runs as root (skips,
saying why, only when that is impossible), starts munge (unless one already answers) and a private
slurmctld + slurmd (slurm.conf in a temporary folder, free ports, 4 CPUs declared on a 2-core machine), then
submits on the bundled HPCC example (2 flows, Wormhole on, a fraction of a second per run):
  * run.sbatch three ways (direct, srun --mpi=pmix, mpirun) with 1 task;
  * multi-rank runs (packet mode, ring16 fat tree and micro-allreduce-16g): run.sbatch with --ntasks=2 by
    srun and by mpirun (and srun with a linear cut for the workload), each fct.txt (pfc.txt, workload CSVs)
    byte-identical to a 1-task job with WH_SETS="EVENT_ORDER=portable", the log with a compute / wait /
    communicate line per rank; --ntasks=2 with WH_LAUNCH=direct must fail, naming srun and mpirun;
  * sweep.sh over the default θ × l grid (2 × 2, plus the packet-mode baseline) and its merge job, then a
    second sweep (θ 0.05 and 0.2 at l = 2000) that warm-starts from the merged memo database where it
    describes the task's settings and runs cold, logging the refusal, where it does not;
  * scaling.sh with WH_RANKS="1 2": strong on the ring16 config (srun), weak on micro-allreduce (mpirun,
    16 GPUs per rank, a workload file per size through {gpus} in WH_SETS); scaling.csv with 2 rows (per-rank
    figures on the 2-rank one), scaling-ranks.csv, read by `wh_analyze.py plot-scaling`;
waits for the jobs, checks their states and outputs, and stops the daemons. Set WH_KEEP=1 to keep the
temporary folder. Environment as test_refruns.py (WORMHOLE, WH_SOURCE_DIR)."""
import csv
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

SOURCE_DIR = Path(os.environ.get("WH_SOURCE_DIR", Path(__file__).resolve().parents[2]))
WORMHOLE = Path(os.environ.get("WORMHOLE", SOURCE_DIR / "build" / "wormhole")).resolve()
SLURM = SOURCE_DIR / "scripts" / "slurm"
SCENARIO = SOURCE_DIR / "inputs" / "hpcc-bundled-example" / "config_hpcc.txt"
RING = SOURCE_DIR / "inputs" / "hpcc-ring16-fattree-k4-1MB" / "config_dcqcn.txt"  # 16 flows, packet mode
MICRO = SOURCE_DIR / "inputs" / "llm" / "micro-allreduce-16g.toml"  # a training workload, Wormhole off
WORKLOAD_CSVS = ("collectives.csv", "end_to_end.csv", "gpus.csv", "iterations.csv", "layers.csv")
RANK_LINE = re.compile(r"^rank (\d+): \d+ events; compute [0-9.]+ s, wait [0-9.]+ s, communicate [0-9.]+ s; \d+ windows",
                       re.M)
PACKAGES = ["slurmctld", "slurmd", "slurm-client", "munge"]
BINARIES = ["/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/bin/sbatch", "/usr/sbin/munged", "/usr/bin/munge"]
JOB_TIMEOUT_S = 90


def missing_binaries():
    return [b for b in BINARIES if not os.access(b, os.X_OK)]


def install_slurm():
    """None when Slurm and munge are there (installing them if needed), else why not."""
    if not missing_binaries():
        return None
    if os.geteuid() != 0:
        return f"Slurm/munge not installed ({', '.join(missing_binaries())} missing) and not root to install them"
    if not shutil.which("apt-get"):
        return "Slurm/munge not installed and no apt-get to install them"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cmd = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *PACKAGES]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0:  # stale or missing package lists: update once and retry
        subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True, timeout=300)
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or missing_binaries():
        return f"could not install {' '.join(PACKAGES)}: {(r.stderr or r.stdout).strip()[-500:]}"
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def munge_works():
    try:
        m = subprocess.run(["munge", "-n"], capture_output=True, timeout=10)
        if m.returncode != 0:
            return False
        u = subprocess.run(["unmunge"], input=m.stdout, capture_output=True, timeout=10)
        return u.returncode == 0 and b"Success" in u.stdout
    except (OSError, subprocess.TimeoutExpired):
        return False


SLURM_CONF = """ClusterName=whtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=pmix
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,bf_interval=1
ReturnToService=2
SlurmdParameters=config_overrides
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
KillWait=5
MinJobAge=300
NodeName={host} NodeAddr=127.0.0.1 CPUs=4 Boards=1 SocketsPerBoard=1 CoresPerSocket=4 ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=60 State=UP
"""


class ScriptInputs(unittest.TestCase):
    """run.sbatch without Slurm (it runs as a plain script too): missing inputs fail loudly (exit 2, named),
    and a job folder that exists is never overwritten."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="wh_e2e_slurm_inputs_"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_sbatch(self, **env):
        e = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        e.update(WH_BIN=str(WORMHOLE), WH_OUT=str(self.tmp / "runs"), **env)
        return subprocess.run(["bash", str(SOURCE_DIR / "scripts" / "slurm" / "run.sbatch")], env=e,
                              capture_output=True, text=True, timeout=120)

    def test_bad_grids_are_refused_before_anything_is_submitted(self):
        # sweep.sh plans the grid (sweep_tool.py plan) before any sbatch; a malformed WH_GRID stops there.
        tool = SOURCE_DIR / "scripts" / "slurm" / "sweep_tool.py"
        cases = [("WORMHOLE_THETA", "is not KEY=V1,V2"), ("=0.1,0.2", "is not KEY=V1,V2"),
                 ("WORMHOLE_THETA=", "is not KEY=V1,V2"), ("CC_MODE=1 CC_MODE=3", "CC_MODE given twice"),
                 ("  ", "empty grid")]
        for grid, message in cases:
            with self.subTest(grid=grid):
                out = self.tmp / f"tasks-{abs(hash(grid))}.tsv"
                p = subprocess.run(["/usr/bin/python3", str(tool), "plan", grid, "-o", str(out)], capture_output=True,
                                   text=True, timeout=60)
                self.assertNotEqual(p.returncode, 0, p.stdout)
                self.assertIn(message, p.stderr)
                self.assertFalse(out.exists())
        p = subprocess.run(["/usr/bin/python3", str(tool), "plan", "CC_MODE=1,3 BUFFER_SIZE=4,32", "--no-baseline",
                            "-o", str(self.tmp / "ok.tsv")], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)  # 2 x 2 points, one task each
        self.assertEqual(len((self.tmp / "ok.tsv").read_text().splitlines()), 4)

    def test_sets_with_spaces_in_a_value(self):
        # A key whose value holds spaces (LINK_DOWN, the K maps) goes through WH_SETS separated by ';' (it
        # was split on every space: `--set "0" is not KEY=VALUE`); the WORMHOLE=1 among them still turns
        # the task's CPUs into Wormhole's threads.
        scenario = str(SOURCE_DIR / "inputs" / "hpcc-bundled-example" / "config_hpcc.txt")
        p = self.run_sbatch(WH_SCENARIO=scenario, SLURM_JOB_ID="43", SLURM_CPUS_PER_TASK="2",
                            WH_SETS="LINK_DOWN=0 0 0;  WORMHOLE=1 ;")
        self.assertEqual(p.returncode, 0, p.stderr)
        out = self.tmp / "runs" / "wormhole-43"
        command = (out / "command").read_text()
        self.assertTrue(command.endswith(" --set WORMHOLE_THREADS=2 --set LINK_DOWN=0\\ 0\\ 0 --set WORMHOLE=1\n"), command)
        self.assertRegex((out / "log").read_text(), r"wormhole: \d+ skips")
        # Without a ';' entries are split on spaces, as before; the last WORMHOLE given decides.
        p = self.run_sbatch(WH_SCENARIO=scenario, SLURM_JOB_ID="44", SLURM_CPUS_PER_TASK="2",
                            WH_SETS="WORMHOLE=1 WORMHOLE=0")
        self.assertEqual(p.returncode, 0, p.stderr)
        command = (self.tmp / "runs" / "wormhole-44" / "command").read_text()
        self.assertNotIn("WORMHOLE_THREADS", command)
        self.assertIn("--set WORMHOLE=1 --set WORMHOLE=0", command)

    def test_missing_inputs_and_existing_folders(self):
        scenario = str(SOURCE_DIR / "inputs" / "hpcc-bundled-example" / "config_hpcc.txt")
        p = self.run_sbatch()
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("set WH_SCENARIO", p.stderr)
        p = self.run_sbatch(WH_SCENARIO=str(self.tmp / "nope.txt"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("nope.txt not found", p.stderr)
        p = self.run_sbatch(WH_SCENARIO=scenario, WH_MEMO=str(self.tmp / "nope.h5"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("nope.h5 (WH_MEMO) not found", p.stderr)
        p = self.run_sbatch(WH_SCENARIO=scenario, SLURM_NTASKS="2", SLURM_JOB_ID="7")  # WH_LAUNCH direct
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("the job has 2 tasks, but WH_LAUNCH=direct starts one process", p.stderr)
        p = self.run_sbatch(WH_SCENARIO=scenario, WH_RANK_MAP=str(self.tmp / "nope.map"))
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("nope.map (WH_RANK_MAP) not found", p.stderr)
        self.assertFalse((self.tmp / "runs").exists())  # nothing made before the inputs were checked
        p = self.run_sbatch(WH_SCENARIO=scenario, SLURM_JOB_ID="42", WH_SETS="WORMHOLE=1")
        self.assertEqual(p.returncode, 0, p.stderr)
        fct = self.tmp / "runs" / "wormhole-42" / "fct.txt"
        before = fct.read_bytes()
        self.assertGreater(len(before), 0)
        p = self.run_sbatch(WH_SCENARIO=scenario, SLURM_JOB_ID="42")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("exists; refusing to overwrite", p.stderr)
        self.assertEqual(fct.read_bytes(), before)


class SlurmScripts(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.procs, cls.munged_pid, cls.tmp = [], None, None
        why = install_slurm()
        if why:
            raise unittest.SkipTest(why)
        if os.geteuid() != 0:
            raise unittest.SkipTest("starting slurmd (SlurmdUser=root) needs root")
        if not WORMHOLE.is_file():
            raise unittest.SkipTest(f"wormhole binary {WORMHOLE} not built")
        cls.tmp = Path(tempfile.mkdtemp(prefix="wh-slurm-"))
        try:
            cls._start()
        except Exception:
            cls.tearDownClass()
            raise

    @classmethod
    def _start(cls):
        d = cls.tmp
        if not munge_works():
            if not Path("/etc/munge/munge.key").exists():
                subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/mungekey", "-c"], check=True)
            Path("/run/munge").mkdir(parents=True, exist_ok=True)
            shutil.chown("/run/munge", "munge", "munge")
            subprocess.run(["runuser", "-u", "munge", "--", "/usr/sbin/munged"], check=True, timeout=10)
            pidfile = Path("/run/munge/munged.pid")
            for _ in range(50):
                if pidfile.exists() and pidfile.read_text().strip():
                    break
                time.sleep(0.1)
            cls.munged_pid = int(pidfile.read_text().strip())
            if not munge_works():
                raise RuntimeError("munged started but munge -n | unmunge fails")
        host = socket.gethostname().split(".")[0]
        for sub in ("state", "spool"):
            (d / sub).mkdir()
        conf = d / "slurm.conf"
        conf.write_text(SLURM_CONF.format(host=host, d=d, ctld_port=free_port(), d_port=free_port()))
        # The node declares 4 CPUs on 2 cores, so jobs share cores: MPI ranks that busy-poll while waiting
        # then stall each other (a 2-rank micro-allreduce run: 10.8 s instead of 0.46 s beside one busy
        # process); the jobs inherit this environment.
        cls.env = dict(os.environ, SLURM_CONF=str(conf), OMPI_MCA_mpi_yield_when_idle="1")
        for k in list(cls.env):  # a test started inside a Slurm job must not pass its job to ours
            if k.startswith("SLURM_") and k != "SLURM_CONF":
                del cls.env[k]
        for daemon in ("slurmctld", "slurmd"):
            args = [f"/usr/sbin/{daemon}", "-D", "-f", str(conf)] + (["-c"] if daemon == "slurmctld" else [])
            with open(d / f"{daemon}.stdout", "w") as log:
                cls.procs.append(subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=cls.env))
            time.sleep(0.3)
        deadline = time.time() + 30
        state = ""
        while time.time() < deadline:
            r = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=cls.env)
            state = r.stdout.strip()
            if state == "idle":
                return
            for p in cls.procs:
                if p.poll() is not None:
                    name = Path(p.args[0]).name
                    logs = "".join((d / f"{name}{ext}").read_text()[-2000:] for ext in (".log", ".stdout")
                                   if (d / f"{name}{ext}").exists())
                    raise RuntimeError(f"{name} exited with {p.returncode}:\n{logs}")
            time.sleep(0.3)
        raise RuntimeError(f"the Slurm node did not come up idle (sinfo: {state!r})")

    @classmethod
    def tearDownClass(cls):
        if cls.procs:
            subprocess.run(["scontrol", "shutdown"], capture_output=True, env=cls.env, timeout=20)
            for p in cls.procs:
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.terminate()
                    try:
                        p.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        p.kill()
                        p.wait()
        if cls.munged_pid:
            try:
                os.kill(cls.munged_pid, 15)
            except ProcessLookupError:
                pass
        if cls.tmp and os.environ.get("WH_KEEP") != "1":
            shutil.rmtree(cls.tmp, ignore_errors=True)
        elif cls.tmp:
            print(f"kept {cls.tmp}")

    # --- helpers ---
    def sh(self, args, env=None, check=True):
        r = subprocess.run(args, capture_output=True, text=True, env=dict(self.env, **(env or {})),
                           cwd=self.tmp, timeout=120)
        if check and r.returncode != 0:
            self.fail(f"{' '.join(map(str, args))} exited with {r.returncode}:\n{r.stdout}\n{r.stderr}")
        return r

    def sbatch(self, args, env):
        r = self.sh(["sbatch", "--parsable", *args], env)
        return r.stdout.strip().split(";")[0]

    def wait_idle(self):
        """Waits until no job is pending or running (all of them are this test's)."""
        deadline = time.time() + JOB_TIMEOUT_S
        while time.time() < deadline:
            r = self.sh(["squeue", "-h", "-o", "%i %T"])
            if not r.stdout.strip():
                return
            time.sleep(0.5)
        self.fail(f"jobs still queued after {JOB_TIMEOUT_S} s:\n{r.stdout}\n"
                  + (self.tmp / "slurmctld.log").read_text()[-3000:])

    def job(self, job_id):
        """{JobState, ExitCode, ...} of a job (array job ids give their first task's)."""
        r = self.sh(["scontrol", "-o", "show", "job", job_id])
        return dict(kv.split("=", 1) for kv in r.stdout.split() if "=" in kv)

    def assertCompleted(self, job_id, what):
        j = self.job(job_id)
        self.assertEqual((j.get("JobState"), j.get("ExitCode")), ("COMPLETED", "0:0"), f"{what} (job {job_id}): {j}")

    def memo_patterns(self, path):
        out = self.sh([str(WORMHOLE), "memo", "stats", str(path)]).stdout
        m = re.search(r": (\d+) patterns", out)
        self.assertIsNotNone(m, out)
        return int(m.group(1)), len(re.findall(r"^namespace ", out, re.M))

    # --- the test: one Slurm session, everything submitted together, then checked ---
    def test_scripts_on_slurm(self):
        t0 = time.time()
        base = {"WH_SCENARIO": str(SCENARIO), "WH_BIN": str(WORMHOLE)}
        runs = self.tmp / "runs"
        runs.mkdir()
        run_jobs = {}
        for launch in ("direct", "srun", "mpirun"):
            run_jobs[launch] = self.sbatch(
                [f"--job-name=run-{launch}", f"--output={runs}/%x-%j.out", str(SLURM / "run.sbatch")],
                dict(base, WH_OUT=str(runs), WH_SETS="WORMHOLE=1", WH_LAUNCH=launch))
        # multi-rank: the same packet-mode runs as 1 task (EVENT_ORDER portable) and as 2 ranks
        mr_jobs = {}
        for name, scenario, ntasks, extra in (
                ("ring-1task", RING, 1, {"WH_SETS": "EVENT_ORDER=portable"}),
                ("ring-srun", RING, 2, {"WH_LAUNCH": "srun"}),
                ("ring-mpirun", RING, 2, {"WH_LAUNCH": "mpirun"}),
                ("micro-1task", MICRO, 1, {"WH_SETS": "EVENT_ORDER=portable"}),
                ("micro-srun", MICRO, 2, {"WH_LAUNCH": "srun", "WH_LINEAR": "1"})):
            mr_jobs[name] = self.sbatch([f"--job-name={name}", f"--ntasks={ntasks}", f"--output={runs}/%x-%j.out",
                                         str(SLURM / "run.sbatch")],
                                        dict(base, WH_SCENARIO=str(scenario), WH_OUT=str(runs), **extra))
        two_direct = self.sbatch(["--job-name=run-2direct", "--ntasks=2", f"--output={runs}/%x-%j.out",
                                  str(SLURM / "run.sbatch")], dict(base, WH_OUT=str(runs), WH_LAUNCH="direct"))
        memo_db = self.tmp / "memo-shared.h5"
        sweep_env = dict(base, WH_OUT=str(self.tmp / "sweeps"), WH_MEMO_DB=str(memo_db))
        r = self.sh(["bash", str(SLURM / "sweep.sh")], sweep_env)
        sweep = Path(r.stdout.strip().splitlines()[-1])
        self.assertIn("5 tasks (4 Wormhole, 1 baseline)", r.stdout)
        jobs = dict(line.split() for line in (sweep / "jobs.txt").read_text().splitlines())
        r = self.sh(["bash", str(SLURM / "scaling.sh")],
                    dict(base, WH_OUT=str(self.tmp / "scaling"), WH_RANKS="1 2", WH_SCENARIO=str(RING)))
        study = Path(r.stdout.strip().splitlines()[-1])
        # weak scaling: the workload file must match the GPU count, one per size ({gpus} in WH_SETS)
        wl = (MICRO.parent / "microAllReduce_16g.txt").read_text()
        for g in (16, 32):
            (self.tmp / f"micro_{g}g.txt").write_text(wl.replace("all_gpus: 16", f"all_gpus: {g}"))
        r = self.sh(["bash", str(SLURM / "scaling.sh")],
                    dict(base, WH_OUT=str(self.tmp / "scaling"), WH_MODE="weak", WH_RANKS="1 2", WH_GPUS_PER_RANK="16",
                         WH_SCENARIO=str(MICRO), WH_LAUNCH="mpirun",
                         WH_SETS=f"workload.file={self.tmp}/micro_{{gpus}}g.txt"))
        weak = Path(r.stdout.strip().splitlines()[-1])
        self.assertNotEqual(weak, study)
        self.wait_idle()

        # run.sbatch: three launchers, outputs in per-job folders
        for launch, jid in run_jobs.items():
            self.assertCompleted(jid, f"run.sbatch WH_LAUNCH={launch}")
            out = runs / f"run-{launch}-{jid}"
            self.assertGreater((out / "fct.txt").stat().st_size, 0, out)
            self.assertTrue((out / "results.h5").is_file(), out)
            self.assertIn("flows finished 2/2", (out / "log").read_text())
        # a 2-task job started directly stops before making its folder, saying how to start ranks
        j = self.job(two_direct)
        self.assertEqual(j["JobState"], "FAILED", j)
        msg = (runs / f"run-2direct-{two_direct}.out").read_text()
        self.assertIn("the job has 2 tasks, but WH_LAUNCH=direct starts one process", msg)
        self.assertIn("WH_LAUNCH=srun", msg)
        self.assertIn("WH_LAUNCH=mpirun", msg)
        self.assertFalse((runs / f"run-2direct-{two_direct}").exists())

        # multi-rank runs: the outputs of the 1-task portable run, byte for byte
        out = {}
        for name, jid in mr_jobs.items():
            self.assertCompleted(jid, f"run.sbatch {name}")
            out[name] = runs / f"{name}-{jid}"
            log = (out[name] / "log").read_text()
            if name.endswith("1task"):
                self.assertNotIn("distributed run", log)
                continue
            self.assertIn("distributed run over 2 ranks", log)
            self.assertEqual(sorted(int(m) for m in RANK_LINE.findall(log)), [0, 1], log)
            self.assertTrue((out[name] / "results.h5").is_file())
        for one, files, others in (("ring-1task", ("fct.txt", "pfc.txt"), ("ring-srun", "ring-mpirun")),
                                   ("micro-1task", ("fct.txt", "pfc.txt", *WORKLOAD_CSVS), ("micro-srun",))):
            self.assertGreater((out[one] / "fct.txt").stat().st_size, 0)
            for other in others:
                for f in files:
                    self.assertEqual((out[other] / f).read_bytes(), (out[one] / f).read_bytes(),
                                     f"{f} of {other} differs from the 1-task run")
        self.assertIn("srun --mpi=pmix --kill-on-bad-exit=1 --ntasks=2", (out["ring-srun"] / "command").read_text())
        self.assertIn("mpirun -np 2 --bind-to none", (out["ring-mpirun"] / "command").read_text())
        self.assertIn("--linear", (out["micro-srun"] / "command").read_text())
        self.assertIn("(linear;", (out["micro-srun"] / "log").read_text())

        # the sweep: 5 array tasks and the merge job completed
        for k in range(5):
            self.assertCompleted(f"{jobs['array']}_{k}", f"sweep task {k}")
        self.assertCompleted(jobs["merge"], "sweep merge job")
        for k in range(5):
            self.assertGreater((sweep / f"task-{k}" / "fct.txt").stat().st_size, 0)
        patterns, namespaces = self.memo_patterns(memo_db)
        self.assertGreaterEqual(patterns, 1)
        self.assertEqual(namespaces, 4)  # one per (θ, l)
        with open(sweep / "summary.csv") as f:
            rows = list(csv.DictReader(f))
        self.assertEqual(len(rows), 4, rows)
        self.assertEqual({(float(r["theta"]), int(r["window"])) for r in rows},
                         {(0.05, 200), (0.05, 2000), (0.1, 200), (0.1, 2000)})
        for r in rows:
            self.assertEqual(r["status"], "ok", r)
            self.assertEqual(r["memo_warm"], "0", r)  # no shared file yet
            self.assertGreater(float(r["wall_s"]), 0, r)
            self.assertTrue(30000 < float(r["fct_mean_us"]) < 45000, r)  # ≈ 36.5 ms in packet mode
            self.assertTrue(0 <= float(r["skipped_pct"]) <= 100, r)
            self.assertGreaterEqual(int(r["replays"]), 0, r)
            self.assertGreater(float(r["speedup"]), 0, r)
            self.assertTrue(0 <= float(r["error"]) < 0.05, r)  # Wormhole within 5 % of packet mode here
        self.assertTrue(any(float(r["skipped_pct"]) > 50 for r in rows), rows)  # it did skip
        self.assertTrue((sweep / "sweep.png").is_file())
        plot = self.sh(["/usr/bin/python3", str(SOURCE_DIR / "scripts" / "wh_analyze.py"), "plot-sweep",
                        str(sweep / "summary.csv"), "-o", str(self.tmp / "again.png")])
        self.assertIn("4 points", plot.stdout)
        # speedup = baseline wall / task wall (the CSV keeps 6 significant digits)
        for r in rows:
            want = float(r["baseline_wall_s"]) / float(r["wall_s"])
            self.assertLess(abs(float(r["speedup"]) / want - 1), 2e-5, r)
        # One unreadable task file costs its own row only: the summary is still written.
        broken = self.tmp / "sweep-broken"
        shutil.copytree(sweep, broken)
        (broken / "summary.csv").unlink()
        res = broken / "task-1" / "results.h5"
        res.write_bytes(res.read_bytes()[:100])
        p = subprocess.run(["/usr/bin/python3", str(SOURCE_DIR / "scripts" / "slurm" / "sweep_tool.py"), "collect",
                            str(broken), "-o", str(broken / "summary.csv")], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertNotIn("Traceback", p.stderr)
        with open(broken / "summary.csv") as f:
            status = {r["task"]: r["status"] for r in csv.DictReader(f)}
        self.assertEqual(len(status), 4)
        self.assertIn("results unreadable", status["1"])
        self.assertEqual(sum(v == "ok" for v in status.values()), 3)

        # scaling.sh with 1 and 2 ranks: one row each, the 2-rank one with its ranks' figures; same results
        runs_of = {}
        for st, launch, label in ((study, "srun", "config_dcqcn.txt"), (weak, "mpirun", "micro-allreduce-16g.toml")):
            with open(st / "scaling.csv") as f:
                srows = list(csv.DictReader(f))
            runs_of[st] = [st / r["run"] for r in srows]
            self.assertEqual([(r["ranks"], r["label"]) for r in srows], [("1", label), ("2", label)], srows)
            for r in srows:
                self.assertCompleted(r["run"].rsplit("-", 1)[1], f"scaling run {st.name}/{r['run']}")
                self.assertGreater(float(r["wall_s"]), 0, r)
                cmd = (st / r["run"] / "command").read_text()
                self.assertIn(f"{launch} ", cmd)
                self.assertIn("--set WORMHOLE=0", cmd)
                self.assertEqual("EVENT_ORDER=portable" in cmd, r["ranks"] == "1", cmd)  # 2 ranks: set by wormhole
            self.assertEqual(srows[0]["windows"], "", srows[0])  # 1 rank: no per-rank lines
            self.assertGreater(int(srows[1]["windows"]), 0, srows[1])
            for k in ("compute_mean_s", "compute_max_s", "wait_mean_s", "communicate_mean_s"):
                self.assertGreaterEqual(float(srows[1][k]), 0, srows[1])
            with open(st / "scaling-ranks.csv") as f:
                per_rank = list(csv.DictReader(f))
            self.assertEqual([(r["ranks"], r["rank"]) for r in per_rank], [("2", "0"), ("2", "1")], per_rank)
            self.assertTrue((st / "scaling.png").is_file())
            weak_flag = ["--weak"] if st == weak else []
            plot = self.sh(["/usr/bin/python3", str(SOURCE_DIR / "scripts" / "wh_analyze.py"), "plot-scaling",
                            str(st / "scaling.csv"), "-o", str(st / "again.png"), *weak_flag])
            self.assertIn(f"{label} ranks 2: wall", plot.stdout)
            self.assertTrue((st / "again.png").is_file())
        r1, r2 = runs_of[study]
        self.assertEqual((r1 / "fct.txt").read_bytes(), (r2 / "fct.txt").read_bytes())  # strong: the same run
        cmd = (runs_of[weak][1] / "command").read_text()
        self.assertIn("topology.gpus=32", cmd)
        self.assertIn(f"workload.file={self.tmp}/micro_32g.txt", cmd)

        # second sweep sharing the database: θ 0.05 is in it (warm), θ 0.2 is not (refused, run cold)
        r = self.sh(["bash", str(SLURM / "sweep.sh")], dict(sweep_env, WH_BASELINE="0",
                                                             WH_GRID="WORMHOLE_THETA=0.05,0.2 WORMHOLE_WINDOW=2000"))
        sweep2 = Path(r.stdout.strip().splitlines()[-1])
        self.assertNotEqual(sweep2, sweep)
        jobs2 = dict(line.split() for line in (sweep2 / "jobs.txt").read_text().splitlines())
        self.wait_idle()
        for k in range(2):
            self.assertCompleted(f"{jobs2['array']}_{k}", f"second sweep task {k}")
        self.assertCompleted(jobs2["merge"], "second sweep merge job")
        self.assertTrue((sweep2 / "task-0" / "memo_warm").exists())
        self.assertIn("warm-started", (sweep2 / "task-0" / "settings.txt").read_text())
        self.assertFalse((sweep2 / "task-1" / "memo_warm").exists())
        self.assertIn("not for this run's settings", (sweep2 / "task-1" / "log.memo-refused").read_text())
        self.assertIn("running cold", (sweep2 / "task-1" / "settings.txt").read_text())
        with open(sweep2 / "summary.csv") as f:
            rows2 = list(csv.DictReader(f))
        self.assertEqual([(r["status"], r["memo_warm"]) for r in rows2], [("ok", "1"), ("ok", "0")], rows2)
        self.assertEqual(rows2[0]["speedup"], "")  # no baseline asked for
        patterns2, namespaces2 = self.memo_patterns(memo_db)
        self.assertEqual(namespaces2, 5)
        self.assertGreaterEqual(patterns2, patterns)
        print(f"test_slurm: {time.time() - t0:.1f} s of jobs; sweep {sweep.name}: {patterns2} patterns in "
              f"{namespaces2} namespaces")


if __name__ == "__main__":
    result = unittest.main(verbosity=2, exit=False).result
    ok = result.wasSuccessful()
    # 77 = skipped for ctest (SKIP_RETURN_CODE): a skip must not read as a pass in CI
    sys.exit(77 if ok and result.skipped and not result.testsRun - len(result.skipped) else (0 if ok else 1))
