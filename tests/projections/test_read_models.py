"""The read models (board, ledgers, timeline, directory, analytics) against the fold of the
events, on every store: random campaigns, rebuilds, crashes half way, replays, restarts, two
runners at once, undos and upheld disputes."""

from __future__ import annotations

import random
import threading
import time
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from uuid import uuid4

import msgspec
import pytest
from eventsourcing.persistence import IntegrityError, Tracking
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from readmodel_helpers import (
    check_read_models,
    dump,
    expected_figures,
    figures_of,
    open_table,
    play,
)
from stores import MakeApp, sqlite_file

from application.campaigns import Campaigns
from application.dice import ScriptedDice, SeededDice
from domain.capes import EDITION
from domain.capes import commands as c
from domain.capes.views import Board, board
from domain.record.commands import OpenDispute, Undo, Vote
from domain.record.events import Rewound, Undone
from projections.analytics import AnalyticsModel
from projections.model import Change, Folds
from projections.runner import Catchup
from projections.service import MODELS, ReadModels
from projections.views import iso, open_factory, open_view, read_models_file

MEMORY = {"PERSISTENCE_MODULE": "eventsourcing.popo"}


def played(app: Campaigns, seed: int, rounds: int = 4, commands: int = 30,
           read_models: ReadModels | None = None) -> list[Any]:
    """Two campaigns played in turns (catching the read models up between turns, in batches
    of random sizes, if given); their ids."""
    rng = random.Random(seed)
    campaigns = [open_table(app, "Harbor", players=3), open_table(app, "Skyline", players=2)]
    for _ in range(rounds):
        for campaign in campaigns:
            play(app, campaign, rng, commands)
        if read_models is not None:
            read_models.runner.batch = rng.randint(1, 60)
            read_models.runner.catch_up()
    return campaigns


# -- each read model is the fold of the events -----------------------------------------------


def test_times_are_stored_as_fixed_width_utc_text_whose_order_is_time_order() -> None:
    """With microseconds or none (the default ``isoformat`` leaves zeros out), in UTC or not."""
    start = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
    moments = [start, start + timedelta(microseconds=1), start + timedelta(seconds=1),
               (start + timedelta(seconds=2)).astimezone(timezone(timedelta(hours=-5)))]
    texts = [iso(m) for m in moments]
    assert texts[0] == "2026-11-30T10:00:00.000000+00:00"
    assert texts[-1] == "2026-11-30T10:00:02.000000+00:00"
    assert len(set(map(len, texts))) == 1 and texts == sorted(texts)
    assert [datetime.fromisoformat(t) for t in texts] == moments


@settings(max_examples=10, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.integers(0, 2**31), players=st.integers(2, 4),
       chunks=st.lists(st.tuples(st.integers(1, 80), st.booleans()), min_size=1, max_size=6))
def test_each_read_model_equals_the_fold_of_the_events_of_random_campaigns(
    seed: int, players: int, chunks: list[tuple[int, bool]]
) -> None:
    """Caught up in batches of any size, or stepped as the background runner does, gathering
    the latest-state read models between writes (``flush=False``), at any moments."""
    app = Campaigns(MEMORY, dice=SeededDice(seed), snapshot_interval=17)
    read_models = ReadModels(app)
    runner = read_models.runner
    try:
        rng = random.Random(seed)
        campaigns = [open_table(app, "One", players=players), open_table(app, "Two")]
        for chunk, gather in chunks:
            for campaign in campaigns:
                play(app, campaign, rng, chunk)
            runner.batch = rng.randint(1, 80)
            while gather and runner.step(flush=False):
                pass
            if not gather or rng.random() < 0.5:
                runner.catch_up()
        assert runner.catch_up()
        assert runner.positions() == dict.fromkeys(MODELS, runner.head())
        check_read_models(app, read_models, campaigns)
    finally:
        read_models.close()
        app.close()


def test_read_models_follow_random_campaigns_on_each_store(
    store_env: dict[str, str], make_app: MakeApp
) -> None:
    app = make_app(store_env, dice=SeededDice(3), snapshot_interval=23)
    read_models = ReadModels(app)
    try:
        campaigns = played(app, 3, read_models=read_models)
        read_models.runner.catch_up()
        assert read_models.runner.positions() == dict.fromkeys(MODELS, read_models.runner.head())
        check_read_models(app, read_models, campaigns)
    finally:
        read_models.close()


