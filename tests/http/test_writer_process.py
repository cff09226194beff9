"""The writer in a process of its own (``CAPES_WRITER=process``, api/writer.py, issue 15).

The server hands every write and every read of now to a process of its own over a socket. What
a table sees must not change: the same answers, the same refusals, the same board, tokens
that stop working when a new one is issued; a writer process that dies costs the requests in
flight a 503 and nothing else.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import httpx
import msgspec
import pytest
from helpers import (
    DEMO_STEPS,
    TIMEOUT,
    a_scene_played_to_its_end,
    bearer,
    demo_table,
    disputed_away,
    open_campaign,
    read_until,
    server,
    sse_messages,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from litestar.testing import TestClient

from api.app import create_app
from api.writer import (
    CampaignIds,
    Frames,
    RemoteWriter,
    WriterGone,
    execute_request,
    frame,
    pack_command,
    pack_error,
    unpack_command,
    unpack_error,
    view_request,
)
from api.writer_process import Request, WriterProcess, _Peer
from application.campaigns import open_campaigns
from application.committer import SYNC_AFTER
from application.config import SettingError, serve_default, writer_mode
from application.errors import CampaignBroken, CampaignConflict, CampaignNotFound
from domain.capes import commands as c
from domain.capes.commands import CreateCampaign, SeatPlayer
from domain.editions import EDITIONS
from domain.errors import RuleViolation
from domain.record import RECORD_COMMAND_TYPES

#: The demo's steps before its first roll (the server draws the dice: the rest depends on them).
DICE = next(i for i, (_, command) in enumerate(DEMO_STEPS) if isinstance(command, c.RollDie))


@pytest.fixture
def http(tmp_path: Path) -> Iterator[TestClient[Any]]:
    app = create_app(environ={"CAPES_DB": str(tmp_path / "s.sqlite"), "CAPES_WRITER": "process"},
                     rate_limit=0)
    with TestClient(app, timeout=TIMEOUT) as client:
        yield client


def writer_of(client: TestClient[Any]) -> RemoteWriter:
    services = client.app.dependencies["services"].dependency()
    assert isinstance(services.committer, RemoteWriter)
    return services.committer


def test_the_demo_plays_through_the_writer_process_and_the_log_holds_every_answer(
    http: TestClient[Any],
) -> None:
    table = demo_table(http)
    before = table.version()
    answered = []
    for narration, command in DEMO_STEPS[:DICE]:
        applied = table.play(narration, command)
        answered += applied["events"]
        assert applied["version"] == answered[-1]["position"]
    assert [e["position"] for e in answered] == list(range(before + 1, before + len(answered) + 1))
    logged = table.query("events", after=before)["events"]
    assert logged == answered, "every event answered is the one stored"


def test_refusals_cross_the_process_with_their_kind_and_rule_id(http: TestClient[Any]) -> None:
    table = open_campaign(http, players=["Ana", "Ben"])
    version = table.version()
    refused = table.send(c.EndTurn(seat=1))
    assert refused.status_code == 422
    assert refused.json()["rule"] == "R-SCENE-1"
    stale = table.send(c.FrameScene(seat=1, text="Docks"), expected_version=1)
    assert stale.status_code == 409 and "changed since version 1" in stale.json()["detail"]
    missing = http.post(f"/campaigns/{uuid4()}/commands", headers=table.as_seat(1),
                        json={"command": {"type": "narrate", "text": "hi"}})
    assert missing.status_code == 401  # no such campaign's token: refused before the writer
    assert table.version() == version, "the refusals stored nothing"
    framed = table.send(c.FrameScene(seat=1, text="Docks"), expected_version=version)
    assert framed.status_code == 200


def test_the_board_of_now_follows_each_command_at_once(http: TestClient[Any]) -> None:
    table = open_campaign(http, players=["Ana", "Ben"])
    assert table.query("board")["scene"] is None
    table.play("", c.FrameScene(seat=1, text="Harbor City, midnight"))
    assert table.query("board")["scene_text"] == "Harbor City, midnight"
    assert table.query("ledgers") is not None


def test_the_server_answers_a_board_it_holds_without_the_writer_and_sees_other_processes_writes(
    http: TestClient[Any], tmp_path: Path,
) -> None:
    """api/held_views.py: the second read is answered from the board the server holds; a
    write by another process, straight into the store, is seen at the next read made more than
    the writer's :data:`SYNC_AFTER` after it (the writer's own promise for other processes'
    writes: the server's views add nothing to it)."""
    table = open_campaign(http, players=["Ana", "Ben"])
    writer = writer_of(http)
    asked: list[str] = []
    ask = writer._ask

    async def counted(operation: str, arguments: Any) -> Any:
        asked.append(operation)
        return await ask(operation, arguments)

    writer._ask = counted  # type: ignore[method-assign]
    assert table.query("board")["players"] == ["Ana", "Ben"]
    assert table.query("board")["players"] == ["Ana", "Ben"]
    assert asked == ["v"], "the second read was answered from what the server holds"
    other = open_campaigns({"CAPES_DB": str(tmp_path / "s.sqlite")})
    try:
        other.execute(UUID(table.campaign_id), SeatPlayer(name="Cleo"))
    finally:
        other.close()
    time.sleep(2 * SYNC_AFTER)
    assert table.query("board")["players"] == ["Ana", "Ben", "Cleo"]
    assert asked == ["v", "v"]


