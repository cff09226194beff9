"""The Campaigns application against real stores: in memory, SQLite, PostgreSQL."""

from __future__ import annotations

import threading
from datetime import UTC, timedelta
from typing import Any, cast
from uuid import UUID, uuid4

import pytest
from stores import MakeApp, TickingClock

from application.campaigns import Campaigns, Outcome, open_campaigns
from application.errors import CampaignConflict, CampaignNotFound, VersionNotFound
from application.records import Recorded, Snapshot
from domain.capes.commands import CloseCampaign, CreateCampaign, FrameScene, SeatPlayer
from domain.capes.events import CampaignCreated, PlayerSeated
from domain.edition import fold
from domain.editions import get_edition
from domain.errors import InvalidReference, NotPermitted, RuleViolation, StaleVersion

NAMES = ("Ada", "Brook", "Cass", "Dev", "Eli", "Fen")


def new_table(app: Campaigns, players: int = 3, **create: Any) -> UUID:
    """A campaign with ``players`` seated; its id."""
    campaign_id = app.create(CreateCampaign(name="Night Patrol", **create)).campaign_id
    for name in NAMES[:players]:
        app.execute(campaign_id, SeatPlayer(name=name))
    return campaign_id


def test_a_campaign_is_created_and_players_are_seated(store_app: Campaigns) -> None:
    created = store_app.create(CreateCampaign(name="Night Patrol", starting_tokens=2))
    assert isinstance(created, Outcome)
    assert created.version == 1
    assert [type(r.event) for r in created.events] == [CampaignCreated]

    seated = store_app.execute(created.campaign_id, SeatPlayer(name="Ada"))
    seated = store_app.execute(created.campaign_id, SeatPlayer(name="Brook"))

    assert seated.version == 3
    assert seated.events[0].event == PlayerSeated(seat=2, name="Brook", tokens=2)
    state = store_app.state(created.campaign_id)
    assert state == seated.state
    assert [(p.seat, p.name, p.tokens) for p in state.players] == [(1, "Ada", 2), (2, "Brook", 2)]
    assert [r.originator_version for r in store_app.history(created.campaign_id)] == [1, 2, 3]


def test_a_fresh_application_on_the_same_store_rebuilds_the_live_state(
    make_app: MakeApp, shared_store_env: dict[str, str]
) -> None:
    live = make_app(shared_store_env)
    campaign_id = new_table(live, players=4)
    live.execute(campaign_id, CloseCampaign())

    fresh = make_app(shared_store_env)

    assert fresh.get(campaign_id) == live.get(campaign_id)
    assert fresh.state(campaign_id).closed
    assert fresh.history(campaign_id) == live.history(campaign_id)
    assert fresh.campaign_ids() == [campaign_id]


def test_the_envelope_keeps_ids_times_seats_and_narration(
    make_app: MakeApp, store_env: dict[str, str], clock: TickingClock
) -> None:
    """R-SRV-1: every event is stored with the seat that caused it, the time, the narration."""
    app = make_app(store_env, clock=clock)
    created = app.create(CreateCampaign(name="Night Patrol"), seat=3, narration="It begins.")
    app.execute(created.campaign_id, SeatPlayer(name="Ada"), narration="Ada sits down.")

    first, second = app.history(created.campaign_id)

    assert isinstance(first, Recorded)
    assert isinstance(first.originator_id, UUID)
    assert first.originator_id == created.campaign_id
    # Stored as the same instant, in UTC, to the microsecond.
    assert first.timestamp == clock.readings[0]
    assert first.timestamp.utcoffset() == timedelta(0)
    assert first.timestamp.microsecond == clock.readings[0].microsecond
    assert second.timestamp == clock.readings[1]
    assert (first.seat, first.narration) == (3, "It begins.")
    # SeatPlayer is made by the lobby, not from a seat.
    assert (second.seat, second.narration) == (None, "Ada sits down.")
    assert first.schema == second.schema == 1
    assert (first, second) == (*created.events, *app.history(created.campaign_id, after=1))
    campaign = app.get(created.campaign_id)
    assert (campaign.created_on, campaign.modified_on) == (first.timestamp, second.timestamp)
    assert campaign.edition == "capes"


