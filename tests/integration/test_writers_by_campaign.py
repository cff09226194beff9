"""``CAPES_WRITERS=N``: ``capes serve --workers N`` on PostgreSQL with several writer processes,
each the one writer of its share of the campaigns (api/writer_pool.py, cli/writer_hub.py,
issue 15). A campaign still has one writer whichever worker a request reaches, so its commands
never race; the setting is checked before anything starts."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from uuid import UUID, uuid4

import httpx
import pytest
from stores import POSTGRES_URL

from api.writer import WriterGone
from api.writer_pool import WriterPool, remote_writer
from application.campaigns import open_campaigns
from application.config import WRITER_SOCKET, SettingError, writer_count
from cli.main import main
from cli.writer_hub import hubs
from domain.capes import commands as c
from tests.http.helpers import RUNNING, TIMEOUT, capes_serve
from tests.integration.test_read_models_process import eventually
from tests.integration.test_shared_writer import _listening, _until, writer_processes

SQLITE = {"CAPES_DB": "/tmp/never-made.sqlite"}


def test_one_writer_serves_every_worker_unless_the_host_asks_for_more() -> None:
    postgres = {"CAPES_DATABASE_URL": POSTGRES_URL}
    assert writer_count(postgres, 2) == 1
    assert writer_count(postgres | {"CAPES_WRITERS": "2"}, 2) == 2
    assert writer_count(SQLITE | {"CAPES_WRITERS": "1"}, 4) == 1


@pytest.mark.parametrize(("value", "why"), [
    ("3", "must be a whole number from 1 to the number of workers (2)"),
    ("0", "must be a whole number from 1 to the number of workers (2)"),
    ("two", "must be a whole number from 1 to the number of workers (2)"),
])
def test_a_number_of_writers_that_is_not_one_to_the_workers_is_refused_naming_it(
    value: str, why: str,
) -> None:
    with pytest.raises(SettingError) as refused:
        writer_count({"CAPES_DATABASE_URL": POSTGRES_URL, "CAPES_WRITERS": value}, 2)
    assert str(refused.value) == f"CAPES_WRITERS={value}: {why}"


def test_several_writers_on_an_sqlite_file_are_refused_and_capes_serve_stops_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CAPES_DB", str(tmp_path / "capes.sqlite"))
    monkeypatch.setenv("CAPES_WRITERS", "2")
    with socket.socket() as taken:  # should the setting pass, it serves nothing
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        assert main(["serve", "--workers", "2", "--port", str(taken.getsockname()[1])]) == 2
    assert capsys.readouterr().err.strip() == (
        "capes: CAPES_WRITERS=2: more than one writer needs PostgreSQL: an SQLite file takes "
        "one writer at a time")


def test_capes_serve_makes_one_hub_a_writer_and_sets_the_sockets_itself() -> None:
    environ = {"CAPES_DATABASE_URL": POSTGRES_URL, "CAPES_WRITER": "process",
               "CAPES_WRITERS": "2", WRITER_SOCKET: "/left/by/someone.sock"}
    made = hubs(environ, 2)
    try:
        assert len(made) == 2
        assert WRITER_SOCKET not in environ, "capes serve's own to set, once each starts"
        assert [h.banner.split(" (")[0] for h in made] == [
            "Writes: writer process 1 of 2 for every worker, each the writer of its share of "
            "the campaigns",
            "Writes: writer process 2 of 2 for every worker, each the writer of its share of "
            "the campaigns"]
    finally:
        for hub in made:
            hub.stop()
    assert hubs({"CAPES_DATABASE_URL": POSTGRES_URL, "CAPES_WRITER": "process"}, 1) == []


def _campaigns_for_each_writer(environ: dict[str, str], count: int) -> list[UUID]:
    """A campaign of two seats for each writer: the k-th one's id falls to writer k."""
    app = open_campaigns(environ)
    found: dict[int, UUID] = {}
    try:
        while len(found) < count:
            campaign_id = uuid4()
            if campaign_id.int % count in found:
                continue
            app.create(c.CreateCampaign(name="Shared"), campaign_id=campaign_id)
            for name in ("Ana", "Ben"):
                app.execute(campaign_id, c.SeatPlayer(name=name))
            found[campaign_id.int % count] = campaign_id
    finally:
        app.close()
    return [found[k] for k in range(count)]


@pytest.fixture
def two_writers(postgres_schema_url: str) -> Iterator[tuple[dict[str, str], list[UUID]]]:
    """Two shared writer processes on a fresh PostgreSQL schema, as ``capes serve --workers 2``
    with ``CAPES_WRITERS=2`` starts them; the settings a worker inherits, and a campaign for
    each writer."""
    environ = {"CAPES_DATABASE_URL": postgres_schema_url, "CAPES_WRITER": "process",
               "CAPES_WRITERS": "2"}
    campaigns = _campaigns_for_each_writer(environ, 2)
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")} | environ
    started = hubs(inherited, 2)
    for hub in started:
        hub.start()
    try:
        # Named in the order they started, the same for every worker that inherits them.
        assert inherited[WRITER_SOCKET].split(os.pathsep) == [hub.path for hub in started]
        pool = remote_writer(inherited)
        assert isinstance(pool, WriterPool)
        assert [w.shared for w in pool.writers] == [hub.path for hub in started]
        assert [pool.of(campaign) for campaign in campaigns] == list(pool.writers)
        yield inherited, campaigns
    finally:
        for hub in reversed(started):
            hub.stop()


@pytest.fixture
def postgres_schema_url(postgres_env: dict[str, str]) -> str:
    return f"{POSTGRES_URL}?schema={postgres_env['POSTGRES_SCHEMA']}"


