"""The state of a campaign of Capes: immutable msgspec Structs, folded from events.

Every Struct here is frozen; ``evolve`` builds a new state by copy-on-write (``replace`` and
``{**mapping, key: value}``), so a state once handed out never changes under anyone's feet: the
application can cache it, and a refused command cannot leave half an update behind.

Numbering: seats are 1..n in join order (clockwise); characters, conflicts, dice and
inspirations get integer ids from counters in the state, so ids are the same on every replay.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from ..shared import controlling

DriveName = Literal[
    "Justice",
    "Truth",
    "Love",
    "Hope",
    "Duty",
    "Obsession",
    "Pride",
    "Power",
    "Despair",
    "Fear",
    "Undifferentiated",
]
HEROIC_DRIVES: tuple[DriveName, ...] = ("Justice", "Truth", "Love", "Hope", "Duty")
VILLAINOUS_DRIVES: tuple[DriveName, ...] = ("Obsession", "Pride", "Power", "Despair", "Fear")
UNDIFFERENTIATED: DriveName = "Undifferentiated"

Category = Literal["attitude", "style", "power", "skill"]
ConflictKind = Literal["goal", "event"]
Phase = Literal["overdrawn", "claiming", "free_play", "actions", "resolution"]
Round = Literal["free", "bought"]


class Frozen(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """Base of all state records.

    ``gc=False``: immutable trees cannot form reference cycles, so the garbage collector need
    not track them; a server holds many campaigns' states, and tracking them made every full
    collection a pause of tens of milliseconds (measured in scripts/bench)."""


class Ability(Frozen, frozen=True):
    name: str
    category: Category
    rating: int
    super: bool


class DriveSlot(Frozen, frozen=True):
    """A Drive of a character with the unstaked Debt on it (R-TABLE-4, R-CHAR-5)."""

    name: DriveName
    strength: int
    debt: int = 0


class Exemplar(Frozen, frozen=True):
    """A link from a character to another through one Drive (R-CHAR-6)."""

    other: int
    drive: DriveName


class Character(Frozen, frozen=True):
    id: int
    name: str
    abilities: tuple[Ability, ...]
    drives: tuple[DriveSlot, ...]
    created_by: int
    method: Literal["freeform", "click-and-lock"] = "freeform"
    exemplars: tuple[Exemplar, ...] = ()
    #: Mundane abilities used this scene (R-ABIL-1); cleared when a scene starts (R-SCENE-3).
    #: A sorted tuple, not a set: a set of strings iterates in an order that changes with the
    #: process's hash seed, so the state's JSON (and a snapshot's) would not be stable.
    blocked: tuple[str, ...] = ()

    @property
    def undifferentiated(self) -> bool:
        return len(self.drives) == 1 and self.drives[0].name == UNDIFFERENTIATED

    def ability(self, name: str) -> Ability | None:
        return next((a for a in self.abilities if a.name == name), None)

    def drive(self, name: str) -> DriveSlot | None:
        return next((d for d in self.drives if d.name == name), None)


class Inspiration(Frozen, frozen=True):
    """An Inspiration of a player: a value 1-6 and the Conflict it came from (R-TABLE-3)."""

    id: int
    value: int
    source: int


class Player(Frozen, frozen=True):
    seat: int
    name: str
    tokens: int = 0
    inspirations: tuple[Inspiration, ...] = ()

    def inspiration(self, inspiration_id: int) -> Inspiration | None:
        return next((i for i in self.inspirations if i.id == inspiration_id), None)


class Stake(Frozen, frozen=True):
    """Debt staked under a die: whose, from which Drive, how much (R-STAKE-3)."""

    character: int
    drive: DriveName
    amount: int


class Die(Frozen, frozen=True):
    id: int
    value: int = 1
    #: The character controlling the die through Debt staked under it, if any (R-STAKE-3).
    controller: int | None = None
    stakes: tuple[Stake, ...] = ()

    @property
    def staked(self) -> int:
        return sum(s.amount for s in self.stakes)


class Side(Frozen, frozen=True):
    label: str
    dice: tuple[Die, ...]

    @property
    def total(self) -> int:
        """R-CONF-2: a side's total is the sum of its dice."""
        return sum(d.value for d in self.dice)

    @property
    def staked(self) -> int:
        return sum(d.staked for d in self.dice)


