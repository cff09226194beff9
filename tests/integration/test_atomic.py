"""Operations of two steps are one transaction or leave nothing (issue 13, item 4)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from stores import MakeApp

from application.campaigns import Campaigns
from application.errors import CampaignConflict
from domain.capes.commands import CreateCampaign, SeatPlayer


class TrippingClock:
    """A clock that, at its ``at``-th reading, runs ``trip`` first (another writer's move)."""

    def __init__(self, at: int, trip: Callable[[], Any]) -> None:
        self.readings = 0
        self.at = at
        self.trip = trip
        self.now = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.readings += 1
        if self.readings == self.at:
            self.trip()
        self.now += timedelta(milliseconds=1)
        return self.now


def test_a_fork_that_loses_a_race_for_its_source_stores_nothing(
    make_app: MakeApp, shared_store_env: dict[str, str]
) -> None:
    """R-REC-6: the fork and the source's ForkMade are stored together, or neither is."""
    other = make_app(shared_store_env)
    source = other.create(CreateCampaign(name="Harbor")).campaign_id
    other.execute(source, SeatPlayer(name="Ada"))
    # Another process seats a player on the source while this one stages the fork: its
    # second reading of the clock is the source's ForkMade being staged.
    clock = TrippingClock(2, lambda: other.execute(source, SeatPlayer(name="Brook")))
    app = make_app(shared_store_env, clock=clock)
    before = set(app.campaign_ids())
    with pytest.raises(CampaignConflict):
        app.fork(source, 2, name="What if")
    assert set(app.campaign_ids()) == before, "a refused fork leaves no campaign behind"
    assert app.get(source).record.forks == ()
    # Asked again, it is made, and both logs know it.
    fork = app.fork(source, 2, name="What if")
    assert app.get(source).record.forks == ((fork.campaign_id, 2),)


def test_a_seat_and_its_token_record_are_one_transaction(
    make_app: MakeApp, shared_store_env: dict[str, str]
) -> None:
    """R-X-REC-4: a seat is never stored without the record of its token, nor the token's
    record without its seat, even when another writer gets in between."""
    other = make_app(shared_store_env)
    campaign = other.create(CreateCampaign(name="Harbor")).campaign_id
    app: Campaigns = make_app(shared_store_env)
    app.get(campaign)
    tokens: list[int] = []

    def issue(seat: int) -> str:
        tokens.append(seat)
        other.execute(campaign, SeatPlayer(name="Brook"))  # gets in before the commit
        return "t"

    with pytest.raises(CampaignConflict):
        app.seat_player(campaign, SeatPlayer(name="Ada"), issue)
    names = [type(r.event).__name__ for r in app.history(campaign)]
    assert names == ["CampaignCreated", "PlayerSeated"], "only the other writer's seat"


# -- a write that lost a race (issue 13, item 9) --------------------------------------------


def test_an_unversioned_write_that_loses_a_race_is_decided_once_more(
    make_app: MakeApp, shared_store_env: dict[str, str]
) -> None:
    """No ``expected_version``: the client asked for no check, so the server decides again on
    the campaign as the other writer left it, once."""
    other = make_app(shared_store_env)
    campaign = other.create(CreateCampaign(name="Harbor")).campaign_id
    clock = TrippingClock(1, lambda: other.execute(campaign, SeatPlayer(name="Brook")))
    app = make_app(shared_store_env, clock=clock)
    app.get(campaign)
    outcome = app.execute(campaign, SeatPlayer(name="Ada"))
    assert outcome.version == 3
    assert [p.name for p in app.state(campaign).players] == ["Brook", "Ada"]


def test_a_write_that_loses_every_race_is_refused_with_the_current_version(
    make_app: MakeApp, shared_store_env: dict[str, str]
) -> None:
    """409 with ``current_version``, versioned or not, so the client can decide again."""
    other = make_app(shared_store_env)
    campaign = other.create(CreateCampaign(name="Harbor")).campaign_id
    names = iter(["B1", "B2", "B3", "B4"])

    class Racing(TrippingClock):
        def __call__(self) -> datetime:
            self.trip()  # another process writes before every one of ours
            return super().__call__()

    app = make_app(shared_store_env, clock=Racing(0, lambda: other.execute(
        campaign, SeatPlayer(name=next(names)))))
    for expected in (None, 1):
        app.get(campaign)
        with pytest.raises(CampaignConflict) as lost:
            app.execute(campaign, SeatPlayer(name="Ada"), expected_version=expected
                        if expected is None else app.get(campaign).version)
        assert lost.value.current == other.get(campaign).version
