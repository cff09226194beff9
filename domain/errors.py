"""Errors the rules engine raises instead of returning events.

Split by kind, as scalachess / python-chess do, so the API can map each kind to its HTTP status
without knowing any rule: a refused command never appends anything, whatever the kind.
"""

from __future__ import annotations

from collections.abc import Sequence


class DomainError(Exception):
    """Base class: the command was refused and nothing changed."""

    kind = "refused"

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RuleViolation(DomainError):
    """The command breaks a rule of the game (HTTP 422). Carries the rule id (``R-…``)."""

    kind = "rule"

    def __init__(self, rule: str, reason: str, choices: Sequence[object] = ()) -> None:
        super().__init__(reason)
        self.rule = rule
        #: When the refusal is "you must choose", the legal choices, for the client to offer.
        self.choices = tuple(choices)

    def __str__(self) -> str:
        text = f"{self.rule}: {self.reason}"
        if self.choices:
            text += f" (choices: {', '.join(map(str, self.choices))})"
        return text


class ChoiceRequired(RuleViolation):
    """A decision the rules leave to the player was left out and more than one is legal.

    ``field`` names the command field to fill (``"ally"``, ``"drive"``; ``"inspirations.7"``
    for the entry of die 7 in a mapping), and ``choices`` the legal values for it.
    """

    def __init__(
        self, rule: str, reason: str, choices: Sequence[object] = (), field: str | None = None
    ) -> None:
        super().__init__(rule, reason, choices)
        self.field = field


class NotPermitted(DomainError):
    """This seat may not do this: another seat's character, an owner-only command (HTTP 403)."""

    kind = "forbidden"


class InvalidReference(DomainError):
    """The command names something that does not exist: a conflict, die, character (HTTP 400)."""

    kind = "malformed"


class Malformed(DomainError):
    """The command breaks its own shape: a count below 1, a text too long (HTTP 400)."""

    kind = "malformed"


class StaleVersion(DomainError):
    """The command was decided against an older version than the stored one (HTTP 409)."""

    kind = "conflict"