class Conflict(Frozen, frozen=True):
    id: int
    kind: ConflictKind
    text: str
    creator: int
    sides: tuple[Side, ...]
    #: (scene, page) in which it was created: it cannot be claimed that page (R-PAGE-4).
    created_on: tuple[int, int]
    #: Characters a Goal names: only their players may veto it (R-CONF-3).
    names: tuple[int, ...] = ()
    #: character -> the side it is allied to now (R-CONF-4).
    allies: dict[int, int] = {}
    #: character -> every side it was ever allied to, for Story Tokens (R-RES-3).
    once_allied: dict[int, frozenset[int]] = {}
    #: character -> the one Drive it stakes from on this Conflict (R-STAKE-1).
    stake_drive: dict[int, DriveName] = {}
    #: character -> Debt it has staked on this Conflict in all (R-STAKE-1).
    stake_total: dict[int, int] = {}
    #: side -> seat that claimed it this page (R-PAGE-4); cleared when the page ends.
    claims: dict[int, int] = {}
    next_die: int = 2
    #: (scene, page) of the last change to its dice, stakes, sides or alliances: a tie left
    #: unchanged through a whole page may be declared Deadlocked (R-X-DEAD-2). (0, 0): not
    #: changed since it was created (``created_on`` counts then).
    changed_on: tuple[int, int] = (0, 0)

    def die(self, die_id: int) -> tuple[int, Die] | None:
        """The side index and die with this id."""
        for index, side in enumerate(self.sides):
            for d in side.dice:
                if d.id == die_id:
                    return index, d
        return None

    @property
    def controlling_side(self) -> int | None:
        """R-CONF-2: the side with the strictly highest total; a tie for highest: nobody."""
        return controlling([s.total for s in self.sides])

    def allies_of(self, side: int) -> tuple[int, ...]:
        return tuple(sorted(c for c, s in self.allies.items() if s == side))


class ExemplarRequest(Frozen, frozen=True):
    """A shared Exemplar asked for by one of the two players, waiting for the other (R-CHAR-6)."""

    character: int
    exemplar: int
    drive: DriveName
    seat: int


class Scene(Frozen, frozen=True):
    number: int
    framer: int
    text: str = ""
    #: character -> the seat playing it this scene (R-SCENE-2).
    cast: dict[int, int] = {}
    pages: int = 0
    #: Exemplar pairs (low id, high id) whose Free Conflict was added this scene (R-CHAR-6).
    free_conflicts_used: frozenset[tuple[int, int]] = frozenset()
    #: (character, goal text) pairs of failed Goals (R-CONF-5), sorted (see ``blocked``).
    failed_goals: tuple[tuple[int, str], ...] = ()
    #: Conflicts still open to a veto when the last page ended: the window lasts until the
    #: next turn starts, which is on the next page (R-CONF-3).
    vetoable: frozenset[int] = frozenset()

    def characters_of(self, seat: int) -> tuple[int, ...]:
        return tuple(c for c, s in self.cast.items() if s == seat)


class OverdrawnDrive(Frozen, frozen=True):
    """A Drive that must be rolled for at the start of this page (R-PAGE-2)."""

    character: int
    drive: DriveName


class PendingRoll(Frozen, frozen=True):
    """A rolled die waiting for the roller's accept/reject decision (R-ROLL-2)."""

    seat: int
    character: int
    conflict: int
    die: int
    before: int
    rolled: int
    reaction: bool


