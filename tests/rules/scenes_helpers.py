"""Set-ups for the rule tests of tables, characters, scenes, pages, conflicts and turns.

Built on :mod:`play_helpers` (same cast: seat 1 plays Aurora, seat 2 Brute, seat 3 Mia), these
stop the play at the moments those rules speak of: before anyone is cast, in the middle of a
page, just before the command that ends a page.
"""

from __future__ import annotations

from collections.abc import Callable

from play_helpers import (
    AURORA,
    AURORA_DRIVES,
    MIA,
    a_roll,
    a_scene,
    a_scene_with_a_conflict,
    a_turn_with_a_roll,
    next_page,
    pass_reactions,
    play_on,
    power,
    skill,
    take_turn,
    to_resolution,
)
from rulebook import Table

from domain.capes import commands as c
from domain.capes.events import ConflictCreated
from domain.capes.model import CampaignState

__all__ = [
    "a_cast",
    "an_empty_scene",
    "characters_built",
    "claiming_on_page",
    "created",
    "framed",
    "love_overdrawn",
    "the_goal_failed",
    "the_last_conflict_in_resolution",
    "the_warehouse_contested",
    "two_events",
]


def characters_built(*, players: int = 3, tokens: int = 0) -> Table:
    """Aurora (seat 1), Brute (seat 2) and, with three players, Mia (seat 3); no scene yet."""
    t = Table(players=players, tokens=tokens)
    t.hero(1, "Aurora", AURORA_DRIVES)
    t.hero(2, "Brute")
    if players >= 3:
        t.mundane(3, "Mia")
    return t


def framed(*, framer: int = 1, tokens: int = 0) -> Table:
    """Scene 1 framed by ``framer``: page 1's claiming phase, nobody cast yet."""
    t = characters_built(tokens=tokens)
    t(c.FrameScene(seat=framer, text="The docks at night"))
    return t


def a_cast(*, tokens: int = 0) -> Table:
    """Scene 1 framed by seat 1; each seat has chosen its own character and ended its go, so
    claiming continues at seat 1 with no empty go yet."""
    t = framed(tokens=tokens)
    for seat in (1, 2, 3):
        t(c.ChooseCharacter(seat=seat, character=seat), c.PassClaiming(seat=seat))
    return t


def an_empty_scene(t: Table, framer: int) -> Table:
    """``framer`` frames a scene in which nobody plays a character: it ends after one page."""
    t(c.FrameScene(seat=framer))
    for seat in t.state.clockwise_from(framer):
        t(c.PassClaiming(seat=seat))
    t(c.EndFreePlay(seat=framer))
    assert t.state.scene is None
    return t


def claiming_on_page(number: int) -> Callable[[CampaignState], bool]:
    """A ``play_on`` stop: the claiming phase of page ``number`` of the scene."""

    def stop(s: CampaignState) -> bool:
        return s.page is not None and s.page.number == number and s.page.phase == "claiming"

    return stop


def two_events(*, tokens: int = 0) -> Table:
    """Page 1 (framer seat 3): Mia creates Event 1, Aurora Event 2; Brute's free turn is
    next. Nobody is allied to anything."""
    t = a_scene(tokens=tokens)
    take_turn(t, 3, c.CreateConflict(seat=3, text="The warehouse burns"))
    take_turn(t, 1, c.CreateConflict(seat=1, text="The bridge falls"))
    return t


def the_warehouse_contested(*, tokens: int = 0) -> Table:
    """Page 1: Mia creates Event 1; Aurora rolls its "Against" die (die 2) to 3 and Brute its
    "For" die (die 1) to 5, each accepting. Returns at the start of page 2 (Starter seat 1),
    claiming: Aurora is allied to side 1, Brute to side 0, Mia to neither; side 0 controls."""
    t = a_scene_with_a_conflict(tokens=tokens)
    a_roll(t, 1, power("Aurora", 1), die=2, value=3, drive="Justice")
    a_roll(t, 2, power("Brute", 5), die=1, value=5)
    return play_on(t, until=claiming_on_page(2))


