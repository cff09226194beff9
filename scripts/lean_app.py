"""The control of ``scripts/bench``: the game's routes in their shape, with no game behind them.

What one worker of this stack does for a request of the game's shape, so that a game figure
can be read against it (and against ``scripts/bare_app.py``, a bare route) in the same run:

- ``POST /campaigns/{campaign_id:uuid}/commands``: the bearer token checked by a ``Provide``
  dependency (SHA-256 of the token, a dict lookup), the body decoded into the project's own
  ``api.schemas.CommandRequest`` (the whole tagged union of seat commands, validated by
  Litestar), the seat checked, and an ``Applied`` of three real events answered;
- ``GET /campaigns/{campaign_id:uuid}/board``: the same token check, and the board of a
  campaign in the middle of the bench's scene answered (the same document, the same size).

The tokens are those of the campaigns file the bench writes for ``wrk`` (lines
``campaign_id token_seat1 token_seat2 token_seat3``), named by ``CAPES_LEAN_CAMPAIGNS``, so
the same Lua script (``scripts/bench_game.lua``) drives it. Served like the others::

    CAPES_LEAN_CAMPAIGNS=/tmp/campaigns.txt \
        python -m uvicorn --app-dir scripts lean_app:app --port 8003

With ``CAPES_LEAN_STORE`` (an SQLite file) a command is answered only once its three events are
committed there (:class:`GroupCommit`): the control for a command's latency on this disk, the
game's store without the game. With ``CAPES_LEAN_STORE`` a PostgreSQL URL naming a schema
(``postgresql://…?schema=NAME``), they are committed to that schema's ``events`` table (made
beforehand, as ``scripts/bench`` does) as the game's recorder commits a group
(:class:`PostgresGroupCommit`): one statement that notifies and inserts, outside an explicit
transaction. Each worker of ``uvicorn --workers N`` then commits
on a connection of its own: what several workers could carry with the game's store and a
writer each, the game taken out.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import os
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any
from uuid import UUID

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from litestar import Litestar, Request, get, post
from litestar.di import NamedDependency, Provide
from litestar.exceptions import NotAuthorizedException, PermissionDeniedException
from litestar.params import FromPath, JSONBody

from api.schemas import Applied, CommandRequest, event_out
from application.campaigns import Campaigns
from application.dice import ScriptedDice
from domain.capes import commands as c
from domain.capes.views import Board, board

HERO_DRIVES = {"Justice": 3, "Hope": 2, "Truth": 2, "Love": 1, "Duty": 1}


def _sample() -> tuple[Applied, Board, list[tuple[str, bytes]]]:
    """A real three-event answer, a real mid-scene board and the three events as stored
    (topic, bytes), computed once (in memory)."""
    app = Campaigns(dice=ScriptedDice([1] * 100))
    cid = app.create(c.CreateCampaign(name="Lean", starting_tokens=99)).campaign_id
    for name in ("Ana", "Ben", "Cleo"):
        app.execute(cid, c.SeatPlayer(name=name))

    def hero(seat: int) -> c.Freeform:
        return c.Freeform(abilities=tuple(
            c.AbilitySpec(name=f"H{seat} {cat} {r}", category=cat, rating=r,
                          super=cat == "power")
            for cat in ("power", "style", "attitude") for r in (1, 2, 3)))

    for s in (1, 2, 3):
        app.execute(cid, c.CreateCharacter(seat=s, name=f"Hero {s}", build=hero(s),
                                           drives=HERO_DRIVES))
    app.execute(cid, c.FrameScene(seat=1, text="Harbor City, midnight"))
    for s in (1, 2, 3):
        app.execute(cid, c.ChooseCharacter(seat=s, character=s))
        app.execute(cid, c.PassClaiming(seat=s))
    for s in (1, 2, 3):
        app.execute(cid, c.PassClaiming(seat=s))
    app.execute(cid, c.StartTurn(seat=1, character=1))
    app.execute(cid, c.CreateConflict(seat=1, kind="event", text="The bridge collapses"))
    app.execute(cid, c.EndTurn(seat=1))
    app.execute(cid, c.StartTurn(seat=2, character=2))
    app.execute(cid, c.RollDie(seat=2, ability="H2 power 1", conflict=1, die=1, drive="Justice"))
    outcome = app.execute(cid, c.RejectRoll(seat=2, ally=1))
    events = tuple(event_out(r) for r in outcome.events)
    events = (events * 3)[:3]
    applied = Applied(version=outcome.version, events=events, position=outcome.position)
    stored = app.recorder.select_events(cid, desc=True, limit=3)
    return applied, board(outcome.state), [(e.topic, e.state) for e in stored]


APPLIED, BOARD, STORED = _sample()


def _keys() -> dict[tuple[UUID, str], int]:
    """(campaign, SHA-256 of a token) -> seat, from the bench's campaigns file."""
    keys: dict[tuple[UUID, str], int] = {}
    path = os.environ.get("CAPES_LEAN_CAMPAIGNS", "")
    if not path:
        return keys
    for line in Path(path).read_text().splitlines():
        cid, *tokens = line.split()
        for seat, token in enumerate(tokens, start=1):
            keys[(UUID(cid), hashlib.sha256(token.encode()).hexdigest())] = seat
    return keys


KEYS = _keys()


async def provide_seat(request: Request[Any, Any, Any], campaign_id: FromPath[UUID]) -> int:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise NotAuthorizedException("a bearer token is required")
    seat = KEYS.get((campaign_id, hashlib.sha256(token.strip().encode()).hexdigest()))
    if seat is None:
        raise NotAuthorizedException("this token is not one of this campaign's")
    return seat


SeatDep = NamedDependency[int]