class ReactionWindow(Frozen, frozen=True):
    """The chance to React to an accepted roll (R-REACT-1)."""

    conflict: int
    die: int
    #: Seats in the order they are asked, starting with the acting player.
    order: tuple[int, ...]
    reacted: frozenset[int] = frozenset()
    passed: frozenset[int] = frozenset()
    #: Index into ``order`` of the seat asked next.
    cursor: int = 0


class AndThen(Frozen, frozen=True):
    """R-ROLL-4: a player allied to the controlling side must complete the narration."""

    conflict: int
    side: int
    seats: tuple[int, ...]


class Turn(Frozen, frozen=True):
    seat: int
    character: int
    bought: bool = False
    #: The one thing of the turn is done: an Ability used or a Conflict created (R-TURN-1).
    acted: bool = False
    used_ability: bool = False
    #: Debt was staked this turn, so the turn must use an Ability (R-STAKE-1).
    staked: bool = False
    #: Sides staked on before the Ability, which the roll decision must ally to (R-STAKE-2).
    promised: tuple[tuple[int, int], ...] = ()
    #: Conflicts as they were before the turn's first provisional stake on them (R-STAKE-4):
    #: what ending the turn without using an Ability puts back.
    provisional: tuple[Conflict, ...] = ()
    roll: PendingRoll | None = None
    reactions: ReactionWindow | None = None
    and_then: AndThen | None = None


class Page(Frozen, frozen=True):
    scene: int
    number: int
    starter: int
    phase: Phase
    overdrawn: tuple[OverdrawnDrive, ...] = ()
    #: Whose move it is in the claiming phase and the bought-turn round.
    cursor: int = 0
    #: Consecutive passes with nothing done, to end a go-around phase (R-PAGE-3, R-PAGE-6).
    passes: int = 0
    #: Whether the seat at the cursor did anything in its current claiming go.
    busy: bool = False
    free_claims_used: frozenset[int] = frozenset()
    round: Round = "free"
    #: Characters that have not had their free turn yet (R-PAGE-6).
    free_turns_left: frozenset[int] = frozenset()
    turn: Turn | None = None
    #: Conflicts that may still be vetoed: created since the last turn started (R-CONF-3).
    vetoable: frozenset[int] = frozenset()
    #: Conflicts already resolved or deadlocked this page (R-PAGE-7); in a state an earlier
    #: release stored, gloated on too.
    handled: frozenset[int] = frozenset()
    #: (conflict, seat): the claimant has gloated on the Conflict this page, and is done with
    #: it until the next page (R-X-GLOAT-1).
    gloated: frozenset[tuple[int, int]] = frozenset()
    last_narrator: int | None = None


class CampaignState(Frozen, frozen=True):
    """The whole campaign, as folded from its events."""

    created: bool = False
    name: str = ""
    edition: str = "capes"
    rules_version: str = ""
    starting_tokens: int = 0
    players: tuple[Player, ...] = ()
    characters: dict[int, Character] = {}
    conflicts: dict[int, Conflict] = {}
    scene: Scene | None = None
    page: Page | None = None
    scenes_played: int = 0
    #: Who frames the next scene; None: any volunteer (R-SCENE-1).
    next_framer: int | None = None
    next_character: int = 1
    next_conflict: int = 1
    next_inspiration: int = 1
    closed: bool = False
    #: Shared Exemplars asked for by one player and not yet by the other (R-CHAR-6).
    exemplar_requests: tuple[ExemplarRequest, ...] = ()

    def player(self, seat: int) -> Player:
        return self.players[seat - 1]

    def left_of(self, seat: int) -> int:
        """The seat to the left, i.e. next clockwise (R-TABLE-1)."""
        return seat % len(self.players) + 1

    def clockwise_from(self, seat: int) -> tuple[int, ...]:
        n = len(self.players)
        return tuple((seat - 1 + i) % n + 1 for i in range(n))
