"""The state of a campaign of CAPEES!: immutable msgspec Structs, folded from events.

Seats are 1..n in join order (clockwise); characters, Complications, dice and Inspirations get
integer ids from counters in the state, so ids are the same on every replay. Every Struct is
frozen and ``gc=False`` (immutable trees hold no cycles), as in edition ``capes``.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Faction = Literal["hero", "opponent"]
FACTIONS: tuple[Faction, Faction] = ("hero", "opponent")
HEROIC_DRIVES = ("Justice", "Truth", "Love", "Hope", "Duty")
AbilityType = Literal["power", "attitude", "trope", "skill"]
#: Where setup and a page stand (C-SCENE-1, C-PAGE-1, C-SCENE-4).
Step = Literal[
    "inspirations", "complications", "prominence", "balancing",
    "play", "claims", "overdrawn", "actions", "resolution", "ending", "final_claims",
]


class Frozen(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """Base of all state records."""


class Ability(Frozen, frozen=True):
    name: str
    type: AbilityType
    rating: int
    #: C-ABIL-2: Powers super, Attitudes and Skills blocking, each Trope as marked.
    super: bool


class DriveSlot(Frozen, frozen=True):
    """A Drive with the unstaked Debt sitting on it (C-TABLE-3, C-DEBT-1)."""

    name: str
    strength: int
    debt: int = 0


class Exemplar(Frozen, frozen=True):
    """C-HERO-2: a non-hero character named as the Exemplar of one of a hero's Drives."""

    drive: str
    character: int


class Character(Frozen, frozen=True):
    id: int
    name: str
    hero: bool
    created_by: int
    #: Empty for a non-hero known by name only (C-NPC-1).
    drives: tuple[DriveSlot, ...] = ()
    abilities: tuple[Ability, ...] = ()
    exemplars: tuple[Exemplar, ...] = ()
    #: Blocked abilities, sorted (C-ABIL-3); cleared when a scene's play begins (C-SCENE-1).
    blocked: tuple[str, ...] = ()
    #: Abilities used this page, sorted (C-ABIL-4).
    used: tuple[str, ...] = ()

    @property
    def full_sheet(self) -> bool:
        """C-NPC-1: a sheet with Drives and abilities, needed to receive Prominence."""
        return bool(self.drives)

    def ability(self, name: str) -> Ability | None:
        return next((a for a in self.abilities if a.name == name), None)

    def drive(self, name: str) -> DriveSlot | None:
        return next((d for d in self.drives if d.name == name), None)


class Inspiration(Frozen, frozen=True):
    """C-INSP-1: a won Complication kept as a card: name, faction, Victory Points, Bonus."""

    id: int
    name: str
    faction: Faction
    vp: int
    bonus: int


class Player(Frozen, frozen=True):
    seat: int
    name: str
    tokens: int = 0
    inspirations: tuple[Inspiration, ...] = ()

    def inspiration(self, inspiration_id: int) -> Inspiration | None:
        return next((i for i in self.inspirations if i.id == inspiration_id), None)


class Die(Frozen, frozen=True):
    id: int
    value: int = 1


class Stake(Frozen, frozen=True):
    """Debt staked under a side: whose, from which Drive, how much (C-STAKE-1)."""

    character: int
    drive: str
    amount: int


class Side(Frozen, frozen=True):
    """One side of a Complication: its faction, its owner if split off (C-SPLIT-3)."""

    faction: Faction
    dice: tuple[Die, ...]
    #: The splitter who opened it; None for the two original sides.
    owner: int | None = None
    stakes: tuple[Stake, ...] = ()

    @property
    def total(self) -> int:
        """C-COMP-3: the sum of the side's dice."""
        return sum(d.value for d in self.dice)

    @property
    def staked(self) -> int:
        return sum(s.amount for s in self.stakes)

    @property
    def highest(self) -> int:
        return max((d.value for d in self.dice), default=0)


class Complication(Frozen, frozen=True):
    id: int
    name: str
    #: Side 0 is the original Hero side, side 1 the original Opponent side (C-COMP-1).
    sides: tuple[Side, ...]
    next_die: int = 3


class Claim(Frozen, frozen=True):
    """A character's claim on a Complication this page (C-CLAIM-1)."""

    character: int
    complication: int


class ReactionRound(Frozen, frozen=True):
    """C-REACT-2: the chance to react to a kept roll goes round from ``order[0]``."""

    complication: int
    die: int
    order: tuple[int, ...]
    #: How many seats of ``order`` have had their chance.
    asked: int = 0