def test_a_stale_expected_version_is_refused_and_appends_nothing(store_app: Campaigns) -> None:
    campaign_id = new_table(store_app, players=2)  # version 3

    with pytest.raises(StaleVersion) as refused:
        store_app.execute(campaign_id, SeatPlayer(name="Cass"), expected_version=2)

    assert isinstance(refused.value, CampaignConflict)
    assert (refused.value.expected, refused.value.current) == (2, 3)
    assert len(store_app.history(campaign_id)) == 3
    assert len(store_app.state(campaign_id).players) == 2


def test_a_matching_expected_version_is_accepted(store_app: Campaigns) -> None:
    campaign_id = new_table(store_app, players=2)

    outcome = store_app.execute(campaign_id, SeatPlayer(name="Cass"), expected_version=3)

    assert outcome.version == 4


def test_a_refused_command_appends_nothing_and_leaves_the_state_alone(
    store_app: Campaigns,
) -> None:
    campaign_id = new_table(store_app, players=2)
    before = store_app.get(campaign_id)

    with pytest.raises(RuleViolation):
        store_app.execute(campaign_id, SeatPlayer(name="Ada"))
    store_app.execute(campaign_id, CloseCampaign())
    with pytest.raises(NotPermitted):
        store_app.execute(campaign_id, SeatPlayer(name="Cass"))

    after = store_app.get(campaign_id)
    assert after.version == before.version + 1
    assert after.state.players == before.state.players
    assert [type(r.event).__name__ for r in store_app.history(campaign_id, after=3)] == [
        "CampaignClosed"
    ]


def test_two_applications_writing_from_the_same_version_the_second_gets_stale_version(
    make_app: MakeApp, shared_store_env: dict[str, str]
) -> None:
    first, second = make_app(shared_store_env), make_app(shared_store_env)
    campaign_id = new_table(first, players=1)
    assert second.get(campaign_id).version == first.get(campaign_id).version == 2

    first.execute(campaign_id, SeatPlayer(name="Brook"), expected_version=2)
    with pytest.raises(StaleVersion):
        second.execute(campaign_id, SeatPlayer(name="Cass"), expected_version=2)

    assert [p.name for p in second.state(campaign_id).players] == ["Ada", "Brook"]


def test_a_write_lost_in_the_store_becomes_stale_version_and_does_not_poison_the_cache(
    make_app: MakeApp, shared_store_env: dict[str, str]
) -> None:
    winner = make_app(shared_store_env)
    campaign_id = new_table(winner, players=1)

    def racing_clock() -> Any:
        # Runs after the loser has loaded and decided, before it saves: the winner appends
        # version 3 first, so the loser's version 3 collides in the store itself.
        if not raced:
            raced.append(winner.execute(campaign_id, SeatPlayer(name="Brook")))
        return TickingClock()()

    raced: list[Outcome] = []
    loser = make_app(shared_store_env, clock=racing_clock)
    assert loser.get(campaign_id).version == 2  # now cached by the loser

    # Versioned, a lost race is a stale version that says where the campaign is now (an
    # unversioned write would be decided once more instead: test_atomic.py).
    with pytest.raises(StaleVersion) as refused:
        loser.execute(campaign_id, SeatPlayer(name="Cass"), expected_version=2)

    assert isinstance(refused.value, CampaignConflict) and refused.value.current == 3
    assert raced and raced[0].version == 3
    # Nothing of the loser's was stored or cached: it sees exactly the winner's write.
    assert [p.name for p in loser.state(campaign_id).players] == ["Ada", "Brook"]
    assert [r.event.name for r in loser.history(campaign_id, after=1)] == ["Ada", "Brook"]
    # And it can carry on from there.
    assert loser.execute(campaign_id, SeatPlayer(name="Cass")).version == 4
    assert winner.state(campaign_id) == loser.state(campaign_id)


