"""The board and ledgers of now are rendered once per state and shared by every reader
(issue 15), and never shown for a state they were not rendered from."""

from __future__ import annotations

from collections.abc import Iterator
from uuid import uuid4

import pytest
from helpers import DEMO_STEPS, Table, app_client, demo_table

from api.services import RenderedViews
from application.dice import ScriptedDice
from cli.demo import DEMO_DICE
from domain.record.commands import Undo


class State:
    """Stands for an immutable game state: equal or not, only its identity counts."""


def test_a_view_is_rendered_once_for_the_same_state() -> None:
    views, calls = RenderedViews(), []
    cid, state = uuid4(), State()

    def render(s: object) -> str:
        calls.append(s)
        return f"board {len(calls)}"

    assert views.render(cid, "board_of", state, render) == "board 1"
    assert views.render(cid, "board_of", state, render) == "board 1"
    assert calls == [state]


def test_a_new_state_is_rendered_anew_even_when_equal_and_each_kind_apart() -> None:
    views, cid = RenderedViews(), uuid4()
    first, second = State(), State()
    assert views.render(cid, "board_of", first, lambda s: "one") == "one"
    assert views.render(cid, "board_of", second, lambda s: "two") == "two"
    assert views.render(cid, "ledgers_of", second, lambda s: "ledgers") == "ledgers"
    assert views.render(uuid4(), "board_of", second, lambda s: "other table") == "other table"


def test_a_full_cache_starts_again_rather_than_growing() -> None:
    views = RenderedViews(size=2)
    for n in range(5):
        views.render(uuid4(), "board_of", State(), lambda s, n=n: n)
    assert len(views._views) <= 2


@pytest.fixture
def table(memory_env: dict[str, str]) -> Iterator[Table]:
    with app_client(memory_env, ScriptedDice(DEMO_DICE)) as client:
        yield demo_table(client)


def test_the_board_of_now_follows_every_command_and_undo(table: Table) -> None:
    """R-REC-1: after a command and after its undo, every seat reads the board of that very
    moment, the same as the board replayed at that version."""
    boards = []
    for narration, command in DEMO_STEPS[:8]:
        table.query("board")  # rendered (and kept) before the command
        applied = table.play(narration, command)
        boards.append(table.query("board", seat=2))
        assert boards[-1] == table.query("board", version=applied["version"])
    assert len({str(b) for b in boards}) > 1, "the steps changed the board"
    seat = DEMO_STEPS[7][1].seat
    undone = table.send(Undo(seat=seat))
    assert undone.status_code == 200, undone.text
    version = undone.json()["version"]
    assert table.query("board", seat=3) == table.query("board", version=version)


def test_a_commands_live_message_is_what_litestar_would_write_for_its_events(
    table: Table,
) -> None:
    """The live streams' bytes for a command's events, written by hand on the hot path, are
    Litestar's Server-Sent Events byte for byte."""
    import msgspec
    from litestar.response import ServerSentEventMessage

    from api.schemas import EventOut
    from api.services import live_message

    applied = table.play(*DEMO_STEPS[0])
    events = tuple(msgspec.convert(e, EventOut) for e in applied["events"])
    encoder = msgspec.json.Encoder()
    expected = b"".join(
        ServerSentEventMessage(data=encoder.encode(e).decode(), event=e.type,
                               id=e.position).encode() for e in events)
    first, last = events[0].position, events[-1].position
    assert live_message(events) == b"%d %d\n" % (first, last) + expected
    assert live_message(()) == b""
