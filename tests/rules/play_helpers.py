"""Shared set-ups for the rule tests: a table played up to the moment a rule applies.

The cast is always the same three players:

- seat 1 plays **Aurora** (character 1), a hero with five Drives (``AURORA_DRIVES``);
- seat 2 plays **Brute** (character 2), a hero with an undifferentiated Debt stack;
- seat 3 plays **Mia** (character 3), a mundane character (skills, styles, attitudes 1-3).

Heroes have powers rated 1..5 (``power("Brute", 5)``). Scene 1 is framed by seat 3 unless a
test says otherwise, so Mia's turn comes first on page 1 and seat 1 starts page 2.

The helpers only send commands through the rules (``Table``); the one exception is
:func:`earlier_debt`, which records Debt a character gained in earlier play.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rulebook import Table

from domain.capes import EDITION
from domain.capes import commands as c
from domain.capes.events import DebtGained
from domain.capes.model import CampaignState, Conflict, DriveName
from domain.capes.resolution import pending
from domain.capes.rolls import asked
from domain.capes.turns import bought_turn_seat, turn_seat
from domain.edition import fold

AURORA, BRUTE, MIA = 1, 2, 3
AURORA_DRIVES = {"Justice": 3, "Hope": 2, "Truth": 2, "Love": 1, "Duty": 1}
POWERS = ("Flight", "Strength", "Blast", "Speed", "Shield")
UNDIFFERENTIATED = "Undifferentiated"

#: character -> Drive -> Debt gained in earlier play (see :func:`earlier_debt`).
Debts = Mapping[int, Mapping[DriveName, int]]


def power(hero: str, rating: int) -> str:
    """The name of the hero's power rated ``rating`` (all hero powers are super)."""
    return f"{hero} {POWERS[rating - 1]}"


def skill(rating: int) -> str:
    """Mia's skill rated ``rating`` (mundane)."""
    return f"Mia skill {rating}"


# -- setting the table -----------------------------------------------------------------------


def a_scene(*, framer: int = 3, tokens: int = 0, debt: Debts | None = None) -> Table:
    """Scene 1, page 1, free play: each seat has chosen its character and claiming is over."""
    t = Table(players=3, tokens=tokens)
    t.hero(1, "Aurora", AURORA_DRIVES)
    t.hero(2, "Brute")
    t.mundane(3, "Mia")
    for character, drives in (debt or {}).items():
        for drive, amount in drives.items():
            earlier_debt(t, character, drive, amount)
    return a_next_scene(t, framer)


def a_next_scene(t: Table, framer: int | None = None) -> Table:
    """The next scene is framed (by ``framer``, or the seat whose turn it is to frame), each
    seat chooses its character again and claiming ends: the first page's free play."""
    framer = framer or t.state.next_framer
    assert framer is not None
    t(c.FrameScene(seat=framer, text=f"Scene {t.state.scenes_played + 1}"))
    for seat in t.state.clockwise_from(framer):
        t(c.ChooseCharacter(seat=seat, character=seat), c.PassClaiming(seat=seat))
    return play_on(t, until=lambda s: s.page is not None and s.page.phase == "free_play")


def earlier_debt(t: Table, character: int, drive: DriveName, amount: int) -> None:
    """Debt the character gained from super abilities used earlier in the campaign."""
    events = [DebtGained(character=character, drive=drive, amount=1) for _ in range(amount)]
    t.events.extend(events)
    t.state = fold(EDITION, events, t.state)


def a_scene_with_a_conflict(
    *, framer: int = 3, tokens: int = 0, debt: Debts | None = None
) -> Table:
    """:func:`a_scene`, then the first seat's free turn creates Event 1 ("For"/"Against").

    With the default framer, Mia (seat 3) creates it and Aurora's turn comes next.
    """
    t = a_scene(framer=framer, tokens=tokens, debt=debt)
    seat = next_turn_seat(t)
    take_turn(t, seat, c.CreateConflict(seat=seat, kind="event", text="The warehouse burns"))
    return t


def last_conflict(t: Table) -> int:
    """The id of the Conflict created last."""
    return t.state.next_conflict - 1


def conflict(t: Table, conflict_id: int = 1) -> Conflict:
    return t.state.conflicts[conflict_id]


def die_value(t: Table, die: int, conflict_id: int = 1) -> int:
    found = conflict(t, conflict_id).die(die)
    assert found is not None
    return found[1].value


# -- turns -----------------------------------------------------------------------------------


def next_turn_seat(t: Table) -> int:
    """The seat that may start a turn now (free play counts as the Starter's)."""
    page = t.state.page
    assert page is not None
    if page.phase == "free_play":
        return page.starter
    seat = turn_seat(t.state)
    assert seat is not None, "no seat may start a turn now"
    return seat


def start_turn(t: Table, seat: int) -> Table:
    """``seat`` starts a turn for the character it plays (the one still owed a free turn)."""
    state = t.state
    assert state.scene is not None and state.page is not None
    mine = state.scene.characters_of(seat)
    free = [ch for ch in mine if ch in state.page.free_turns_left]
    t(c.StartTurn(seat=seat, character=(free or list(mine))[0]))
    return t


