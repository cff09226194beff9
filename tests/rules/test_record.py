"""The record of play: undo, disputes, votes, rewinds, forks (R-REC-*).

These go through the application on the in-memory store, since an undo or a rewind loads the
game as it was at an earlier version.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from application.campaigns import Campaigns
from application.dice import ScriptedDice, SeededDice
from domain.capes import EDITION
from domain.capes import commands as c
from domain.capes.views import board
from domain.edition import fold
from domain.editions import board_of
from domain.errors import DomainError, Malformed, NotPermitted, RuleViolation, StaleVersion
from domain.record import RecordEvent, TableOptions
from domain.record.commands import (
    AddSeed,
    ChangeTableOptions,
    ExpireDispute,
    OpenDispute,
    SetTableOptions,
    SettleDispute,
    Undo,
    Vote,
    WithdrawDispute,
)
from domain.record.decider import DisputePending
from domain.record.events import TableOptionsSet

MEMORY = {"PERSISTENCE_MODULE": "eventsourcing.popo"}


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 22, 20, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def abilities(*categories: str) -> c.Freeform:
    return c.Freeform(abilities=tuple(
        c.AbilitySpec(name=f"{cat} {r}", category=cat, rating=r)  # type: ignore[arg-type]
        for cat in categories for r in (1, 2, 3)))


class Played:
    """A campaign played through the application: three seats, two characters, a scene."""

    def __init__(self, dice: Iterable[int] = (), options: TableOptions | None = None,
                 clock: Clock | None = None) -> None:
        self.clock = clock or Clock()
        self.app = Campaigns(MEMORY, dice=ScriptedDice(dice), clock=self.clock)
        self.id: UUID = self.app.create(c.CreateCampaign(name="Record")).campaign_id
        if options is not None:
            self(SetTableOptions(options=options))
        for name in ("Ana", "Ben", "Cleo"):
            self(c.SeatPlayer(name=name))
        self(c.CreateCharacter(seat=1, name="Nightjar", build=abilities("skill", "style",
                                                                       "attitude")))
        self(c.CreateCharacter(seat=2, name="Tempest", build=abilities("skill", "style",
                                                                      "attitude")))
        self(c.FrameScene(seat=1, text="The docks"))
        self(c.ChooseCharacter(seat=1, character=1), c.PassClaiming(seat=1),
             c.ChooseCharacter(seat=2, character=2),
             *(c.PassClaiming(seat=s) for s in (2, 3, 1, 2)))
        self.scene_started = self.position_of("SceneFramed")

    def __call__(self, *commands: Any) -> Any:
        outcome = None
        for command in commands:
            outcome = self.app.execute(self.id, command)
        return outcome

    @property
    def version(self) -> int:
        return self.app.get(self.id).version

    @property
    def state(self) -> Any:
        return self.app.state(self.id)

    @property
    def record(self) -> Any:
        return self.app.get(self.id).record

    def log(self) -> list[Any]:
        return self.app.history(self.id, limit=100_000)

    def position_of(self, event_type: str, last: bool = True) -> int:
        found = [r.originator_version for r in self.log()
                 if type(r.event).__name__ == event_type]
        return found[-1] if last else found[0]

    def refused(self, command: Any, kind: type[DomainError] = RuleViolation) -> DomainError:
        before = self.version
        with pytest.raises(kind) as caught:
            self(command)
        assert self.version == before, "a refused command appends nothing"
        return caught.value


def a_turn_with_a_conflict(p: Played) -> None:
    p(c.StartTurn(seat=1, character=1),
      c.CreateConflict(seat=1, kind="event", text="The crane falls"), c.EndTurn(seat=1))


# -- undo (R-REC-1) --------------------------------------------------------------------------


def test_a_seat_undoes_its_own_last_command_and_the_game_is_as_before_it() -> None:
    """R-REC-1: the state after an undo is the state before the undone command."""
    p = Played()
    p(c.StartTurn(seat=1, character=1))
    before = p.state
    p(c.CreateConflict(seat=1, kind="event", text="The crane falls"))
    undone = p(Undo(seat=1))
    assert [type(r.event).__name__ for r in undone.events] == ["Undone"]
    assert p.state == before


def test_undoing_again_walks_back_through_the_seats_own_run_of_commands() -> None:
    """R-REC-1: a seat's consecutive commands come off one by one."""
    p = Played()
    before_turn = p.state
    a_turn_with_a_conflict(p)
    for _ in range(3):
        p(Undo(seat=1))
    assert p.state == before_turn
    p.refused(Undo(seat=1))  # the claiming pass before it was seat 2's