def test_a_new_seat_token_stops_the_old_one_at_once_and_a_fork_gets_its_own_keys(
    http: TestClient[Any],
) -> None:
    table = open_campaign(http, players=["Ana", "Ben"])
    old = table.tokens[2]
    issued = http.post(table.url("/seats/2/token"), headers=table.as_owner())
    assert issued.status_code == 201, issued.text
    assert http.get(table.url("/board"), headers=bearer(old)).status_code == 401
    assert http.get(table.url("/board"), headers=bearer(issued.json()["token"])).status_code == 200
    forked = http.post(table.url("/forks"), headers=table.as_owner(), json={"name": "Elsewhere"})
    assert forked.status_code == 201, forked.text
    fork = forked.json()
    assert http.get(f"/campaigns/{fork['campaign_id']}",
                    headers=bearer(fork["owner_token"])).status_code == 200


def test_a_seat_a_dispute_took_away_loses_its_link_at_once_through_the_writer_process(
    http: TestClient[Any],
) -> None:
    """R-X-REC-8: the writer process's keys refuse the link of the seat that the upheld
    dispute took away, and the server's own keys at once (not after they go stale)."""
    table = open_campaign(http, players=["Ana", "Ben", "Cleo"])
    a_scene_played_to_its_end(table)
    table.seat("Dana")
    assert http.get(table.url("/board"), headers=table.as_seat(4)).status_code == 200

    dispute = disputed_away(table, 4)

    refused = http.get(table.url("/board"), headers=table.as_seat(4))
    assert refused.status_code == 403, refused.text
    assert refused.json()["rule"] == "R-X-REC-8"
    assert f"dispute #{dispute}" in refused.json()["detail"]


def test_a_writer_process_that_died_is_started_again_by_the_next_request(
    http: TestClient[Any],
) -> None:
    table = open_campaign(http, players=["Ana", "Ben"])
    writer = writer_of(http)
    process = writer._process
    assert process is not None
    os.kill(process.pid, signal.SIGKILL)
    process.wait(TIMEOUT)
    table.play("", c.FrameScene(seat=1, text="Docks"))
    assert writer._process is not None and writer._process.pid != process.pid


def test_requests_waiting_on_a_writer_process_that_died_get_a_503() -> None:
    async def lose() -> BaseException:
        writer = RemoteWriter({})
        waiting = asyncio.get_running_loop().create_future()
        writer.pending[7] = waiting
        writer.lost()
        with pytest.raises(WriterGone) as lost:
            await waiting
        return lost.value

    error = asyncio.run(lose())
    assert isinstance(error, WriterGone) and error.status_code == 503
    assert "may or may not have been stored" in error.detail


def test_the_server_stops_its_writer_process_once_it_has_finished(tmp_path: Path) -> None:
    app = create_app(environ={"CAPES_DB": str(tmp_path / "s.sqlite"), "CAPES_WRITER": "process"})
    with TestClient(app, timeout=TIMEOUT) as client:
        open_campaign(client, players=["Ana"])
        process = writer_of(client)._process
    assert process is not None and process.wait(TIMEOUT) == 0