# -- rebuilds ----------------------------------------------------------------------------------


def test_a_rebuild_gives_what_incremental_catch_up_gave(
    store_env: dict[str, str], make_app: MakeApp
) -> None:
    app = make_app(store_env, dice=SeededDice(5))
    read_models = ReadModels(app)
    try:
        campaigns = played(app, 5, read_models=read_models)
        read_models.runner.catch_up()
        incremental = dump(read_models)
        seen: list[int] = []
        position, _ = read_models.rebuild(progress=seen.append)
        assert position == read_models.runner.head() and seen and seen[-1] == position
        assert dump(read_models) == incremental
        read_models.rebuild(["analytics"])
        assert dump(read_models) == incremental
        check_read_models(app, read_models, campaigns)
    finally:
        read_models.close()


# -- crashes, replays, two runners ----------------------------------------------------------


class Crash(Exception):
    pass


class CrashingAnalytics(AnalyticsModel):
    """Analytics that die after processing ``after`` events (in the middle of a batch)."""

    after = 0

    def operations(self, changes: Any) -> Any:
        for _ in changes:
            type(self).after -= 1
            if type(self).after < 0:
                raise Crash("killed")
        return super().operations(changes)


@pytest.mark.parametrize("batch", [1, 7])
def test_a_projection_killed_half_way_resumes_from_its_tracking_without_counting_twice(
    store_env: dict[str, str], make_app: MakeApp, batch: int
) -> None:
    app = make_app(store_env, dice=SeededDice(11), snapshot_interval=13)
    campaigns = played(app, 11, rounds=3)
    head = app.recorder.max_notification_id()
    assert head is not None and head > 100
    factory = open_factory(dict(app.env))
    try:
        view = open_view(factory, AnalyticsModel.views)
        CrashingAnalytics.after = head // 2
        runner = Catchup(app, [CrashingAnalytics(view)], batch=batch)
        with pytest.raises(Crash):
            runner.catch_up()
        reached = view.position()
        assert 0 < reached < head
        if batch == 1:
            assert reached == head // 2, "every event before the crash was applied"
        # A new process: a new fold (cold: loaded from the application at the tracked
        # position, snapshots and all) and runner, on the same tables.
        CrashingAnalytics.after = head
        restarted = Catchup(app, [CrashingAnalytics(view)], batch=batch)
        assert restarted.position() == reached
        restarted.catch_up()
        assert view.position() == head
        assert restarted.folds.loads > 0, "the restart loaded campaigns it had not folded"
        for campaign in campaigns:
            assert figures_of(AnalyticsModel(view), campaign) == expected_figures(app, campaign)
    finally:
        factory.close()


@pytest.mark.parametrize("seed", [3, 4])
def test_folding_a_batch_campaign_by_campaign_gives_each_event_the_campaign_around_it(
    seed: int,
) -> None:
    """Folds.changes folds each campaign's events of a batch in one go; every change carries
    the same campaign before and after its event as a fold of one event at a time (undos and
    upheld disputes included, R-REC-5), and the last one of each campaign is the whole
    aggregate, its past states too, which the next batch folds from."""
    app = Campaigns(MEMORY, dice=SeededDice(seed))
    played(app, seed, rounds=3, commands=40)
    notifications = app.recorder.select_notifications(0, 10_000, inclusive_of_start=False)
    items = [(n.id, app.mapper.to_domain_event(n)) for n in notifications]
    assert any(isinstance(r.event, (Undone, Rewound)) for _, r in items)
    one_by_one = Folds(app)  # one event at a time
    alone = [one_by_one.change(r, p) for p, r in items]
    rng, batched, folds, at = random.Random(seed), [], Folds(app), 0
    while at < len(items):
        size = rng.randint(1, 80)
        batched += folds.changes(items[at:at + size])
        at += size

    def around(campaign: Any) -> Any:
        return None if campaign is None else (campaign.version, campaign.state,
                                             campaign.record, campaign.chain,
                                             campaign.modified_on)

    assert [(c.position, c.record) for c in batched] == [(c.position, c.record) for c in alone]
    assert [(around(c.before), around(c.after)) for c in batched] == \
        [(around(c.before), around(c.after)) for c in alone]
    last = {c.campaign_id: c for c in batched}
    assert {k: c.after for k, c in last.items()} == \
        {k: c.after for k, c in {c.campaign_id: c for c in alone}.items()}
    assert any(c.after is not None and c.after.past for c in last.values())