def test_an_undo_cannot_cross_another_seats_action() -> None:
    """R-REC-1: once another seat acts, the earlier command stays."""
    p = Played()
    a_turn_with_a_conflict(p)
    p(c.StartTurn(seat=2, character=2))
    error = p.refused(Undo(seat=1))
    assert error.rule == "R-REC-1"  # type: ignore[attr-defined]
    p(Undo(seat=2))  # seat 2 may take its own back


def test_a_roll_cannot_be_undone_once_its_value_is_seen() -> None:
    """R-X-REC-1: undoing a roll would be a free re-roll: it is refused and the die stays."""
    p = Played(dice=[2, 6])
    a_turn_with_a_conflict(p)
    p(c.StartTurn(seat=2, character=2))
    p(c.RollDie(seat=2, ability="skill 1", conflict=1, die=1))
    error = p.refused(Undo(seat=2))
    assert error.rule == "R-X-REC-1"  # type: ignore[attr-defined]
    assert p.state.conflicts[1].sides[0].dice[0].value == 2


def test_an_undo_walks_back_only_as_far_as_the_last_roll() -> None:
    """R-X-REC-1: the seat's commands after its roll come off; the roll itself stays."""
    p = Played(dice=[4])
    a_turn_with_a_conflict(p)
    p(c.StartTurn(seat=2, character=2))
    p(c.RollDie(seat=2, ability="skill 1", conflict=1, die=1))
    after_roll = p.state
    p(c.AcceptRoll(seat=2))
    p(Undo(seat=2))
    assert p.state == after_roll
    assert p.refused(Undo(seat=2)).rule == "R-X-REC-1"  # type: ignore[attr-defined]


def test_fishing_for_a_six_with_undo_never_gets_a_second_draw() -> None:
    """R-X-REC-1 (the probe of issue 13): roll, see, undo, roll again is impossible."""
    p = Played(dice=[1, 6, 6, 6, 6, 6, 6])
    a_turn_with_a_conflict(p)
    p(c.StartTurn(seat=2, character=2))
    p(c.RollDie(seat=2, ability="skill 1", conflict=1, die=1))
    for _ in range(6):
        p.refused(Undo(seat=2))
    rolls = [r.event.rolled for r in p.log() if type(r.event).__name__ == "DieRolled"]
    assert rolls == [1]


# -- disputes (R-REC-2, R-REC-3, R-REC-4) ----------------------------------------------------


def a_disputed_roll(p: Played) -> int:
    """Seat 2 rolls; seat 3 disputes the roll. The position of the roll's first event."""
    a_turn_with_a_conflict(p)
    p(c.StartTurn(seat=2, character=2))
    p(c.RollDie(seat=2, ability="skill 1", conflict=1, die=1))
    first = p.version - 2  # after the server closed the scene's seeds (R-FAIR-3)
    p(OpenDispute(seat=3, position=p.position_of("DieRolled"), reason="that die was mine"))
    return first


def test_a_dispute_reaches_back_to_the_first_event_of_the_disputed_move() -> None:
    """R-REC-2: disputing any event of a command disputes the whole move."""
    p = Played(dice=[4])
    first = a_disputed_roll(p)
    dispute = p.record.dispute
    assert (dispute.position, dispute.actor, dispute.voters) == (first, 2, (1, 3))
    assert dispute.votes == {3: True}, "opening a dispute is a vote to uphold it"


