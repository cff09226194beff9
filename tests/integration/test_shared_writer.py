"""``capes serve --workers N`` runs one writer process for all its workers (cli.writer_hub,
api.writer_process ``--listen``, issue 15): a campaign has one writer whichever worker a
player's request reaches, so the workers' writes to it never race, and it is started again
when it fails."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import httpx
import pytest

from api.writer import RemoteWriter, WriterGone, execute_request, frame
from api.writer_pool import remote_writer
from application.campaigns import open_campaigns
from application.config import WRITER_SOCKET
from cli.writer_hub import WriterHub, wanted
from domain.capes import commands as c
from scripts.processes import descendants, running
from tests.http.helpers import (
    DEMO_STEPS,
    PROMPT,
    RUNNING,
    TIMEOUT,
    Table,
    capes_serve,
    client,
    open_campaign,
    read_until,
    server,
    sse_messages,
    subscribe,
)
from tests.integration.test_read_models_process import ROOT, eventually


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[tuple[WriterHub, UUID]]:
    """The shared writer process on a fresh SQLite file holding one campaign of two seats."""
    environ = {"CAPES_DB": str(tmp_path / "w.sqlite"), "CAPES_WRITER": "process"}
    app = open_campaigns(environ)
    campaign = app.create(c.CreateCampaign(name="Shared")).campaign_id
    for name in ("Ana", "Ben"):
        app.execute(campaign, c.SeatPlayer(name=name))
    app.close()
    writers = WriterHub({k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
                        | environ)
    writers.start()
    try:
        yield writers, campaign
    finally:
        writers.stop()


def writer_processes(pid: int) -> list[int]:
    """The writer processes below ``pid``."""
    return running(descendants(pid), "api.writer_process")


def test_commands_from_two_servers_on_one_campaign_go_through_one_writer_without_a_race(
    hub: tuple[WriterHub, UUID],
) -> None:
    writers, campaign = hub

    async def play() -> list[int]:
        # Two workers' handles, as two server processes hold them.
        first, second = (RemoteWriter({WRITER_SOCKET: writers.path}) for _ in range(2))
        try:
            answers = await asyncio.gather(*(
                (first if i % 2 else second).execute(
                    campaign, c.Narrate(seat=1 + i % 2, text=f"line {i}"))
                for i in range(40)))
            return [a.version for a in answers]
        finally:
            await first.stop()
            await second.stop()

    versions = asyncio.run(play())
    # No command refused as stale: the two servers' commands had one writer and one head.
    assert sorted(versions) == list(range(min(versions), min(versions) + 40))
    assert writers.running, "a server that goes away does not stop the shared writer"


def test_a_shared_writer_process_that_dies_is_started_again_and_servers_connect_anew(
    hub: tuple[WriterHub, UUID],
) -> None:
    writers, campaign = hub

    async def around_a_crash() -> tuple[int, int]:
        writer = RemoteWriter({WRITER_SOCKET: writers.path})
        try:
            before = await writer.execute(campaign, c.Narrate(seat=1, text="before"))
            first = writers.pid
            assert first is not None
            os.kill(first, signal.SIGKILL)
            with pytest.raises(WriterGone):  # waiting on the dead one: 503
                await writer.execute(campaign, c.Narrate(seat=1, text="lost?"))
            assert await asyncio.to_thread(eventually, lambda: writers.starts == 2)
            after = await writer.execute(campaign, c.Narrate(seat=1, text="after"))
            return before.version, after.version
        finally:
            await writer.stop()

    before, after = asyncio.run(around_a_crash())
    assert after > before


async def _until(check: Callable[[], bool], timeout: float = TIMEOUT) -> bool:
    """Whether ``check()`` comes true within ``timeout`` seconds, the event loop running."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.01)
    return True


def _listening(environ: dict[str, str]) -> tuple[Any, list[tuple[UUID, bytes]]]:
    """A worker's handle on the shared writer (or writers: api/writer_pool.py), and the live
    messages it hears."""
    writer = remote_writer(environ)
    heard: list[tuple[UUID, bytes]] = []
    writer.on_live = lambda campaign_id, message: heard.append((campaign_id, message))
    return writer, heard