def take_turn(t: Table, seat: int, *commands: c.Command) -> Table:
    """A whole turn: start it, play ``commands``, complete any And Then, end it."""
    start_turn(t, seat)
    t(*commands)
    return end_turn(t, seat)


def end_turn(t: Table, seat: int) -> Table:
    """End the turn, first letting the first named seat complete an And Then (R-ROLL-4)."""
    pass_reactions(t)
    complete_and_then(t)
    t(c.EndTurn(seat=seat))
    return t


def complete_and_then(t: Table) -> Table:
    """The first seat an And Then names completes it, if one waits (R-ROLL-4); the turn goes
    on only then (R-X-ROLL-2)."""
    turn = t.state.page.turn if t.state.page else None
    if turn is not None and turn.and_then is not None:
        t(c.Narrate(seat=turn.and_then.seats[0], text="And then...", and_then=True))
    return t


def _drive_for(t: Table, character: int, drive: DriveName | None) -> DriveName | None:
    """The Drive named, or the character's first Drive when it has a choice."""
    drives = t.state.characters[character].drives
    return drive if drive is not None or len(drives) == 1 else drives[0].name


def a_turn_with_a_roll(
    t: Table, seat: int, ability: str, die: int, value: int, **where: Any
) -> Table:
    """``seat`` starts its turn and rolls ``die`` with ``ability``; ``value`` comes up.

    The roll waits for the roller's decision (R-ROLL-2). ``where``: ``conflict`` (default 1)
    and ``drive``, the Drive that takes a super ability's Debt (default: the first Drive).
    """
    start_turn(t, seat)
    return roll(t, seat, ability, die, value, **where)


def roll(
    t: Table,
    seat: int,
    ability: str,
    die: int,
    value: int,
    *,
    conflict: int = 1,
    drive: DriveName | None = None,
) -> Table:
    """In ``seat``'s started turn, roll ``die`` with ``ability``; ``value`` comes up."""
    turn = t.state.page.turn if t.state.page else None
    assert turn is not None
    t.roll(value)
    t(
        c.RollDie(
            seat=seat,
            ability=ability,
            conflict=conflict,
            die=die,
            drive=_drive_for(t, turn.character, drive),
        )
    )
    return t


def decide(t: Table, seat: int, *, accept: bool = True, ally: int | None = None) -> Table:
    """The roller accepts or rejects, and everyone else passes on reacting."""
    t(c.AcceptRoll(seat=seat, ally=ally) if accept else c.RejectRoll(seat=seat, ally=ally))
    return pass_reactions(t)


def a_roll(
    t: Table,
    seat: int,
    ability: str,
    die: int,
    value: int,
    *,
    accept: bool = True,
    ally: int | None = None,
    stake: int = 0,
    end: bool = True,
    **where: Any,
) -> Table:
    """A turn that rolls (``where``: ``conflict`` and ``drive``, as for
    :func:`a_turn_with_a_roll`), decides, lets reactions pass, optionally stakes ``stake``
    Debt (from the same Drive) under the rolled die once any And Then is completed
    (R-X-ROLL-2), and ends (unless ``end`` is False)."""
    a_turn_with_a_roll(t, seat, ability, die, value, **where)
    decide(t, seat, accept=accept, ally=ally)
    if stake:
        complete_and_then(t)
        turn = t.state.page.turn if t.state.page else None
        assert turn is not None
        drive = _drive_for(t, turn.character, where.get("drive"))
        conflict = where.get("conflict", 1)
        t(c.StakeDebt(seat=seat, conflict=conflict, die=die, amount=stake, drive=drive))
    return end_turn(t, seat) if end else t


def pass_reactions(t: Table) -> Table:
    """Every seat asked to React passes, until the reactions close (R-REACT-1)."""
    while (seat := asked(t.state)) is not None:
        t(c.PassReaction(seat=seat))
    return t


# -- moving on -------------------------------------------------------------------------------


def filler_turn(t: Table, seat: int) -> Table:
    """A turn that leaves the table as it was: an Event is created and vetoed at once."""
    start_turn(t, seat)
    conflict_id = t.state.next_conflict
    t(
        c.CreateConflict(seat=seat, kind="event", text=f"A passing event {conflict_id}"),
        c.Veto(seat=seat, conflict=conflict_id),
    )
    return end_turn(t, seat)


def play_on(t: Table, until: Callable[[CampaignState], bool]) -> Table:
    """Play the moves that change nothing — pass claiming, filler turns, pass buying turns,
    the Starter ends a page that waits — until ``until`` holds."""
    for _ in range(200):
        state = t.state
        if until(state):
            return t
        page = state.page
        assert page is not None, "play_on does not frame scenes"
        if page.phase == "claiming":
            t(c.PassClaiming(seat=page.cursor))
        elif page.phase == "free_play":
            filler_turn(t, page.starter)
        elif page.phase == "actions":
            assert page.turn is None, "finish the turn in progress first"
            if page.round == "free":
                filler_turn(t, next_turn_seat(t))
            else:
                seat = bought_turn_seat(state)
                assert seat is not None
                t(c.PassTurn(seat=seat))
        elif page.phase == "resolution":
            assert not pending(state), f"a resolution is owed: {pending(state)}"
            t(c.EndPage(seat=page.starter))
        else:
            raise AssertionError(f"play_on cannot play the {page.phase} phase")
    raise AssertionError("play_on went round too many times")


