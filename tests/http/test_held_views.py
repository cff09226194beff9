"""The boards and ledgers the writer process rendered, held by the server (api/held_views.py,
issue 15): a read of now is answered from them only while their version is the campaign's last
stored one, whoever stored what since; what cannot be told there goes to the writer."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

import pytest

from api.held_views import KINDS, HeldViews
from api.routes.queries import RENDERERS
from application.campaigns import Campaigns, open_campaigns
from application.sqlite_store import LastVersions
from domain.capes.commands import CreateCampaign, SeatPlayer

T = TypeVar("T")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Campaigns]:
    """A campaigns store in an SQLite file, as the writer process and the server share it."""
    app = open_campaigns({"CAPES_DB": str(tmp_path / "held.sqlite")})
    yield app
    app.close()


def opened(store: Campaigns, name: str = "Night Patrol") -> tuple[UUID, int]:
    outcome = store.create(CreateCampaign(name=name))
    return outcome.campaign_id, outcome.version


def on_the_loop(work: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``work`` on an event loop: the views' look at the store is shared by one turn."""
    return asyncio.run(work())


def held_on(store: Campaigns) -> HeldViews:
    return HeldViews(LastVersions.of(store.recorder))


def a_held_board(store: Campaigns) -> tuple[UUID, int, HeldViews]:
    """A campaign, its version, and views holding its board (``b"board"``) at that version."""
    campaign, version = opened(store)
    held = held_on(store)
    held.put(campaign, "board_of", version, b"board")
    return campaign, version, held


def reads_around(held: HeldViews, campaign: UUID,
                 write: Callable[[], object]) -> list[bytes | None]:
    """The campaign's board of now read, then ``write`` in a later turn of the event loop,
    then the board read in the turn after."""

    async def reads() -> list[bytes | None]:
        before = held.get(campaign, "board_of", None, None)
        await asyncio.sleep(0)
        write()
        await asyncio.sleep(0)
        return [before, held.get(campaign, "board_of", None, None)]

    return on_the_loop(reads)


def test_a_held_board_is_served_while_its_version_is_the_campaigns_last_stored_one(
    store: Campaigns,
) -> None:
    campaign, _, held = a_held_board(store)

    async def reads() -> list[bytes | None]:
        first = held.get(campaign, "board_of", None, None)
        await asyncio.sleep(0)
        return [first, held.get(campaign, "board_of", None, None),
                held.get(campaign, "ledgers_of", None, None)]

    assert on_the_loop(reads) == [b"board", b"board", None]


def test_a_held_board_is_not_served_once_anyone_stored_an_event_of_its_campaign(
    store: Campaigns,
) -> None:
    """Another process's write (``capes tokens``, another worker) is in the store only."""
    campaign, _, held = a_held_board(store)
    assert reads_around(held, campaign, lambda: store.execute(
        campaign, SeatPlayer(name="Ana"))) == [b"board", None]


def test_a_commit_to_another_campaign_leaves_a_held_board_served(store: Campaigns) -> None:
    campaign, _, held = a_held_board(store)
    other, _ = opened(store, "Elsewhere")
    assert reads_around(held, campaign, lambda: store.execute(
        other, SeatPlayer(name="Ben"))) == [b"board", b"board"]


def test_the_stores_mark_is_shared_by_one_turn_of_the_event_loop_and_taken_again_next(
    store: Campaigns,
) -> None:
    """The reads of one turn arrived before it began, so the mark taken at its first read
    falls between each one's arrival and its answer; the next turn looks again."""
    campaign, _, held = a_held_board(store)

    async def reads() -> list[bytes | None]:
        first = held.get(campaign, "board_of", None, None)
        store.execute(campaign, SeatPlayer(name="Ana"))
        same_turn = held.get(campaign, "board_of", None, None)
        await asyncio.sleep(0)
        return [first, same_turn, held.get(campaign, "board_of", None, None)]

    assert on_the_loop(reads) == [b"board", b"board", None]


def test_a_read_that_names_a_store_position_is_left_to_the_writer(store: Campaigns) -> None:
    campaign, _, held = a_held_board(store)
    assert on_the_loop(lambda: _get(held, campaign, position=1)) is None


def test_a_view_at_an_exact_version_is_served_whatever_was_stored_since(
    store: Campaigns,
) -> None:
    campaign, version, held = a_held_board(store)
    store.execute(campaign, SeatPlayer(name="Ana"))
    assert on_the_loop(lambda: _get(held, campaign, version=version)) == b"board"
    assert on_the_loop(lambda: _get(held, campaign, version=version + 1)) is None
    assert on_the_loop(lambda: _get(held, campaign)) is None


def test_without_an_sqlite_file_only_views_at_an_exact_version_are_served() -> None:
    """In memory, or on PostgreSQL, whose reads would be round trips the loop waited for."""
    app = open_campaigns({"CAPES_DB": ":memory:"})
    try:
        assert LastVersions.of(app.recorder) is None
        campaign, version = opened(app)
        held = HeldViews(None)
        held.put(campaign, "board_of", version, b"board")
        assert on_the_loop(lambda: _get(held, campaign)) is None
        assert on_the_loop(lambda: _get(held, campaign, version=version)) == b"board"
    finally:
        app.close()


def test_an_older_view_never_replaces_a_newer_one_and_a_change_forgets_them(
    store: Campaigns,
) -> None:
    campaign, version = opened(store)
    held = held_on(store)
    held.put(campaign, "board_of", version, b"new")
    held.put(campaign, "board_of", version - 1, b"old")
    held.put(campaign, "ledgers_of", version, b"ledgers")
    assert on_the_loop(lambda: _get(held, campaign)) == b"new"
    held.drop(campaign)
    assert on_the_loop(lambda: _get(held, campaign)) is None
    assert on_the_loop(lambda: _get(held, campaign, kind="ledgers_of")) is None


def test_a_full_cache_starts_again_rather_than_growing(store: Campaigns) -> None:
    held = HeldViews(LastVersions.of(store.recorder), size=2)
    ids = [opened(store, f"Table {n}") for n in range(3)]
    for campaign, version in ids:
        held.put(campaign, "board_of", version, campaign.bytes)
    assert [on_the_loop(lambda c=c: _get(held, c)) for c, _ in ids] == [None, None,
                                                                        ids[2][0].bytes]


def test_a_store_that_cannot_be_read_at_once_leaves_the_read_to_the_writer(
    tmp_path: Path, store: Campaigns,
) -> None:
    campaign, version = opened(store)
    unreadable = LastVersions(str(tmp_path / "not-a-store.sqlite"), "stored_events")
    assert unreadable(campaign) is None, "no such table: said as None, not raised"
    held = HeldViews(unreadable)
    held.put(campaign, "board_of", version, b"board")
    assert on_the_loop(lambda: _get(held, campaign)) is None


async def _get(held: HeldViews, campaign: UUID, *, kind: str = "board_of",
               position: int | None = None, version: int | None = None) -> bytes | None:
    return held.get(campaign, kind, position, version)


def test_the_views_held_are_the_ones_the_writer_renders() -> None:
    """A command forgets every kind of view its campaign has held (``HeldViews.drop``)."""
    assert set(KINDS) == set(RENDERERS)