def test_a_live_message_relayed_by_one_worker_reaches_every_other_worker_and_not_itself(
    hub: tuple[WriterHub, UUID],
) -> None:
    """What lets the workers of ``capes serve --workers N`` share their live events with no
    Redis: each relays its live messages through the writer process they share."""
    writers, campaign = hub

    async def relay() -> list[list[tuple[UUID, bytes]]]:
        workers = [_listening({WRITER_SOCKET: writers.path}) for _ in range(3)]
        try:
            for writer, _ in workers:
                await writer.start()
            first = workers[0][0]
            first.relay(campaign, b"1 1\nfirst")
            await first.execute(campaign, c.Narrate(seat=1, text="in between"))
            first.relay(campaign, b"2 2\nsecond")
            assert await _until(lambda: all(len(h) == 2 for _, h in workers[1:]))
            await asyncio.sleep(0.1)  # nothing more comes, to the sender either
            return [heard for _, heard in workers]
        finally:
            for writer, _ in workers:
                await writer.stop()

    sender, *others = asyncio.run(relay())
    assert sender == []
    for heard in others:
        assert heard == [(campaign, b"1 1\nfirst"), (campaign, b"2 2\nsecond")]


def test_a_worker_hears_the_others_again_once_the_shared_writer_is_started_again(
    hub: tuple[WriterHub, UUID],
) -> None:
    """It connects again by itself (it may have no request to send, only streams to feed)."""
    writers, campaign = hub

    async def around_a_crash() -> list[tuple[UUID, bytes]]:
        (sender, _), (listener, heard) = (_listening({WRITER_SOCKET: writers.path})
                                          for _ in range(2))
        try:
            await sender.start()
            await listener.start()
            pid = writers.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            assert await asyncio.to_thread(eventually, lambda: writers.starts == 2)
            assert await _until(lambda: listener._transport is not None)
            await sender.execute(campaign, c.Narrate(seat=1, text="after"))  # connects anew
            sender.relay(campaign, b"3 3\nafter")
            assert await _until(lambda: len(heard) == 1)
            return heard
        finally:
            await sender.stop()
            await listener.stop()

    assert asyncio.run(around_a_crash()) == [(campaign, b"3 3\nafter")]


def test_a_stream_on_one_worker_hears_the_commands_run_on_another_with_no_redis(
    hub: tuple[WriterHub, UUID], tmp_path: Path,
) -> None:
    """Two workers of one writer process, as ``capes serve --workers 2`` runs them, but each
    on a port of its own: the stream is on one, every command goes to the other (the kernel
    hands ``capes serve``'s connections to either worker as it likes)."""
    writers, _ = hub
    environ = {"CAPES_DB": str(tmp_path / "w.sqlite"), "CAPES_WRITER": "process",
               WRITER_SOCKET: writers.path, "CAPES_PROJECTIONS": "external"}
    with server(environ, tmp_path / "one.log") as one, server(environ, tmp_path / "two.log") \
            as two, client(one, read=PROMPT) as watcher:
        with client(one) as http:
            table = open_campaign(http, players=["Ana", "Ben", "Cleo"])
            version = table.version()
        stream = subscribe(watcher, table)
        heard, sent = [], []
        try:
            messages = sse_messages(stream)
            read_until(messages, version)
            with client(two) as http:
                elsewhere = Table(http, table.campaign_id, table.owner_token, table.tokens)
                for narration, command in DEMO_STEPS[:3]:
                    applied = elsewhere.play(narration, command)
                    sent += applied["events"]
                    heard += read_until(messages, applied["version"], limit=PROMPT)
        finally:
            stream.close()
    assert sent and [(m.id, m.event) for m in heard] == [(e["position"], e["type"])
                                                         for e in sent]


