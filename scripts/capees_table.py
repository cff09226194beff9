"""A CAPEES! table played through the rules, and the cast of 004's own example.

Seats: 1 the Editor, 2 Zip's player, 3 Alice (Night Maiden), 4 Captain Liberty's player, 5 Joe
(Silverstar). :class:`Table` plays commands through the edition as the application would,
drawing dice from a list; :meth:`Table.given` folds events straight in, for a position the
text describes. Shared by the rules tests (``tests/rules_capees``) and the random play
(``scripts/liveness_capees.py``, ``scripts/playtest --edition capees``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from domain.capees import EDITION
from domain.capees import commands as c
from domain.capees.model import CampaignState
from domain.edition import fold

EDITOR, ZIPS, ALICE, CAPS, JOE = 1, 2, 3, 4, 5
SEATS = ("Editor", "Zip's player", "Alice", "Captain Liberty's player", "Joe")


def ladder(names: Sequence[str], kind: str, supers: Iterable[str] = ()) -> list[c.AbilitySpec]:
    marked = set(supers)
    return [c.AbilitySpec(name=n, type=kind, rating=i + 1, super=n in marked)  # type: ignore[arg-type]
            for i, n in enumerate(names)]


def sheet(name: str, powers: Sequence[str] = (), attitudes: Sequence[str] = (),
          tropes: Sequence[str] = (), supers: Iterable[str] = (), kind: str = "power"
          ) -> tuple[c.AbilitySpec, ...]:
    """Powers (or Skills) 1-3, Attitudes 1-4, Tropes 1-5, named where given."""
    p = list(powers) + [f"{name} {kind} {i}" for i in range(len(powers) + 1, 4)]
    a = list(attitudes) + [f"{name} attitude {i}" for i in range(len(attitudes) + 1, 5)]
    t = list(tropes) + [f"{name} trope {i}" for i in range(len(tropes) + 1, 6)]
    return tuple(ladder(p, kind) + ladder(a, "attitude") + ladder(t, "trope", supers))


def npc_drives(**named: int) -> dict[str, int]:
    """Five Drives of a non-hero summing to 9 (C-NPC-2), some named with their strength."""
    others = [k for k in ("Greed", "Fear", "Loyalty", "Rage", "Need") if k not in named]
    others = others[:5 - len(named)]
    rest = 9 - sum(named.values())
    drives = dict(named)
    for i, k in enumerate(others):
        drives[k] = rest // len(others) + (1 if i < rest % len(others) else 0)
    return drives


class Table:
    """Plays commands through the rules of edition ``capees`` as the application would
    (``decide``, then ``fold``), keeping the events, drawing dice from a list."""

    def __init__(self, players: Sequence[str] = SEATS, dice: Iterable[int] = ()) -> None:
        self.events: list[Any] = []
        self.state: CampaignState = EDITION.initial_state()
        self.dice = list(dice)
        self.ids: dict[str, int] = {}
        self.do(c.CreateCampaign(name="Test"))
        for name in players:
            self.do(c.SeatPlayer(name=name))

    def roll(self, *values: int) -> Table:
        self.dice.extend(values)
        return self

    def _draw(self) -> int:
        if not self.dice:
            raise AssertionError("the test rolled more dice than it set up")
        return self.dice.pop(0)

    def do(self, command: Any) -> tuple[Any, ...]:
        command = EDITION.with_dice(command, self._draw)
        events = EDITION.decide(self.state, command)
        self.events.extend(events)
        self.state = fold(EDITION, events, self.state)
        return events

    def __call__(self, *commands: Any) -> Table:
        for command in commands:
            self.do(command)
        return self

    def given(self, *events: Any) -> Table:
        """Events of earlier play, folded straight in."""
        self.events.extend(events)
        self.state = fold(EDITION, events, self.state)
        return self

    def new(self, seat: int, name: str, **kw: Any) -> int:
        self.do(c.CreateCharacter(seat=seat, name=name, **kw))
        self.ids[name] = self.state.next_character - 1
        return self.ids[name]

    def npc(self, name: str, seat: int = EDITOR, drives: dict[str, int] | None = None,
            **abilities: Any) -> int:
        """A non-hero with a full sheet (C-NPC-2), Skills 1-3."""
        return self.new(seat, name, drives=drives or npc_drives(),
                        abilities=sheet(name, kind="skill", **abilities))

    def __getitem__(self, name: str) -> int:
        return self.ids[name]

    def complication(self, name: str) -> int:
        return next(x.id for x in self.state.complications.values() if x.name == name)


HEROES = {
    "Zip": dict(seat=ZIPS, drives={"Justice": 2, "Truth": 2, "Love": 1, "Hope": 2, "Duty": 2},
                exemplars={"Justice": "Officer Kelly", "Duty": "Mayor Grant",
                           "Hope": "Aunt Bea"},
                abilities=dict(powers=("Zip power 1", "Zip power 2", "Super-speed"),
                               tropes=("Zip trope 1", "Mundane Tasks done Super-fast",
                                       "Zip trope 3", "Desperate Effort"),
                               supers=("Mundane Tasks done Super-fast",))),
    "Night Maiden": dict(
        seat=ALICE, drives={"Justice": 2, "Truth": 2, "Love": 2, "Hope": 1, "Duty": 2},
        exemplars={"Love": "Supreme", "Truth": "Officer Kelly", "Hope": "Sister Grace"},
        abilities=dict(tropes=("Night Maiden trope 1", "Glare venomously"),
                       supers=("Glare venomously",))),
    "Captain Liberty": dict(
        seat=CAPS, drives={"Justice": 2, "Truth": 2, "Love": 1, "Hope": 1, "Duty": 3},
        exemplars={"Truth": "Black Jack", "Love": "Polly Trueheart", "Duty": "Mayor Grant"},
        abilities=dict(attitudes=("Captain attitude 1", "Team-builder"))),
    "Silverstar": dict(
        seat=JOE, drives={"Justice": 1, "Truth": 3, "Love": 2, "Hope": 2, "Duty": 1},
        exemplars={"Truth": "Black Jack", "Love": "Supreme", "Duty": "Becky Tesla"},
        abilities=dict(
            powers=("Built-in BIG GUNS", "High-Tech Sensors", "Super Strength"),
            attitudes=("Confused about humans", "Teenage Angst", 'Cold "Terminator" Mode',
                       "Naive Optimism"),
            tropes=("Feats of computer calculation", "Silverstar trope 2",
                    "Silverstar trope 3", "Silverstar trope 4", "Massive Property Damage"))),
}


def hero(t: Table, name: str, **changes: Any) -> int:
    spec = {**HEROES[name], **changes}
    exemplars = {d: t[n] for d, n in spec["exemplars"].items()}
    return t.new(spec["seat"], name, hero=True, drives=spec["drives"], exemplars=exemplars,
                 abilities=sheet(name, **spec["abilities"]))


def the_cast(t: Table) -> Table:
    """004's cast: the Exemplars (some by name only), the opponents, the four heroes."""
    for name in ("Supreme", "Becky Tesla", "Officer Kelly", "Mayor Grant", "Aunt Bea",
                 "Sister Grace"):
        t.new(EDITOR, name)
    t.npc("Black Jack")
    t.npc("Polly Trueheart")
    t.npc("the robbers")
    t.npc("the driver", drives=npc_drives(Need=1))
    t.npc("Chief Mannelli", attitudes=("Calm", "Angry"))
    t.npc("the arch-villain", drives=npc_drives(Despair=3))
    t.npc("Minions")
    for name in HEROES:
        hero(t, name)
    return t
