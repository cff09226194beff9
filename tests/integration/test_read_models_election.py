"""One runner of a store's read models at a time, whoever starts them (projections.election):
two runners on one store, the read models' processes of two ``capes serve``, two ``capes
projections run``. One runs, the others stand by and take over when it stops or dies; a server
whose runner stands by still answers the queries that wait for a position; no step fails."""

from __future__ import annotations

import logging
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from stores import POSTGRES_URL, MakeApp, conninfo
from tcp_proxy import TcpProxy

import projections.election
from application.campaigns import Campaigns, open_campaigns
from application.sqlite_store import held_by
from projections.election import PostgresElection
from projections.service import MODELS, ReadModels
from projections.views import read_models_file
from projections.wake import Wake
from tests.http.helpers import capes_serve, kill
from tests.integration.test_read_models_process import ROOT, a_line, a_table, eventually, running
from tests.projections.readmodel_helpers import check_read_models, open_table, play

#: What a runner logs when a step fails, or when another runner moved the read models under it.
FAILED = ("read models failed", "moved under us", "Traceback")


def a_runner(app: Campaigns) -> ReadModels:
    """The read models of a server that runs them itself (``CAPES_PROJECTIONS=internal``), at a
    quick pace: a poll of 50 ms, no linger or gathering, a try of the election every 100 ms."""
    read_models = ReadModels(app, poll=0.05, linger=0, latest_every=0, standby_retry=0.1)
    read_models.start()
    return read_models


def steps_of(read_models: ReadModels, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one at each step the runner of ``read_models`` takes."""
    steps: list[int] = []
    step = read_models.runner.step

    def counted(*args: Any, **kwargs: Any) -> int:
        steps.append(1)
        return step(*args, **kwargs)

    monkeypatch.setattr(read_models.runner, "step", counted)
    return steps


def no_step_failed(caplog: pytest.LogCaptureFixture) -> None:
    said = [r.getMessage() for r in caplog.records if r.name.startswith("projections")]
    assert not [line for line in said if any(word in line for word in FAILED)], said


def test_two_runners_on_one_store_one_runs_the_other_stands_by_and_takes_over_when_it_stops(
    shared_store_env: dict[str, str], make_app: MakeApp, caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    caplog.set_level(logging.INFO, logger="projections")
    one, other = make_app(shared_store_env), make_app(shared_store_env)
    campaign = open_table(one, "Harbor", players=2)
    first = a_runner(one)
    second = a_runner(other)
    try:
        assert not first.runner.standing_by and second.runner.standing_by
        standing = [r.getMessage() for r in caplog.records if "standing by" in r.getMessage()]
        assert len(standing) == 1 and f"process {os.getpid()}" in standing[0]
        steps = steps_of(second, monkeypatch)

        # A query of the server that stands by waits for a position: the first catches up.
        play(other, campaign, random.Random(3), 20)
        position = a_line(other, campaign, "Asked of the one that stands by")
        assert second.wait(position, ["timeline"], timeout=30)
        assert second.timeline.entries(campaign, 0, 1000, None)[-1].position == position
        assert first.runner.wait(other.recorder.max_notification_id(), drive=False, timeout=30)
        assert steps == [], "the runner that stands by never stepped"

        first.close()  # the first stops: the second takes over
        assert eventually(lambda: not second.runner.standing_by, timeout=10)
        assert any("runs them now, taking over from" in r.getMessage() for r in caplog.records)
        play(other, campaign, random.Random(4), 20)
        head = other.recorder.max_notification_id()
        assert second.runner.wait(head, drive=False, timeout=30), "caught up in the background"
        assert steps, "the second steps now"
        check_read_models(other, second, [campaign])
        no_step_failed(caplog)
    finally:
        first.close()
        second.close()


@pytest.mark.postgres
def test_a_runner_whose_connection_to_postgres_is_cut_stands_by_and_another_takes_over(
    postgres_env: dict[str, str], make_app: MakeApp, caplog: pytest.LogCaptureFixture,
) -> None:
    """PostgreSQL lets go of the lock of a connection that ends; the runner that held it finds
    out (it looks every second) and stands by."""
    caplog.set_level(logging.INFO, logger="projections")
    one, other = make_app(postgres_env), make_app(postgres_env)
    campaign = a_table(one, "Cut")
    first, second = a_runner(one), a_runner(other)
    try:
        assert second.runner.standing_by
        election = first.election
        assert isinstance(election, PostgresElection)
        key = election.key & 0xFFFF_FFFF_FFFF_FFFF  # as pg_locks shows it: two halves
        with psycopg.connect(**conninfo(postgres_env), autocommit=True) as admin:
            cut = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' "
                "AND granted AND classid::bigint = %s AND objid::bigint = %s",
                (key >> 32, key & 0xFFFF_FFFF)).fetchall()
        assert cut == [(True,)]
        assert eventually(lambda: not second.runner.standing_by and first.runner.standing_by,
                          timeout=20)
        position = a_line(one, campaign, "After the cut")
        assert second.runner.wait(position, drive=False, timeout=30)
        assert first.wait(position, ["timeline"], timeout=30), "served by the second"
    finally:
        first.close()
        second.close()


# -- processes: `capes projections run`, `capes serve` -------------------------------------------


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_environ(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """The settings of a store several processes can share, as a host gives them."""
    if request.param == "sqlite":
        return {"CAPES_DB": str(tmp_path / "c.sqlite")}
    schema = request.getfixturevalue("postgres_env")["POSTGRES_SCHEMA"]
    return {"CAPES_DATABASE_URL": f"{POSTGRES_URL}?schema={schema}",
            "POSTGRES_POOL_SIZE": "1", "POSTGRES_MAX_OVERFLOW": "4"}


def command_env(environ: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")} | environ | {
        "PYTHONPATH": str(ROOT)}


@contextmanager
def projections_run(environ: dict[str, str], out: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``capes projections run`` on the store of ``environ``, its output (both streams) in
    ``out``; stopped (SIGTERM) at the end if it still runs."""
    with out.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "cli.main", "projections", "run", "--poll", "0.05"],
            cwd=ROOT, env=command_env(environ), stdout=log, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(30)