def test_a_server_killed_with_answers_it_had_not_read_does_not_stop_the_shared_writer(
    hub: tuple[WriterHub, UUID],
) -> None:
    """Its connection is reset, not closed (the kernel says so when unread data is lost):
    only that connection goes."""
    writers, campaign = hub
    killed = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    assert eventually(lambda: killed.connect_ex(writers.path) == 0), "it listens"
    killed.sendall(frame((1, "x", execute_request(campaign, c.Narrate(seat=1, text="unread")))))
    assert select.select([killed], [], [], TIMEOUT)[0], "the writer answers"
    time.sleep(0.2)  # the ready frame and the answer both wait, unread
    killed.close()

    async def after() -> int:
        writer = RemoteWriter({WRITER_SOCKET: writers.path})
        try:
            return (await writer.execute(campaign, c.Narrate(seat=2, text="still here"))).version
        finally:
            await writer.stop()

    assert asyncio.run(after()) > 0
    assert writers.running and writers.starts == 1


def test_stopping_the_shared_writer_lets_it_finish_and_exit_cleanly(
    hub: tuple[WriterHub, UUID],
) -> None:
    writers, _ = hub
    process = writers._process
    assert process is not None
    writers.stop()
    assert process.returncode == 0
    assert not Path(writers.path).parent.exists(), "its socket's folder goes with it"


def test_capes_serve_shares_one_writer_process_between_its_workers_only_with_several() -> None:
    assert wanted({"CAPES_WRITER": "process"}, 2)
    assert not wanted({"CAPES_WRITER": "process"}, 1)  # its one worker starts its own
    assert not wanted({"CAPES_WRITER": "thread"}, 4)


def test_two_workers_of_capes_serve_share_one_writer_and_stop_it_on_ctrl_c(
    tmp_path: Path,
) -> None:
    log = tmp_path / "serve.log"
    with capes_serve({"CAPES_DB": str(tmp_path / "c.sqlite")}, log, "--workers", "2",
                     "--log-level", "warning") as base:
        serve = RUNNING[base]
        opened = httpx.post(f"{base}/campaigns", json={"name": "Two workers"}).json()
        campaign = opened["campaign_id"]
        players = [{"authorization": "Bearer " + httpx.post(
            f"{base}/campaigns/{campaign}/seats", json={"name": name}).json()["token"]}
            for name in ("Ana", "Ben")]
        # New connections each time: the kernel spreads them over both workers.
        answers = [httpx.post(f"{base}/campaigns/{campaign}/commands",
                              headers=players[i % 2], timeout=TIMEOUT,
                              json={"command": {"type": "narrate", "text": f"line {i}"}})
                   for i in range(30)]
        assert [a.status_code for a in answers] == [200] * 30, [a.text for a in answers]
        versions = [a.json()["version"] for a in answers]
        assert versions == list(range(versions[0], versions[0] + 30))
        shared = writer_processes(serve.pid)
        assert len(shared) == 1, (shared, log.read_text())
        assert b"--listen" in Path(f"/proc/{shared[0]}/cmdline").read_bytes()
        os.killpg(serve.pid, signal.SIGINT)  # Ctrl-C in its terminal
        assert serve.wait(60) == 0, log.read_text()
        assert not Path(f"/proc/{shared[0]}").exists()
    assert "one writer process for every worker" in log.read_text()


def test_a_shared_writer_whose_capes_serve_is_gone_stops_and_removes_its_socket_folder(
    tmp_path: Path,
) -> None:
    """``capes serve`` killed outright cannot clean up: its end of the control pipe closes,
    and the writer process finishes, removes its socket and that folder, and exits 0."""
    folder = tmp_path / "capes-killed"
    folder.mkdir()
    theirs, ours = os.pipe()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
    env |= {"CAPES_DB": str(tmp_path / "gone.sqlite"), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-m", "api.writer_process", "--listen", str(folder / "writer.sock"),
         "--control", str(theirs)], cwd=ROOT, env=env, pass_fds=(theirs,))
    os.close(theirs)
    try:
        assert eventually(lambda: (folder / "writer.sock").exists()), "it listens"
    finally:
        os.close(ours)  # capes serve is gone
    assert process.wait(TIMEOUT) == 0
    assert not folder.exists()