class GroupCommit:
    """What the game's writer does to the disk for a command, and nothing else: the three
    events of each command (their stored bytes and topics, as big as the game's) inserted into
    a table with the game's events table's keys, in an SQLite file in WAL mode with
    ``synchronous=FULL``, each group of the commands that queued while the last one was stored
    in one multi-row ``INSERT`` (a transaction of its own), on a thread. The answer waits for
    its group's commit, as the game's does. The thread takes the interpreter back from the
    event loop within 0.1 ms (the switch interval), so it waits for its commit, not for the
    loop."""

    def __init__(self, path: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS stored_events (originator_id TEXT, "
                        "originator_version INTEGER, topic TEXT, state BLOB, "
                        "PRIMARY KEY (originator_id, originator_version))")
        self.versions: dict[UUID, itertools.count[int]] = {}
        self.waiting: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None], UUID]] = []
        self.ready = threading.Condition()
        sys.setswitchinterval(0.0001)
        threading.Thread(target=self._run, name="lean-commits", daemon=True).start()

    async def commit(self, campaign_id: UUID) -> None:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()
        with self.ready:
            self.waiting.append((loop, done, campaign_id))
            self.ready.notify()
        await done

    def _run(self) -> None:
        while True:
            with self.ready:
                while not self.waiting:
                    self.ready.wait()
                group, self.waiting = self.waiting, []
            params: list[object] = []
            for _, _, campaign_id in group:
                counter = self.versions.setdefault(campaign_id, itertools.count(1))
                for topic, state in STORED:
                    params += (campaign_id.hex, next(counter), topic, state)
            self.db.execute("INSERT INTO stored_events VALUES "
                            + ",".join(("(?,?,?,?)",) * (len(params) // 4)), params)
            loop = group[0][0]
            loop.call_soon_threadsafe(_settle, [done for _, done, _ in group])


class PostgresGroupCommit:
    """What the game's writer does to PostgreSQL for a command, and nothing else: each group
    of the commands that queued while the last one was stored, in the one statement the
    game's recorder sends (``application/postgres_store.py``: a notification and the
    multi-row insert of four arrays, autocommitted) into a table shaped as the library's
    events table, on an asynchronous connection of this process's event loop (no thread:
    nothing contends for the interpreter's lock). The answer waits for its group's commit.
    The table is made before the workers start, by whoever starts them (``scripts/bench``:
    ``benchmarks.workers.events_table``): two workers making it at once would race."""

    def __init__(self, url: str) -> None:
        base, _, schema = url.partition("?schema=")
        self.base = base
        self.table = '"{}".events'.format(schema or "public")
        self.statement = (
            "WITH notified AS (SELECT pg_notify('lean_events', %s)) "
            f"INSERT INTO {self.table} (originator_id, originator_version, topic, state) "
            "SELECT e.* FROM unnest(%s::uuid[], %s::bigint[], %s::text[], %s::bytea[]) "
            "AS e(originator_id, originator_version, topic, state), notified "
            "RETURNING notification_id")
        self.versions: dict[UUID, itertools.count[int]] = {}
        self.waiting: list[tuple[asyncio.Future[None], UUID]] = []
        self.flushing: asyncio.Task[None] | None = None
        self.pg: Any = None

    async def commit(self, campaign_id: UUID) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append((done, campaign_id))
        if self.flushing is None or self.flushing.done():
            self.flushing = asyncio.ensure_future(self._flush())
        await done

    async def _flush(self) -> None:
        import psycopg

        if self.pg is None:
            self.pg = await psycopg.AsyncConnection.connect(self.base, autocommit=True)
        while self.waiting:
            group, self.waiting = self.waiting, []
            ids: list[UUID] = []
            versions: list[int] = []
            for _, campaign_id in group:
                counter = self.versions.setdefault(campaign_id, itertools.count(1))
                for _topic, _state in STORED:
                    ids.append(campaign_id)
                    versions.append(next(counter))
            last = dict(zip(ids, versions, strict=True))  # each campaign's last version
            written = ",".join(f"{cid}:{version}" for cid, version in last.items())
            topics = [topic for _ in group for topic, _ in STORED]
            states = [state for _ in group for _, state in STORED]
            try:
                async with self.pg.cursor() as cursor:
                    await cursor.execute(self.statement,
                                         (written, ids, versions, topics, states), prepare=True)
                    await cursor.fetchall()
            except Exception as e:  # the group's requests get the error, not a hang
                for done, _ in group:
                    if not done.done():
                        done.set_exception(e)
                continue
            _settle([done for done, _ in group])


def _settle(futures: list[asyncio.Future[None]]) -> None:
    for future in futures:
        if not future.done():
            future.set_result(None)


def _store() -> GroupCommit | PostgresGroupCommit | None:
    where = os.environ.get("CAPES_LEAN_STORE", "")
    if not where:
        return None
    return PostgresGroupCommit(where) if where.startswith("postgresql") else GroupCommit(where)


STORE = _store()


@post("/campaigns/{campaign_id:uuid}/commands", status_code=200)
async def run_command(
    campaign_id: FromPath[UUID], data: JSONBody[CommandRequest], seat: SeatDep
) -> Applied:
    if data.command.seat not in (0, seat):
        raise PermissionDeniedException(f"seat {seat} may not act for seat {data.command.seat}")
    if STORE is not None:
        await STORE.commit(campaign_id)
    return APPLIED


@get("/campaigns/{campaign_id:uuid}/board")
async def get_board(campaign_id: FromPath[UUID], seat: SeatDep) -> Board:
    return BOARD


app = Litestar(route_handlers=[run_command, get_board],
               dependencies={"seat": Provide(provide_seat)})