def test_while_a_dispute_is_open_the_game_waits_and_a_second_dispute_is_refused() -> None:
    """R-REC-2: one dispute at a time; game commands get a conflict (HTTP 409)."""
    p = Played(dice=[4])
    a_disputed_roll(p)
    error = p.refused(c.AcceptRoll(seat=2), kind=DisputePending)
    assert isinstance(error, StaleVersion)
    assert p.refused(OpenDispute(seat=1, position=p.scene_started, reason="no")).rule == (
        "R-REC-2")  # type: ignore[attr-defined]
    p.refused(Undo(seat=2), kind=DisputePending)


def test_a_dispute_may_name_any_event_of_the_move_the_dice_commitment_after_it_included(
) -> None:
    """R-REC-2: framing the scene stored SceneFramed, PageStarted and the server's
    DiceCommitted; naming the last disputes the framing, like naming the first."""
    p = Played()
    commitment = p.position_of("DiceCommitted")
    assert p.log()[commitment - 1].command == p.scene_started, "one move"
    p(OpenDispute(seat=3, position=commitment, reason="the docks were closed"))
    assert (p.record.dispute.position, p.record.dispute.actor) == (p.scene_started, 1)


def test_only_a_move_of_the_current_scene_still_in_effect_may_be_disputed() -> None:
    """R-REC-2: not before the scene, not a reverted event, not past the end of the log."""
    p = Played()
    for position in (p.scene_started - 1, p.version + 5):
        p.refused(OpenDispute(seat=3, position=position, reason="no"))
    a_turn_with_a_conflict(p)
    p(Undo(seat=1))
    p.refused(OpenDispute(seat=3, position=p.version - 1, reason="it was undone"))


def a_scene_played_to_its_end(p: Played) -> int:
    """Both characters take a turn and create nothing: the page ends with no Conflict, and so
    does the scene (R-SCENE-4). The first event of the move that ended it."""
    p(c.StartTurn(seat=1, character=1), c.EndTurn(seat=1), c.StartTurn(seat=2, character=2))
    ended = p(c.EndTurn(seat=2))
    assert p.state.scene is None and "SceneEnded" in [
        type(r.event).__name__ for r in ended.events]
    return int(ended.events[0].originator_version)


def test_between_scenes_the_scene_just_ended_may_still_be_disputed() -> None:
    """R-REC-2, R-X-REC-5: until the next scene is framed, the current scene is the one just
    ended, so the move that ended it can be disputed like any other; upheld, the game goes
    back into the scene, whose dice the server commits to afresh (R-FAIR-1). The moves made
    since it ended (a framing passed on, a character changed) may be disputed too."""
    p = Played()
    ending = a_scene_played_to_its_end(p)
    p(c.EditCharacter(seat=2, character=2, name="Tempest II"))  # R-CHAR-8, between scenes
    edit = p.version
    p(OpenDispute(seat=1, position=edit, reason="not that name"))
    p(Vote(seat=3, uphold=True))
    assert p.state.characters[2].name == "Tempest", "the edit is rewound"
    p(OpenDispute(seat=3, position=ending, reason="the scene was not over"))
    p(Vote(seat=1, uphold=True))
    assert p.state.scene is not None and p.state.scene.number == 1, "back in the scene"
    assert type(p.log()[-1].event).__name__ == "DiceCommitted"
    assert board(p.state).waiting_for, "the scene plays on from there"


def test_framing_the_next_scene_closes_the_last_ones_moves_to_disputes() -> None:
    """R-REC-2, R-X-REC-5: once the next scene is framed, the table has moved on: the moves of
    the scene before are no longer disputable, the move that ended it included."""
    p = Played()
    ending = a_scene_played_to_its_end(p)
    p(c.FrameScene(seat=2, text="The rooftops"))  # R-SCENE-1: the framer's left
    for position in (p.scene_started, ending):
        assert p.refused(OpenDispute(seat=3, position=position, reason="no")).rule == (
            "R-REC-2")  # type: ignore[attr-defined]
    p(OpenDispute(seat=3, position=p.position_of("SceneFramed"), reason="not the rooftops"))


