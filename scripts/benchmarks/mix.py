"""The game mix: campaigns at the mix's starting point and the turns played on them, the same
over HTTP (scripts/bench_game.lua, scripts/paced_load.py) and in process."""

from __future__ import annotations

from collections.abc import Iterator

from domain.capes import commands as c
from domain.capes.model import DriveName

DRIVES: dict[DriveName, int] = {"Justice": 3, "Hope": 2, "Truth": 2, "Love": 1, "Duty": 1}


def freeform(prefix: str, categories: tuple[tuple[str, int], ...]) -> c.Freeform:
    """Abilities ``"{prefix} {category} {rating}"``, rated 1..k per category; powers super."""
    return c.Freeform(abilities=tuple(
        c.AbilitySpec(name=f"{prefix} {cat} {r}", category=cat, rating=r,  # type: ignore[arg-type]
                      super=cat == "power")
        for cat, k in categories for r in range(1, k + 1)))


HERO = (("power", 3), ("style", 3), ("attitude", 3))


def mix_setup() -> list[tuple[int, c.Command]]:
    """(seat, command) after the three seats are taken: up to the mix's starting point.

    Three heroes, a scene, claiming over, seat 1's free turn creates Conflict 1 (dice 1 vs 1);
    seat 2's free turn is next. Every player has 99 Story Tokens for bought turns.
    """
    steps: list[tuple[int, c.Command]] = [
        (s, c.CreateCharacter(seat=s, name=f"Hero {s}", build=freeform(f"H{s}", HERO),
                              drives=DRIVES)) for s in (1, 2, 3)]
    steps.append((1, c.FrameScene(seat=1, text="Harbor City, midnight")))
    for s in (1, 2, 3):
        steps += [(s, c.ChooseCharacter(seat=s, character=s)), (s, c.PassClaiming(seat=s))]
    steps += [(s, c.PassClaiming(seat=s)) for s in (1, 2, 3)]
    steps += [(1, c.StartTurn(seat=1, character=1)),
              (1, c.CreateConflict(seat=1, kind="event", text="The bridge collapses")),
              (1, c.EndTurn(seat=1))]
    return steps


def mix_turn(seat: int) -> list[tuple[int, c.Command | None]]:
    """One turn of the mix, as bench_game.lua plays it (None: GET the board)."""
    other = seat % 3 + 1
    return [
        (seat, c.StartTurn(seat=seat, character=seat)),
        (seat, c.RollDie(seat=seat, ability=f"H{seat} power 1", conflict=1, die=1,
                         drive="Justice")),
        (seat, c.RejectRoll(seat=seat, ally=1)),
        (seat, None),
        (other, c.Narrate(seat=other, text="Meanwhile, across town")),
        (seat, c.EndTurn(seat=seat)),
    ]


def turn_plan(seat: int, max_turns: int) -> Iterator[tuple[int, c.Command | None]]:
    """The mix's requests of one campaign, turn after turn, starting with ``seat``'s turn."""
    for turn in range(max_turns):
        yield from mix_turn((seat + turn - 1) % 3 + 1)