def the_last_conflict_in_resolution() -> Table:
    """Event 1 is the only Conflict of scene 1 (framer seat 3). On page 1 Aurora rolls its
    "Against" die to 3 and keeps it, and Mia Reacts with her skill rated 3 (Blocking it) and
    rejects her roll, so both are allied to side 1. On page 2 seat 1 claims side 1; the table
    is in page 2's resolution, seat 1 to resolve Event 1 (side 1: 3, side 0: 1)."""
    t = a_scene_with_a_conflict()
    a_turn_with_a_roll(t, 1, power("Aurora", 1), die=2, value=3, drive="Justice")
    t(c.AcceptRoll(seat=1), c.PassReaction(seat=1), c.PassReaction(seat=2))
    t.roll(2)
    t(c.React(seat=3, character=MIA, ability=skill(3)), c.RejectRoll(seat=3))
    pass_reactions(t)
    t(c.EndTurn(seat=1))
    next_page(t, claims={1: [(1, 1)]})
    return to_resolution(t)


def love_overdrawn(*, stake: bool = False, split: bool = False) -> Table:
    """Page 1 (framer seat 3): Mia creates Event 1. Aurora rolls its "For" die (die 1) to 5
    with a power, taking its Debt on Love (strength 1), and — if ``stake`` — stakes that Debt
    under the die. With ``split`` she rolls a 4 instead, then stakes 2 Justice Debt she had
    from earlier to control die 1 and Split it into two 2s (dice 1 and 3). Brute rolls the
    "Against" die (die 2) to 2; Aurora Reacts, again on Love, rolls 1 and accepts. Aurora has
    gained 2 Debt on Love and is allied to side 0, Brute to side 1. Returns in Brute's turn,
    reactions over: ``EndTurn(seat=2)`` ends page 1."""
    t = a_scene_with_a_conflict(debt={AURORA: {"Justice": 2}} if split else {})
    if split:
        a_roll(t, 1, power("Aurora", 1), die=1, value=4, drive="Love", end=False)
        t(c.StakeDebt(seat=1, conflict=1, die=1, drive="Justice"))
        t(c.SplitDie(seat=1, conflict=1, die=1, drive="Justice"), c.EndTurn(seat=1))
    else:
        a_roll(t, 1, power("Aurora", 1), die=1, value=5, drive="Love", stake=int(stake))
    a_turn_with_a_roll(t, 2, power("Brute", 1), die=2, value=2)
    t(c.AcceptRoll(seat=2), c.PassReaction(seat=2), c.PassReaction(seat=3))
    t.roll(1)
    t(c.React(seat=1, character=AURORA, ability=power("Aurora", 2), drive="Love"))
    t(c.AcceptRoll(seat=1))
    return pass_reactions(t)


def the_goal_failed(*, tokens: int = 1) -> Table:
    """Page 1 (framer seat 3): Mia creates the Goal "Save the mayor" naming Aurora (Conflict
    1), Aurora creates Event 2, Brute rolls the Goal's "Against" die (die 2) to 5 and accepts.
    Page 2 (Starter seat 1): seat 2 claims side 1 of the Goal; the table is in page 2's
    resolution with seat 2 to resolve it, against the Goal."""
    t = a_scene(tokens=tokens)
    goal = c.CreateConflict(seat=3, kind="goal", text="Save the mayor", names=(AURORA,))
    take_turn(t, 3, goal)
    take_turn(t, 1, c.CreateConflict(seat=1, text="The city floods"))
    a_roll(t, 2, power("Brute", 5), die=2, value=5)
    next_page(t, claims={2: [(1, 1)]})
    return to_resolution(t)


def created(command: c.CreateConflict, conflict: int = 1, **fields: object) -> ConflictCreated:
    """The event of ``command`` creating Conflict ``conflict``: kind, text, creator, sides
    and names as the command gives them; ``fields`` the rest (cost, in_turn, free_for)."""
    return ConflictCreated(
        conflict=conflict,
        kind=command.kind,
        text=command.text,
        creator=command.seat,
        sides=command.sides,
        names=command.names,
        **fields,  # type: ignore[arg-type]
    )