def test_while_a_dispute_is_open_the_board_offers_only_the_vote_and_the_withdrawal() -> None:
    """R-REC-2: the board never offers what the rules refuse: the voters who have not voted
    yet vote, the opener may withdraw; no game move until the dispute is settled."""
    p = Played(dice=[4])
    a_disputed_roll(p)
    campaign = p.app.get(p.id)
    shown = board_of(campaign.edition, campaign.state, campaign.record)
    assert shown.waiting_for == {1: ("vote",), 3: ("withdraw_dispute",)}
    p(Vote(seat=1, uphold=False))
    campaign = p.app.get(p.id)
    assert board_of(campaign.edition, campaign.state, campaign.record).waiting_for == (
        board(p.state).waiting_for), "settled, the game's moves again"


def test_a_seat_votes_once_and_the_disputed_moves_actor_not_at_all() -> None:
    """R-REC-3: the other seats vote, each once."""
    p = Played(dice=[4])
    a_disputed_roll(p)
    assert p.refused(Vote(seat=2, uphold=False)).rule == "R-REC-3"  # type: ignore[attr-defined]
    assert p.refused(Vote(seat=3, uphold=True)).rule == "R-REC-3"  # type: ignore[attr-defined]


def test_an_upheld_dispute_rewinds_the_game_to_just_before_the_move() -> None:
    """R-REC-5: a majority upholds; the state is the state before the disputed move."""
    p = Played(dice=[4])
    a_turn_with_a_conflict(p)
    p(c.StartTurn(seat=2, character=2))
    before = p.state
    p(c.RollDie(seat=2, ability="skill 1", conflict=1, die=1))
    a_roll = p.version - 2  # after the server closed the scene's seeds (R-FAIR-3)
    p(OpenDispute(seat=3, position=a_roll + 2, reason="wrong die"))
    settled = p(Vote(seat=1, uphold=True))
    assert [type(r.event).__name__ for r in settled.events] == [
        "DisputeVoted", "DisputeSettled", "Rewound"]
    assert p.state == before
    assert p.record.dispute is None
    assert p.record.reverted[-1] == (a_roll, a_roll + 2)  # the roll: three events


def test_a_rejected_dispute_changes_nothing_in_the_game() -> None:
    """R-REC-3: enough votes against end it; the game goes on from where it was."""
    p = Played(dice=[4])
    a_disputed_roll(p)
    before = p.state
    settled = p(Vote(seat=1, uphold=False))
    assert [type(r.event).__name__ for r in settled.events] == ["DisputeVoted",
                                                                 "DisputeSettled"]
    assert p.state == before and p.record.dispute is None
    p(c.AcceptRoll(seat=2))


def test_a_unanimous_table_needs_every_voter() -> None:
    """R-REC-3: the threshold is a table option."""
    p = Played(dice=[4], options=TableOptions(dispute_threshold="unanimous"))
    a_disputed_roll(p)
    assert p.record.dispute.needed == 2


def test_the_owner_settles_alone_only_when_the_table_allows_it() -> None:
    """R-REC-4: owner_settles."""
    p = Played(dice=[4, 4])
    a_disputed_roll(p)
    assert p.refused(SettleDispute(uphold=True)).rule == "R-REC-4"  # type: ignore[attr-defined]
    p.refused(SettleDispute(seat=1, uphold=True), kind=NotPermitted)
    q = Played(dice=[4], options=TableOptions(owner_settles=True))
    a_disputed_roll(q)
    before_roll = q.app.state(q.id, q.record.dispute.position - 1)
    q(SettleDispute(uphold=True))
    assert q.state == before_roll