@pytest.mark.postgres
def test_two_servers_commands_on_two_campaigns_each_go_to_that_campaigns_one_writer(
    two_writers: tuple[dict[str, str], list[UUID]],
) -> None:
    environ, campaigns = two_writers

    async def play() -> dict[UUID, list[int]]:
        servers = [remote_writer(environ) for _ in range(2)]
        try:
            answers = await asyncio.gather(*(
                servers[i % 2].execute(campaigns[(i // 2) % 2],
                                       c.Narrate(seat=1 + i % 2, text=f"line {i}"))
                for i in range(40)))
            versions: dict[UUID, list[int]] = {campaign: [] for campaign in campaigns}
            for i, answer in enumerate(answers):
                versions[campaigns[(i // 2) % 2]].append(answer.version)
            return versions
        finally:
            for server in servers:
                await server.stop()

    for versions in asyncio.run(play()).values():
        # None refused as stale: each campaign's commands, from both servers, had one writer.
        assert sorted(versions) == list(range(min(versions), min(versions) + 20))


@pytest.mark.postgres
def test_a_campaign_whose_writer_died_waits_for_it_while_the_others_campaigns_play_on(
    two_writers: tuple[dict[str, str], list[UUID]],
) -> None:
    """The proof that each campaign has its own writer: the first writer killed, the second
    writer's campaign is not touched by it."""
    environ, (first, second) = two_writers
    # Both up (one that failed at its start is started again, by its watching thread).
    assert eventually(lambda: len(writer_processes(os.getpid())) == 2)
    pids = writer_processes(os.getpid())

    async def around_a_crash() -> tuple[int, int]:
        pool = remote_writer(environ)
        assert isinstance(pool, WriterPool)
        try:
            await pool.execute(first, c.Narrate(seat=1, text="before"))
            before = (await pool.execute(second, c.Narrate(seat=1, text="before"))).version
            for pid in pids:  # the first writer's process: the one listening at its socket
                if pool.writers[0].shared.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    os.kill(pid, signal.SIGKILL)
            with pytest.raises(WriterGone):
                await pool.execute(first, c.Narrate(seat=1, text="lost?"))
            after = (await pool.execute(second, c.Narrate(seat=1, text="after"))).version
            # And the first comes back (capes serve's supervision starts it again).
            again = await pool.execute(first, c.Narrate(seat=1, text="again"))
            assert again.version > 0
            return before, after
        finally:
            await pool.stop()

    before, after = asyncio.run(around_a_crash())
    assert after == before + 1


@pytest.mark.postgres
def test_a_live_message_reaches_every_other_worker_once_through_its_campaigns_writer(
    two_writers: tuple[dict[str, str], list[UUID]],
) -> None:
    environ, campaigns = two_writers

    async def relay() -> list[list[tuple[UUID, bytes]]]:
        workers = [_listening(environ) for _ in range(3)]
        try:
            for pool, _ in workers:
                await pool.start()
            sender = workers[0][0]
            for campaign in campaigns:
                sender.relay(campaign, b"1 1\n" + campaign.bytes)
            assert await _until(lambda: all(len(h) == 2 for _, h in workers[1:]))
            await asyncio.sleep(0.1)  # nothing more comes: not twice, not to the sender
            return [heard for _, heard in workers]
        finally:
            for pool, _ in workers:
                await pool.stop()

    sender, *others = asyncio.run(relay())
    assert sender == []
    for heard in others:
        assert sorted(heard) == sorted((cid, b"1 1\n" + cid.bytes) for cid in campaigns)


@pytest.mark.postgres
def test_capes_serve_with_two_writers_plays_every_campaign_through_its_own_and_stops_on_ctrl_c(
    postgres_schema_url: str, tmp_path: Path,
) -> None:
    log = tmp_path / "serve.log"
    with capes_serve({"CAPES_DATABASE_URL": postgres_schema_url, "CAPES_WRITERS": "2"}, log,
                     "--workers", "2", "--log-level", "warning") as base:
        serve = RUNNING[base]
        shared = writer_processes(serve.pid)
        assert len(shared) == 2, (shared, log.read_text())
        tables = []
        for name in ("One", "Two", "Three", "Four"):
            campaign = httpx.post(f"{base}/campaigns", json={"name": name},
                                  timeout=TIMEOUT).json()["campaign_id"]
            token = httpx.post(f"{base}/campaigns/{campaign}/seats", json={"name": "Ana"},
                               timeout=TIMEOUT).json()["token"]
            tables.append((campaign, {"authorization": f"Bearer {token}"}))
        for campaign, headers in tables:
            # New connections each time: the kernel spreads them over both workers.
            answers = [httpx.post(f"{base}/campaigns/{campaign}/commands", headers=headers,
                                  timeout=TIMEOUT,
                                  json={"command": {"type": "narrate", "text": f"line {i}"}})
                       for i in range(10)]
            assert [a.status_code for a in answers] == [200] * 10, [a.text for a in answers]
            versions = [a.json()["version"] for a in answers]
            assert versions == list(range(versions[0], versions[0] + 10))
        health = httpx.get(f"{base}/health", timeout=TIMEOUT).json()
        assert health["writer"] == "ok", health
        os.killpg(serve.pid, signal.SIGINT)  # Ctrl-C in its terminal
        assert serve.wait(60) == 0, log.read_text()
        assert eventually(lambda: not any(Path(f"/proc/{p}").exists() for p in shared))
    text = log.read_text()
    assert "writer process 1 of 2" in text and "writer process 2 of 2" in text, text