def test_a_position_applied_already_is_refused_and_nothing_is_applied_twice(
    store_env: dict[str, str], make_app: MakeApp
) -> None:
    app = make_app(store_env, dice=SeededDice(2))
    read_models = ReadModels(app)
    try:
        played(app, 2, rounds=1)
        read_models.runner.catch_up()
        before = dump(read_models)
        model = read_models.analytics
        notifications = app.recorder.select_notifications(0, 5, inclusive_of_start=False)
        folds = Folds(app)
        changes = [folds.change(app.mapper.to_domain_event(n), n.id) for n in notifications]
        with pytest.raises(IntegrityError):
            model.process_changes(changes, 0)  # the tracking is not at 0 any more
        with pytest.raises(IntegrityError):
            model.process_changes(changes, model.store.position())  # not after it
        last = notifications[-1]
        model.folds = folds
        with pytest.raises(IntegrityError):  # eventsourcing's Projection interface
            model.process_event(app.mapper.to_domain_event(last), Tracking("Campaigns", last.id))
        assert dump(read_models) == before
    finally:
        read_models.close()


def test_a_failing_statement_rolls_back_the_whole_batch_with_its_tracking(
    store_env: dict[str, str], make_app: MakeApp
) -> None:
    app = make_app(store_env, dice=SeededDice(2))
    read_models = ReadModels(app, ["timeline"])
    try:
        played(app, 2, rounds=1)
        model = read_models.timeline
        notifications = app.recorder.select_notifications(0, 5, inclusive_of_start=False)
        changes = [Change(position=n.id, record=app.mapper.to_domain_event(n))
                   for n in notifications]
        ops = [*model.operations(changes), ("INSERT INTO {schema}no_such_table VALUES (?)", [(1,)])]
        with pytest.raises(Exception, match="no_such_table"):
            model.store.write(0, changes[-1].position, ops)
        assert model.store.position() == 0
        assert model.store.dump() == {"capes_timeline": []}
    finally:
        read_models.close()


def test_two_processes_catching_up_the_same_read_models_apply_each_event_once(
    shared_store_env: dict[str, str], make_app: MakeApp
) -> None:
    first = make_app(shared_store_env, dice=SeededDice(9))
    campaigns = played(first, 9, rounds=2)
    second = make_app(shared_store_env)
    one, two = ReadModels(first, batch=9), ReadModels(second, batch=4)
    try:
        head = first.recorder.max_notification_id() or 0
        while min(one.runner.refresh().values()) < head:
            one.runner.step()
            two.runner.step()
        two.runner.catch_up()
        assert one.runner.refresh() == dict.fromkeys(MODELS, head)
        check_read_models(first, one, campaigns)
    finally:
        one.close()
        two.close()


def test_the_board_read_model_shows_a_shared_exemplar_waiting_for_agreement() -> None:
    """R-CHAR-6 / R-X-CHAR-2: the stored board carries the pending request (who asked, whose
    agreement is awaited) until the other player agrees; a board stored before requests were
    shown still reads back, with none."""
    app = Campaigns(MEMORY)
    read_models = ReadModels(app)
    try:
        campaign = open_table(app, "Harbor", players=3)  # Heroes 1 and 3 have Drives
        app.execute(campaign, c.LinkExemplar(seat=1, character=1, exemplar=2, drive="Justice"))
        app.execute(campaign, c.LinkExemplar(seat=1, character=1, exemplar=3, drive="Hope"))
        read_models.runner.catch_up()
        shown = read_models.board.board(campaign)
        assert shown == board(app.state(campaign))
        assert isinstance(shown, Board)
        assert [(r.asked_by, r.awaiting, r.character, r.exemplar, r.drive)
                for r in shown.exemplar_requests] == [(1, 3, 1, 3, "Hope")]
        assert "link_exemplar" in shown.waiting_for[3]
        app.execute(campaign, c.LinkExemplar(seat=3, character=1, exemplar=3, drive="Hope"))
        read_models.runner.catch_up()
        agreed = read_models.board.board(campaign)
        assert agreed == board(app.state(campaign))
        assert isinstance(agreed, Board) and agreed.exemplar_requests == ()
        older = msgspec.json.decode(msgspec.json.encode(shown))
        del older["exemplar_requests"]
        decoded = msgspec.json.decode(msgspec.json.encode(older), type=Board)
        assert decoded == msgspec.structs.replace(shown, exemplar_requests=())
    finally:
        read_models.close()
        app.close()


