"""What every benchmark family shares: the run's parameters, who uses the CPU, the servers
(free ports, start, ready, stop), percentiles and the machine's facts."""

from __future__ import annotations

import contextlib
import datetime as dt
import http.client
import os
import platform
import resource
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchmarks import ROOT, SCRIPTS
from scripts.processes import children, descendants, running

HOST = "127.0.0.1"
DOC = ROOT / "docs" / "benchmarks.md"

# -- parameters ------------------------------------------------------------------------------

FULL: dict[str, Any] = {
    "connections": 16,  # wrk -t N -c N, and the paced driver's connections
    "warmup_seconds": 5,  # each server, before its measured run
    "http_seconds": 15,  # each measured wrk run
    "rounds": 3,  # measured wrk runs per server, alternating bare and game; the best counts
    "half_rounds": 2,  # paced runs at half load; the one with the lowest p99 counts
    "half_seconds": 15,  # each paced run at half the maximum rate
    "serial_seconds": 8,  # wrk with one connection, each server
    "profile_seconds": 8,  # py-spy on the server under the full mix, twice
    # Fresh campaigns for each run of the game mix: each plays at most max_turns turns (six
    # requests each), so 128 last a 15 s run up to about 14,000 requests/s (the profile's 20 s
    # run, 10,000); run_wrk refuses a run whose campaigns all retired before its end. (64
    # were too few for the stub server on a machine whose bare route ran 15,000 requests/s.)
    "campaigns_per_run": 128,
    "max_turns": 280,  # turns after which a campaign is retired (99 tokens x 3 seats)
    "inproc_campaigns": 16,
    "inproc_seconds": 10,  # Campaigns.execute turn cycle
    "inproc_max_commands": 60_000,
    "long_events": 100_000,  # events of the long campaign made by random play (issue 5)
    "long_seconds": 300,  # cap on making it
    "old_versions": 20,  # random old versions loaded cold
    "cold_repeats": 5,
    "profile_commands": 3_000,  # cProfile of the in-process command path
    "quiet_wait": 60,  # at most, for other processes to leave the cores alone
    "round_quiet_wait": 10,  # at most, before each later measured run
    "tables_steps": [250, 500, 1000, 1500, 2000],  # tables (4 streams each) per run, growing
    "tables_seconds": 30,  # of load at each step (6 commands per table)
    "ryw_samples": 40,  # commands, each followed by a query at its position
}
QUICK: dict[str, Any] = FULL | {
    "warmup_seconds": 2,
    "http_seconds": 5,
    "half_seconds": 5,
    "serial_seconds": 3,
    "profile_seconds": 3,
    "rounds": 1,
    "half_rounds": 1,
    "campaigns_per_run": 48,  # 5 s runs: up to about 16,000 requests/s
    "inproc_campaigns": 8,
    "inproc_seconds": 3,
    "long_events": 4_000,
    "long_seconds": 30,
    "old_versions": 5,
    "cold_repeats": 3,
    "profile_commands": 1_000,
    "quiet_wait": 10,
    "round_quiet_wait": 3,
    "tables_steps": [100, 250],
    "tables_seconds": 10,
    "ryw_samples": 10,
}


def say(text: str = "") -> None:
    print(text, flush=True)


# -- who uses the CPU ----------------------------------------------------------------------

CLK_TCK = os.sysconf("SC_CLK_TCK")


def _machine() -> tuple[int, int, int]:
    """(busy, total, stolen) jiffies of all cores, from /proc/stat. Stolen: the time the
    hypervisor gave this machine's cores to other machines (a virtual machine's neighbours);
    it counts as busy, with other processes."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    return sum(values) - values[3] - values[4], sum(values), values[7]


def process_seconds(pid: int, thread: int | None = None) -> float | None:
    """CPU seconds of process ``pid`` (or of its thread ``thread`` alone); None once it has
    ended."""
    where = f"/proc/{pid}/stat" if thread is None else f"/proc/{pid}/task/{thread}/stat"
    try:
        fields = Path(where).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def _process_seconds(pid: int, thread: int | None = None) -> float:
    """:func:`process_seconds`, 0 for a process that has ended."""
    return process_seconds(pid, thread) or 0.0


def _ours() -> float:
    """CPU seconds of this script and of its waited-for children (wrk, the paced driver)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


class CpuWatch:
    """Cores used during a run by the servers (with the processes they started: workers, the
    read models' process), by the load generator and this script, and by every other process
    on the machine (other people's work disturbs the figures). ``loop``: a server whose main
    thread (its event loop) is also measured alone (``loop_cores``), and its writer process
    if it has one (``writer_cores``, api/writer.py), and its read models' process if it has
    one (``read_models_cores``)."""

    def __init__(self, servers: list[int], loop: int | None = None) -> None:
        self.loop = loop
        self.loop0 = 0.0 if loop is None else _process_seconds(loop, loop)
        self.writer = _child(loop, "api.writer")
        self.writer0 = 0.0 if self.writer is None else _process_seconds(self.writer)
        self.read_models = _child(loop, "projections run")
        self.read_models0 = 0.0 if self.read_models is None else _process_seconds(
            self.read_models)
        self.servers = list(dict.fromkeys(
            p for pid in servers for p in (pid, *descendants(pid))))
        self.t0 = time.monotonic()
        self.machine0 = _machine()
        self.ours0 = _ours()
        self.servers0 = sum(_process_seconds(pid) for pid in self.servers)

    def stop(self) -> dict[str, float]:
        wall = time.monotonic() - self.t0
        busy1, _, stolen1 = _machine()
        busy = (busy1 - self.machine0[0]) / CLK_TCK
        stolen = (stolen1 - self.machine0[2]) / CLK_TCK
        servers = sum(_process_seconds(pid) for pid in self.servers) - self.servers0
        ours = _ours() - self.ours0
        cores = {"seconds": wall, "busy_cores": busy / wall, "server_cores": servers / wall,
                 "client_cores": ours / wall,
                 "other_cores": max(0.0, busy - servers - ours) / wall,
                 "stolen_cores": stolen / wall}
        if self.loop is not None:
            cores["loop_cores"] = (_process_seconds(self.loop, self.loop) - self.loop0) / wall
        if self.writer is not None:
            cores["writer_cores"] = (_process_seconds(self.writer) - self.writer0) / wall
        if self.read_models is not None:
            cores["read_models_cores"] = (_process_seconds(self.read_models)
                                          - self.read_models0) / wall
        return cores