def test_commands_from_many_threads_on_one_campaign_all_succeed(store_app: Campaigns) -> None:
    campaign_id = new_table(store_app, players=0)
    errors: list[BaseException] = []

    def seat(name: str) -> None:
        try:
            store_app.execute(campaign_id, SeatPlayer(name=name))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=seat, args=(name,)) for name in NAMES]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    state = store_app.state(campaign_id)
    assert sorted(p.name for p in state.players) == sorted(NAMES)
    assert [p.seat for p in state.players] == [1, 2, 3, 4, 5, 6]


def test_snapshots_are_taken_every_interval_and_used_when_loading(
    make_app: MakeApp, store_env: dict[str, str]
) -> None:
    app = make_app(store_env, snapshot_interval=3)
    campaign_id = new_table(app, players=6)  # versions 1..7
    assert app.snapshots is not None

    snapshots = cast("list[Snapshot]", list(app.snapshots.get(campaign_id)))

    assert [s.originator_version for s in snapshots] == [3, 6]
    assert all(isinstance(s, Snapshot) for s in snapshots)
    assert snapshots[-1].state == app.state(campaign_id, version=6)

    # Count what a load decodes: the snapshot at 6 and the one event after it, not all seven.
    decoded: list[Any] = []
    to_domain_event = app.mapper.to_domain_event

    def counting(stored: Any) -> Any:
        decoded.append(item := to_domain_event(stored))
        return item

    app.mapper.to_domain_event = counting  # type: ignore[method-assign,assignment]
    at_7 = app.get(campaign_id, version=7)  # a historical version bypasses the cache
    assert [type(d).__name__ for d in decoded] == ["Snapshot", "Recorded"]
    decoded.clear()
    at_5 = app.get(campaign_id, version=5)
    assert [d.originator_version for d in decoded] == [3, 4, 5]

    # Loading through snapshots gives the same state as replaying every event.
    edition = get_edition("capes")
    events = [r.event for r in app.history(campaign_id)]
    assert at_7.state == fold(edition, events)
    assert at_5.state == fold(edition, events[:5])
    assert at_7.created_on == app.history(campaign_id)[0].timestamp


def test_a_snapshot_from_other_rules_is_ignored_and_the_events_replayed(
    make_app: MakeApp, store_env: dict[str, str]
) -> None:
    app = make_app(store_env, snapshot_interval=1000)
    campaign_id = new_table(app, players=4)
    assert app.snapshots is not None
    truth = app.state(campaign_id)
    latest = app.history(campaign_id)[-1]
    app.snapshots.put(
        [
            Snapshot(
                originator_id=campaign_id,
                originator_version=latest.originator_version,
                timestamp=latest.timestamp,
                created_on=latest.timestamp,
                edition="capes",
                rules_version="capes-0.1-prototype",
                state=get_edition("capes").initial_state(),
            )
        ]
    )

    assert app.state(campaign_id, version=latest.originator_version) == truth
    if store_env["PERSISTENCE_MODULE"] != "eventsourcing.popo":  # a store others can open
        fresh = make_app(store_env)
        assert fresh.state(campaign_id) == truth


def test_time_travel_gives_the_state_at_each_version(store_app: Campaigns) -> None:
    campaign_id = new_table(store_app, players=3)

    assert [len(store_app.state(campaign_id, version=v).players) for v in (1, 2, 3, 4)] == [
        0, 1, 2, 3,
    ]
    assert store_app.get(campaign_id, version=2).version == 2
    for missing in (0, 5):
        with pytest.raises(VersionNotFound):
            store_app.state(campaign_id, version=missing)


