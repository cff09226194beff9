"""HTTP. The real server (``capes serve``: uvicorn, one worker, a fresh SQLite file,
``CAPES_RATE_LIMIT=0``) and a bare Litestar app with one msgspec POST route
(``scripts/bare_app.py``, uvicorn, one worker) run side by side on free ports of 127.0.0.1.
``wrk`` drives both with the same closed-loop load (same threads, connections, duration): the
bare route gets one POST body (``scripts/bench_bare.lua``); the game server gets a legal mix
of game commands and reads on campaigns prepared over HTTP (``scripts/bench_game.lua``). Then
``scripts/paced_load.py`` sends the same mix open-loop at half the measured maximum rate, for
the p99 at half load. The same mix then runs on the real server with its commands answered
but not run (``scripts/stub_app.py``): what the HTTP layer of the game's routes costs by
itself. If ``py-spy`` is installed, the server is profiled under the same mix at full load.

Each round of wrk also runs the bare app served as the game is (each answer in one write,
``api/one_write.py``), and the controls (``scripts/lean_app.py``): the game's routes with no
game, without and with a store (``CAPES_LEAN_STORE``).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec
from disk_control import DiskProbe

from benchmarks import ROOT, SCRIPTS
from benchmarks.common import (
    HOST,
    CpuWatch,
    cpu_text,
    free_port,
    idle_load,
    say,
    start_server,
    stop_server,
    wait_quiet,
    wait_ready,
)
from benchmarks.mix import mix_setup
from benchmarks.syncs import build as build_sync_timer
from benchmarks.syncs import environment as sync_environment
from benchmarks.syncs import stops_in_syncs, stops_text
from benchmarks.syncs import summary as sync_summary
from benchmarks.syncs import text as sync_text
from benchmarks.syncs import timing as sync_timing
from scripts.processes import children, running

#: How ``capes serve`` serves the game (``api/one_write.py``: each answer in one write). The
#: controls of the game's routes are served the same way; the bare route both ways.
ONE_WRITE = ("--http", "api.one_write:OneWriteProtocol")


#: Cores other processes may use when a run of a round begins (see :func:`wait_quiet`).
QUIET_BEFORE_RUN = 0.1


def uvicorn_argv(app: str, port: int, *, workers: int = 1, one_write: bool = True) -> list[str]:
    """``python -m uvicorn`` serving ``app`` of ``scripts/`` on ``port``."""
    return [sys.executable, "-m", "uvicorn", "--app-dir", str(SCRIPTS), app, "--host", HOST,
            "--port", str(port), "--workers", str(workers), "--log-level", "warning",
            *(ONE_WRITE if one_write else ())]


# -- campaigns for the game mix ---------------------------------------------------------------


class Client:
    """A keep-alive HTTP/1.1 client for preparing campaigns (not for load)."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection(HOST, port, timeout=30)

    def call(self, method: str, path: str, body: Any = None, token: str | None = None) -> Any:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        data = msgspec.json.encode(body) if body is not None else None
        self.conn.request(method, path, body=data, headers=headers)
        response = self.conn.getresponse()
        payload = response.read()
        if response.status not in (200, 201):
            raise RuntimeError(f"{method} {path} -> {response.status}: {payload[:300]!r}")
        return msgspec.json.decode(payload) if payload else None

    def close(self) -> None:
        self.conn.close()


def prepare_campaign(client: Client, number: int) -> str:
    """One campaign at the mix's starting point, over HTTP; its line for the Lua script."""
    opened = client.call("POST", "/campaigns",
                         {"name": f"Bench {number}", "starting_tokens": 99})
    cid = opened["campaign_id"]
    tokens = [client.call("POST", f"/campaigns/{cid}/seats", {"name": name})["token"]
              for name in ("Ana", "Ben", "Cleo")]
    for seat, command in mix_setup():
        client.call("POST", f"/campaigns/{cid}/commands", {"command": command},
                    token=tokens[seat - 1])
    return " ".join([cid, *tokens])


def prepare_campaigns(port: int, count: int, workers: int = 4) -> list[str]:
    local = threading.local()
    clients: list[Client] = []
    lock = threading.Lock()

    def one(number: int) -> str:
        if not hasattr(local, "client"):
            local.client = Client(port)
            with lock:
                clients.append(local.client)
        line: str = prepare_campaign(local.client, number)
        return line

    try:
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(one, range(count)))
    finally:
        for client in clients:
            client.close()


