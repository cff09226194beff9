"""A CAPEES! table under test, and the cast of 004's own example (``scripts/capees_table.py``,
shared with the random play): :class:`CTable` adds what only tests ask of a table (a refusal
that changes nothing), and the positions of the worked examples.
"""

from __future__ import annotations

from typing import Any

import pytest

from domain.capees import commands as c
from domain.capees import events as e
from domain.errors import DomainError, RuleViolation
from scripts.capees_table import (  # noqa: F401  (re-exported for the tests)
    ALICE,
    CAPS,
    EDITOR,
    HEROES,
    JOE,
    SEATS,
    ZIPS,
    Table,
    hero,
    ladder,
    npc_drives,
    sheet,
    the_cast,
)


class CTable(Table):
    """A :class:`Table` whose refusals the tests check."""

    def refused(self, command: Any, rule: str) -> DomainError:
        """``command`` is refused for ``rule`` and changes nothing (C-SRV-2)."""
        before, count = self.state, len(self.events)
        dice = list(self.dice)
        self.dice.insert(0, 1)  # a rolling command draws its die before it is judged
        with pytest.raises(DomainError) as caught:
            self.do(command)
        self.dice = dice
        error = caught.value
        if isinstance(error, RuleViolation):
            assert error.rule == rule, f"refused for {error.rule}: {error.reason}"
        else:
            assert rule in error.reason, error.reason
        assert self.state is before and len(self.events) == count
        return error



def first_scene(t: CTable | None = None) -> CTable:
    """W-2: the story begun, Captain Liberty named, Prominence bought and balanced: page 1."""
    t = the_cast(t or CTable())
    t(c.BeginStory(seat=EDITOR, editor=EDITOR),
      c.StartScene(seat=EDITOR, featured=t["Captain Liberty"]))
    for name in ("Robbery", "Clobbering", "Hostages", "Police"):
        t(c.AddComplication(seat=EDITOR, name=name))
    t(c.PassSetup(seat=EDITOR),
      c.PassSetup(seat=EDITOR),
      c.BuyProminence(seat=ZIPS, character=t["Zip"], side="hero"),
      c.BuyProminence(seat=ALICE, character=t["Night Maiden"], side="hero"),
      c.PassSetup(seat=JOE),
      c.PassSetup(seat=EDITOR),
      c.Balance(seat=EDITOR, character=t["the robbers"], side="opponent", narrator=JOE),
      c.Balance(seat=EDITOR, character=t["the driver"], side="opponent", narrator=JOE),
      c.Balance(seat=EDITOR, character=t["Chief Mannelli"], points=2, side="opponent"))
    return t


def set_dice(t: CTable, name: str, hero: int, opponent: int) -> int:  # noqa: F811
    """A Complication of this name at these dice (placed as if from an Inspiration)."""
    cid = t.state.next_complication
    t.given(e.ComplicationCreated(complication=cid, name=name, seat=EDITOR, hero_die=hero,
                                  opponent_die=opponent))
    return cid


def earlier_debt(t: CTable, character: int, drive: str, amount: int) -> None:
    """Debt a character gained in earlier play."""
    t.given(e.DebtGained(character=character, drive=drive, amount=amount))


def drive(t: CTable, character: int, name: str) -> tuple[int, int]:
    """(strength, unstaked Debt) of a Drive."""
    slot = t.state.characters[character].drive(name)
    assert slot is not None
    return slot.strength, slot.debt


def asked_seat(t: CTable) -> int | None:
    from domain.capees.actions import asked

    return asked(t.state)


def all_pass(t: CTable) -> None:
    """Every seat asked to react passes, until the round closes (C-REACT-2)."""
    while (seat := asked_seat(t)) is not None:
        t(c.PassReaction(seat=seat))


def act(t: CTable, name: str) -> None:
    """Pass the actions of everyone before ``name`` in this turn; start ``name``'s action."""
    from domain.capees.pages import acting_seat, actors

    who = t[name]
    while True:
        left = actors(t.state)
        seat = acting_seat(t.state)
        assert seat is not None, f"{name} has no action left"
        mine = [ch for ch in left if t.state.scene and t.state.scene.narrator[ch] == seat]
        if who in mine:
            t(c.StartAction(seat=seat, character=who))
            return
        t(c.StartAction(seat=seat, character=mine[0]), c.EndAction(seat=seat))