def test_an_unknown_campaign_is_not_found_by_any_call(store_app: Campaigns) -> None:
    new_table(store_app, players=1)
    nobody = uuid4()

    for call in (
        lambda: store_app.execute(nobody, SeatPlayer(name="Ada")),
        lambda: store_app.state(nobody),
        lambda: store_app.state(nobody, version=1),
        lambda: store_app.get(nobody),
        lambda: store_app.history(nobody),
    ):
        with pytest.raises(CampaignNotFound) as refused:
            call()
        assert isinstance(refused.value, InvalidReference)
        assert refused.value.campaign_id == nobody


def test_history_pages_through_events_after_a_version(store_app: Campaigns) -> None:
    campaign_id = new_table(store_app, players=5)  # versions 1..6

    assert [r.originator_version for r in store_app.history(campaign_id, after=2, limit=3)] == [
        3, 4, 5,
    ]
    assert store_app.history(campaign_id, after=6) == []


def test_campaign_ids_lists_every_campaign_oldest_first(store_app: Campaigns) -> None:
    ids = [new_table(store_app, players=1) for _ in range(3)]

    assert store_app.campaign_ids() == ids


def test_notifications_are_topics_of_edition_and_event_class(store_app: Campaigns) -> None:
    campaign_id = new_table(store_app, players=2)

    notifications = store_app.recorder.select_notifications(
        0, limit=10, topics=["capes:PlayerSeated"], inclusive_of_start=False
    )

    assert [n.originator_version for n in notifications] == [2, 3]
    assert {str(n.originator_id) for n in notifications} == {str(campaign_id)}
    every = store_app.recorder.select_notifications(1, limit=10)
    assert [n.topic for n in every] == [
        "capes:CampaignCreated", "capes:PlayerSeated", "capes:PlayerSeated",
    ]


def test_the_cache_serves_loads_without_replaying_the_stream(store_app: Campaigns) -> None:
    campaign_id = new_table(store_app, players=2)

    assert store_app.repository.cache is not None
    assert store_app.get(campaign_id) is store_app.get(campaign_id)
    assert store_app.get(campaign_id).modified_on.tzinfo is not None
    assert store_app.get(campaign_id).modified_on.utcoffset() == UTC.utcoffset(None)


def test_open_campaigns_uses_the_store_named_in_the_environment(tmp_path: Any) -> None:
    environ = {"CAPES_DB": str(tmp_path / "table.sqlite")}
    with open_campaigns(environ) as app:
        campaign_id = new_table(app, players=2)
    assert (tmp_path / "table.sqlite").exists()

    with open_campaigns(environ, AGGREGATE_CACHE_MAXSIZE="") as again:
        assert again.repository.cache is None
        assert [p.name for p in again.state(campaign_id).players] == ["Ada", "Brook"]


def test_stored_events_can_be_compressed_by_the_usual_setting(
    make_app: MakeApp, store_env: dict[str, str]
) -> None:
    app = make_app({**store_env, "COMPRESSOR_TOPIC": "eventsourcing.compressor:ZlibCompressor"})
    campaign_id = new_table(app, players=2)

    stored = app.recorder.select_notifications(1, limit=1)[0]

    assert not stored.state.startswith(b"{")
    assert len(app.history(campaign_id)) == 3


def test_a_seat_command_records_its_seat_on_every_event_and_its_narration_on_the_first(
    store_app: Campaigns,
) -> None:
    campaign_id = new_table(store_app, players=2)

    framed = store_app.execute(
        campaign_id, FrameScene(seat=2, text="Rooftops at midnight"), narration="Rain falls."
    )

    # The scene's start also commits to its dice, in the same command (R-FAIR-1).
    assert [type(r.event).__name__ for r in framed.events] == [
        "SceneFramed", "PageStarted", "DiceCommitted"]
    assert [r.originator_version for r in framed.events] == [4, 5, 6]
    assert [(r.seat, r.narration) for r in store_app.history(campaign_id, after=3)] == [
        (2, "Rain falls."), (2, ""), (2, ""),
    ]
    assert framed.events[0].timestamp == framed.events[2].timestamp