def test_read_models_survive_a_restart(shared_store_env: dict[str, str],
                                       make_app: MakeApp) -> None:
    app = make_app(shared_store_env, dice=SeededDice(4))
    read_models = ReadModels(app)
    campaigns = played(app, 4, rounds=2, read_models=read_models)
    read_models.runner.catch_up()
    reached = read_models.runner.position()
    kept = dump(read_models)
    read_models.close()
    app.close()

    again = make_app(shared_store_env, dice=SeededDice(8))
    restarted = ReadModels(again)
    try:
        assert restarted.runner.refresh() == dict.fromkeys(MODELS, reached)
        assert dump(restarted) == kept
        assert restarted.board.board(campaigns[0]) == board(again.state(campaigns[0]))
        play(again, campaigns[0], random.Random(1), 40)
        restarted.runner.catch_up()
        check_read_models(again, restarted, campaigns)
    finally:
        restarted.close()


def test_read_models_of_an_sqlite_store_live_in_a_file_of_their_own_beside_it(
        sqlite_env: dict[str, str], make_app: MakeApp) -> None:
    """Their writes never hold the lock of the campaigns' file (see read_models_file)."""
    app = make_app(sqlite_env, dice=SeededDice(4))
    read_models = ReadModels(app)
    try:
        campaigns = played(app, 4, rounds=1, read_models=read_models)
        read_models.runner.catch_up()
        db = Path(sqlite_env["SQLITE_DBNAME"])
        beside = db.with_name(f"{db.stem}.read-models{db.suffix}")
        assert read_models_file(str(db)) == str(beside)
        with sqlite_file(db) as store, sqlite_file(beside) as views:
            tables = {r[0] for r in store.execute("SELECT name FROM sqlite_master")}
            assert not {t for t in tables if t.startswith("capes_")}
            (count,) = views.execute("SELECT count(*) FROM capes_board").fetchone()
        assert count == len(campaigns)
    finally:
        read_models.close()


# -- undos and upheld disputes -------------------------------------------------------------


def test_read_models_leave_out_what_an_undo_or_an_upheld_dispute_reverted(
    store_env: dict[str, str], make_app: MakeApp
) -> None:
    app = make_app(store_env, dice=ScriptedDice([3, 5, 2]))
    read_models = ReadModels(app)
    try:
        campaign = open_table(app, "Take backs")

        def do(*commands: Any) -> Any:
            outcome = None
            for command in commands:
                outcome = app.execute(campaign, command)
            return outcome

        do(c.FrameScene(seat=1, text="The docks"), c.ChooseCharacter(seat=1, character=1),
           c.PassClaiming(seat=1), c.ChooseCharacter(seat=2, character=2),
           c.PassClaiming(seat=2), c.ChooseCharacter(seat=3, character=3),
           *(c.PassClaiming(seat=s) for s in (3, 1, 2, 3)),
           c.StartTurn(seat=1, character=1),
           c.CreateConflict(seat=1, kind="event", text="The crane falls"), c.EndTurn(seat=1))
        started = do(c.StartTurn(seat=2, character=2))
        undone = do(Undo(seat=2))  # a roll cannot be undone (R-X-REC-1): the turn's start can
        do(c.StartTurn(seat=2, character=2))
        rolled = do(c.RollDie(seat=2, ability="style 3", conflict=1, die=1))  # a 3
        read_models.runner.catch_up()
        assert read_models.analytics.analytics(campaign).dice.overall.faces == (0, 0, 1, 0, 0, 0)  # type: ignore[union-attr]

        def disputed_and_upheld(roll: Any) -> Any:
            do(OpenDispute(seat=1, position=roll.events[0].originator_version,
                           reason="that was not it"))
            upheld = do(Vote(seat=3, uphold=True))
            assert type(upheld.events[-1].event).__name__ == "Rewound"
            return upheld

        rewound_first = disputed_and_upheld(rolled)
        disputed = do(c.RollDie(seat=2, ability="style 2", conflict=1, die=1))  # a 5
        rewound = disputed_and_upheld(disputed)
        do(c.RollDie(seat=2, ability="style 1", conflict=1, die=1))  # a 2, in effect
        read_models.runner.catch_up()

        figures = read_models.analytics.analytics(campaign)
        assert figures is not None
        assert figures.dice.overall.faces == (0, 1, 0, 0, 0, 0)
        assert figures.dice.reverted == 2
        assert figures.undos == 1 and figures.rewinds == 2
        assert figures.abilities.uses == 1
        reverted = {t.position: t.reverted_by
                    for t in read_models.timeline.entries(campaign, limit=1000, reverted=True)}
        undo_at = undone.events[0].originator_version
        assert reverted == {
            **{r.originator_version: undo_at for r in started.events},
            **{r.originator_version: rewound_first.events[-1].originator_version
               for r in rolled.events},
            **{r.originator_version: rewound.events[-1].originator_version
               for r in disputed.events},
        }
        check_read_models(app, read_models, [campaign])
    finally:
        read_models.close()


