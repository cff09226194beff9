"""A thousand tables (issue 15): many slow campaigns on one server, each with four players
holding the live-event stream open and a command every few seconds.

For each store — SQLite with one worker, PostgreSQL with two workers and Redis, and the same
without Redis, the workers' live events passed on by the writer process they share (both
skipped when PostgreSQL or Redis is not reachable) — the campaigns (4 seats each, tokens
issued) are prepared straight into a fresh store, then ``capes serve`` runs on it and
``scripts/tables_load.py`` drives N of them (4 N open streams, one ``narrate`` per table every
5 s plus a board read per command), for growing N until the command p99 or the delivery p99 is
over its limit. The largest N that holds both is the figure; the server's CPU (cores) and
memory per open stream say what ran out, and the disk's control (an fsync timed every 20 ms
beside the store) says whether the disk stalled: a step that fails while it did is run again
(:data:`ATTEMPTS`). The open-file limit of this process (inherited by the server and the
driver) is raised to the hard limit: each stream is a socket.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from benchmarks import SCRIPTS
from benchmarks.common import (
    CpuWatch,
    free_port,
    say,
    start_server,
    stop_server,
    wait_quiet,
    wait_ready,
)
from scripts.processes import descendants

#: The issue's limits: the largest N that holds both is the figure.
COMMAND_P99_MS = 50.0
DELIVERY_P99_MS = 100.0
TARGET_TABLES = 1000
#: Runs of a step at most: a step that does not hold while the disk control saw the disk stall
#: (an fsync over 50 ms: every command waits for the disk) is run again, every run reported.
ATTEMPTS = 3
POSTGRES = os.environ.get("CAPES_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
REDIS = os.environ.get("CAPES_BENCH_REDIS", "redis://127.0.0.1:6379/0")


def raise_file_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def reachable(url: str, default_port: int) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1",
                                       parts.port or default_port), timeout=2):
            return True
    except OSError:
        return False


def fresh_schema(url: str) -> str:
    """A new, empty schema on the PostgreSQL server of ``url``; the URL naming it."""
    import psycopg

    name = f"capes_tables_{os.getpid()}_{int(time.time())}"
    with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{name}"')
    return f"{url.split('?')[0]}?schema={name}"


def drop_schema(url: str) -> None:
    import psycopg

    name = url.split("schema=")[1]
    with psycopg.connect(url.split("?")[0], autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def prepare(environ: dict[str, str], count: int, path: Path) -> float:
    """``count`` campaigns with four seated players and their tokens, written straight into
    the store (faster than over HTTP); their lines for the driver. Seconds taken."""
    from application.campaigns import open_campaigns
    from application.credentials import Keyring
    from domain.capes import commands as c

    began = time.perf_counter()
    app = open_campaigns(environ)  # CAPES_DB / CAPES_DATABASE_URL, as the server reads them
    keys = Keyring(dict(app.env))

    def one(number: int) -> str:
        cid = app.create(c.CreateCampaign(name=f"Table {number}")).campaign_id
        keys.open_campaign(cid)
        tokens = []
        version = 1
        for seat, name in enumerate(("Ana", "Ben", "Cleo", "Dev"), start=1):
            version = app.execute(cid, c.SeatPlayer(name=name)).version
            tokens.append(keys.issue(cid, seat))
        return " ".join([str(cid), str(version), *tokens])

    try:
        with ThreadPoolExecutor(4) as pool:
            lines = list(pool.map(one, range(count)))
    finally:
        keys.close()
        app.close()
    path.write_text("\n".join(lines) + "\n")
    return time.perf_counter() - began


def server_pids(proc: subprocess.Popen[bytes]) -> list[int]:
    """The server process and what it started (uvicorn's workers with --workers 2, the read
    models' process, each worker's writer process)."""
    return [proc.pid, *descendants(proc.pid)]


def one_step(p: dict[str, Any], tmp: Path, proc: subprocess.Popen[bytes], port: int,
             campaigns: Path, n: int) -> dict[str, Any]:
    """One run of ``scripts/tables_load.py`` with ``n`` tables: its figures and verdict."""
    watch = CpuWatch(server_pids(proc))
    argv = [sys.executable, str(SCRIPTS / "tables_load.py"), "--port", str(port),
            "--campaigns", str(campaigns), "--tables", str(n), "--seconds",
            str(p["tables_seconds"]), "--disk-folder", str(tmp), "--server-pids",
            ",".join(str(pid) for pid in server_pids(proc))]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=p["tables_seconds"] + 120)
    if out.returncode != 0:
        raise RuntimeError(f"tables_load failed: {out.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["cpu"] = watch.stop()
    result["holds"] = (result["command_p99_ms"] < COMMAND_P99_MS
                       and result["delivery_p99_ms"] < DELIVERY_P99_MS
                       and result["stream_failures"] == 0
                       and result["missing_deliveries"] == 0
                       and not result["server_processes_ended"]
                       and result["commands"] >= 0.99 * result["scheduled"])
    return result


def run_store(p: dict[str, Any], tmp: Path, store: str, *, redis: bool = True) -> dict[str, Any]:
    """``store``: ``sqlite`` (one worker) or ``postgres`` (two workers; with Redis, or else
    sharing their live events through their writer process)."""
    env = dict(os.environ, CAPES_RATE_LIMIT="0")
    env.pop("CAPES_REDIS_URL", None)
    workers = 1
    schema_url = ""
    label = store
    if store == "sqlite":
        env["CAPES_DB"] = str(tmp / "tables.sqlite")
    else:
        schema_url = fresh_schema(POSTGRES)
        env.pop("CAPES_DB", None)
        env["CAPES_DATABASE_URL"] = schema_url
        if redis:
            env["CAPES_REDIS_URL"] = REDIS
        label = f"{store} {'with' if redis else 'without'} Redis"
        workers = 2
    steps: list[int] = p["tables_steps"]
    campaigns = tmp / f"tables-{store}{'' if redis else '-no-redis'}.txt"
    took = prepare(env, max(steps), campaigns)
    say(f"  {label}: {max(steps)} campaigns of 4 seats prepared in {took:.1f} s")
    # What the preparation wrote goes to the disk now, not under the first step's fsyncs.
    os.sync()
    port = free_port()
    log = campaigns.with_suffix(".log")
    proc = start_server([sys.executable, "-m", "cli.main", "serve", "--host", "127.0.0.1",
                         "--port", str(port), "--workers", str(workers), "--log-level",
                         "warning"], env, log)
    results: list[dict[str, Any]] = []
    try:
        wait_ready(proc, port, log)
        time.sleep(1.0 if workers == 1 else 3.0)  # every worker up
        for n in steps:
            for attempt in range(1, ATTEMPTS + 1):
                wait_quiet(p["round_quiet_wait"])
                result = one_step(p, tmp, proc, port, campaigns, n)
                result["attempt"] = attempt
                results.append(result)
                say(f"  {label}, {n} tables ({n * 4} streams), attempt {attempt}: commands p99 "
                    f"{result['command_p99_ms']:.1f} ms, delivery p99 "
                    f"{result['delivery_p99_ms']:.1f} ms, {result['kib_per_stream']:.1f} KiB "
                    f"per stream, server {result['server_cores']:.2f} cores, disk control's "
                    f"fsync max {result['disk_fsync_max_ms']:.0f} ms: "
                    f"{'holds' if result['holds'] else 'does not hold'}")
                if result["holds"] or not result["disk_fsyncs_over_50_ms"]:
                    break  # held, or failed on a disk that did not stall: the server's verdict
            if not result["holds"]:
                break  # larger N only does worse
    finally:
        stop_server(proc)
        if schema_url:
            drop_schema(schema_url)
    held = [r["tables"] for r in results if r["holds"]]
    return {"store": label, "workers": workers, "steps": results,
            "largest": max(held, default=0), "prepare_seconds": took}


def tables_part(p: dict[str, Any], tmp: Path) -> dict[str, Any]:
    limit = raise_file_limit()
    say(f"Many tables (open-file limit {limit})")
    runs = [run_store(p, tmp, "sqlite")]
    if reachable(POSTGRES, 5432) and reachable(REDIS, 6379):
        runs.append(run_store(p, tmp, "postgres"))
        runs.append(run_store(p, tmp, "postgres", redis=False))
    else:
        say("  PostgreSQL or Redis not reachable: the PostgreSQL run is skipped")
    return {"runs": runs, "file_limit": limit, "seconds": p["tables_seconds"]}