def test_a_live_stream_hears_commands_run_by_the_writer_process(tmp_path: Path) -> None:
    environ = {"CAPES_DB": str(tmp_path / "live.sqlite"), "CAPES_WRITER": "process"}
    with server(environ, tmp_path / "server.log") as url, \
            httpx.Client(base_url=url, timeout=TIMEOUT) as client:
        table = open_campaign(client, players=["Ana", "Ben", "Cleo"])
        version = table.version()
        request = client.build_request("GET", table.url("/events/stream"),
                                       params={"token": table.tokens[1]})
        stream = client.send(request, stream=True)
        try:
            messages = sse_messages(stream)
            read_until(messages, version)
            narration, command = DEMO_STEPS[0]
            applied = table.play(narration, command)
            live = read_until(messages, applied["version"], limit=5.0)
        finally:
            stream.close()
        assert [m.data for m in live] == applied["events"]


def test_the_writer_setting_names_what_it_may_be() -> None:
    assert writer_mode({}) == "thread"
    assert writer_mode({"CAPES_WRITER": "Process", "CAPES_DB": "x.sqlite"}) == "process"
    with pytest.raises(SettingError, match="CAPES_WRITER=fork: must be 'thread'"):
        writer_mode({"CAPES_WRITER": "fork"})
    with pytest.raises(SettingError, match="in-memory store"):
        writer_mode({"CAPES_WRITER": "process", "CAPES_DB": ":memory:"})


def test_capes_serve_runs_its_writer_in_a_process_but_for_an_in_memory_store() -> None:
    assert serve_default({"CAPES_DB": "campaigns.sqlite"}) == "process"
    assert serve_default({"CAPES_DATABASE_URL": "postgresql://h/db"}) == "process"
    assert serve_default({"CAPES_DB": ":memory:"}) == "thread"


@pytest.mark.parametrize("error", [
    CampaignConflict(uuid4(), 3, 5),
    CampaignNotFound(uuid4()),
    CampaignBroken(uuid4(), 7, "the chain breaks"),
    RuleViolation("R-SCENE-1", "no scene is being played", choices=(1, 2)),
])
def test_the_projects_errors_cross_the_process_whole(error: Exception) -> None:
    again = unpack_error(pack_error(error))
    assert type(again) is type(error)
    assert str(again) == str(error)
    assert vars(again) == vars(error)


#: Every command a server may hand its writer process: each edition's and the record's.
EVERY_COMMAND = sorted({*(t for e in EDITIONS.values() for t in e.command_types),
                        *RECORD_COMMAND_TYPES}, key=lambda t: f"{t.__module__}.{t.__qualname__}")


