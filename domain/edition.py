"""What every edition of the rules provides, and the registry of editions.

A second edition (say seed 004, "CAPEES!") is a new package beside ``domain.capes`` with its
own commands, events, state and rule modules, registered here; nothing of the first changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol


class Edition(Protocol):
    """A Decider for one edition of the rules."""

    #: Name recorded in every campaign (``CampaignCreated.edition``).
    name: str
    #: Version of this edition's rules engine, recorded with each campaign.
    rules_version: str
    #: Every event class (tagged msgspec Structs), for the store's mapper.
    event_types: Sequence[type[Any]]
    #: Every command class (tagged msgspec Structs), for the API.
    command_types: Sequence[type[Any]]

    def initial_state(self) -> Any:
        """The state before the first event."""

    def decide(self, state: Any, command: Any) -> tuple[Any, ...]:
        """The events the command causes, or raise a DomainError; never changes ``state``."""

    def evolve(self, state: Any, event: Any) -> Any:
        """The state after ``event``; never checks a rule."""

    def with_dice(self, command: Any, draw: Callable[[], int], counter: int = 0) -> Any:
        """The command with every die it rolls drawn by ``draw`` (R-ROLL-1), the first recorded
        as roll number ``counter`` of the campaign, the next ``counter + 1``… (R-FAIR-4; 0: the
        dice were not derived). ``draw`` is not called when the command rolls nothing."""

    def seats(self, state: Any) -> tuple[int, ...]:
        """The seats at the table, for the record's votes."""

    def closed(self, state: Any) -> bool:
        """Whether the campaign is over: its owner closed it (R-X-REC-3)."""

    def starts_scene(self, event: Any) -> bool:
        """Whether ``event`` starts a scene (disputes reach back to it, R-REC-2)."""

    def ends_scene(self, event: Any) -> bool:
        """Whether ``event`` ends a scene (its dice are revealed, R-FAIR-5)."""

    def scene_of(self, state: Any) -> int | None:
        """The number of the scene being played in ``state``, if one is (R-FAIR-1, R-FAIR-5)."""

    def rolled(self, event: Any) -> tuple[int, int] | None:
        """(roll counter, value) of the die ``event`` records rolling, if it rolls one
        (R-FAIR-4)."""

    def fork_event(self, state: Any, name: str) -> Any:
        """The first event of a campaign forked from ``state`` (R-REC-6)."""

    def schema_version(self, event_type: type[Any]) -> int:
        """The current schema version of an event type (stored with each event)."""

    def upcast(self, type_name: str, schema: int, payload: dict[str, Any]) -> dict[str, Any]:
        """An event's stored payload of version ``schema``, in the current shape."""


def fold(edition: Edition, events: Sequence[Any], state: Any = None) -> Any:
    """Replay ``events`` from ``state`` (or the initial state)."""
    if state is None:
        state = edition.initial_state()
    for event in events:
        state = edition.evolve(state, event)
    return state