# -- load -------------------------------------------------------------------------------------


def run_wrk(port: int, script: str, seconds: float, connections: int,
            args: list[str] | None = None) -> dict[str, Any]:
    argv = ["wrk", "-t", str(connections), "-c", str(connections), "-d", f"{seconds:g}s",
            "--timeout", "5s", "-s", str(SCRIPTS / script), f"http://{HOST}:{port}"]
    if args:
        argv += ["--", *args]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60)
    line = next((x for x in out.stdout.splitlines() if x.startswith("BENCH_JSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk failed ({out.returncode}), no figures:\n{out.stdout}\n"
                           f"{out.stderr}")
    result: dict[str, Any] = json.loads(line.removeprefix("BENCH_JSON "))
    seconds_run = result["duration_us"] / 1e6
    result["rps"] = result["requests"] / seconds_run
    result["ok_rps"] = result["ok"] / seconds_run
    result["commands_per_s"] = result["commands"] / seconds_run
    result["argv"] = " ".join(argv[:-1] if not args else argv[: argv.index("--")])
    campaigns = Path(args[0]) if args and script == "bench_game.lua" else None
    if campaigns is not None and result.get("retired", 0) >= len(
            campaigns.read_text().splitlines()):
        # Every campaign of the run played out its turns: from then on the script only reads,
        # and commands/s would count a run that ended early.
        raise RuntimeError(f"every campaign of {campaigns} retired before the {seconds:g} s "
                           "run ended: raise campaigns_per_run (scripts/benchmarks/common.py)")
    return result


def run_paced(mode: str, port: int, rate: float, seconds: float, connections: int,
              campaigns: Path | None = None, max_turns: int = 280,
              disk_folder: Path | None = None) -> dict[str, Any]:
    argv = [sys.executable, str(SCRIPTS / "paced_load.py"), "--mode", mode, "--port", str(port),
            "--rate", f"{rate:.1f}", "--duration", f"{seconds:g}", "--connections",
            str(connections), "--max-turns", str(max_turns)]
    if campaigns is not None:
        argv += ["--campaigns", str(campaigns)]
    if disk_folder is not None:
        argv += ["--disk-folder", str(disk_folder)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 90)
    if out.returncode != 0:
        raise RuntimeError(f"the paced driver failed ({out.returncode}), no figures:\n"
                           f"{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def write_campaigns(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


#: The issues' target for the p99 at half load (issue "Performance", issue 15).
TARGET_P99_MS = 10.0
#: Half-load rounds run beyond ``half_rounds`` at most, each for a round that missed the target
#: while the disk's control saw the disk stall (an fsync over 50 ms beside the store: every
#: command waits for its commit on that disk). Every round is reported.
HALF_EXTRA = 2


def stalled(run: dict[str, Any]) -> bool:
    """Whether a half-load run missed the target while the disk stalled under it."""
    missed = max(run["command_latency_ms"]["p99"], run["read_latency_ms"]["p99"]) \
        >= TARGET_P99_MS
    return missed and int(run.get("disk_fsyncs_over_50_ms", 0)) > 0


# -- the server's profile -------------------------------------------------------------------

#: Where a sample of the server's stacks is counted: the first bucket whose pattern is found
#: in the stack (so the order goes from the specific to the general).
BUCKETS: tuple[tuple[str, str], ...] = (
    ("SQLite: insert + commit of the new events", r"insert_events"),
    ("snapshots: take + store", r"take_snapshot"),
    ("SQLite: reads (the cache's fast-forward, history)", r"select_events|select_notif"),
    ("folding events (project_campaign, evolve)", r"project_campaign"),
    ("board view", r"domain/capes/views\.py"),
    ("rules engine (decide)", r"\(domain/"),
    ("msgspec mapper (encode/decode stored events)", r"application/mapper\.py"),
    ("authentication (Keyring)", r"application/credentials\.py"),
    ("eventsourcing library, other (repository, cache, pool)", r"eventsourcing/"),
    ("application code, other (application/campaigns.py)", r"application/campaigns\.py"),
    ("uvicorn: writing the response to the socket", r"RequestResponseCycle\.send"),
    ("anyio: handing work to a thread and back", r"anyio/"),
    ("Litestar: routing, DI, parsing, validation, serialisation", r"litestar/"),
    ("uvicorn/httptools: reading requests", r"uvicorn/|httptools"),
)


def summarise_profile(raw: Path, seconds: float, rate: int) -> dict[str, Any]:
    """py-spy's raw (collapsed) stacks: buckets, top functions, per thread kind."""
    buckets: Counter[str] = Counter()
    own: Counter[str] = Counter()
    threads: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        frames = stack.split(";")
        thread = next((f for f in frames if f.startswith("thread (")), "")
        frames = [f for f in frames if not f.startswith(("thread (", "process "))]
        kind = thread.partition("): ")[2] or "unnamed"
        threads["event loop (MainThread)" if kind == "MainThread" else kind] += count
        joined = ";".join(frames)
        if kind not in ("MainThread", "AnyIO worker thread"):
            buckets[f"background thread '{kind}' (all its work)"] += count
        else:
            for name, pattern in BUCKETS:
                if re.search(pattern, joined):
                    buckets[name] += count
                    break
            else:
                buckets["other"] += count
        if frames:
            own[re.sub(r":\d+\)", ")", frames[-1])] += count
    return {"total": total, "gil_share": total / (seconds * rate),
            "buckets": buckets.most_common(), "own": own.most_common(15),
            "threads": threads.most_common()}


PROFILE_RATE = 200
#: Sampling rate of the wall-clock profile: every thread is sampled, so keep py-spy cheap.
WALL_RATE = 50


def summarise_wall(raw: Path, writer_thread: str = "capes-commands") -> dict[str, Any]:
    """py-spy --idle stacks: what the server's writer thread and event loop do, wall clock
    (``writer_thread="MainThread"``: a writer process's stacks, whose main thread writes)."""
    writer: Counter[str] = Counter()
    loop: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = stack.split(";")
        thread = next((f for f in frames if f.startswith("thread (")), "")
        joined = ";".join(frames)
        leaf = re.sub(r":\d+\)", ")", frames[-1])
        if writer_thread in thread:
            for name, pattern in WRITER_BUCKETS:
                if re.search(pattern, joined):
                    writer[name] += count
                    break
            else:
                writer["other (Python, or waiting for the GIL)"] += count
        elif "MainThread" in thread:
            if leaf.startswith("Runner.run"):
                loop["in the event loop's native code (waiting for I/O, or for the GIL)"] \
                    += count
            else:
                loop["running request handling in Python"] += count
    return {"writer": writer.most_common(), "loop": loop.most_common()}


#: The writer thread's (application.committer) wall clock, first match from the top.
WRITER_BUCKETS: tuple[tuple[str, str], ...] = (
    ("idle: waiting for commands",
     r"Queue\.get|Committer\._run \(application/committer\.py:\d+\)$"
     r"|EpollSelector\.select|WriterProcess\.run \(api/writer_process\.py:\d+\)$"),
    ("reading requests, encoding and sending answers (a writer process)",
     r"WriterProcess\._answer|_Peer\.send|Frames\.feed"),
    ("storing a group: SQLite insert + commit (fsync), one transaction", r"insert_events"),
    ("snapshots", r"_snapshot|take_snapshot"),
    ("looking for other writers' events", r"Committer\._sync"),
    ("loading a campaign it holds no head of", r"Committer\._head"),
    ("deciding the commands (rules, dice, envelopes, fold)", r"Campaigns\.prepare"),
    ("other work of a commit (mapper, cache, notify)", r"Campaigns\.commit|_store"),
)


def find_py_spy(python: str = sys.executable) -> str | None:
    """py-spy on ``PATH``, else the one installed beside ``python`` (a virtual environment's
    ``bin``, which is not on ``PATH`` unless the environment is activated: run AO, made with
    the environment's Python by its path, had no profile for want of it)."""
    return shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(python).parent))


def profile_server(pid: int, port: int, campaigns: Path, seconds: float, connections: int,
                   max_turns: int, tmp: Path) -> dict[str, Any] | None:
    """py-spy on the server under the full game mix, twice: the thread holding the GIL (where
    the Python work goes), then every thread including idle ones (where the waiting goes)."""
    spy = find_py_spy()
    if spy is None:
        say("py-spy is not installed (pip install py-spy): no profile of the server")
        return None
    gil_raw, wall_raw = tmp / "server-gil.txt", tmp / "server-wall.txt"
    writer_raw = tmp / "writer-wall.txt"
    # The writer in a process of its own (api/writer.py): its wall clock is profiled too, at
    # the same time as the server's.
    writers = running(children(pid), "api.writer")
    rounds = [[(pid, gil_raw, ["-r", str(PROFILE_RATE), "--gil"])],
              [(pid, wall_raw, ["-r", str(WALL_RATE), "--idle"])]
              + [(w, writer_raw, ["-r", str(WALL_RATE), "--idle"]) for w in writers[:1]]]
    load = subprocess.Popen(
        ["wrk", "-t", str(connections), "-c", str(connections), "-d",
         f"{2 * seconds + 4:g}s", "--timeout", "5s", "-s", str(SCRIPTS / "bench_game.lua"),
         f"http://{HOST}:{port}", "--", str(campaigns), str(connections), str(max_turns)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1)
        for round_ in rounds:
            spies = [(raw, subprocess.Popen(
                [spy, "record", "-p", str(target), "-d", f"{seconds:g}", *options, "--threads",
                 "--nonblocking", "-f", "raw", "-o", str(raw)],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
                for target, raw, options in round_]
            for raw, proc in spies:
                _, err = proc.communicate(timeout=seconds + 60)
                if proc.returncode != 0 or not raw.exists():
                    say(f"py-spy failed: {err.strip()[-500:]}")
                    return None
    finally:
        try:
            load.communicate(timeout=2 * seconds + 60)
        except subprocess.TimeoutExpired:
            load.kill()
            load.communicate()
    summary = summarise_profile(gil_raw, seconds, PROFILE_RATE)
    summary["wall"] = summarise_wall(wall_raw)
    summary["writer_process"] = bool(writers)
    if writers:
        summary["wall"]["writer"] = summarise_wall(writer_raw, "MainThread")["writer"]
    say(f"  the GIL was held {summary['gil_share'] * 100:.0f}% of the time; top buckets: "
        + ", ".join(f"{n} {c / summary['total'] * 100:.0f}%" for n, c in summary["buckets"][:4]))
    return summary


# -- the part ---------------------------------------------------------------------------------


def http_part(p: dict[str, Any], tmp: Path) -> dict[str, Any]:
    if shutil.which("wrk") is None:
        message = ("wrk is not installed (apt-get update && apt-get install -y wrk): "
                   "skipping the HTTP figures")
        say(message)
        return {"skipped": message}
    conns = p["connections"]
    game_port, bare_port = free_port(), free_port()
    while bare_port == game_port:
        bare_port = free_port()
    env = {k: v for k, v in os.environ.items()
           if k not in ("CAPES_DATABASE_URL", "CAPES_REDIS_URL")}
    env |= {"CAPES_DB": str(tmp / "server.sqlite"), "CAPES_RATE_LIMIT": "0",
            "PYTHONPATH": str(ROOT)}
    game_argv = [sys.executable, "-m", "cli.main", "serve", "--host", HOST, "--port",
                 str(game_port), "--workers", "1", "--log-level", "warning"]
    bare_argv = uvicorn_argv("bare_app:app", bare_port, one_write=False)
    bare_one_port, lean_port, lean_store_port = free_port(), free_port(), free_port()
    nrm_port = free_port()
    # The game without its read models' process (CAPES_PROJECTIONS=external: nobody keeps the
    # read models up to date, they only lag): what their work costs the mix, in the same run.
    nrm_env = env | {"CAPES_DB": str(tmp / "server-no-read-models.sqlite"),
                     "CAPES_PROJECTIONS": "external"}
    nrm_argv = [str(nrm_port) if arg == str(game_port) else arg for arg in game_argv]
    bare_one_argv = uvicorn_argv("bare_app:app", bare_one_port)
    lean_argv = uvicorn_argv("lean_app:app", lean_port)
    lean_store_argv = uvicorn_argv("lean_app:app", lean_store_port)
    out: dict[str, Any] = {"game_argv": game_argv, "bare_argv": bare_argv,
                           "bare_one_argv": bare_one_argv, "lean_argv": lean_argv,
                           "lean_store_argv": lean_store_argv, "nrm_argv": nrm_argv,
                           "connections": conns}
    servers: list[subprocess.Popen[bytes]] = []
    # The store's own syncs timed inside the game server (and the control with a store at
    # half load) during the half load's rounds only (benchmarks.syncs).
    timer = build_sync_timer(tmp)
    out["sync_timer"] = timer is not None
    out["disk_alone_before"] = disk_alone(tmp, p["half_seconds"], "before the servers start")
    try:
        game = start_server(game_argv, env | sync_environment(timer, tmp / "game-syncs.log"),
                            tmp / "game-server.log")
        servers.append(game)
        bare = start_server(bare_argv, env, tmp / "bare-server.log")
        servers.append(bare)
        bare_one = start_server(bare_one_argv, env, tmp / "bare-one-server.log")
        servers.append(bare_one)
        nrm = start_server(nrm_argv, nrm_env, tmp / "game-no-read-models.log")
        servers.append(nrm)
        wait_ready(game, game_port, tmp / "game-server.log")
        wait_ready(nrm, nrm_port, tmp / "game-no-read-models.log")
        wait_ready(bare, bare_port, tmp / "bare-server.log")
        wait_ready(bare_one, bare_one_port, tmp / "bare-one-server.log")
        say(f"servers up: capes serve on :{game_port} (pid {game.pid}), bare app on "
            f":{bare_port} (pid {bare.pid})")

        per_run = p["campaigns_per_run"]
        names = ["warmup", *(f"max{i + 1}" for i in range(p["rounds"])), "serial",
                 *(f"half{i + 1}" for i in range(p["half_rounds"] + HALF_EXTRA)), "profile",
                 "board"]
        began = time.perf_counter()
        lines = prepare_campaigns(game_port, len(names) * per_run)
        setup_seconds = time.perf_counter() - began
        n_setup = len(names) * per_run * (4 + len(mix_setup()))
        out["setup"] = {"campaigns": len(names) * per_run, "requests": n_setup,
                        "seconds": setup_seconds}
        say(f"prepared {len(names) * per_run} campaigns over HTTP ({n_setup} requests) in "
            f"{setup_seconds:.1f}s")
        sets = {name: write_campaigns(tmp / f"campaigns-{name}.txt",
                                      lines[i * per_run:(i + 1) * per_run])
                for i, name in enumerate(names)}
        game_args = [str(conns), str(p["max_turns"])]
        # Campaigns of its own for the game without its read models, for the same runs.
        nrm_names = ["warmup", *(f"max{i + 1}" for i in range(p["rounds"]))]
        nrm_lines = prepare_campaigns(nrm_port, len(nrm_names) * per_run)
        for i, name in enumerate(nrm_names):
            write_campaigns(tmp / f"campaigns-no-read-models-{name}.txt",
                            nrm_lines[i * per_run:(i + 1) * per_run])

        def for_nrm(campaigns: Path) -> list[str]:
            mine = campaigns.with_name(
                campaigns.name.replace("campaigns-", "campaigns-no-read-models-"))
            return [str(mine), *game_args]

        # The control: the game's route shape with no game behind it (scripts/lean_app.py),
        # knowing the tokens of every prepared campaign, so the same Lua scripts drive it.
        every = write_campaigns(tmp / "campaigns-all.txt", lines)
        lean = start_server(lean_argv, env | {"CAPES_LEAN_CAMPAIGNS": str(every)},
                            tmp / "lean-server.log")
        servers.append(lean)
        # The control with a store: the same routes, each command answered once its events
        # are committed to an SQLite file on the same disk (as in the half load's control).
        lean_store = start_server(lean_store_argv, env | {
            "CAPES_LEAN_CAMPAIGNS": str(every),
            "CAPES_LEAN_STORE": str(tmp / "lean-store-mix.sqlite")}, tmp / "lean-store.log")
        servers.append(lean_store)
        wait_ready(lean, lean_port, tmp / "lean-server.log")
        wait_ready(lean_store, lean_store_port, tmp / "lean-store.log")
        lean_args = [str(conns), str(10**9)]  # it never refuses: no campaign retires

        def for_lean(campaigns: Path) -> list[str]:
            return [str(campaigns), *lean_args]

        pids = [game.pid, bare.pid, bare_one.pid, lean.pid, lean_store.pid, nrm.pid]
        # Each round runs every server once, in this order: (key, what, port, wrk's script,
        # its arguments for the round's campaigns).
        contenders: list[tuple[str, str, int, str, Any]] = [
            ("bare", "bare", bare_port, "bench_bare.lua", None),
            ("bare_one", "bare, each answer in one write", bare_one_port, "bench_bare.lua",
             None),
            ("lean", "control (lean app), the mix", lean_port, "bench_game.lua", for_lean),
            ("lean_store", "control with a store, the mix", lean_store_port,
             "bench_game.lua", for_lean),
            ("game", "game mix", game_port, "bench_game.lua",
             lambda campaigns: [str(campaigns), *game_args]),
            # Right after the game's round: the control with a store beside an idle-priority
            # process using the CPU the game's read models' process used in that round
            # (scripts/idle_load.py): the mix with the read models' work kept, the game's
            # request path taken out.
            ("lean_store_rm", "control with a store beside the read models' CPU, the mix",
             lean_store_port, "bench_game.lua", for_lean),
            ("no_read_models", "game mix without its read models' process", nrm_port,
             "bench_game.lua", for_nrm),
        ]
        out["quiet"] = wait_quiet(p["quiet_wait"])
        say(f"wrk warm-up, {p['warmup_seconds']}s each")
        for _, _, port, script, args in contenders:
            run_wrk(port, script, p["warmup_seconds"], conns,
                    None if args is None else args(sets["warmup"]))
        for key, *_ in contenders:
            out[f"{key}_runs"] = []
        for round_ in range(p["rounds"]):
            say(f"wrk round {round_ + 1} of {p['rounds']}: {p['http_seconds']}s each")
            for key, what, port, script, args in contenders:
                # What the run before left to the kernel (writing back a store's pages) or to
                # a server (its read models catching up) must not run under this one.
                wait_quiet(p["round_quiet_wait"], threshold=QUIET_BEFORE_RUN)
                beside = (read_models_cores(out["game_runs"][-1])
                           if key == "lean_store_rm" else None)
                with idle_load(beside, tmp / "idle-load.log"):
                    watch = CpuWatch(pids, loop=game.pid if key == "game" else None)
                    run = run_wrk(port, script, p["http_seconds"], conns,
                                  None if args is None else args(sets[f"max{round_ + 1}"]))
                    run |= {"cpu": watch.stop()}
                if beside:
                    run["beside_cores"] = beside
                out[f"{key}_runs"].append(run)
                say(f"  {what}: {run['rps']:.0f} req/s ({run['commands_per_s']:.0f} "
                    f"commands/s), p50 {run['p50_us'] / 1000:.2f} ms, p99 "
                    f"{run['p99_us'] / 1000:.2f} ms, refused {run['bad']}; "
                    f"{cpu_text(run['cpu'])}")
        out["bare_max"] = max(out["bare_runs"], key=lambda r: r["rps"])
        out["bare_one_max"] = max(out["bare_one_runs"], key=lambda r: r["rps"])
        out["lean_max"] = max(out["lean_runs"], key=lambda r: r["ok_rps"])
        out["lean_store_max"] = max(out["lean_store_runs"], key=lambda r: r["ok_rps"])
        out["lean_store_rm_max"] = max(out["lean_store_rm_runs"], key=lambda r: r["ok_rps"])
        out["game_max"] = game_max = max(out["game_runs"], key=lambda r: r["ok_rps"])
        out["no_read_models_max"] = max(out["no_read_models_runs"], key=lambda r: r["ok_rps"])

        # Board reads alone, of mid-scene campaigns: the game server against the control.
        wait_quiet(p["round_quiet_wait"])
        say(f"GET /board alone, {p['http_seconds']}s each: control, then game")
        for name, port in (("lean_board", lean_port), ("game_board", game_port)):
            watch = CpuWatch(pids)
            board_run = run_wrk(port, "bench_board.lua", p["http_seconds"], conns,
                                [str(sets["board"])])
            out[name] = board_run | {"cpu": watch.stop()}
            say(f"  {name}: {board_run['rps']:.0f} req/s, p99 "
                f"{board_run['p99_us'] / 1000:.2f} ms, refused {board_run['bad']}")

        wait_quiet(p["round_quiet_wait"])
        say(f"wrk with one connection, {p['serial_seconds']}s each: the cost of one request")
        watch = CpuWatch(pids)
        serial = run_wrk(bare_port, "bench_bare.lua", p["serial_seconds"], 1)
        out["bare_serial"] = serial = serial | {"cpu": watch.stop()}
        say(f"  bare: {serial['rps']:.0f} req/s, p50 {serial['p50_us'] / 1000:.2f} ms; "
            f"{cpu_text(serial['cpu'])}")
        watch = CpuWatch(pids)
        serial = run_wrk(game_port, "bench_game.lua", p["serial_seconds"], 1,
                         [str(sets["serial"]), "1", str(p["max_turns"])])
        out["game_serial"] = serial = serial | {"cpu": watch.stop()}
        say(f"  game mix: {serial['rps']:.0f} req/s, p50 {serial['p50_us'] / 1000:.2f} ms; "
            f"{cpu_text(serial['cpu'])}")

        half_rate = game_max["ok_rps"] / 2
        out["half_runs"] = []
        rounds, round_ = p["half_rounds"], 0
        while round_ < rounds:
            wait_quiet(p["round_quiet_wait"])
            say(f"paced, game mix at half the maximum: {half_rate:.0f} req/s for "
                f"{p['half_seconds']}s (round {round_ + 1} of {rounds}), the disk's control "
                "beside the store")
            watch = CpuWatch(pids, loop=game.pid)
            began = time.monotonic()
            with sync_timing(tmp / "game-syncs.log"):
                half = run_paced("game", game_port, half_rate, p["half_seconds"], conns,
                                 sets[f"half{round_ + 1}"], p["max_turns"], disk_folder=tmp)
            half |= {"cpu": watch.stop()} | syncs_of(half, tmp / "game-syncs.log", began)
            out["half_runs"].append(half)
            say(f"  game mix at {half['achieved_rate']:.0f} req/s: p50 "
                f"{half['latency_ms']['p50']:.2f} ms, p99 {half['latency_ms']['p99']:.2f} ms "
                f"(commands p99 {half['command_latency_ms']['p99']:.2f} ms), refused "
                f"{half['bad']}; the disk's fsync p99 {half['disk_fsync_p99_ms']:.1f} ms, max "
                f"{half['disk_fsync_max_ms']:.0f} ms; {cpu_text(half['cpu'])}")
            say(f"  {sync_text(half)}")
            if stopped := stops_text(half):
                say(f"  {stopped}")
            round_ += 1
            if stalled(half) and rounds < p["half_rounds"] + HALF_EXTRA:
                rounds += 1
                say("  the disk stalled under a round that missed the target: one round more")
        out["game_half"] = min(out["half_runs"], key=lambda r: r["command_latency_ms"]["p99"])
        # The same rate on the bare app: the paced driver's own floor.
        watch = CpuWatch(pids)
        floor = run_paced("bare", bare_port, half_rate, p["half_seconds"], conns)
        out["bare_at_game_half"] = floor = floor | {"cpu": watch.stop()}
        say(f"  bare route at the same rate ({floor['achieved_rate']:.0f} req/s): p50 "
            f"{floor['latency_ms']['p50']:.2f} ms, p99 {floor['latency_ms']['p99']:.2f} ms")
        out["store_at_game_half"] = store_control(p, tmp, env, every, half_rate,
                                                  sets["half1"], conns, timer)
        # Again beside what the game's read models' process used in the game's best round.
        out["store_rm_at_game_half"] = store_control(
            p, tmp, env, every, half_rate, sets["half1"], conns, timer,
            beside=read_models_cores(out["game_half"]))

        wait_quiet(p["round_quiet_wait"])
        out["stub"] = stub_run(p, tmp, env, conns)

        say(f"profiling the server with py-spy for {p['profile_seconds']}s under the full mix")
        out["profile"] = profile_server(game.pid, game_port, sets["profile"], p["profile_seconds"],
                                        conns, p["max_turns"], tmp)
    finally:
        for proc in servers:
            stop_server(proc)
    out["disk_alone_after"] = disk_alone(tmp, p["half_seconds"], "after the servers stopped")
    return out


def disk_alone(folder: Path, seconds: float, when: str) -> dict[str, Any]:
    """The disk's control with nothing of the project running: the paced driver's fsync every
    20 ms (``scripts/disk_control.py``) in ``folder``, the stores' folder, for ``seconds``. Why:
    at half load every answer waits for its commit's sync, so a pause of the disk on its own is a
    floor under the commands' p99 that no server can go below; this shows whether the disk
    pauses with the project's code taken out."""
    probe = DiskProbe(folder)
    probe.start()
    time.sleep(seconds)
    probe.stop()
    found: dict[str, Any] = probe.summary()
    say(f"the disk alone {when} (an fsync every 20 ms for {seconds:g} s): p99 "
        f"{found['disk_fsync_p99_ms']:.1f} ms, max {found['disk_fsync_max_ms']:.0f} ms, "
        f"{found['disk_fsyncs_over_50_ms']} over 50 ms")
    return found


def syncs_of(paced: dict[str, Any], log: Path, began: float) -> dict[str, Any]:
    """A paced round's store syncs (those that started since ``began``, until now) and its
    stops set beside them (:mod:`benchmarks.syncs`); empty where the syncs were not timed."""
    return sync_summary(log, began, time.monotonic()) | stops_in_syncs(paced["stops"], log)


def read_models_cores(run: dict[str, Any]) -> float | None:
    """The cores the game's read models' process used in ``run`` (None: not measured)."""
    cores: float | None = run["cpu"].get("read_models_cores")
    return cores


def store_control(p: dict[str, Any], tmp: Path, env: dict[str, str], campaigns: Path,
                  rate: float, played: Path, conns: int, timer: Path | None = None, *,
                  beside: float | None = None) -> dict[str, Any] | None:
    """The half load's control: the control's routes (``scripts/lean_app.py``) answering each
    command once its events are committed to an SQLite file on the same disk
    (``CAPES_LEAN_STORE``), paced at the game's half-load rate with the disk's control beside
    it: the latency of the framework and the store on this machine without the game.
    ``beside``: the cores an idle-priority process burns meanwhile (``scripts/idle_load.py``:
    the read models' CPU kept, the game taken out); None for none."""
    port = free_port()
    argv = uvicorn_argv("lean_app:app", port)
    name = "lean-store-rm" if beside else "lean-store"
    syncs = tmp / f"{name}-syncs.log"
    server = start_server(argv, env | sync_environment(timer, syncs) | {
        "CAPES_LEAN_CAMPAIGNS": str(campaigns),
        "CAPES_LEAN_STORE": str(tmp / f"{name}.sqlite")}, tmp / f"{name}-server.log")
    try:
        wait_ready(server, port, tmp / f"{name}-server.log")
        wait_quiet(p["round_quiet_wait"])
        with idle_load(beside, tmp / f"{name}-idle-load.log"):
            watch = CpuWatch([server.pid])
            began = time.monotonic()
            try:
                with sync_timing(syncs):
                    result = run_paced("game", port, rate, p["half_seconds"], conns, played,
                                       10**9, disk_folder=tmp)
            except RuntimeError as e:  # a control that failed: say so, keep the game's figures
                say(f"  the control with its store failed: {e}")
                return None
            result |= {"cpu": watch.stop(), "argv": argv} | syncs_of(result, syncs, began)
        if beside:
            result["beside_cores"] = beside
        say(f"  the control with its store (commands answered once committed to SQLite)"
            f"{f' beside {beside:.2f} cores at idle priority' if beside else ''} at "
            f"the same rate: commands p99 {result['command_latency_ms']['p99']:.2f} ms, reads "
            f"p99 {result['read_latency_ms']['p99']:.2f} ms; the disk's fsync p99 "
            f"{result['disk_fsync_p99_ms']:.1f} ms, max {result['disk_fsync_max_ms']:.0f} ms; "
            f"{sync_text(result)}{stops_text(result, '; ')}")
        return result
    finally:
        stop_server(server)


def stub_run(p: dict[str, Any], tmp: Path, env: dict[str, str], conns: int) -> dict[str, Any]:
    """The game mix on the real server with its commands answered but not run
    (``scripts/stub_app.py``): what the HTTP layer of the game's routes costs by itself."""
    port = free_port()
    flag = tmp / "stub-on"
    argv = [sys.executable, str(SCRIPTS / "stub_app.py"), "--host", HOST, "--port", str(port)]
    stub = start_server(argv, env | {"CAPES_DB": str(tmp / "stub.sqlite"),
                                     "CAPES_BENCH_STUB": str(flag)}, tmp / "stub-server.log")
    try:
        wait_ready(stub, port, tmp / "stub-server.log")
        per_run = p["campaigns_per_run"]
        lines = prepare_campaigns(port, 2 * per_run)
        warm = write_campaigns(tmp / "campaigns-stub-warmup.txt", lines[:per_run])
        measured = write_campaigns(tmp / "campaigns-stub.txt", lines[per_run:])
        flag.touch()
        game_args = [str(conns), str(p["max_turns"])]
        say(f"the game routes with commands answered but not run (scripts/stub_app.py), "
            f"{p['http_seconds']}s")
        run_wrk(port, "bench_game.lua", p["warmup_seconds"], conns, [str(warm), *game_args])
        watch = CpuWatch([stub.pid])
        result = run_wrk(port, "bench_game.lua", p["http_seconds"], conns,
                         [str(measured), *game_args])
        result |= {"cpu": watch.stop(), "argv": argv}
        say(f"  {result['rps']:.0f} req/s ({result['commands_per_s']:.0f} commands/s "
            f"answered), p50 {result['p50_us'] / 1000:.2f} ms; {cpu_text(result['cpu'])}")
        return result
    finally:
        stop_server(stub)
