"""Undo and rewind cost what an ordinary command costs (issue 13, item 1).

An undo sets the game back to the state before the undone command (R-REC-1, R-REC-5). That
state used to be loaded from the store as a past version, whose replay loaded the past of
every earlier undo in turn: each undo cost about twice the one before. Here the work is
counted, not timed: how many events a load folds, and how many loads it takes.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

from stores import MakeApp

from application.audit import verify_stored
from application.campaigns import SNAPSHOT_INTERVAL, Campaigns
from domain.capes import commands as c
from domain.record.commands import OpenDispute, Undo, Vote

CYCLES = 100


def abilities(*categories: str) -> c.Freeform:
    return c.Freeform(abilities=tuple(
        c.AbilitySpec(name=f"{cat} {r}", category=cat, rating=r)  # type: ignore[arg-type]
        for cat in categories for r in (1, 2, 3)))


def a_scene(app: Campaigns) -> UUID:
    """Three seats, two characters, a scene framed and claimed."""
    cid = app.create(c.CreateCampaign(name="Undo")).campaign_id
    for command in (
        *(c.SeatPlayer(name=n) for n in ("Ana", "Ben", "Cleo")),
        c.CreateCharacter(seat=1, name="Nightjar", build=abilities("skill", "style", "attitude")),
        c.CreateCharacter(seat=2, name="Tempest", build=abilities("skill", "style", "attitude")),
        c.FrameScene(seat=1, text="The docks"), c.ChooseCharacter(seat=1, character=1),
        c.PassClaiming(seat=1), c.ChooseCharacter(seat=2, character=2),
        *(c.PassClaiming(seat=s) for s in (2, 3, 1, 2)),
    ):
        app.execute(cid, command)
    return cid


class Work:
    """Counts what loading a campaign costs: loads (the first and any of the past it needs)
    and events folded."""

    def __init__(self, app: Campaigns) -> None:
        self.loads = 0
        self.events = 0
        project, load = app._project, app._load

        def counting_project(aggregate: Any, events: Any, **kwargs: Any) -> Any:
            items = list(events)
            self.events += len(items)
            return project(aggregate, items, **kwargs)

        def counting_load(*args: Any, **kwargs: Any) -> Any:
            self.loads += 1
            return load(*args, **kwargs)

        app._project = counting_project  # type: ignore[method-assign]
        app._load = counting_load  # type: ignore[method-assign]


def cold_load(make_app: MakeApp, env: dict[str, str], cid: UUID,
              version: int | None = None) -> tuple[int, int]:
    """(loads, events folded) of loading the campaign in a fresh process (no cache)."""
    fresh = make_app(env)
    work = Work(fresh)
    fresh.get(cid, version)
    return work.loads, work.events


def test_a_hundred_undo_cycles_leave_loads_as_cheap_as_the_first(
    make_app: MakeApp, sqlite_env: dict[str, str]
) -> None:
    """R-REC-1: after 100 narrate/undo cycles a load reads no more events than the first one
    plus a snapshot interval, in one load (no past version is loaded), and so does each
    undo's own command."""
    app = make_app(sqlite_env)
    cid = a_scene(app)
    work = Work(app)
    firsts: tuple[int, int] | None = None
    slowest = (0, 0)
    for cycle in range(CYCLES):
        app.execute(cid, c.Narrate(seat=1, text=f"line {cycle}"))
        work.loads = 0
        app.execute(cid, Undo(seat=1))
        assert work.loads <= 1, f"undo {cycle} loaded the past {work.loads} times"
        if cycle in (0, CYCLES // 2, CYCLES - 1) or cycle % 10 == 9:
            cost = cold_load(make_app, sqlite_env, cid)
            firsts = firsts or cost
            slowest = max(slowest, cost)
    assert firsts is not None
    assert slowest[0] == 1, f"a load took {slowest[0]} loads of the past"
    assert slowest[1] <= firsts[1] + SNAPSHOT_INTERVAL, (firsts, slowest)
    # Looking back at a version in the middle of the cycles costs the same.
    loads, events = cold_load(make_app, sqlite_env, cid, app.get(cid).version - CYCLES)
    assert loads == 1 and events <= firsts[1] + SNAPSHOT_INTERVAL


def test_many_rewinds_cost_no_more_than_ordinary_commands(
    make_app: MakeApp, sqlite_env: dict[str, str]
) -> None:
    """R-REC-5: an upheld dispute's rewind is a lookup too, however many came before."""
    app = make_app(sqlite_env)
    cid = a_scene(app)
    work = Work(app)
    for cycle in range(30):
        moved = app.execute(cid, c.Narrate(seat=1, text=f"line {cycle}"))
        app.execute(cid, OpenDispute(seat=2, position=moved.events[0].originator_version,
                                     reason="no"))
        work.loads = 0
        rewound = app.execute(cid, Vote(seat=3, uphold=True))
        assert type(rewound.events[-1].event).__name__ == "Rewound"
        assert work.loads <= 1
    loads, events = cold_load(make_app, sqlite_env, cid)
    assert loads == 1 and events <= SNAPSHOT_INTERVAL + 1


def a_long_scene(app: Campaigns, moves: int) -> tuple[UUID, list[int]]:
    """A scene of ``moves`` narrations, the seats taking turns (so no undo reaches back):
    the campaign and the position of each narration."""
    cid = a_scene(app)
    positions = []
    for move in range(moves):
        narrated = app.execute(cid, c.Narrate(seat=1 + move % 3, text=f"line {move}"))
        positions.append(narrated.events[0].originator_version)
    return cid, positions


def test_a_rewind_to_an_old_move_of_a_long_scene_loads_its_past_once(
    make_app: MakeApp, sqlite_env: dict[str, str]
) -> None:
    """R-REC-2, R-REC-5: a dispute may name any move of the scene; upheld, the game is what it
    was just before that move even when the move is several snapshots back, older than any
    state the campaign keeps (it keeps the past only back to its oldest undoable command or
    open dispute, so that snapshots stay small). That state costs one load of the past, at the
    vote, and a load of the campaign afterwards is one load again."""
    app = make_app(sqlite_env)
    cid, positions = a_long_scene(app, 3 * SNAPSHOT_INTERVAL)
    assert len(app.get(cid).past) <= 2, "a long scene keeps no state it cannot revert to"
    old = positions[9]  # seat 1's
    expected = app.state(cid, old - 1)
    app.execute(cid, OpenDispute(seat=2, position=old, reason="that never happened"))
    work = Work(app)
    rewound = app.execute(cid, Vote(seat=3, uphold=True))
    assert work.loads <= 2, f"the vote loaded the past {work.loads - 1} times"
    assert type(rewound.events[-1].event).__name__ == "Rewound"
    assert app.get(cid).state == expected
    loads, events = cold_load(make_app, sqlite_env, cid)
    assert loads == 1 and events <= SNAPSHOT_INTERVAL + 1
    assert make_app(sqlite_env).get(cid).state == expected


def test_a_snapshot_taken_while_a_dispute_about_an_old_move_is_open_verifies(
    make_app: MakeApp, sqlite_env: dict[str, str]
) -> None:
    """R-REC-2, R-FAIR-7: a dispute about a move older than the kept past leaves the campaign
    keeping only what it kept (the vote loads the rest). A snapshot then holds a past that
    reaches back less far than a fold of the whole log would keep: a shorter cache, not a
    discrepancy. It verifies, and the server goes on trusting it."""
    app = make_app(sqlite_env)
    cid, positions = a_long_scene(app, 9)
    app.execute(cid, OpenDispute(seat=2, position=positions[0], reason="that never happened"))
    app.take_snapshot(cid)
    report = verify_stored(app, cid)
    assert report.ok, report.summary()
    expected = app.state(cid, positions[0] - 1)
    app.execute(cid, Vote(seat=3, uphold=True))
    assert make_app(sqlite_env).get(cid).state == expected


def test_rewinds_to_old_moves_again_and_again_cost_a_load_each(
    make_app: MakeApp, sqlite_env: dict[str, str]
) -> None:
    """R-REC-5: rewinds to moves beyond the kept past, one after another, each cost one load
    of the past; replaying them from a snapshot never cascades into loads of loads."""
    app = make_app(sqlite_env)
    cid, _ = a_long_scene(app, SNAPSHOT_INTERVAL)
    for cycle in range(12):
        positions = a_long_scene_more(app, cid, SNAPSHOT_INTERVAL // 2, cycle)
        expected = app.state(cid, positions[0] - 1)
        app.execute(cid, OpenDispute(seat=2, position=positions[0], reason="no"))
        work = Work(app)
        app.execute(cid, Vote(seat=3, uphold=True))
        assert work.loads <= 2
        assert app.get(cid).state == expected
    fresh = make_app(sqlite_env)
    work = Work(fresh)
    fresh.get(cid, app.get(cid).version - 1)
    assert work.loads <= 3, f"{work.loads} loads for one version of the campaign"


def a_long_scene_more(app: Campaigns, cid: UUID, moves: int, cycle: int) -> list[int]:
    """``moves`` more narrations, the seats taking turns (seat 1 never disputes)."""
    positions = []
    for move in range(moves):
        narrated = app.execute(cid, c.Narrate(seat=1 + move % 3, text=f"{cycle}.{move}"))
        positions.append(narrated.events[0].originator_version)
    return positions
