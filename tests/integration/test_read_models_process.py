"""``capes serve`` runs the read models in a process of their own beside its workers, which
read them and wake it when a query waits for a position (cli.read_models_process,
projections.wake, issue 15)."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from uuid import UUID

import httpx
import pytest

from application import sqlite_store
from application.campaigns import Campaigns, open_campaigns
from application.config import SettingError
from cli.priority import serve_priority
from cli.read_models_process import ReadModelsProcess, wanted
from domain.capes import commands as c
from projections.service import ReadModels, mode, open_read_models
from projections.wake import ENV as WAKE_ENV
from projections.wake import PARENT_ENV, Wake
from scripts import processes
from tests.http.helpers import RUNNING, capes_serve

ROOT = Path(__file__).resolve().parents[2]


def eventually(check: Callable[[], bool], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def read_models(serve: int) -> list[int]:
    """The read models' process of the server ``serve`` (none between one and the next), a
    child of whichever of its threads started it."""
    return processes.running(processes.children(serve), "projections run")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[dict[str, str], Campaigns]]:
    environ = {"CAPES_DB": str(tmp_path / "c.sqlite")}
    app = open_campaigns(environ)
    try:
        yield environ, app
    finally:
        app.close()


def a_table(app: Campaigns, name: str) -> UUID:
    campaign = app.create(c.CreateCampaign(name=name)).campaign_id
    app.execute(campaign, c.SeatPlayer(name="Ana"))
    return campaign


@contextmanager
def running(environ: dict[str, str], **pace: float) -> Iterator[ReadModelsProcess]:
    """The read models' process of ``capes serve``, started on the store of ``environ``."""
    beside = ReadModelsProcess(dict(os.environ) | environ, **pace)
    beside.start()
    try:
        yield beside
    finally:
        beside.stop()
    assert not beside.running


def a_line(app: Campaigns, campaign_id: UUID, text: str) -> int:
    """A narrated line; its store position."""
    position = app.execute(campaign_id, c.Narrate(seat=1, text=text)).position
    assert position is not None
    return position


def test_capes_serve_runs_the_read_models_in_a_process_of_its_own_unless_told_otherwise(
) -> None:
    assert mode({}) == "process"
    assert wanted({"CAPES_DB": "c.sqlite"})
    assert wanted({"CAPES_DATABASE_URL": "postgresql://db/capes"})
    assert not wanted({"CAPES_DB": ":memory:"})  # nothing another process could read
    assert not wanted({"CAPES_DB": "c.sqlite", "CAPES_PROJECTIONS": "internal"})
    assert not wanted({"CAPES_DB": "c.sqlite", "CAPES_PROJECTIONS": "external"})
    with pytest.raises(ValueError, match="CAPES_PROJECTIONS must be process, internal, external"):
        mode({"CAPES_PROJECTIONS": "threads"})


def test_a_waiting_query_wakes_the_read_models_process_which_otherwise_waits_for_its_poll(
    store: tuple[dict[str, str], Campaigns],
) -> None:
    environ, app = store
    campaign = a_table(app, "Wake")
    first = a_line(app, campaign, "Before")
    # Ten minutes between polls and a ten-minute linger: only a wake makes it look again.
    with running(environ, linger=600, poll=600) as beside:
        waker = Wake(beside.wake_path)
        readers = ReadModels(app, runs=False, wake=waker)
        quiet = ReadModels(app, runs=False)
        try:
            assert readers.wait(first, ["timeline"], timeout=30)  # its first look, at start
            time.sleep(1)  # the wakes sent meanwhile are taken, and it waits again
            second = a_line(app, campaign, "After")
            # Polled without a wake (a reader with none wakes it through the store's election:
            # test_read_models_election.py), the runner does not look.
            assert not quiet.runner.wait(second, ["timeline"], drive=False, timeout=1.0)
            assert readers.wait(second, ["timeline"], timeout=30)
            entries = readers.timeline.entries(campaign, 0, 100, None)
            assert [e.position for e in entries][-1] == second
        finally:
            quiet.close()
            readers.close()


def test_a_read_models_process_that_fails_is_started_again(
    store: tuple[dict[str, str], Campaigns],
) -> None:
    environ, app = store
    campaign = a_table(app, "Again")
    with running(environ) as beside:
        first = beside.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        assert eventually(lambda: beside.starts == 2 and beside.pid != first)
        position = a_line(app, campaign, "After the crash")
        readers = open_read_models(app, environ=environ | {
            "CAPES_PROJECTIONS": "external", WAKE_ENV: beside.wake_path})
        try:
            assert readers.wake is not None
            assert readers.wait(position, ["timeline"], timeout=30)
        finally:
            readers.close()


@pytest.mark.parametrize("workers", ["1", "2"])
def test_capes_serve_says_once_that_it_starts_its_read_models_process_again(
    tmp_path: Path, workers: str,
) -> None:
    """One line in the server's output for each start again (it was printed and logged: two),
    with one worker or several."""
    log = tmp_path / "serve.log"
    with capes_serve({"CAPES_DB": str(tmp_path / "c.sqlite")}, log,
                     "--log-level", "warning", "--workers", workers) as base:
        serve = RUNNING[base].pid

        [first] = read_models(serve)
        os.kill(first, signal.SIGKILL)
        assert eventually(lambda: read_models(serve) not in ([], [first])), log.read_text()
        # Read while it runs: stopped with its process group, the process says it ended.
        said = [line for line in log.read_text().splitlines() if "process ended with" in line]
    assert len(said) == 1, said
    # As the server's own lines read (uvicorn's format).
    assert said[0] == ("ERROR:    the read models' process ended with -9; starting it again "
                       "in 1.0 s"), said


