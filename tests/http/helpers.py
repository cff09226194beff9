"""Shared helpers for the HTTP tests: a table of seats, request bodies, SSE, a server process.

A :class:`Table` wraps any client with httpx's interface (Litestar's in-process ``TestClient``
or an ``httpx.Client`` on a real server) together with one campaign and its tokens, so a test
reads as the moves of the players at it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx
import msgspec
from litestar.testing import TestClient

from api.app import create_app
from api.schemas import CommandRequest
from application.campaigns import Campaigns
from application.dice import DiceSource
from cli.demo import NIGHTJAR_BUILD, SCRIPT, TEMPEST_BUILD
from domain.capes import commands as c

JSON = dict[str, Any]
#: The project's root (where ``api`` is importable from), for server processes.
ROOT = Path(__file__).resolve().parents[2]
#: Every wait on a server is bounded by this many seconds.
TIMEOUT = 10.0
#: The demo's players, in seat order, and the scene's steps after they sit down.
DEMO_PLAYERS = tuple(command.name for _, command in SCRIPT if isinstance(command, c.SeatPlayer))
DEMO_STEPS: tuple[tuple[str, c.SeatCommand], ...] = tuple(
    (narration, command) for narration, command in SCRIPT
    if isinstance(command, c.SeatCommand)
)
assert len(DEMO_STEPS) + len(DEMO_PLAYERS) == len(SCRIPT), "the demo has unexpected steps"
#: ``starting_tokens`` of the demo campaign (``cli.demo.play_demo`` opens it with 1).
DEMO_TOKENS = 1


class Client(Protocol):
    """What the helpers need of a client: httpx's request methods."""

    def get(self, url: str, **kwargs: Any) -> httpx.Response: ...

    def post(self, url: str, **kwargs: Any) -> httpx.Response: ...


@contextmanager
def app_client(env: Mapping[str, str] | Campaigns, dice: DiceSource | None = None,
               rate_limit: int = 0) -> Iterator[TestClient[Any]]:
    """An in-process client of the server on the store of ``env`` (or on these Campaigns);
    the application is closed when the block ends."""
    campaigns = env if isinstance(env, Campaigns) else Campaigns(dict(env), dice=dice)
    with TestClient(create_app(campaigns, rate_limit=rate_limit), timeout=TIMEOUT) as client:
        yield client


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def command_body(command: c.Command | JSON, narration: str = "",
                 expected_version: int | None = None) -> JSON:
    """The body of ``POST /commands`` for ``command`` (a Struct or its JSON form)."""
    body: JSON = {"command": command if isinstance(command, dict)
                  else msgspec.to_builtins(command), "narration": narration}
    if expected_version is not None:
        body["expected_version"] = expected_version
    return body


def event_types(applied: JSON) -> list[str]:
    """The types of the events in a command's (or an events page's) response."""
    return [event["type"] for event in applied["events"]]


def pages_ended(applied: JSON) -> list[JSON]:
    """The ``PageEnded`` events in a command's response."""
    return [event for event in applied["events"] if event["type"] == "PageEnded"]


@dataclass
class Table:
    """One campaign seen through ``client``: its id, the owner's token and each seat's."""

    client: Client
    campaign_id: str
    owner_token: str
    tokens: dict[int, str] = field(default_factory=dict)

    def url(self, suffix: str = "") -> str:
        return f"/campaigns/{self.campaign_id}{suffix}"

    def seat(self, name: str) -> int:
        """Seat a player; their seat number (the token is kept)."""
        response = self.client.post(self.url("/seats"), json={"name": name})
        assert response.status_code == 201, response.text
        taken = response.json()
        self.tokens[taken["seat"]] = taken["token"]
        return int(taken["seat"])

    def as_seat(self, seat: int) -> dict[str, str]:
        return bearer(self.tokens[seat])

    def as_owner(self) -> dict[str, str]:
        return bearer(self.owner_token)

    def send(self, command: c.SeatCommand | JSON, narration: str = "", *,
             seat: int | None = None, expected_version: int | None = None,
             headers: Mapping[str, str] | None = None) -> httpx.Response:
        """POST a command with ``headers``, or else the token of ``seat`` (default: the
        command's own seat)."""
        if headers is None:
            if seat is None:
                seat = command["seat"] if isinstance(command, dict) else command.seat
            headers = self.as_seat(seat)
        return self.client.post(self.url("/commands"), headers=dict(headers),
                                json=command_body(command, narration, expected_version))

    def play(self, narration: str, command: c.SeatCommand) -> JSON:
        """One step of play, which must be accepted: the response (events and version)."""
        response = self.send(command, narration)
        assert response.status_code == 200, (command, response.text)
        applied: JSON = response.json()
        return applied

    def query(self, what: str, seat: int = 1, **params: Any) -> Any:
        """GET ``/campaigns/{id}/{what}`` as ``seat``; the JSON, which must be 200."""
        response = self.client.get(self.url(f"/{what}" if what else ""),
                                   params=params, headers=self.as_seat(seat))
        assert response.status_code == 200, response.text
        return response.json()

    def version(self) -> int:
        return int(self.query("")["version"])