def status(environ: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "cli.main", "projections", "status"],
                          cwd=ROOT, env=command_env(environ), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_two_capes_projections_run_on_one_store_one_runs_and_the_other_takes_over_when_it_is_killed(
    store_environ: dict[str, str], tmp_path: Path,
) -> None:
    app = open_campaigns(store_environ)
    watcher = ReadModels(app, runs=False)
    try:
        campaign = a_table(app, "Killed")
        with projections_run(store_environ, tmp_path / "first.log") as first, \
                projections_run(store_environ, tmp_path / "second.log") as second:
            holder = watcher.election
            assert holder is not None
            assert eventually(lambda: (h := holder.holder()) is not None
                              and h.pid in (first.pid, second.pid))
            runs = holder.holder()
            assert runs is not None
            running_one, standing = (first, second) if runs.pid == first.pid else (second, first)
            standing_log = tmp_path / ("second.log" if standing is second else "first.log")
            assert eventually(lambda: "standing by" in standing_log.read_text())
            said = standing_log.read_text()
            assert f"read models: standing by: process {running_one.pid} on " in said
            assert f"run by process {running_one.pid} on " in status(store_environ)
            if "CAPES_DB" in store_environ:  # the flock beside the read models' file
                lock = read_models_file(store_environ["CAPES_DB"]) + "-runner"
                assert f'"pid":{running_one.pid}' in (held_by(lock) or "")

            position = a_line(app, campaign, "Before the kill")
            assert watcher.wait(position, list(MODELS), timeout=30)

            os.kill(running_one.pid, signal.SIGKILL)
            running_one.wait(30)
            assert eventually(lambda: "taking over from" in standing_log.read_text())
            assert (f"read models: process {standing.pid} on " in standing_log.read_text())
            position = a_line(app, campaign, "After the kill")
            assert watcher.wait(position, list(MODELS), timeout=30), "caught up"
            assert f"run by process {standing.pid} on " in status(store_environ)
            standing.terminate()
            assert standing.wait(30) == 0
            said = standing_log.read_text()
            assert not [word for word in FAILED if word in said], said
        assert "run by nobody now" in status(store_environ)
    finally:
        watcher.close()
        app.close()


