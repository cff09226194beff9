"""Several workers on PostgreSQL (issue 15): the game mix with ``capes serve --workers 1``
and ``--workers 2``, without Redis (two workers share their live events through their writer
process) and with it (as several servers on one database share theirs), on a fresh schema
each, and the control — the lean app (``scripts/lean_app.py``, the game's route shape with no
game) with one and two uvicorn workers — in the same run: what a second worker can add on this
machine at all, whatever the server does.

Every worker's writes go through one writer process (cli/writer_hub.py), so two more controls
show what that writer can carry whatever the number of workers: the writer alone (the mix's
commands from as many players as wrk has connections, each awaiting its answer, through
``application.committer`` with no HTTP) and the store alone (psycopg inserting groups of that
size into a table with the events table's keys and committing, from one connection and from
two, with the code of this project and of eventsourcing taken out: what a second committing
writer could add). And the control with PostgreSQL: the lean app with one and two workers,
each answering a command once its three events are committed in the statement the game's
recorder sends, each worker committing its own groups (``CAPES_LEAN_STORE`` set to a schema's
URL): what two workers could carry with this store and a writer each, the game taken out.

Two workers also run with two writer processes (``CAPES_WRITERS=2``, api/writer_pool.py: each
the one writer of its share of the campaigns), and the writers alone with two processes (each
half the players): what a second writer adds with HTTP and without it. And the ceiling: the
machine's cores over the cores busy in the one-worker round, the most any number of workers
could add at the same CPU a command (a one-worker round that keeps 1.6 of 2 cores busy leaves
room for 1.25x at best, whatever the server does).

Each run: campaigns prepared over HTTP, a warm-up, then one measured ``wrk`` run of the mix
(``scripts/bench_game.lua``; each wrk connection plays its own campaigns, so the kernel's
spread of connections over workers spreads the campaigns too).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import ROOT
from benchmarks.common import (
    HOST,
    CpuWatch,
    free_port,
    say,
    start_server,
    stop_server,
    wait_quiet,
    wait_ready,
)
from benchmarks.http import prepare_campaigns, run_wrk, uvicorn_argv, write_campaigns
from benchmarks.inprocess import inproc_setup, writer_cycle
from benchmarks.tables import POSTGRES, REDIS, drop_schema, fresh_schema, reachable

#: The issue's target: two workers against one, same mix, PostgreSQL.
TARGET_SCALING = 1.6


def _run(argv: list[str], env: dict[str, str], port: int, tmp: Path, name: str,
         p: dict[str, Any], lines_for: Any) -> dict[str, Any]:
    log = tmp / f"{name}.log"
    proc = start_server(argv, env, log)
    try:
        wait_ready(proc, port, log)
        time.sleep(2.0)  # every worker up
        warm, measured = lines_for(port)
        conns = p["connections"]
        args = [str(conns), str(p["max_turns"] if "lean" not in name else 10**9)]
        run_wrk(port, "bench_game.lua", p["warmup_seconds"], conns, [str(warm), *args])
        wait_quiet(p["round_quiet_wait"])
        watch = CpuWatch([proc.pid])
        result = run_wrk(port, "bench_game.lua", p["http_seconds"], conns,
                         [str(measured), *args])
        result |= {"cpu": watch.stop()}
        say(f"  {name}: {result['rps']:.0f} req/s ({result['commands_per_s']:.0f} commands/s), "
            f"p99 {result['p99_us'] / 1000:.2f} ms, refused {result['bad']}; server cores "
            f"{result['cpu']['server_cores']:.2f}, others {result['cpu']['other_cores']:.2f}")
        return result
    finally:
        stop_server(proc)


def workers_part(p: dict[str, Any], tmp: Path) -> dict[str, Any]:
    if not (reachable(POSTGRES, 5432) and reachable(REDIS, 6379)):
        say("PostgreSQL or Redis not reachable: the workers' run is skipped")
        return {"skipped": "PostgreSQL or Redis not reachable"}
    say("Several workers on PostgreSQL: the game mix and the control, 1 and 2 workers")
    base = {k: v for k, v in os.environ.items() if k not in ("CAPES_DB",)}
    base |= {"CAPES_RATE_LIMIT": "0", "PYTHONPATH": str(ROOT)}
    per_run = p["campaigns_per_run"]
    out: dict[str, Any] = {}
    shared: dict[str, Path] = {}
    # One worker and two, without Redis (the two share their live events through their one
    # writer process) and with it (as several servers on one database share theirs); and two
    # workers with a writer process each (CAPES_WRITERS=2, each writing its own campaigns).
    for key, workers, redis, writers in (("game1", 1, False, 1), ("game2", 2, False, 1),
                                         ("game2w", 2, False, 2), ("game1r", 1, True, 1),
                                         ("game2r", 2, True, 1)):
        url = fresh_schema(POSTGRES)
        env = base | {"CAPES_DATABASE_URL": url, "CAPES_WRITERS": str(writers)}
        env.pop("CAPES_REDIS_URL", None)
        if redis:
            env["CAPES_REDIS_URL"] = REDIS
        port = free_port()

        def lines_for(port: int, key: str = key) -> tuple[Path, Path]:
            lines = prepare_campaigns(port, 2 * per_run)
            warm = write_campaigns(tmp / f"workers-{key}-warm.txt", lines[:per_run])
            measured = write_campaigns(tmp / f"workers-{key}.txt", lines[per_run:])
            shared["warm"], shared["measured"] = warm, measured
            return warm, measured

        argv = [sys.executable, "-m", "cli.main", "serve", "--host", HOST, "--port", str(port),
                "--workers", str(workers), "--log-level", "warning"]
        name = (f"game, {workers} worker(s){' with Redis' if redis else ''}"
                f"{f', {writers} writers' if writers > 1 else ''}")
        try:
            out[key] = _run(argv, env, port, tmp, name, p, lines_for)
        finally:
            drop_schema(url)
    every = write_campaigns(tmp / "workers-all.txt", [
        *shared["warm"].read_text().splitlines(), *shared["measured"].read_text().splitlines()])
    for workers in (1, 2):
        port = free_port()
        argv = uvicorn_argv("lean_app:app", port, workers=workers)
        out[f"lean{workers}"] = _run(
            argv, base | {"CAPES_LEAN_CAMPAIGNS": str(every)}, port, tmp,
            f"control (lean), {workers} worker(s)", p,
            lambda _port: (shared["warm"], shared["measured"]))
    # The control with the game's store: the same routes answering each command once its
    # three events are committed to PostgreSQL as the game's recorder commits a group, each
    # worker on a connection of its own (scripts/lean_app.py): what several workers could
    # carry with this store and a writer each, the game taken out.
    for workers in (1, 2):
        port = free_port()
        url = fresh_schema(POSTGRES)
        try:
            events_table(url)
            out[f"lean_store{workers}"] = _run(
                uvicorn_argv("lean_app:app", port, workers=workers),
                base | {"CAPES_LEAN_CAMPAIGNS": str(every), "CAPES_LEAN_STORE": url}, port, tmp,
                f"control with PostgreSQL (lean), {workers} worker(s)", p,
                lambda _port: (shared["warm"], shared["measured"]))
        finally:
            drop_schema(url)
    out["writer"] = writer_alone(p)
    out["writers2"] = writers_alone(p, 2)
    out["store"] = store_alone(round(out["writer"]["events_per_group"]), p["http_seconds"] / 3)
    out["scaling"] = out["game2"]["commands_per_s"] / max(1e-9, out["game1"]["commands_per_s"])
    out["scaling_redis"] = (out["game2r"]["commands_per_s"]
                            / max(1e-9, out["game1r"]["commands_per_s"]))
    out["control_scaling"] = out["lean2"]["rps"] / max(1e-9, out["lean1"]["rps"])
    out["control_store_scaling"] = (out["lean_store2"]["commands_per_s"]
                                    / max(1e-9, out["lean_store1"]["commands_per_s"]))
    out["scaling_writers"] = (out["game2w"]["commands_per_s"]
                              / max(1e-9, out["game1"]["commands_per_s"]))
    out["cores"] = os.cpu_count() or 1
    out["ceiling"] = ceiling(out["game1"]["cpu"], out["cores"])
    out["control_store_ceiling"] = ceiling(out["lean_store1"]["cpu"], out["cores"])
    say(f"  two workers against one: game {out['scaling']:.2f}x ({out['scaling_redis']:.2f}x "
        f"both with Redis, {out['scaling_writers']:.2f}x with two writers; the machine's "
        f"ceiling {out['ceiling']:.2f}x), control "
        f"{out['control_scaling']:.2f}x, control with PostgreSQL "
        f"{out['control_store_scaling']:.2f}x (target {TARGET_SCALING}x)")
    return out


def ceiling(one_worker: dict[str, float], cores: int) -> float:
    """The most any number of workers could add to a one-worker round at the same CPU a
    command: the machine's cores over the cores that round kept busy (all its processes,
    PostgreSQL's and the load generator's included)."""
    return cores / max(1e-9, one_worker["busy_cores"])


def events_table(url: str) -> str:
    """A table shaped as the events table (a position drawn from a sequence, a unique
    (originator, version)) in the schema of ``url``; its name. For the store alone, and for
    the control with PostgreSQL, made before its workers start (two making it would race)."""
    import psycopg

    base, schema = url.split("?")[0], url.split("schema=")[1]
    table = f'"{schema}".events'
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE {table} (originator_id uuid NOT NULL, originator_version "
                     "bigint NOT NULL, topic text, state bytea, notification_id bigserial, "
                     "PRIMARY KEY (originator_id, originator_version))")
        conn.execute(f"CREATE UNIQUE INDEX ON {table} (notification_id)")
    return table


def writer_alone(p: dict[str, Any]) -> dict[str, Any]:
    """The mix's commands through one writer (``application.committer``) on a fresh schema,
    from as many players at once as wrk has connections, with no HTTP: the most commands a
    second the writer that every worker shares can commit."""
    from application.campaigns import open_campaigns

    url = fresh_schema(POSTGRES)
    app = open_campaigns({"CAPES_DATABASE_URL": url})
    try:
        ids = [inproc_setup(app) for _ in range(p["connections"])]
        before = app.recorder.max_notification_id() or 0
        result = writer_cycle(app, ids, p["http_seconds"], 10**9, p["max_turns"])
        events = (app.recorder.max_notification_id() or 0) - before
    finally:
        app.close()
        drop_schema(url)
    result["events_per_group"] = events / max(1, result["commands"]) * result["per_group"]
    result["players"] = len(ids)
    say(f"  the writer alone (no HTTP, {len(ids)} players at once): {result['per_s']:.0f} "
        f"commands/s, {result['per_group']:.1f} commands ({result['events_per_group']:.1f} "
        f"events) per commit")
    return result


def _one_of_writers(url: str, players: int, p: dict[str, Any], barrier: Any,
                    results: Any) -> None:
    """One writer process of :func:`writers_alone`: its players made ready, then the mix's
    commands through its own writer once every process is ready."""
    from application.campaigns import open_campaigns

    app = open_campaigns({"CAPES_DATABASE_URL": url})
    try:
        ids = [inproc_setup(app) for _ in range(players)]
        barrier.wait()
        results.put(writer_cycle(app, ids, p["http_seconds"], 10**9, p["max_turns"]))
    finally:
        app.close()


def writers_alone(p: dict[str, Any], count: int) -> dict[str, Any]:
    """The writer alone (:func:`writer_alone`) in ``count`` processes at once on one schema,
    each with its share of the players (each its own campaigns, as ``CAPES_WRITERS`` shares
    them): what more writers can commit with no HTTP, PostgreSQL's side by side inserts and
    the machine's cores their limit."""
    import multiprocessing

    url = fresh_schema(POSTGRES)
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(count), context.Queue()
    players = max(1, p["connections"] // count)
    processes = [context.Process(target=_one_of_writers, args=(url, players, p, barrier, results))
                 for _ in range(count)]
    try:
        for process in processes:
            process.start()
        found = [results.get(timeout=p["http_seconds"] + 300) for _ in processes]
        for process in processes:
            process.join()
    finally:
        for process in processes:
            if process.is_alive():
                process.kill()
        drop_schema(url)
    out = {"processes": count, "players": players * count,
           "per_s": sum(r["per_s"] for r in found),
           "p50_ms": max(r["p50_ms"] for r in found),
           "per_group": sum(r["per_group"] for r in found) / count}
    say(f"  {count} writers alone (no HTTP, {players} players each): {out['per_s']:.0f} "
        f"commands/s, {out['per_group']:.1f} commands per commit")
    return out


def store_alone(group: int, seconds: float) -> dict[str, Any]:
    """PostgreSQL alone (psycopg, no code of this project or of eventsourcing): transactions
    that each insert ``group`` rows shaped like stored events into a table with the events
    table's keys (a position drawn from a sequence, a unique (originator, version)) and commit,
    with no table lock (as the campaigns' recorder, application/postgres_store.py), from one
    connection and then from two at once: commits a second (``threads1``, ``threads2``)."""
    import threading
    import uuid

    import psycopg

    url = fresh_schema(POSTGRES)
    base, table = url.split("?")[0], events_table(url)
    insert = (f"INSERT INTO {table} (originator_id, originator_version, topic, state) "
              "VALUES (%s, %s, %s, %s)")
    state = b"x" * 300  # about an event of the mix, as stored
    out: dict[str, Any] = {"group": group}
    try:
        for threads in (1, 2):
            commits = [0] * threads
            deadline = time.perf_counter() + seconds

            def commit(i: int, commits: list[int] = commits, deadline: float = deadline) -> None:
                ids = [uuid.uuid4() for _ in range(group)]
                version = 0
                with psycopg.connect(base) as conn:
                    while time.perf_counter() < deadline:
                        version += 1
                        with conn.transaction(), conn.cursor() as cursor:
                            cursor.executemany(insert, [(o, version, "bench:Event", state)
                                                        for o in ids])
                        commits[i] += 1

            began = time.perf_counter()
            runners = [threading.Thread(target=commit, args=(i,)) for i in range(threads)]
            for runner in runners:
                runner.start()
            for runner in runners:
                runner.join()
            out[f"threads{threads}"] = sum(commits) / (time.perf_counter() - began)
    finally:
        drop_schema(url)
    say(f"  PostgreSQL alone (psycopg, groups of {group} rows, no table lock): "
        f"{out['threads1']:.0f} commits/s from one connection, {out['threads2']:.0f} from two")
    return out