def test_changing_some_options_keeps_the_others_as_the_log_has_them_when_it_is_decided(
) -> None:
    """R-REC-3, R-REC-4: the options a change gives change; the others keep the values the log
    has for them as it is decided (here set after the owner's page last read them), and the
    event records every option, as setting them all does."""
    p = Played(options=TableOptions(dispute_threshold="unanimous"))
    p(SetTableOptions(options=TableOptions(dispute_threshold="unanimous", owner_settles=True)))
    p(ChangeTableOptions(dispute_minutes=60))
    merged = TableOptions(dispute_threshold="unanimous", owner_settles=True, dispute_minutes=60)
    assert p.record.options == merged
    assert p.log()[-1].event == TableOptionsSet(options=merged)
    p(ChangeTableOptions(owner_settles=False, dispute_threshold="majority"))
    assert p.record.options == TableOptions(dispute_minutes=60)


def test_a_change_of_options_is_the_owners_and_gives_at_least_one() -> None:
    """R-REC-4: a seat's change is not permitted; a change that gives no option is malformed
    and names the options it may give; neither changes anything."""
    p = Played()
    p.refused(ChangeTableOptions(seat=1, owner_settles=True), kind=NotPermitted)
    empty = p.refused(ChangeTableOptions(), kind=Malformed)
    assert str(empty) == ("no option given: give one or more of dispute_threshold, "
                          "owner_settles, dispute_minutes")
    assert p.record.options == TableOptions()


def test_a_change_of_options_may_give_each_option_typed_as_the_options_are() -> None:
    """An option added to the table's options is one a change may give, of the same type."""
    options = msgspec.inspect.type_info(TableOptions).fields  # type: ignore[attr-defined]
    change = {f.name: f.type for f in msgspec.inspect.type_info(  # type: ignore[attr-defined]
        ChangeTableOptions).fields if f.name != "seat"}
    assert change == {f.name: msgspec.inspect.UnionType((f.type, msgspec.inspect.NoneType()))
                      for f in options}


def test_a_dispute_is_withdrawn_only_by_its_opener_and_changes_nothing() -> None:
    """R-REC-4: withdrawal."""
    p = Played(dice=[4])
    a_disputed_roll(p)
    before = p.state
    p.refused(WithdrawDispute(seat=1), kind=NotPermitted)
    p(WithdrawDispute(seat=3))
    assert p.state == before and p.record.dispute is None


def test_an_expired_dispute_changes_nothing_and_is_recorded_before_the_next_command() -> None:
    """R-REC-4: dispute_minutes."""
    clock = Clock()
    p = Played(dice=[4], clock=clock, options=TableOptions(dispute_minutes=30))
    a_disputed_roll(p)
    assert p.refused(ExpireDispute()).rule == "R-REC-4"  # type: ignore[attr-defined]
    clock.now += timedelta(minutes=31)
    p(c.AcceptRoll(seat=2))
    kinds = [type(r.event).__name__ for r in p.log()]
    settled = kinds.index("DisputeSettled")
    assert kinds[settled + 1] == "RollAccepted"
    assert p.log()[settled].event.by == "expiry"


@pytest.mark.parametrize("late", [
    Vote(seat=1, uphold=True), WithdrawDispute(seat=3), SettleDispute(uphold=True),
    ExpireDispute()], ids=lambda command: type(command).__name__)
def test_a_vote_or_withdrawal_after_the_disputes_time_is_answered_with_its_expiry(
    late: Any,
) -> None:
    """R-X-REC-7: refused ("no dispute is open"), it stored nothing; the board still offered
    only the dispute's votes and withdrawal, and a table in the browser waited for ever."""
    clock = Clock()
    p = Played(dice=[4], clock=clock, options=TableOptions(dispute_minutes=30,
                                                           owner_settles=True))
    a_disputed_roll(p)
    before = p.version
    clock.now += timedelta(minutes=31)
    answer = p(late)
    assert [type(r.event).__name__ for r in answer.events] == ["DisputeSettled"]
    assert answer.events[0].event.by == "expiry"
    assert p.version == before + 1 and p.record.dispute is None
    # The game goes on where the dispute left it: seat 2's roll stands.
    assert 2 in board_of("capes", p.state, p.record).waiting_for
    p(c.AcceptRoll(seat=2))