# -- forks and closing in the directory ------------------------------------------------------


def test_the_directory_knows_forks_and_closed_campaigns(store_env: dict[str, str],
                                                       make_app: MakeApp) -> None:
    app = make_app(store_env, dice=SeededDice(6))
    read_models = ReadModels(app)
    try:
        source = open_table(app, "Harbor City")
        play(app, source, random.Random(6), 30)
        at = app.get(source).version - 3
        fork = app.fork(source, at, name="What if").campaign_id
        app.execute(source, c.CloseCampaign())
        read_models.runner.catch_up()
        listed = {x.campaign_id: x for x in read_models.directory.search()}
        assert listed[fork].forked_from == source and listed[fork].forked_at == at
        assert listed[fork].name == "What if" and not listed[fork].closed
        assert listed[source].closed and listed[source].forked_from is None
        assert [x.campaign_id for x in read_models.directory.search("what")] == [fork]
        assert [x.campaign_id for x in read_models.directory.search(closed=True)] == [source]
        assert read_models.directory.search("player 2", limit=1, offset=1) != []
        check_read_models(app, read_models, [source, fork])
    finally:
        read_models.close()


# -- an event the read models cannot take (issue 13) ----------------------------------------


def test_one_event_the_read_models_cannot_take_stops_only_its_campaign(
    store_env: dict[str, str], make_app: MakeApp
) -> None:
    """A name with a NUL (which PostgreSQL text refuses) got into the log before the server
    refused such text: the read models report it, leave that campaign out, and every other
    campaign, before and after it, goes on; a rebuild does the same."""
    app = make_app(store_env, dice=SeededDice(3))
    read_models = ReadModels(app)
    try:
        before = open_table(app, "Before")
        # Written as an older server would have (the rules refuse such a name now).
        poisoned = uuid4()
        created = EDITION.decide(EDITION.initial_state(), c.CreateCampaign(name="Poison"))
        app._append(poisoned, None, EDITION, tuple(
            msgspec.structs.replace(e, name="a\u0000b") for e in created), None, "")
        after = open_table(app, "After")
        play(app, after, random.Random(3), 20)
        runner = read_models.runner
        assert runner.catch_up(), "the read models reach the head of the log"
        listed = {x.campaign_id for x in read_models.directory.search()}
        assert {before, after} <= listed
        assert read_models.timeline.entries(after, limit=1000)
        if store_env.get("PERSISTENCE_MODULE", "").endswith("postgres"):
            # PostgreSQL's text cannot hold a NUL: reported, at the event that has one.
            assert runner.stopped[poisoned].version == 1, runner.stopped
            assert poisoned not in listed
        # Played on, the others still follow.
        play(app, after, random.Random(4), 10)
        assert runner.catch_up()
        check_read_models(app, read_models, [before, after])
        runner.reset()
        assert runner.catch_up(), "a rebuild gets past it too"
        check_read_models(app, read_models, [before, after])
    finally:
        read_models.close()


def test_the_runner_calls_between_after_every_step_while_it_follows_the_log() -> None:
    """``capes projections run`` collects garbage between the runner's steps (its
    ``between``); the runner calls it after each step, and it reaches the log's head."""
    app = Campaigns(MEMORY)
    read_models = ReadModels(app, ["timeline"], poll=0.01, linger=0)
    runner = read_models.runner
    stop, calls = threading.Event(), []
    thread = threading.Thread(target=runner.run_forever,
                              kwargs={"stop": stop, "between": lambda: calls.append(1)})
    try:
        open_table(app, "Harbor", players=2)
        thread.start()
        assert runner.wait(app.recorder.max_notification_id(), drive=False, timeout=30)
        deadline = time.monotonic() + 30
        while len(calls) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(calls) >= 3, "called after every step, idle ones too"
    finally:
        stop.set()
        if thread.is_alive():
            thread.join(30)
        read_models.close()