def _child(pid: int | None, command: str) -> int | None:
    """The process ``pid`` started whose command line holds ``command``, if any."""
    if pid is None:
        return None
    return next(iter(running(children(pid), command)), None)


def wait_quiet(limit: float, threshold: float = 0.3) -> dict[str, float]:
    """Wait (at most ``limit`` seconds) until other processes use under ``threshold`` cores
    for a second; what was seen last."""
    began = time.monotonic()
    while True:
        watch = CpuWatch([])
        time.sleep(1.0)
        seen = watch.stop()
        waited = time.monotonic() - began
        if seen["other_cores"] < threshold or waited >= limit:
            return {"waited": waited, "other_cores": seen["other_cores"]}
        say(f"  the machine is busy ({seen['other_cores']:.1f} cores used by other "
            "processes): waiting")


# -- servers ------------------------------------------------------------------------------


def cpu_text(cpu: dict[str, float]) -> str:
    return (f"cores used: servers {cpu['server_cores']:.2f}, load generator "
            f"{cpu['client_cores']:.2f}, other processes {cpu['other_cores']:.2f}"
            f"{_stolen(cpu)}")


def _stolen(cpu: dict[str, float]) -> str:
    stolen = stolen_cores(cpu)
    return "" if stolen is None else f" (of which stolen by the host: {stolen:.2f})"


def stolen_cores(cpu: dict[str, float]) -> float | None:
    """The cores the host stole during a run (see :func:`_machine`), if any to speak of."""
    stolen = cpu.get("stolen_cores", 0.0)
    return stolen if stolen >= 0.005 else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


def start_server(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def wait_ready(proc: subprocess.Popen[bytes], port: int, log: Path, timeout: float = 30) -> None:
    """Until the server answers any HTTP request (404 included)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
        try:
            conn = http.client.HTTPConnection(HOST, port, timeout=2)
            conn.request("GET", "/ready-check")
            conn.getresponse().read()
            conn.close()
            return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"server on port {port} not ready after {timeout}s")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Stop a server this script started (its own process group), for sure."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@contextlib.contextmanager
def idle_load(cores: float | None, log: Path) -> Iterator[subprocess.Popen[bytes] | None]:
    """``scripts/idle_load.py`` burning ``cores`` of one core at idle priority while the block
    runs (the read models' CPU, kept beside a control); nothing for ``None`` or no CPU."""
    if not cores or cores <= 0:
        yield None
        return
    proc = start_server([sys.executable, str(SCRIPTS / "idle_load.py"), "--cores",
                         f"{min(cores, 1.0):.3f}"], dict(os.environ), log)
    try:
        yield proc
    finally:
        stop_server(proc)


def start_projections(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    """``capes projections run`` on the store of ``env``: the read models of several workers
    run in a process of their own (the README's advice; each worker running them too made
    them race each other for every batch)."""
    return start_server([sys.executable, "-m", "cli.main", "projections", "run"], env, log)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered else 0.0


# -- the machine ------------------------------------------------------------------------------


def machine_facts() -> dict[str, str]:
    from importlib.metadata import version

    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    wrk = shutil.which("wrk")
    wrk_version = ""
    if wrk:
        first = subprocess.run([wrk, "--version"], capture_output=True, text=True).stdout
        wrk_version = first.splitlines()[0].split(" [")[0] if first else ""
    packages = ", ".join(f"{name} {version(name)}" for name in
                         ("litestar", "uvicorn", "uvloop", "httptools", "msgspec",
                          "eventsourcing"))
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    return {"date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"), "nproc": nproc,
            "cpu": cpu or platform.processor(), "python": platform.python_version(),
            "os": f"{platform.system()} {platform.release()}", "packages": packages,
            "wrk": wrk_version or "not installed", "commit": git_commit()}


def git_commit() -> str:
    """HEAD's short hash, and how many files the working tree changes besides this
    benchmark's own (the figures are of the working tree)."""
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, cwd=ROOT).stdout.strip()
    status = subprocess.run(["git", "status", "--porcelain"], capture_output=True, text=True,
                            cwd=ROOT).stdout.splitlines()
    others = [line for line in status
              if not line[3:].startswith(("scripts/", "docs/benchmarks.md"))]
    if others:
        return (f"{head}, with {len(others)} files changed or added in the working tree "
                "beyond it")
    return head