def test_a_read_models_process_whose_server_is_gone_stops_and_removes_its_socket_folder(
    store: tuple[dict[str, str], Campaigns], tmp_path: Path,
) -> None:
    """A server killed outright (SIGKILL) cannot clean up: its read models' process does."""
    environ, _ = store
    folder = tmp_path / "capes-killed"
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")} | environ | {
        WAKE_ENV: str(folder / "wake.sock"), PARENT_ENV: "1"}  # not its parent: gone
    env["PYTHONPATH"] = str(ROOT)
    process = subprocess.run([sys.executable, "-m", "cli.main", "projections", "run"],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert process.returncode == 0, process.stderr
    assert "stopped at" in process.stdout
    assert not folder.exists()


def test_capes_serve_answers_the_timeline_of_a_command_from_its_read_models_process(
    tmp_path: Path,
) -> None:
    log = tmp_path / "serve.log"
    with capes_serve({"CAPES_DB": str(tmp_path / "c.sqlite")}, log,
                     "--log-level", "warning") as base:
        opened = httpx.post(f"{base}/campaigns", json={"name": "Served"}).json()
        campaign = opened["campaign_id"]
        seat = httpx.post(f"{base}/campaigns/{campaign}/seats", json={"name": "Ana"}).json()
        player = {"authorization": f"Bearer {seat['token']}"}
        answer = httpx.post(f"{base}/campaigns/{campaign}/commands", headers=player,
                            json={"command": {"type": "narrate", "text": "Hello"}})
        assert answer.status_code == 200, answer.text
        position = answer.json()["position"]
        timeline = httpx.get(f"{base}/campaigns/{campaign}/timeline",
                             params={"position": position}, headers=player, timeout=10)
        assert timeline.status_code == 200, timeline.text
        assert timeline.json()["entries"][-1]["position"] == position
        serve = RUNNING[base].pid
        assert read_models(serve), log.read_text()
    assert "Read models: in a process of their own" in log.read_text()


def test_capes_serve_runs_its_read_models_at_idle_priority_unless_told_normal() -> None:
    """Requests and writes first: the read models take the CPU they leave (cli/priority.py)."""
    assert serve_priority({}) == "idle"
    assert serve_priority({"CAPES_READ_MODELS_PRIORITY": " Normal "}) == "normal"
    with pytest.raises(SettingError, match="CAPES_READ_MODELS_PRIORITY=low: must be idle or "
                       "normal"):
        serve_priority({"CAPES_READ_MODELS_PRIORITY": "low"})
    told = ReadModelsProcess({"CAPES_DB": "c.sqlite", "CAPES_READ_MODELS_PRIORITY": "normal"})
    try:
        assert told.command()[0][-2:] == ["--priority", "normal"]
    finally:
        os.rmdir(told.folder)


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_the_read_models_process_of_capes_serve_runs_at_sched_idle(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with capes_serve({"CAPES_DB": str(tmp_path / "c.sqlite")}, log,
                     "--log-level", "warning") as base:
        serve = RUNNING[base].pid
        [child] = read_models(serve)
        assert eventually(lambda: os.sched_getscheduler(child) == os.SCHED_IDLE)
        assert os.sched_getscheduler(serve) != os.SCHED_IDLE  # the server itself is not
    assert "priority: SCHED_IDLE" in log.read_text()


@pytest.mark.parametrize("priority, checkpoints", [("normal", True), ("idle", False)])
def test_the_read_models_process_at_idle_priority_never_checkpoints_the_campaigns_file(
    store: tuple[dict[str, str], Campaigns], priority: str, checkpoints: bool,
) -> None:
    """A restart of the log holds every writer while it runs: never by a process that gets the
    CPU only when nothing else wants it. The servers' processes checkpoint the file."""
    environ, app = store
    app.close()  # this test's own process must not claim the file either
    lock = sqlite_store.lock_path(environ["CAPES_DB"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")} | environ | {
        "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "cli.main", "projections", "run",
                                "--priority", priority], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert "Following" in process.stdout.readline()
        time.sleep(3 * sqlite_store.CHECKPOINT_EVERY)  # its checkpointer's rounds, if any
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = False
            except OSError:
                held = True
        finally:
            os.close(fd)
        assert held == checkpoints
    finally:
        process.terminate()
        process.wait(30)


def test_capes_serve_refuses_a_read_models_priority_it_does_not_know(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")} | {
        "CAPES_DB": str(tmp_path / "c.sqlite"), "CAPES_READ_MODELS_PRIORITY": "low",
        "PYTHONPATH": str(ROOT)}
    process = subprocess.run([sys.executable, "-m", "cli.main", "serve", "--port", "1"],
                             cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert process.returncode != 0
    assert "CAPES_READ_MODELS_PRIORITY=low: must be idle or normal" in process.stderr
    assert not (tmp_path / "c.sqlite").exists(), "nothing opened"


def test_capes_serve_stopped_by_sigterm_stops_its_read_models_process_and_cleans_up(
    tmp_path: Path,
) -> None:
    with capes_serve({"CAPES_DB": str(tmp_path / "c.sqlite")}, tmp_path / "serve.log",
                     "--log-level", "warning") as base:
        serve = RUNNING[base]
        [child] = read_models(serve.pid)
        environ = Path(f"/proc/{child}/environ").read_bytes().split(b"\0")
        wake = next(v for v in environ if v.startswith(WAKE_ENV.encode() + b"=")).split(b"=")[1]
        os.kill(serve.pid, signal.SIGTERM)  # the server alone, as a service manager may
        serve.wait(30)
        assert not Path(f"/proc/{child}").exists()  # stopped and reaped by the server
        assert not Path(os.fsdecode(wake)).parent.exists()