def test_a_rewind_cannot_be_undone() -> None:
    """R-REC-5: the undo stack is empty after a rewind; the record is never rewound."""
    p = Played(dice=[4])
    a_disputed_roll(p)
    p(Vote(seat=1, uphold=True))
    p.refused(Undo(seat=3))
    p.refused(Undo(seat=2))
    assert p.record.disputes == 1


def test_reverted_events_stay_in_the_log() -> None:
    """R-REC-5: nothing is deleted; the record marks what was reverted."""
    p = Played(dice=[4])
    first = a_disputed_roll(p)
    p(Vote(seat=1, uphold=True))
    log = p.log()
    assert [r.originator_version for r in log] == list(range(1, len(log) + 1))
    assert any(type(r.event).__name__ == "DieRolled" for r in log)
    from domain.record import is_reverted

    assert is_reverted(p.record, first) and not is_reverted(p.record, first - 1)


def two_seats() -> tuple[Campaigns, UUID]:
    """A two-seat table in its first scene, seat 2 having just started a turn."""
    app = Campaigns(MEMORY, dice=ScriptedDice([3]), clock=Clock())
    cid = app.create(c.CreateCampaign(name="Duo")).campaign_id
    for command in (
        c.SeatPlayer(name="Ana"), c.SeatPlayer(name="Ben"),
        c.CreateCharacter(seat=1, name="Nightjar", build=abilities("skill", "style", "attitude")),
        c.CreateCharacter(seat=2, name="Tempest", build=abilities("skill", "style", "attitude")),
        c.FrameScene(seat=1, text="The docks"), c.ChooseCharacter(seat=1, character=1),
        c.PassClaiming(seat=1), c.ChooseCharacter(seat=2, character=2),
        *(c.PassClaiming(seat=s) for s in (2, 1, 2)),
        c.StartTurn(seat=1, character=1),
        c.CreateConflict(seat=1, kind="event", text="The crane falls"), c.EndTurn(seat=1),
        c.StartTurn(seat=2, character=2),
    ):
        app.execute(cid, command)
    return app, cid


def test_at_a_two_seat_table_a_dispute_is_not_settled_by_its_opener_alone() -> None:
    """R-X-REC-2: opening is a vote, but the other seat (the move's maker) must concede."""
    app, cid = two_seats()
    moved = app.execute(cid, c.RollDie(seat=2, ability="skill 1", conflict=1, die=1))
    position = moved.events[-1].originator_version
    opened = app.execute(cid, OpenDispute(seat=1, position=position, reason="not fair"))
    assert [type(r.event).__name__ for r in opened.events] == ["DisputeOpened", "DisputeVoted"]
    dispute = app.get(cid).record.dispute
    assert dispute is not None and dispute.voters == (1, 2) and dispute.needed == 2
    rewound = app.execute(cid, Vote(seat=2, uphold=True))
    assert type(rewound.events[-1].event).__name__ == "Rewound"


def test_at_a_two_seat_table_the_maker_may_refuse_a_dispute() -> None:
    """R-X-REC-2: the maker's no rejects it; the game is unchanged."""
    app, cid = two_seats()
    moved = app.execute(cid, c.RollDie(seat=2, ability="skill 1", conflict=1, die=1))
    before = app.state(cid)
    app.execute(cid, OpenDispute(seat=1, position=moved.events[-1].originator_version,
                                 reason="not fair"))
    settled = app.execute(cid, Vote(seat=2, uphold=False))
    assert [type(r.event).__name__ for r in settled.events][-1] == "DisputeSettled"
    assert app.state(cid) == before and app.get(cid).record.dispute is None


# -- a closed campaign (R-X-REC-3) -----------------------------------------------------------


