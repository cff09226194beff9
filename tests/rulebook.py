"""Tests that read like the rulebook: ``given(*events).when(command).then(*events)``.

``given`` takes the events so far (use :func:`play` to get them from commands), ``when`` the
command, and ``then`` the exact events decided, or ``refused(rule_id)`` for a rule refusal that
changes nothing. :func:`play` runs commands through the edition as the application would,
drawing dice from a list so a test says which values come up.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from domain.capes import EDITION
from domain.capes import commands as c
from domain.capes.events import Event
from domain.capes.model import CampaignState
from domain.edition import fold
from domain.errors import DomainError, RuleViolation

__all__ = ["Table", "given", "play", "state_of"]


def state_of(events: Iterable[Event]) -> CampaignState:
    state: CampaignState = fold(EDITION, list(events))
    return state


class _When:
    def __init__(self, history: Sequence[Event], command: c.Command) -> None:
        self.history = list(history)
        self.command = command
        self.state = state_of(self.history)

    def decide(self) -> tuple[Event, ...]:
        return EDITION.decide(self.state, self.command)

    def then(self, *expected: Event) -> CampaignState:
        """The command decides exactly these events; returns the state after them."""
        events = self.decide()
        assert list(events) == list(expected)
        return fold(EDITION, events, self.state)

    def then_includes(self, *expected: Event) -> tuple[Event, ...]:
        """The decided events include these, in this order (others may come between)."""
        events = list(self.decide())
        position = 0
        for wanted in expected:
            assert wanted in events[position:], f"{wanted} not in {events[position:]}"
            position = events.index(wanted, position) + 1
        return tuple(events)

    def refused(self, rule: str, *, kind: type[DomainError] = RuleViolation) -> DomainError:
        """The command is refused for ``rule`` (a rule id, or words of the reason)."""
        with pytest.raises(kind) as caught:
            self.decide()
        error = caught.value
        if isinstance(error, RuleViolation):
            assert error.rule == rule, f"refused for {error.rule}: {error.reason}"
        else:
            assert rule in error.reason, error.reason
        return error


class _Given:
    def __init__(self, events: Sequence[Event]) -> None:
        self.events = list(events)

    def when(self, command: c.Command) -> _When:
        return _When(self.events, command)


def given(*events: Event | Iterable[Event]) -> _Given:
    flat: list[Event] = []
    for e in events:
        if isinstance(e, Event):
            flat.append(e)
        else:
            flat.extend(e)
    return _Given(flat)


class Table:
    """Plays commands through the rules, keeping the events: a campaign under test."""

    def __init__(self, players: int = 3, tokens: int = 0, dice: Iterable[int] = ()) -> None:
        self.events: list[Event] = []
        self.state = EDITION.initial_state()
        self.dice = list(dice)
        self.do(c.CreateCampaign(name="Test", starting_tokens=tokens))
        for i in range(players):
            self.do(c.SeatPlayer(name=f"P{i + 1}"))

    def roll(self, *values: int) -> Table:
        """The next dice to come up."""
        self.dice.extend(values)
        return self

    def _draw(self) -> int:
        if not self.dice:
            raise AssertionError("the test rolled more dice than it set up")
        return self.dice.pop(0)

    def do(self, command: Any) -> tuple[Event, ...]:
        command = EDITION.with_dice(command, self._draw)
        events = EDITION.decide(self.state, command)
        self.events.extend(events)
        self.state = fold(EDITION, events, self.state)
        return events

    def __call__(self, *commands: Any) -> Table:
        for command in commands:
            self.do(command)
        return self

    # Characters used across the tests --------------------------------------------------------

    def hero(
        self,
        seat: int,
        name: str,
        drives: dict[str, int] | None = None,
        powers: Sequence[str] = ("Flight", "Strength", "Blast", "Speed", "Shield"),
    ) -> int:
        """A freeform super character: 5 powers rated 1..5, 4 styles, 3 attitudes."""
        abilities = (
            [
                c.AbilitySpec(name=f"{name} {p}", category="power", rating=i + 1)
                for i, p in enumerate(powers)
            ]
            + [
                c.AbilitySpec(name=f"{name} style {i + 1}", category="style", rating=i + 1)
                for i in range(4)
            ]
            + [
                c.AbilitySpec(name=f"{name} attitude {i + 1}", category="attitude", rating=i + 1)
                for i in range(3)
            ]
        )
        self.do(
            c.CreateCharacter(
                seat=seat, name=name, build=c.Freeform(abilities=tuple(abilities)), drives=drives
            )
        )  # type: ignore[arg-type]
        return self.state.next_character - 1

    def mundane(self, seat: int, name: str) -> int:
        """A freeform mundane character: skills, mundane styles and attitudes, 3 each."""
        abilities = tuple(
            c.AbilitySpec(name=f"{name} {cat} {i + 1}", category=cat, rating=i + 1)  # type: ignore[arg-type]
            for cat in ("skill", "style", "attitude")
            for i in range(3)
        )
        self.do(c.CreateCharacter(seat=seat, name=name, build=c.Freeform(abilities=abilities)))
        return self.state.next_character - 1


def play(table: Table) -> list[Event]:
    return list(table.events)