def test_a_poke_waits_out_the_linger_and_a_hurry_cuts_it_short() -> None:
    """What stored events wake is taken in one batch after the linger; a reader waiting for
    them (projections.wake) has it taken at once."""
    app = Campaigns(MEMORY)
    read_models = ReadModels(app, ["timeline"], poll=600, linger=600)
    runner = read_models.runner
    try:
        campaign = open_table(app, "Harbor", players=2)
        runner.start()  # its first look takes what is stored
        assert runner.wait(app.recorder.max_notification_id(), drive=False, timeout=30)
        position = app.execute(campaign, c.Narrate(seat=1, text="Later")).position
        assert position is not None
        runner.poke()
        assert not runner.wait(position, drive=False, timeout=1.0)  # lingering
        runner.hurry()
        assert runner.wait(position, drive=False, timeout=30)
    finally:
        read_models.close()
        app.close()


# -- the latest-state read models gathered between writes ------------------------------------

LATEST = ("board", "ledgers", "directory")


def test_the_latest_state_read_models_wait_to_be_written_while_the_others_follow(
    store_env: dict[str, str], make_app: MakeApp
) -> None:
    """Gathering moves the timeline and analytics and leaves the board, ledgers and directory
    where they were stored; the next write stores every campaign's last change at once."""
    app = make_app(store_env, dice=SeededDice(5))
    read_models = ReadModels(app)
    runner = read_models.runner
    try:
        campaign = open_table(app, "Harbor", players=2)
        assert runner.catch_up()
        stored = runner.head()
        play(app, campaign, random.Random(5), 15)
        while runner.step(flush=False):
            pass
        head = runner.head()
        assert head > stored
        positions = runner.refresh()  # as stored
        assert {name: positions[name] for name in LATEST} == dict.fromkeys(LATEST, stored)
        assert positions["timeline"] == positions["analytics"] == head
        assert runner.step() == 0  # nothing more to read: what was gathered is written
        assert runner.refresh() == dict.fromkeys(MODELS, head)
        check_read_models(app, read_models, [campaign])
    finally:
        read_models.close()


@pytest.fixture
def gathering() -> Any:
    """A campaign, and read models whose background runner gathers the latest-state ones until
    told (a poll and a gathering of ten minutes, no linger)."""
    app = Campaigns(MEMORY)
    read_models = ReadModels(app, poll=600, linger=0, latest_every=600)
    try:
        yield app, read_models, open_table(app, "Harbor", players=2)
    finally:
        read_models.close()
        app.close()


def narrated(app: Campaigns, read_models: ReadModels, campaign: Any, seat: int) -> int:
    """A narration stored, the runner poked and the timeline caught up with it: its position."""
    position = app.execute(campaign, c.Narrate(seat=seat, text=f"Seat {seat}")).position
    assert position is not None
    read_models.runner.poke()
    assert read_models.runner.wait(position, ["timeline"], drive=False, timeout=30)
    return position


def test_the_background_runner_writes_what_it_gathered_when_due_or_when_hurried(
    gathering: Any,
) -> None:
    app, read_models, campaign = gathering
    runner = read_models.runner
    runner.start()
    opened = app.recorder.max_notification_id()
    assert runner.wait(opened, ["timeline"], drive=False, timeout=30)
    assert not runner.wait(opened, ["board"], drive=False, timeout=0.5)  # gathered
    position = narrated(app, read_models, campaign, 1)
    assert not runner.wait(position, ["board"], drive=False, timeout=0.5)
    runner.hurry()  # someone waits for the board (projections.wake)
    assert runner.wait(position, ["board"], drive=False, timeout=30)
    runner.latest_every = 0.05
    position = narrated(app, read_models, campaign, 2)
    assert runner.wait(position, drive=False, timeout=30), "written once due, unasked"


def test_stopping_the_runner_writes_what_it_gathered(gathering: Any) -> None:
    app, read_models, campaign = gathering
    read_models.runner.start()
    position = narrated(app, read_models, campaign, 1)
    read_models.runner.stop()
    assert read_models.runner.refresh() == dict.fromkeys(MODELS, position)
    check_read_models(app, read_models, [campaign])