@pytest.mark.parametrize("kind", EVERY_COMMAND, ids=lambda t: t.__qualname__)
@settings(max_examples=20, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(data=st.data())
def test_every_command_crosses_the_socket_as_it_was_sent(kind: type[Any],
                                                         data: st.DataObject) -> None:
    """A command packed for a frame (its class's name and its fields' values) comes out of
    the frame equal to what was sent, of the same class."""
    # Hypothesis may fill a field that has a default factory with msgspec's factory object
    # itself, which no command ever holds (nor pickles): those draws are left out.
    command = data.draw(st.from_type(kind).filter(lambda made: not any(
        type(value).__name__ == "Factory" for value in msgspec.structs.astuple(made))))
    campaign_id = uuid4()
    (received,) = Frames().feed(frame(execute_request(campaign_id, command, "Look!", 7)))
    raw, packed, narration, expected = received
    again = unpack_command(packed)
    assert type(again) is kind
    assert again == command
    assert (CampaignIds()(raw), narration, expected) == (campaign_id, "Look!", 7)


def test_a_command_that_is_not_a_struct_crosses_the_socket_as_it_is() -> None:
    assert unpack_command(pack_command(("not", "a", "struct"))) == ("not", "a", "struct")


def test_a_packed_command_of_no_known_class_is_refused_not_run() -> None:
    with pytest.raises(TypeError, match="not a command's class"):
        unpack_command(("os:system", ("true",)))


def test_the_writer_process_keeps_one_object_an_id_up_to_its_bound() -> None:
    ids, first = CampaignIds(kept=2), uuid4()
    assert ids(first.bytes) is ids(first.bytes) == first
    ids(uuid4().bytes)
    ids(uuid4().bytes)  # the bound reached: it starts again
    assert ids(first.bytes) == first


def test_frames_cut_anywhere_come_out_whole_and_in_order() -> None:
    items = [("x", i, b"\0" * i) for i in range(50)]
    stream = b"".join(frame(item) for item in items)
    frames, out = Frames(), []
    for start in range(0, len(stream), 37):
        out += frames.feed(stream[start:start + 37])
    assert out == items


class _Watched(_Peer):
    """A server's end as the writer process sees it, noting at each write how many commands
    the writer had stored by then."""

    def __init__(self, sock: socket.socket, writer: WriterProcess) -> None:
        super().__init__(sock)
        self.writer = writer
        self.writes: list[tuple[int, int]] = []  # (commands stored, answers in the write)

    def send(self, data: list[bytes]) -> None:
        if data:
            self.writes.append((self.writer.committer.commands, len(data)))
        super().send(data)


@pytest.fixture
def writer_on_a_socket(tmp_path: Path) -> Iterator[tuple[WriterProcess, _Watched, socket.socket]]:
    """A writer process's object in this process, one server's end of its socket (as the
    writer sees it) and that server's own end, to read the answers from."""
    ours, theirs = socket.socketpair()
    ours.settimeout(TIMEOUT)
    writer = WriterProcess(theirs, {"CAPES_DB": str(tmp_path / "s.sqlite")})
    peer = _Watched(theirs, writer)
    writer.peers.append(peer)  # as if connected
    try:
        yield writer, peer, ours
    finally:
        writer._pool.shutdown()
        writer.campaigns.close()
        writer.keyring.close()
        ours.close()
        theirs.close()


def answers_on(sock: socket.socket, count: int) -> list[Any]:
    answers: list[Any] = []
    frames = Frames()
    while len(answers) < count:
        answers += frames.feed(sock.recv(1 << 16))
    return answers


def test_a_read_asked_beside_a_command_is_answered_before_that_command_is_stored(
    writer_on_a_socket: tuple[WriterProcess, _Watched, socket.socket],
) -> None:
    """A board read of a campaign the writer holds as stored shows the campaign as it was
    when asked: it goes out at once, not after the commit of the commands that came with it
    (it waited for that commit, which changes nothing it shows)."""
    writer, peer, ours = writer_on_a_socket
    campaign_id = writer.campaigns.create(CreateCampaign(name="Night Patrol")).campaign_id

    def seat(tag: int, name: str) -> Request:
        return (peer, tag), "x", execute_request(campaign_id, SeatPlayer(name=name))

    writer.committer.prepare(campaign_id)  # its log verified: then the writer holds it
    writer._run([seat(1, "Ada")], prepared=True)
    assert writer.committer.ready(campaign_id)
    writer._send_answers()
    stored = writer.committer.commands
    writer._run([seat(2, "Brook"), ((peer, 3), "v", view_request(campaign_id, "board_of"))],
                prepared=False)
    writer._send_answers()

    assert peer.writes[1:] == [(stored, 1), (stored + 1, 1)]
    _, (tag, error, (board, shown_at)), (last, _, brook) = answers_on(ours, 3)
    assert (tag, error, last) == (3, None, 2)
    assert msgspec.json.decode(board)["players"] == ["Ada"]
    assert shown_at == brook[0] - 1, "the board says the version it shows: before Brook's seat"
    assert brook[0] == 3, "Brook's seat is the campaign's third event"


def test_the_requests_for_a_campaign_that_could_not_be_made_ready_get_its_error(
    writer_on_a_socket: tuple[WriterProcess, _Watched, socket.socket],
) -> None:
    writer, peer, ours = writer_on_a_socket
    campaign_id = uuid4()
    writer._run([((peer, 1), "x", execute_request(campaign_id, SeatPlayer(name="Ada"))),
                 ((peer, 2), "v", view_request(campaign_id, "board_of"))], prepared=False)
    assert campaign_id in writer._parked  # its preparation runs on the pool meanwhile
    writer._pool.shutdown(wait=True)
    writer._prepared.get()  # what the pool found, replaced by a failure of the check
    writer._prepared.put((campaign_id, CampaignBroken(campaign_id, 1, "the chain breaks"), False))

    writer._run(writer._unparked(), prepared=True)
    writer._send_answers()

    answered = answers_on(ours, 2)
    assert [tag for tag, _, _ in answered] == [1, 2]
    assert all(isinstance(unpack_error(error), CampaignBroken) for _, error, _ in answered)