def test_after_the_close_no_dispute_option_undo_or_seed_is_accepted() -> None:
    """R-X-REC-3: a closed campaign accepts nothing, so nothing can reopen it."""
    p = Played()
    a_turn_with_a_conflict(p)
    moved = p.position_of("ConflictCreated")
    p(c.CloseCampaign())
    for command in (OpenDispute(seat=2, position=moved, reason="before the close"),
                    SetTableOptions(options=TableOptions(owner_settles=True)),
                    ChangeTableOptions(owner_settles=True), Undo(seat=1),
                    AddSeed(seat=2, seed="late"),
                    c.StartTurn(seat=2, character=2)):
        p.refused(command, NotPermitted)
    # A token is still issued (to read it), and recorded (R-X-REC-4).
    issued, _ = p.app.issue_token(p.id, 1, lambda seat: "to read")
    assert type(issued.events[0].event).__name__ == "SeatTokenIssued"
    assert p.state.closed


def test_a_dispute_cannot_be_open_when_the_owner_closes() -> None:
    """R-X-REC-3, R-REC-2: closing is a game command: it waits for an open dispute."""
    p = Played(dice=[2])
    a_disputed_roll(p)
    p.refused(c.CloseCampaign(), DisputePending)


# -- tokens recorded (R-X-REC-4) -------------------------------------------------------------


def test_a_token_is_recorded_in_the_log_with_who_issued_it_and_never_the_token() -> None:
    """R-X-REC-4: seating records the seat's own token; the owner's reissue says owner."""
    app = Campaigns(MEMORY, clock=Clock())
    cid = app.create(c.CreateCampaign(name="Keys")).campaign_id
    made: list[int] = []

    def issue(seat: int) -> str:
        made.append(seat)
        return f"token-{seat}"

    seated, token = app.seat_player(cid, c.SeatPlayer(name="Ana"), issue)
    assert token == "token-1" and made == [1]
    assert [(type(r.event).__name__, r.seat) for r in seated.events] == [
        ("PlayerSeated", None), ("SeatTokenIssued", 1)]
    assert seated.events[-1].event.by == "seat"
    again, _ = app.issue_token(cid, 1, issue)
    assert [(type(r.event).__name__, r.seat, r.event.by) for r in again.events] == [
        ("SeatTokenIssued", None, "owner")]
    assert "token-1" not in str([msgspec.json.encode(r) for r in app.history(cid)])
    with pytest.raises(DomainError):
        app.issue_token(cid, 2, issue)  # no seat 2
    assert made == [1, 1]


def test_a_refused_seat_makes_no_token() -> None:
    """R-X-REC-4, R-X-SEAT-1: the seat is decided before its token is made."""
    app = Campaigns(MEMORY, clock=Clock())
    cid = app.create(c.CreateCampaign(name="Keys")).campaign_id
    app.seat_player(cid, c.SeatPlayer(name="Ana"), lambda seat: "a")
    with pytest.raises(RuleViolation):
        app.seat_player(cid, c.SeatPlayer(name="Ana"), lambda seat: pytest.fail("made"))


# -- forks (R-REC-6) -------------------------------------------------------------------------


def test_a_fork_starts_from_the_source_at_a_version_and_both_record_the_link() -> None:
    """R-REC-6: what if we had rolled differently."""
    p = Played(dice=[4])
    a_turn_with_a_conflict(p)
    at = p.version
    p(c.StartTurn(seat=2, character=2))
    fork = p.app.fork(p.id, at, name="What if")
    forked = p.app.get(fork.campaign_id)
    assert forked.state == EDITION.evolve(p.app.state(p.id, at),
                                          fork.events[0].event)
    assert forked.state.name == "What if"
    assert forked.record.forked_from == (p.id, at)
    assert p.record.forks == ((fork.campaign_id, at),)
    # Forked in the middle of a scene: the fork commits to its own dice (R-FAIR-1).
    assert [type(r.event).__name__ for r in p.app.history(fork.campaign_id)] == [
        "CampaignForked", "ForkedFrom", "DiceCommitted"]
    p.app.execute(fork.campaign_id, c.StartTurn(seat=2, character=2))