def open_campaign(client: Client, name: str = "Harbor City", starting_tokens: int = 0,
                  players: Sequence[str] = (), edition: str = "capes") -> Table:
    """Open a campaign of ``edition`` over HTTP and seat ``players`` (seats 1, 2, …)."""
    response = client.post("/campaigns", json={"name": name, "starting_tokens": starting_tokens,
                                               "edition": edition})
    assert response.status_code == 201, response.text
    opened = response.json()
    table = Table(client, opened["campaign_id"], opened["owner_token"])
    for player in players:
        table.seat(player)
    return table


def demo_table(client: Client) -> Table:
    """The demo's campaign with its three players seated, ready for :data:`DEMO_STEPS`."""
    return open_campaign(client, "Demo: Harbor City", DEMO_TOKENS, DEMO_PLAYERS)


def a_scene_played_to_its_end(table: Table) -> None:
    """At a table of three seats, seats 1 and 2 make a character each and play the first
    scene to its end: a turn each that creates nothing ends the page, and with it the scene
    (R-SCENE-4). Players may then sit down (R-X-SEAT-1), and the scene's moves, and the
    seatings since, may still be disputed (R-X-REC-5)."""
    table.play("", c.CreateCharacter(seat=1, name="Nightjar", build=NIGHTJAR_BUILD))
    table.play("", c.CreateCharacter(seat=2, name="Tempest", build=TEMPEST_BUILD))
    table.play("", c.FrameScene(seat=1, text="The docks"))
    for command in (c.ChooseCharacter(seat=1, character=1), c.PassClaiming(seat=1),
                    c.ChooseCharacter(seat=2, character=2), c.PassClaiming(seat=2),
                    c.PassClaiming(seat=3), c.PassClaiming(seat=1), c.PassClaiming(seat=2),
                    c.StartTurn(seat=1, character=1), c.EndTurn(seat=1),
                    c.StartTurn(seat=2, character=2)):
        table.play("", command)
    ended = table.play("", c.EndTurn(seat=2))
    assert "SceneEnded" in event_types(ended), ended


def disputed_away(table: Table, seat: int) -> int:
    """Seat 1 disputes the seating of ``seat`` (the last one seated, between scenes:
    R-X-REC-5) and the other seats uphold it, but ``seat`` itself: the game goes back to
    before the player sat down (R-REC-5). The dispute's number."""
    page = table.query("events", after=max(table.version() - 10, 0))["events"]
    seated = [e["position"] for e in page if e["type"] == "PlayerSeated"][-1]
    opened = table.send({"type": "open_dispute", "seat": 1, "position": seated,
                         "reason": "A seat taken at the wrong table"})
    assert opened.status_code == 200, opened.text
    dispute = int(table.query("record")["dispute"]["id"])
    for voter in sorted(table.tokens):
        if voter in (1, seat):
            continue
        voted = table.send({"type": "vote", "seat": voter, "uphold": True})
        assert voted.status_code == 200, voted.text
        if "Rewound" in event_types(voted.json()):
            return dispute
    raise AssertionError("the dispute was not upheld")


def play_until(table: Table, narration: str) -> int:
    """Play the demo up to (not including) the first step narrated ``narration``; its index."""
    for index, (said, command) in enumerate(DEMO_STEPS):
        if said == narration:
            return index
        table.play(said, command)
    raise AssertionError(f"no demo step is narrated {narration!r}")


# -- minimal commands ------------------------------------------------------------------------


def _example(kind: msgspec.inspect.Type) -> Any:
    """A small value of ``kind`` within its constraints (required fields only, for Structs)."""
    i = msgspec.inspect
    if isinstance(kind, i.Metadata):
        return _example(kind.type)
    if isinstance(kind, i.IntType):
        low = kind.ge if kind.ge is not None else (kind.gt + 1 if kind.gt is not None else 1)
        return max(low, 1) if kind.le is None or kind.le >= 1 else low
    if isinstance(kind, i.StrType):
        return "x" * max(kind.min_length or 1, 1)
    if isinstance(kind, i.BoolType):
        return False
    if isinstance(kind, i.LiteralType):
        return kind.values[0]
    if isinstance(kind, i.UnionType):
        return _example(next(t for t in kind.types if not isinstance(t, i.NoneType)))
    if isinstance(kind, i.TupleType):
        return [_example(t) for t in kind.item_types]
    if isinstance(kind, i.VarTupleType | i.ListType):
        return [_example(kind.item_type)] * (kind.min_length or 0)
    if isinstance(kind, i.DictType):
        return {}
    if isinstance(kind, i.StructType):
        value = {f.encode_name: _example(f.type) for f in kind.fields if f.required}
        if kind.tag_field is not None:
            value[kind.tag_field] = kind.tag
        return value
    raise NotImplementedError(f"no example for {kind}")