def test_a_read_models_process_that_stands_by_passes_a_waiting_query_on_to_the_one_that_runs(
    store_environ: dict[str, str],
) -> None:
    """Each ``capes serve`` wakes its own read models' process (projections.wake); one that
    stands by passes it on (SQLite: the runner's socket named in its lock file; PostgreSQL: a
    NOTIFY). Ten minutes between polls and of linger: only a wake makes the runner look."""
    app = open_campaigns(store_environ)
    watcher = ReadModels(app, runs=False)
    quiet = ReadModels(app, runs=False)
    election = watcher.election
    assert election is not None

    def run_by(pid: int | None) -> bool:
        holder = election.holder()
        return holder is not None and holder.pid == pid

    try:
        campaign = a_table(app, "Passed on")
        with running(store_environ, linger=600, poll=600) as first:
            assert eventually(lambda: run_by(first.pid))
            assert watcher.wait(None, list(MODELS), timeout=30)  # its first look, at start
            time.sleep(1)  # the nudges sent meanwhile are taken, and it waits again
            with running(store_environ, linger=600, poll=600) as second:
                readers = ReadModels(app, runs=False, wake=Wake(second.wake_path))
                try:
                    position = a_line(app, campaign, "Asked of the one that stands by")
                    assert not quiet.runner.wait(position, ["timeline"], drive=False,
                                                 timeout=1.0), "nobody woke the runner"
                    assert readers.wait(position, ["timeline"], timeout=30)
                    assert run_by(first.pid)

                    first.stop()  # the second takes over, and is woken by its own server
                    assert eventually(lambda: run_by(second.pid))
                    position = a_line(app, campaign, "Asked after the first stopped")
                    assert readers.wait(position, ["timeline"], timeout=30)
                finally:
                    readers.close()
    finally:
        quiet.close()
        watcher.close()
        app.close()


def test_a_reader_without_a_wake_socket_wakes_the_runner_through_the_stores_election(
    store_environ: dict[str, str],
) -> None:
    """A server with CAPES_PROJECTIONS=external and no read models' process of its own: its
    waiting queries tell the runner through the election (SQLite: the socket the runner named
    in its lock file; PostgreSQL: a NOTIFY it listens for)."""
    app = open_campaigns(store_environ)
    reader = ReadModels(app, runs=False)
    try:
        campaign = a_table(app, "Told")
        with running(store_environ, linger=600, poll=600):
            assert reader.wait(None, list(MODELS), timeout=30)  # its first look, at start
            time.sleep(1)  # the nudges sent meanwhile are taken, and it waits again
            position = a_line(app, campaign, "Asked without a wake socket")
            assert not reader.runner.wait(position, ["timeline"], drive=False, timeout=1.0)
            assert reader.wait(position, ["timeline"], timeout=30)
    finally:
        reader.close()
        app.close()


def test_two_capes_serve_on_one_store_answer_from_one_runner_and_the_other_takes_over(
    store_environ: dict[str, str], tmp_path: Path,
) -> None:
    """No CAPES_PROJECTIONS=external needed: each server's read models' process takes part in
    the election; the server whose process stands by answers the timeline at a command's
    position; killed, the server whose process ran them leaves them to the other's."""
    logs = [tmp_path / "a.log", tmp_path / "b.log"]
    with capes_serve(store_environ, logs[0], "--log-level", "warning") as a, \
            capes_serve(store_environ, logs[1], "--log-level", "warning") as b:
        assert eventually(lambda: sum("standing by" in log.read_text() for log in logs) == 1)
        runs, stands = (a, b) if "standing by" in logs[1].read_text() else (b, a)
        stands_log = logs[1] if stands == b else logs[0]

        def timeline_at_a_command(base: str, text: str) -> None:
            opened = httpx.post(f"{base}/campaigns", json={"name": text}).json()
            campaign = opened["campaign_id"]
            seat = httpx.post(f"{base}/campaigns/{campaign}/seats", json={"name": "Ana"}).json()
            player = {"authorization": f"Bearer {seat['token']}"}
            answer = httpx.post(f"{base}/campaigns/{campaign}/commands", headers=player,
                                json={"command": {"type": "narrate", "text": text}})
            assert answer.status_code == 200, answer.text
            position = answer.json()["position"]
            timeline = httpx.get(f"{base}/campaigns/{campaign}/timeline",
                                 params={"position": position, "timeout": 10}, headers=player,
                                 timeout=30)
            assert timeline.status_code == 200, timeline.text
            assert timeline.json()["entries"][-1]["event"]["text"] == text

        timeline_at_a_command(stands, "Asked of the server that stands by")
        kill(runs)  # SIGKILL to the server and its processes: the lock goes with them
        assert eventually(lambda: "taking over from" in stands_log.read_text(), timeout=30)
        timeline_at_a_command(stands, "Asked after the other server was killed")
        said = stands_log.read_text()
        assert not [word for word in FAILED if word in said], said


@pytest.mark.postgres
def test_read_models_go_on_through_an_outage_of_postgresql_and_catch_up_after_it(
    postgres_env: dict[str, str], make_app: MakeApp, caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PostgreSQL unreachable for longer than a step's retry: the runner's thread lives on
    (its recovery, reading its positions again, failed too and ended the thread for good once
    a wait for a connection failed fast: the read models then never moved again), and once
    PostgreSQL is back they catch up with what was played meanwhile elsewhere."""
    # The runner looks at its lock's connection only once a minute: it steps on through the
    # outage (as it does for up to a second between two looks), and its steps fail.
    monkeypatch.setattr(projections.election, "CHECK_EVERY", 60.0)
    caplog.set_level(logging.INFO, logger="projections")
    writer = make_app(postgres_env)
    campaign = open_table(writer, "Harbor", players=2)
    with TcpProxy(postgres_env["POSTGRES_HOST"], int(postgres_env["POSTGRES_PORT"])) as proxy:
        behind = make_app({**postgres_env, "POSTGRES_HOST": "127.0.0.1",
                           "POSTGRES_PORT": str(proxy.port), "POSTGRES_CONNECT_TIMEOUT": "1"})
        read_models = a_runner(behind)
        try:
            assert read_models.runner.wait(writer.recorder.max_notification_id(), drive=False,
                                           timeout=30)
            proxy.down()
            play(writer, campaign, random.Random(5), 10)  # the runner's next step fails
            assert eventually(lambda: read_models.runner.error is not None, timeout=30)
            time.sleep(4)  # its retries, each reading its positions again, fail too
            assert read_models.runner._thread is not None
            assert read_models.runner._thread.is_alive(), "the read models' thread ended"
            proxy.up()
            head = writer.recorder.max_notification_id()
            assert read_models.runner.wait(head, drive=False, timeout=60), "caught up after"
            check_read_models(behind, read_models, [campaign])
        finally:
            read_models.close()


def test_the_status_of_some_read_models_names_the_runner_of_them_all_that_runs_them(
    shared_store_env: dict[str, str], make_app: MakeApp,
) -> None:
    """``capes projections status --name timeline`` while ``capes serve`` runs every read model:
    the timeline is run, by that runner; it said "run by nobody now" (only a runner of that
    set, ``capes projections run --name timeline``, counted)."""
    one, other = make_app(shared_store_env), make_app(shared_store_env)
    runner = a_runner(one)
    looker = ReadModels(other, ["timeline"], runs=False)
    try:
        assert runner.election is not None and runner.election.held
        assert looker.status()["runner"] == runner.election.holder()
    finally:
        looker.close()
        runner.close()