def next_page(
    t: Table,
    claims: Mapping[int, Sequence[tuple[int, int]]] = {},
    *,
    choose: Mapping[int, Sequence[int]] = {},
) -> Table:
    """Play on to the next claiming phase (the one under way, if claiming is going on); there
    each seat chooses the further characters in ``choose`` (R-SCENE-2: 1 Story Token each)
    and makes its ``claims`` (conflict, side) on its go. Returns in free play."""
    play_on(t, until=lambda s: s.page is not None and s.page.phase == "claiming")
    left = {seat: list(made) for seat, made in claims.items()}
    chosen = {seat: list(characters) for seat, characters in choose.items()}
    while t.state.page is not None and t.state.page.phase == "claiming":
        seat = t.state.page.cursor
        for character in chosen.pop(seat, []):
            t(c.ChooseCharacter(seat=seat, character=character))
        for conflict_id, side in left.pop(seat, []):
            t(c.Claim(seat=seat, conflict=conflict_id, side=side))
        t(c.PassClaiming(seat=seat))
    assert not left and not chosen, f"not done: claims {left}, characters {chosen}"
    return t


def until_turn_of(t: Table, seat: int) -> Table:
    """Play filler turns (and passes) until ``seat`` may start a turn."""

    def its_turn(s: CampaignState) -> bool:
        page = s.page
        if page is None or page.turn is not None:
            return False
        if page.phase == "free_play":
            return page.starter == seat
        return page.phase == "actions" and turn_seat(s) == seat

    return play_on(t, until=its_turn)


def to_resolution(t: Table) -> Table:
    """Play filler turns and pass on buying turns until the resolution phase."""
    return play_on(t, until=lambda s: s.page is not None and s.page.phase == "resolution")


# -- canned tables ---------------------------------------------------------------------------


def a_won_warehouse(
    *,
    brute: int = 5,
    aurora: int = 3,
    tokens: int = 0,
    debt: Debts | None = None,
    brute_stake: int = 1,
) -> Table:
    """Page 1: Mia creates Event 1; Aurora rolls its "Against" die (die 2) to ``aurora``,
    accepts and stakes 1 Justice Debt under it; Brute rolls its "For" die (die 1) to
    ``brute``, accepts and stakes ``brute_stake`` Debt under it (more than 1 needs earlier
    ``debt``). Page 2 (Starter seat 1): seat 1 claims "Against" (side 1), seat 2 claims "For"
    (side 0); Mia claims nothing."""
    t = a_scene_with_a_conflict(tokens=tokens, debt=debt)
    a_roll(t, 1, power("Aurora", 1), die=2, value=aurora, ally=1, drive="Justice", stake=1)
    a_roll(t, 2, power("Brute", 5), die=1, value=brute, stake=brute_stake)
    return next_page(t, claims={1: [(1, 1)], 2: [(1, 0)]})


def a_table_in_resolution(**setup: Any) -> Table:
    """:func:`a_won_warehouse` (``setup`` as for it), played on to page 2's resolution
    phase: with the default dice "For" (5) controls "Against" (3), so seat 2 resolves
    Event 1."""
    return to_resolution(a_won_warehouse(**setup))


def a_deadlocked_warehouse() -> Table:
    """Page 1: Mia creates Event 1; Aurora rolls its "Against" die (die 2) to 6 and stakes 1
    Justice Debt under it; Brute rolls its "For" die (die 1) to 6 and stakes 1 Debt under it.
    Nobody can React to a 6. The page is in resolution, waiting: the Conflict is tied at six
    apiece (R-DEAD-1, R-X-DEAD-1)."""
    t = a_scene_with_a_conflict()
    a_roll(t, 1, power("Aurora", 1), die=2, value=6, drive="Justice", stake=1)
    return a_roll(t, 2, power("Brute", 5), die=1, value=6, stake=1)


def a_turn_with_an_inspiration(value: int) -> Table:
    """Seat 2 holds one Inspiration of ``value``, made from Event 1 in scene 1 (resolved, or
    deadlocked for a 6). In scene 2 (Starter seat 1) Aurora has created an Event, whose dice
    show 1, and Brute's turn has started."""
    if value == 6:
        t = a_deadlocked_warehouse()
        t(c.DeclareDeadlock(seat=3, conflict=1))
    else:
        t = a_table_in_resolution(brute=value + 1, aurora=1)
        t(c.Resolve(seat=2, conflict=1))
    assert t.state.scene is None and [i.value for i in t.state.player(2).inspirations] == [value]
    a_next_scene(t)
    take_turn(t, 1, c.CreateConflict(seat=1, kind="event", text="The bank is robbed"))
    return start_turn(t, 2)


def inspiration_of(t: Table, seat: int) -> int:
    """The id of the (first) Inspiration ``seat`` holds."""
    return t.state.player(seat).inspirations[0].id