def test_a_fork_starts_where_a_move_ended_never_in_the_middle_of_one() -> None:
    """R-REC-6, R-X-REC-6: a move's events are one step of the table. In between them is a
    game nobody played, which may wait for nobody (here a resolution with nothing to resolve,
    the rules end the page and the scene in the same move). A fork there is refused, naming
    the versions just before and just after the move; from either it is made."""
    p = Played()
    p(c.StartTurn(seat=1, character=1), c.EndTurn(seat=1), c.StartTurn(seat=2, character=2))
    ended = p(c.EndTurn(seat=2))
    moves = [r.originator_version for r in ended.events if not isinstance(r.event, RecordEvent)]
    first, last = moves[0], moves[-1]
    inside = first + 1
    assert not board(p.app.state(p.id, inside)).waiting_for, "nobody could move on from there"
    before = p.version
    with pytest.raises(RuleViolation) as refused:
        p.app.fork(p.id, inside)
    assert refused.value.rule == "R-X-REC-6"
    assert f"fork at {first - 1} or at {last}" in str(refused.value)
    assert p.version == before, "a refused fork records nothing"
    for at in (first - 1, last, p.version):
        fork = p.app.fork(p.id, at)
        assert p.app.get(fork.campaign_id).record.forked_from == (p.id, at)
        assert board(p.app.state(fork.campaign_id)).waiting_for


# -- properties ------------------------------------------------------------------------------


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), steps=st.integers(5, 60), data=st.data())
def test_an_upheld_rewind_equals_replaying_only_the_events_before_the_move(
    seed: int, steps: int, data: st.DataObject
) -> None:
    """R-REC-5: for random play and any disputed move of the scene, the rewound game is the
    fold of the events before it, and so is the board."""
    from domain.capes.moves import candidates, with_choice
    from domain.errors import ChoiceRequired

    p = Played()
    p.app.dice = SeededDice(seed)
    import random

    rng = random.Random(seed)
    for _ in range(steps):
        options = candidates(p.state)
        if not options:
            break
        command = rng.choice(options)
        for _attempt in range(4):
            try:
                p(command)
                break
            except ChoiceRequired as asked:
                if not asked.field or not asked.choices:
                    break
                command = with_choice(command, asked.field, rng.choice(list(asked.choices)))
            except DomainError:
                break
    start = p.record.scene_start
    moves = sorted({r.command or r.originator_version for r in p.log()
                    if start is not None and r.originator_version >= start
                    and r.seat is not None})
    if start is None or not moves:
        return
    move = data.draw(st.sampled_from(moves))
    actor = next(r.seat for r in p.log() if r.originator_version == move)
    voters = [s for s in (1, 2, 3) if s != actor]
    p(OpenDispute(seat=voters[0], position=move, reason="disputed"))
    if p.record.dispute is not None:
        p(Vote(seat=voters[1], uphold=True))
    expected = fold(EDITION, [r.event for r in p.log() if r.originator_version < move
                              and not isinstance(r.event, RecordEvent)])
    assert p.state == expected
    assert board(p.state) == board(expected)


def test_loading_an_old_version_of_a_long_campaign_starts_from_a_snapshot() -> None:
    """R-REC-5 needs old versions often: they load from the nearest snapshot, not event 1."""
    p = Played()
    for i in range(260):
        p(c.Narrate(seat=1 + i % 3, text=f"line {i}"))
    folded: list[int] = []
    project = p.app._project

    def counting(aggregate: Any, events: Any, **kwargs: Any) -> Any:
        items = list(events)
        folded.append(len(items))
        return project(aggregate, items, **kwargs)

    p.app._project = counting  # type: ignore[method-assign]
    old = p.app.state(p.id, 230)
    assert sum(folded) <= 31, folded
    assert old == fold(EDITION, [r.event for r in p.log()[:230]
                                 if not isinstance(r.event, RecordEvent)])