def minimal_command(command_type: type[c.SeatCommand], **fields: Any) -> JSON:
    """The smallest valid JSON of a command of this type (required fields only), plus
    ``fields``; checked against the request body's schema so a test never sends a bad one."""
    command: JSON = _example(msgspec.inspect.type_info(command_type))
    command.update(fields)
    msgspec.convert({"command": command}, CommandRequest)
    return command


# -- Server-Sent Events ----------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """One SSE message: ``id``, ``event`` and the decoded ``data``."""

    id: int
    event: str
    data: JSON


def sse_messages(response: httpx.Response) -> Iterator[Message]:
    """The messages of an open ``text/event-stream`` response (comments are skipped)."""
    fields: dict[str, str] = {}
    for line in response.iter_lines():
        if not line:
            if "data" in fields:
                data = msgspec.json.decode(fields["data"])
                yield Message(int(fields["id"]), fields.get("event", ""), data)
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(":")
            fields[name] = value.removeprefix(" ")


def read_until(messages: Iterator[Message], last: int, limit: float = TIMEOUT) -> list[Message]:
    """Messages up to the one with id ``last``; fails after ``limit`` seconds (the client's
    read timeout bounds each wait)."""
    got: list[Message] = []
    deadline = time.monotonic() + limit
    for message in messages:
        got.append(message)
        if message.id >= last:
            return got
        assert time.monotonic() < deadline, f"no event {last} within {limit}s: {got}"
    raise AssertionError(f"the stream ended before event {last}: {got}")


#: Below the server's keep-alive (15 s), after which it re-reads the log even unprompted: an
#: event seen sooner was announced, not polled for.
PROMPT = 5.0


def client(base_url: str, read: float = TIMEOUT) -> httpx.Client:
    return httpx.Client(base_url=base_url, timeout=httpx.Timeout(TIMEOUT, read=read))


def subscribe(http: httpx.Client, table: Table, **headers: str) -> httpx.Response:
    """Open the campaign's event stream (token in the query, as a browser would)."""
    request = http.build_request("GET", table.url("/events/stream"),
                                 params={"token": table.tokens[1]}, headers=headers)
    response = http.send(request, stream=True)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    return response


# -- a server process ------------------------------------------------------------------------


def ctrl_c_blocked(pid: int) -> bool:
    """Whether process ``pid`` has SIGINT blocked (its /proc status's SigBlk, a hex mask)."""
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    mask = next(line for line in status if line.startswith("SigBlk:")).split()[1]
    return bool(int(mask, 16) & 1 << (signal.SIGINT - 1))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


#: The server processes running, by base URL (so a test can kill one abruptly: :func:`kill`).
RUNNING: dict[str, subprocess.Popen[bytes]] = {}


def kill(base: str) -> None:
    """Kill the server at ``base`` at once (SIGKILL): its connections drop mid-stream."""
    process = RUNNING.pop(base)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=TIMEOUT)


@contextmanager
def server(environ: Mapping[str, str], log: Path, workers: int = 1,
           factory: str = "api.app:create_server", log_level: str = "warning",
           port: int | None = None) -> Iterator[str]:
    """``uvicorn api.app:create_server`` (as ``capes serve`` runs it, or another ``factory``
    importable from the project's root or ``tests/``) on 127.0.0.1 with ``environ`` laid over
    this process's; yields its base URL once it answers, and stops it (and its workers)
    afterwards. ``log_level="info"`` logs every request line too; ``port``: a given one (to
    start a server again where a killed one was), else a free one."""
    port = port or free_port()
    command = [sys.executable, "-m", "uvicorn", factory, "--factory",
               "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers),
               "--log-level", log_level]
    with _running(command, port, environ, log) as base:
        yield base


@contextmanager
def capes_serve(environ: Mapping[str, str], log: Path, *options: str) -> Iterator[str]:
    """``capes serve`` itself (its access log on, at ``--log-level info``), as :func:`server`."""
    port = free_port()
    command = [sys.executable, "-m", "cli.main", "serve", "--port", str(port), *options]
    with _running(command, port, environ, log) as base:
        yield base


@contextmanager
def _running(command: list[str], port: int, environ: Mapping[str, str],
             log: Path) -> Iterator[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
    env.update({"CAPES_RATE_LIMIT": "0", **environ})
    # Factories of the tests' own (tests/browser/scripted_server.py) import from tests/.
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests")])
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    RUNNING[base] = process
    try:
        deadline = time.monotonic() + 30
        while True:
            assert process.poll() is None, f"the server exited:\n{log.read_text()}"
            assert time.monotonic() < deadline, f"the server did not start:\n{log.read_text()}"
            try:
                if httpx.get(f"{base}/schema/openapi.json", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base
    finally:
        if RUNNING.get(base) is process:
            del RUNNING[base]
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group (uvicorn and its workers), SIGKILL if it lingers."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue
