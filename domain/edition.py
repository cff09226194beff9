"""What every edition of the rules provides, and the registry of editions.

A second edition (say seed 004, "CAPEES!") is a new package beside ``domain.capes`` with its
own commands, events, state and rule modules, registered here; nothing of the first changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar, cast


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


# -- an edition made of a rules package ------------------------------------------------------


class _Seated(Protocol):
    @property
    def seat(self) -> int: ...


class _Numbered(Protocol):
    @property
    def number(self) -> int: ...


class TableState(Protocol):
    """What :class:`RulesEdition` reads of an edition's state (both editions' states have it)."""

    @property
    def players(self) -> Sequence[_Seated]: ...

    @property
    def closed(self) -> bool: ...

    @property
    def scene(self) -> _Numbered | None: ...


class _Roll(Protocol):
    @property
    def draw(self) -> int: ...

    @property
    def rolled(self) -> int: ...


S = TypeVar("S", bound=TableState)
C = TypeVar("C")
E = TypeVar("E")


# Not frozen: the Edition protocol's attributes are plain (settable) ones.
@dataclass(kw_only=True)
class RulesEdition(Generic[S, C, E]):
    """An :class:`Edition` of a rules package (``domain.capes``, ``domain.capees``): its
    Decider's functions and the few events the record and the audit recognise (a scene's
    start and end, R-REC-2 and R-FAIR-5; a die rolled, R-FAIR-4; a fork's first event, made
    as ``forked(name=…, state=…)``, R-REC-6) are named once per edition, and what every such
    edition answers alike is answered here (as :class:`domain.editions.Play` names what the
    application plays of each).

    Why one class with its parts passed in, not a class per edition: the two editions' classes
    were the same sixty lines but for the names of these functions and events."""

    name: str
    rules_version: str
    event_types: Sequence[type[Any]]
    command_types: Sequence[type[Any]]
    initial_state: Callable[[], S]
    decide: Callable[[S, C], tuple[E, ...]]
    evolve: Callable[[S, E], S]
    #: ``with_dice`` without its default counter.
    dice: Callable[[C, Callable[[], int], int], C]
    scene_starts: type[Any]
    scene_ends: type[Any]
    rolls: tuple[type[Any], ...]
    forked: Callable[..., E]
    schema_version: Callable[[type[Any]], int]
    upcast: Callable[[str, int, dict[str, Any]], dict[str, Any]]

    def with_dice(self, command: C, draw: Callable[[], int], counter: int = 0) -> C:
        return self.dice(command, draw, counter)

    def seats(self, state: S) -> tuple[int, ...]:
        return tuple(p.seat for p in state.players)

    def closed(self, state: S) -> bool:
        return state.closed

    def starts_scene(self, event: E) -> bool:
        return isinstance(event, self.scene_starts)

    def ends_scene(self, event: E) -> bool:
        return isinstance(event, self.scene_ends)

    def scene_of(self, state: S) -> int | None:
        # A closed campaign plays no scene: closing it reveals the dice (R-FAIR-5).
        if state.scene is None or state.closed:
            return None
        return state.scene.number

    def rolled(self, event: E) -> tuple[int, int] | None:
        if isinstance(event, self.rolls):
            roll = cast(_Roll, event)
            return roll.draw, roll.rolled
        return None

    def fork_event(self, state: S, name: str) -> E:
        return self.forked(name=name, state=state)