def test_a_snapshot_due_in_the_middle_of_one_commands_events_is_taken_at_its_version(
    make_app: MakeApp, store_env: dict[str, str]
) -> None:
    app = make_app(store_env, snapshot_interval=4)
    campaign_id = new_table(app, players=2)  # versions 1..3

    app.execute(campaign_id, FrameScene(seat=1))  # versions 4 and 5
    assert app.snapshots is not None

    (snapshot,) = cast("list[Snapshot]", list(app.snapshots.get(campaign_id)))
    assert snapshot.originator_version == 4
    first_four = [r.event for r in app.history(campaign_id, limit=4)]
    assert snapshot.state == fold(get_edition("capes"), first_four)
    assert app.state(campaign_id, version=5) == app.state(campaign_id)


def test_the_snapshots_due_in_one_group_commit_are_stored_in_one_transaction(
    make_app: MakeApp, store_env: dict[str, str]
) -> None:
    # Issue 15: each transaction waits for the disk; campaigns that reach their snapshot
    # together in one group commit must not each wait for it in turn.
    app = make_app(store_env, snapshot_interval=4)
    tables = [new_table(app, players=2) for _ in range(3)]  # each at version 3
    assert app.snapshots is not None
    recorder = app.snapshots.recorder
    inserts: list[int] = []
    insert_events = recorder.insert_events

    def counting(stored: Any, **kwargs: Any) -> Any:
        inserts.append(len(stored))
        return insert_events(stored, **kwargs)

    recorder.insert_events = counting  # type: ignore[method-assign]
    app.commit([app.prepare(app.get(t), FrameScene(seat=1)) for t in tables])  # 4 and on

    assert inserts == [3]
    for table in tables:
        (snapshot,) = cast("list[Snapshot]", list(app.snapshots.get(table)))
        assert snapshot.originator_version == 4


def test_a_snapshot_the_store_refuses_costs_only_itself(
    make_app: MakeApp, store_env: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(store_env, snapshot_interval=4)
    refused, kept = new_table(app, players=2), new_table(app, players=2)
    assert app.snapshots is not None
    # A snapshot already stored at version 4 (of a move never made): the store refuses the
    # group's own snapshot of that campaign at that version, and only that one.
    at_4 = app.prepare(app.get(refused), SeatPlayer(name="Cass")).campaign
    app.snapshots.put([Snapshot.take(at_4)])

    outcomes = app.commit([app.prepare(app.get(t), FrameScene(seat=1)) for t in (refused, kept)])

    # The commands are recorded all the same.
    assert [app.get(t).version for t in (refused, kept)] == [o.version for o in outcomes]
    assert all(o.version > 4 for o in outcomes)
    (snapshot,) = cast("list[Snapshot]", list(app.snapshots.get(kept)))
    assert snapshot.originator_version == 4
    failures = [r for r in caplog.records if "snapshot of campaign" in r.getMessage()]
    assert [str(refused) in r.getMessage() for r in failures] == [True]


def test_commands_committed_together_get_the_positions_the_store_gave_their_events(
    store_app: Campaigns,
) -> None:
    first, second = new_table(store_app, players=2), new_table(store_app, players=2)
    staged = [store_app.prepare(store_app.get(first), FrameScene(seat=1)),
              store_app.prepare(store_app.get(second), SeatPlayer(name="Cass"))]

    outcomes = store_app.commit(staged)

    stored = {(n.originator_id if isinstance(n.originator_id, UUID) else UUID(n.originator_id),
               n.originator_version): n.id
              for n in store_app.recorder.select_notifications(0, 100)}
    for outcome in outcomes:
        assert outcome.position == stored[outcome.campaign_id, outcome.version]
        assert [stored[outcome.campaign_id, r.originator_version] for r in outcome.events] == \
            list(range(outcome.position - len(outcome.events) + 1, outcome.position + 1))
