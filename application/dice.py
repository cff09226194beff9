"""Where the server's dice come from (R-ROLL-1: a client never chooses a die's value)."""

from __future__ import annotations

import random
import secrets
from collections.abc import Iterable, Iterator
from typing import Protocol

SIDES = 6


class DiceSource(Protocol):
    """Draws one six-sided die: called with no arguments, returns 1..6."""

    def __call__(self) -> int: ...


class SecretsDice:
    """Fair dice from the operating system's CSPRNG: players cannot predict the next roll."""

    def __call__(self) -> int:
        return secrets.randbelow(SIDES) + 1

    def __repr__(self) -> str:
        return "SecretsDice()"


class SeededDice:
    """Reproducible dice for tests and replays of a session: the same seed, the same rolls."""

    def __init__(self, seed: int | str | bytes = 0) -> None:
        self.seed = seed
        self._random = random.Random(seed)

    def __call__(self) -> int:
        return self._random.randint(1, SIDES)

    def __repr__(self) -> str:
        return f"SeededDice({self.seed!r})"


class ScriptedDice:
    """Dice that roll the given values in order, for tests that need a particular roll."""

    def __init__(self, values: Iterable[int]) -> None:
        self._values: Iterator[int] = iter(values)

    def __call__(self) -> int:
        try:
            value = next(self._values)
        except StopIteration:
            raise RuntimeError("ScriptedDice ran out of values") from None
        if not 1 <= value <= SIDES:
            raise ValueError(f"a die shows 1..{SIDES}, not {value}")
        return value