class PendingRoll(Frozen, frozen=True):
    """A rolled die waiting for the roller to keep it or turn it back (C-ROLL-2)."""

    seat: int
    character: int
    complication: int
    die: int
    before: int
    rolled: int
    reaction: bool


class Action(Frozen, frozen=True):
    """The action of one character in an action turn (C-TURN-2)."""

    character: int
    seat: int
    rolled: bool = False
    split: bool = False
    roll: PendingRoll | None = None
    reactions: ReactionRound | None = None


class Resolving(Frozen, frozen=True):
    """A checked claim whose resolution waits for other players to give the Story Tokens of
    their winning stakes (C-RES-3): the claimer's player named the rest with the check."""

    complication: int
    character: int
    seat: int
    #: The replacement the claimer's player named, and the Inspiration it is made from (C-RES-4).
    replacement: str
    inspiration: int | None = None
    #: staking character -> the seat its Story Tokens go to, known so far.
    gifts: dict[int, int] = {}
    #: staking character -> the seat whose player still chooses its recipient.
    givers: dict[int, int] = {}


class Scene(Frozen, frozen=True):
    number: int
    step: Step
    #: The seat whose chance it is in a going-round step.
    cursor: int = 0
    #: Passes in a row in a going-round step (C-TABLE-2).
    passes: int = 0
    #: character -> Prominence this scene (C-PROM-3..6).
    prominence: dict[int, int] = {}
    #: character -> the faction declared for it (C-PROM-5).
    faction: dict[int, Faction] = {}
    #: character -> the seat narrating it (C-PROM-4, C-EDITOR-1).
    narrator: dict[int, int] = {}
    #: Characters the Editor added while balancing (C-PROM-6, C-EDITOR-1).
    added_by_editor: tuple[int, ...] = ()
    target: int = 0
    hero_vp: int = 0
    opponent_vp: int = 0
    page: int = 0
    claims: tuple[Claim, ...] = ()
    #: Overdrawn Drives still to roll for: (character, drive), in order (C-DEBT-2).
    overdrawn: tuple[tuple[int, str], ...] = ()
    turn: int = 0
    #: Characters that have had their action in the current turn.
    acted: tuple[int, ...] = ()
    action: Action | None = None
    #: Whether anything has been done in this page yet (C-SCENE-2).
    fresh: bool = True
    #: The resolution waiting for Story Tokens to be given (C-RES-3), if any.
    resolving: Resolving | None = None

    def present(self) -> tuple[int, ...]:
        """C-PROM-4: the characters with Prominence at least 1, by id."""
        return tuple(sorted(c for c, p in self.prominence.items() if p >= 1))

    def total(self, faction: Faction) -> int:
        return sum(p for c, p in self.prominence.items() if self.faction.get(c) == faction)

    def claim_of(self, character: int) -> Claim | None:
        return next((c for c in self.claims if c.character == character), None)

    def claim_on(self, complication: int) -> Claim | None:
        return next((c for c in self.claims if c.complication == complication), None)


class Story(Frozen, frozen=True):
    number: int
    editor: int
    #: C-VP-4: the story's Victory Total.
    victory_total: int
    hero_vp: int = 0
    opponent_vp: int = 0
    scenes: int = 0


class CampaignState(Frozen, frozen=True):
    """The whole campaign, as folded from its events."""

    created: bool = False
    name: str = ""
    edition: str = "capees"
    rules_version: str = ""
    players: tuple[Player, ...] = ()
    characters: dict[int, Character] = {}
    complications: dict[int, Complication] = {}
    story: Story | None = None
    scene: Scene | None = None
    stories_played: int = 0
    scenes_played: int = 0
    next_character: int = 1
    next_complication: int = 1
    next_inspiration: int = 1
    closed: bool = False

    def player(self, seat: int) -> Player:
        return self.players[seat - 1]

    @property
    def editor(self) -> int | None:
        return self.story.editor if self.story else None

    def order(self) -> tuple[int, ...]:
        """C-TABLE-2: the seats from the Editor's, clockwise (from seat 1 with no story)."""
        n = len(self.players)
        start = self.editor or 1
        return tuple((start - 1 + i) % n + 1 for i in range(n))

    def next_seat(self, seat: int) -> int:
        return seat % len(self.players) + 1
