"""The analytics read model: facts drawn from every event, and the figures made of them.

The projection keeps one table of *facts* (``capes_facts``): what each event says about dice,
Story Tokens, Debt, conflicts, abilities and pace, with the campaign, position, time, acting
seat, scene and page. Every game event also leaves an ``event`` fact (for pace). An ``Undone``
or ``Rewound`` event flags the facts of the stretch it reverts (``reverted = 1``) in the same
transaction: the figures count only facts still in effect, and say how many were reverted.

The figures (:class:`Analytics`) are computed from the facts when asked, per campaign or across
every campaign (then without seats, names or per-page series: only aggregate figures).

Facts (kind / label):

- ``event`` / the event type: one per game event.
- ``player`` / name: a seat taken.
- ``roll`` / ``ability`` | ``reaction`` | ``overdrawn``: a die rolled (value: the roll).
- ``ability`` / category: an ability used (value: its rating; data: super, reaction).
- ``token`` / ``start`` | ``choose`` | ``claim`` | ``turn`` | ``conflict`` | ``gift`` |
  ``gloat``: Story Tokens moving (value: how many; data: from and to, None for the table).
- ``debt`` / ``gained`` | ``staked`` | ``returned`` | ``spent``: Debt moving (data: the
  character and Drive).
- ``conflict`` / ``created`` | ``vetoed`` | ``resolved`` | ``deadlocked`` (value: the
  conflict's id; data: kind, winning side, Debt staked per side and Drive).
- ``gloat``; ``page`` / ``started`` | ``ended`` (ended: tokens and Debt per seat);
  ``scene`` / ``framed`` | ``ended``; ``record`` / ``undone`` | ``rewound``.

Edition ``capees`` leaves the same kinds where they apply (Story Tokens handed out as a scene
starts are ``start``, Prominence bought is ``prominence``, Complications are counted as
conflicts of kind ``complication``) and one more:

- ``vp`` / ``hero`` | ``opponent``: a Complication resolved for that faction (value: its
  Victory Points; data: the Complication, the Bonus), which makes the Victory Points over time.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any
from uuid import UUID

import msgspec

from domain.capees import events as ce
from domain.capes import events as e
from domain.record.events import Rewound, Undone

from .model import Change, ReadModel
from .stats import chi_square
from .views import Op, PostgresView, SQLiteView

if TYPE_CHECKING:
    from application.aggregate import Campaign

NAME = "analytics"
TABLE = "capes_facts"
DDL = (
    f"CREATE TABLE IF NOT EXISTS {{schema}}{TABLE} (campaign_id TEXT NOT NULL, "
    "version INTEGER NOT NULL, n INTEGER NOT NULL, position BIGINT NOT NULL, "
    "at TEXT NOT NULL, kind TEXT NOT NULL, label TEXT NOT NULL, seat INTEGER, scene INTEGER, "
    "page INTEGER, value INTEGER, data TEXT, reverted INTEGER NOT NULL DEFAULT 0, "
    "PRIMARY KEY (campaign_id, version, n))",
    f"CREATE INDEX IF NOT EXISTS capes_facts_kind ON {{schema}}{TABLE} (kind, reverted)",
)
INSERT = (
    f"INSERT INTO {{schema}}{TABLE} (campaign_id, version, n, position, at, kind, label, seat, "
    "scene, page, value, data, reverted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)"
)
REVERT = (
    f"UPDATE {{schema}}{TABLE} SET reverted = 1 WHERE campaign_id = ? "
    "AND version BETWEEN ? AND ? AND reverted = 0"
)
FACES = 6

#: (kind, label, seat, value, data) of one fact.
Fact = tuple[str, str, int | None, int | None, dict[str, Any] | None]
_encode = msgspec.json.Encoder().encode


# -- facts -----------------------------------------------------------------------------------


def _seat_of(campaign: Campaign | None, character: int) -> int | None:
    """The seat playing ``character`` now (between scenes: the seat that made it)."""
    if campaign is None:
        return None
    state = campaign.state
    scene = state.scene
    # Who plays a character in a scene: ``cast`` (capes) or ``narrator`` (capees).
    cast = getattr(scene, "cast", None) or getattr(scene, "narrator", None) or {}
    if character in cast:
        seat: int = cast[character]
        return seat
    who = state.characters.get(character)
    return who.created_by if who is not None else None


def _kind_of(change: Change, conflict: int) -> str:
    for campaign in (change.before, change.after):
        if campaign is not None and conflict in campaign.state.conflicts:
            kind: str = campaign.state.conflicts[conflict].kind
            return kind
    return "unknown"


def _stakes(change: Change, conflict: int) -> list[list[Any]]:
    """[side, Drive, amount] of every stake on the conflict just before it ended."""
    before = change.before
    if before is None or conflict not in before.state.conflicts:
        return []
    return [[side, stake.drive, stake.amount]
            for side, s in enumerate(before.state.conflicts[conflict].sides)
            for die in s.dice for stake in die.stakes]


def _balances(campaign: Campaign | None) -> dict[str, dict[int, int]]:
    """Story Tokens of each seat, and the Debt (unstaked and staked) of the characters each
    seat made."""
    if campaign is None:
        return {"tokens": {}, "debt": {}}
    state = campaign.state
    debt: Counter[int] = Counter()
    for ch in state.characters.values():
        debt[ch.created_by] += sum(d.debt for d in ch.drives)
    # Stakes sit under dice (capes) or under sides (capees).
    tables = getattr(state, "conflicts", None) or getattr(state, "complications", {})
    for c in tables.values():
        for side in c.sides:
            stakes = [st for die in side.dice for st in getattr(die, "stakes", ())]
            for stake in (*stakes, *getattr(side, "stakes", ())):
                maker = state.characters.get(stake.character)
                if maker is not None:
                    debt[maker.created_by] += stake.amount
    return {"tokens": {p.seat: p.tokens for p in state.players},
            "debt": {p.seat: debt[p.seat] for p in state.players}}


def _cost(label: str, seat: int, cost: int) -> list[Fact]:
    return [("token", label, seat, cost, {"from": seat, "to": None})] if cost else []


def _returned(change: Change, returned: Iterable[e.DebtReturned]) -> list[Fact]:
    return [("debt", "returned", _seat_of(change.before, r.character), r.amount,
             {"character": r.character, "drive": r.drive}) for r in returned]


def _player(ev: e.PlayerSeated, change: Change) -> list[Fact]:
    facts: list[Fact] = [("player", ev.name, ev.seat, None, None)]
    if ev.tokens:
        facts.append(("token", "start", ev.seat, ev.tokens, {"from": None, "to": ev.seat}))
    return facts


def _created(ev: e.ConflictCreated, change: Change) -> list[Fact]:
    return [*_cost("conflict", ev.creator, ev.cost),
            ("conflict", "created", ev.creator, ev.conflict, {"kind": ev.kind})]


def _resolved(ev: e.ConflictResolved, change: Change) -> list[Fact]:
    facts: list[Fact] = [("token", "gift", g.giver, g.count,
                          {"from": g.giver, "to": g.recipient}) for g in ev.tokens if g.count]
    facts += _returned(change, ev.debt_returned)
    facts += [("debt", "spent", _seat_of(change.before, s.character), s.amount,
               {"character": s.character, "drive": s.drive}) for s in ev.debt_spent]
    facts.append(("conflict", "resolved", ev.seat, ev.conflict, {
        "kind": _kind_of(change, ev.conflict), "side": ev.side,
        "goal_failed": bool(ev.goal_failed_by), "stakes": _stakes(change, ev.conflict)}))
    return facts


def _deadlocked(ev: e.ConflictDeadlocked, change: Change) -> list[Fact]:
    return [*_returned(change, ev.debt_returned),
            ("conflict", "deadlocked", ev.seat, ev.conflict, {
                "kind": _kind_of(change, ev.conflict), "stakes": _stakes(change, ev.conflict)})]


def _gloated(ev: e.Gloated, change: Change) -> list[Fact]:
    return [("gloat", "", ev.seat, ev.tokens, {"conflict": ev.conflict, "dice": len(ev.dice)}),
            ("token", "gloat", ev.seat, ev.tokens, {"from": None, "to": ev.seat})]


def _ability(ev: e.AbilityUsed, change: Change) -> list[Fact]:
    category = "unknown"
    for campaign in (change.after, change.before):
        who = campaign.state.characters.get(ev.character) if campaign is not None else None
        ability = who.ability(ev.ability) if who is not None else None
        if ability is not None:
            category = ability.category
            break
    return [("ability", category, _seat_of(change.after, ev.character), ev.rating,
             {"super": ev.super, "reaction": ev.reaction, "ability": ev.ability,
              "character": ev.character})]


def _debt(label: str) -> Callable[[Any, Change], list[Fact]]:
    def facts(ev: Any, change: Change) -> list[Fact]:
        return [("debt", label, _seat_of(change.after, ev.character), ev.amount,
                 {"character": ev.character, "drive": ev.drive})]
    return facts


_FACTS: dict[type[Any], Callable[[Any, Change], list[Fact]]] = {
    e.PlayerSeated: _player,
    e.CharacterChosen: lambda ev, ch: _cost("choose", ev.seat, ev.cost),
    e.ClaimMade: lambda ev, ch: _cost("claim", ev.seat, ev.cost),
    e.TurnStarted: lambda ev, ch: _cost("turn", ev.seat, ev.cost),
    e.ConflictCreated: _created,
    e.ConflictVetoed: lambda ev, ch: [("conflict", "vetoed", ev.seat, ev.conflict,
                                       {"kind": _kind_of(ch, ev.conflict)})],
    e.ConflictResolved: _resolved,
    e.ConflictDeadlocked: _deadlocked,
    e.Gloated: _gloated,
    # A fork's players were seated in its source: name them from the state it starts from.
    e.CampaignForked: lambda ev, ch: [("player", p.name, p.seat, None, None)
                                      for p in ev.state.players],
    e.DieRolled: lambda ev, ch: [("roll", "reaction" if ev.reaction else "ability", ev.seat,
                                  ev.rolled, {"conflict": ev.conflict, "die": ev.die,
                                              "character": ev.character})],
    e.OverdrawnDieRolled: lambda ev, ch: [("roll", "overdrawn",
                                           _seat_of(ch.before, ev.character), ev.rolled,
                                           {"conflict": ev.conflict, "die": ev.die,
                                            "character": ev.character, "kept": ev.kept})],
    e.AbilityUsed: _ability,
    e.DebtGained: _debt("gained"),
    e.DebtStaked: _debt("staked"),
    e.PageStarted: lambda ev, ch: [("page", "started", ev.starter, ev.page, None)],
    e.PageEnded: lambda ev, ch: [("page", "ended", None, ev.page, _balances(ch.after))],
    e.SceneFramed: lambda ev, ch: [("scene", "framed", ev.framer, ev.scene, None)],
    e.SceneEnded: lambda ev, ch: [("scene", "ended", None, ev.scene, None)],
    Undone: lambda ev, ch: [("record", "undone", ev.seat, ev.last - ev.first + 1, None)],
    Rewound: lambda ev, ch: [("record", "rewound", None, ev.last - ev.first + 1,
                              {"dispute": ev.dispute})],
}


def _capees_resolved(ev: ce.ComplicationResolved, change: Change) -> list[Fact]:
    facts: list[Fact] = [("token", "gift", g.giver, g.count,
                          {"from": g.giver, "to": g.recipient}) for g in ev.gifts if g.count]
    facts += [("debt", "returned", _seat_of(change.before, r.character), r.amount,
               {"character": r.character, "drive": r.drive}) for r in ev.returned]
    facts += [("debt", "spent", _seat_of(change.before, s.character), s.amount,
               {"character": s.character, "drive": s.drive}) for s in ev.spent]
    stakes = []
    before = change.before
    if before is not None and ev.complication in before.state.complications:
        sides = before.state.complications[ev.complication].sides
        stakes = [[i, st.drive, st.amount] for i, s in enumerate(sides) for st in s.stakes]
    winner = next((i for i, s in enumerate(sides) if s.faction == ev.faction), 0) \
        if stakes else 0
    facts.append(("conflict", "resolved", ev.seat, ev.complication, {
        "kind": "complication", "side": winner, "goal_failed": False, "stakes": stakes}))
    facts.append(("vp", ev.faction, ev.seat, ev.vp,
                  {"complication": ev.complication, "bonus": ev.bonus}))
    return facts


def _capees_ability(ev: ce.AbilityUsed, change: Change) -> list[Fact]:
    kind = "unknown"
    for campaign in (change.after, change.before):
        who = campaign.state.characters.get(ev.character) if campaign is not None else None
        ability = who.ability(ev.ability) if who is not None else None
        if ability is not None:
            kind = ability.type
            break
    return [("ability", kind, _seat_of(change.after, ev.character), ev.rating,
             {"super": ev.super, "reaction": ev.reaction, "ability": ev.ability,
              "character": ev.character})]


_FACTS.update({
    ce.PlayerSeated: lambda ev, ch: [("player", ev.name, ev.seat, None, None)],
    ce.SceneStarted: lambda ev, ch: [
        ("scene", "framed", ch.after.state.editor if ch.after else None, ev.scene, None),
        *(("token", "start", g.seat, g.count, {"from": None, "to": g.seat})
          for g in ev.tokens)],
    ce.ProminenceBought: lambda ev, ch: _cost("prominence", ev.seat, ev.cost),
    ce.ComplicationCreated: lambda ev, ch: [("conflict", "created", ev.seat, ev.complication,
                                             {"kind": "complication"})],
    ce.ComplicationResolved: _capees_resolved,
    ce.ComplicationDiscarded: lambda ev, ch: [
        ("debt", "returned", _seat_of(ch.before, r.character), r.amount,
         {"character": r.character, "drive": r.drive}) for r in ev.returned],
    ce.DieRolled: lambda ev, ch: [("roll", "reaction" if ev.reaction else "ability", ev.seat,
                                   ev.rolled, {"conflict": ev.complication, "die": ev.die,
                                               "character": ev.character})],
    ce.OverdrawnRolled: lambda ev, ch: [("roll", "overdrawn",
                                         _seat_of(ch.before, ev.character), ev.rolled,
                                         {"conflict": ev.complication, "die": ev.die,
                                          "character": ev.character, "kept": ev.kept})],
    ce.AbilityUsed: _capees_ability,
    ce.DebtGained: _debt("gained"),
    ce.DebtStaked: _debt("staked"),
    ce.PageStarted: lambda ev, ch: [("page", "started", ev.seat, ev.page, None)],
    ce.PageEnded: lambda ev, ch: [("page", "ended", None, ev.page, _balances(ch.after))],
    ce.SceneEnded: lambda ev, ch: [("scene", "ended", None, ev.scene, None)],
})
_GAME_EVENTS = frozenset(e.EVENT_TYPES) | frozenset(ce.EVENT_TYPES)


def facts_of(change: Change) -> list[Fact]:
    """What ``change`` says, as facts."""
    event = change.record.event
    facts: list[Fact] = []
    if type(event) in _GAME_EVENTS:
        facts.append(("event", type(event).__name__, change.record.seat, None, None))
    make = _FACTS.get(type(event))
    if make is not None:
        facts.extend(make(event, change))
    return facts


def _where(change: Change) -> tuple[int | None, int | None]:
    """The scene and page the event happened in (the one it ended, for an ending)."""
    scene = page = None
    for campaign in (change.after, change.before):
        if campaign is None:
            continue
        state = campaign.state
        if scene is None and getattr(state, "scene", None) is not None:
            scene = state.scene.number
        if page is None and getattr(state, "page", None) is not None:
            page = state.page.number
        elif page is None and scene is not None and getattr(state.scene, "page", None):
            page = state.scene.page  # capees: the page lives in the scene
    return scene, page


# -- the read model --------------------------------------------------------------------------


class AnalyticsSQLite(SQLiteView):
    name = NAME
    ddl = DDL
    tables = (TABLE,)


class AnalyticsPostgres(PostgresView):
    name = NAME
    ddl = DDL
    tables = (TABLE,)


class AnalyticsModel(ReadModel):
    name = NAME
    views = (AnalyticsSQLite, AnalyticsPostgres)

    def operations(self, changes: Sequence[Change]) -> list[Op]:
        ops: list[Op] = []
        rows: list[tuple[Any, ...]] = []
        for change in changes:
            r = change.record
            if change.after is None:
                continue
            campaign, at = change.campaign, change.at
            scene, page = _where(change)
            for n, (kind, label, seat, value, data) in enumerate(facts_of(change)):
                rows.append((campaign, r.originator_version, n, change.position, at, kind,
                             label, seat, scene, page, value,
                             None if data is None else _encode(data).decode()))
            if isinstance(r.event, (Undone, Rewound)):
                ops.append((INSERT, rows))
                rows = []
                ops.append((REVERT, [(campaign, r.event.first, r.event.last)]))
        ops.append((INSERT, rows))
        return ops

    def analytics(self, campaign_id: UUID | None = None) -> Analytics | None:
        """The figures of one campaign (None if it has no facts), or of all campaigns."""
        where = ""
        params: tuple[str, ...] = ()
        if campaign_id is not None:
            where, params = " AND campaign_id = ?", (str(campaign_id),)
        facts = self.store.read(
            "SELECT campaign_id, version, at, kind, label, seat, scene, value, data "
            f"FROM {{schema}}{TABLE} WHERE reverted = 0 AND kind <> 'event'{where} "
            "ORDER BY campaign_id, version, n", params)
        per_scene = self.store.read(
            f"SELECT campaign_id, scene, COUNT(*) FROM {{schema}}{TABLE} "
            f"WHERE reverted = 0 AND kind = 'event'{where} GROUP BY campaign_id, scene", params)
        reverted = self.store.read(
            f"SELECT kind, COUNT(*) FROM {{schema}}{TABLE} WHERE reverted = 1{where} "
            "GROUP BY kind", params)
        if campaign_id is not None and not facts and not per_scene:
            return None
        return analyse(facts, per_scene, reverted, campaign_id, self.store.position())


# -- the figures -----------------------------------------------------------------------------


class Distribution(msgspec.Struct, frozen=True, kw_only=True):
    """Rolls of a d6: how often each face came up, and Pearson's chi-square against a fair
    die (5 degrees of freedom; a small p-value says the die looks unfair)."""

    #: Counts of faces 1..6.
    faces: tuple[int, ...]
    rolls: int
    mean: float | None
    chi_square: float | None
    p_value: float | None


def distribution(counts: Sequence[int]) -> Distribution:
    rolls = sum(counts)
    test = chi_square(counts)
    return Distribution(
        faces=tuple(counts), rolls=rolls,
        mean=sum(face * n for face, n in enumerate(counts, 1)) / rolls if rolls else None,
        chi_square=test[0] if test else None, p_value=test[1] if test else None,
    )


class PlayerDice(msgspec.Struct, frozen=True, kw_only=True):
    seat: int
    name: str
    dice: Distribution


class Dice(msgspec.Struct, frozen=True, kw_only=True):
    overall: Distribution
    #: By what rolled the die: an ability, a reaction, an Overdrawn Drive.
    by_source: dict[str, Distribution]
    #: Per seat (one campaign only).
    by_player: tuple[PlayerDice, ...]
    #: Rolls reverted by undos and upheld disputes (not counted above).
    reverted: int


class Flow(msgspec.Struct, frozen=True, kw_only=True):
    """Story Tokens moving: from a seat (None: the table, for starting tokens and gloats) to a
    seat (None: the table, for costs)."""

    kind: str
    source: int | None
    target: int | None
    amount: int
    #: The page of the campaign it happened on (1 = its first page; 0 = before any page).
    page: int | None = None


class Balance(msgspec.Struct, frozen=True, kw_only=True):
    """Each seat's Story Tokens and its characters' Debt when a page ended."""

    page: int
    scene: int | None
    at: datetime
    tokens: dict[int, int]
    debt: dict[int, int]


class Tokens(msgspec.Struct, frozen=True, kw_only=True):
    #: Totals by kind.
    by_kind: dict[str, int]
    #: Totals by kind, from and to (across campaigns: by kind only).
    totals: tuple[Flow, ...]
    #: By page, kind, from and to: the flow over time (one campaign only).
    flows: tuple[Flow, ...]
    #: After every page (one campaign only).
    balances: tuple[Balance, ...]


class Debt(msgspec.Struct, frozen=True, kw_only=True):
    #: gained, staked, returned (to a Drive, doubled on losing sides), spent (on a winning
    #: side, gone).
    by_kind: dict[str, int]
    by_drive: dict[str, dict[str, int]]
    #: By the seat playing the character (one campaign only).
    by_seat: dict[int, dict[str, int]]


class KindOutcomes(msgspec.Struct, frozen=True, kw_only=True):
    created: int = 0
    vetoed: int = 0
    resolved: int = 0
    deadlocked: int = 0
    #: Resolved with a character's Goal failed (R-CONF-5).
    goals_failed: int = 0
    #: Resolutions by the winning side's index.
    won_by_side: dict[int, int] = {}


class DriveOutcomes(msgspec.Struct, frozen=True, kw_only=True):
    """Conflicts that ended with Debt from this Drive staked on them."""

    conflicts: int = 0
    #: Resolved with some of it on the winning side.
    won: int = 0
    #: Resolved with some of it on a losing side.
    lost: int = 0
    deadlocked: int = 0
    debt: int = 0


class Conflicts(msgspec.Struct, frozen=True, kw_only=True):
    by_kind: dict[str, KindOutcomes]
    by_drive: dict[str, DriveOutcomes]
    #: Pages a conflict was open, from the one it was created on to the one it ended on:
    #: how many conflicts took that many.
    pages_to_resolve: dict[int, int]
    mean_pages_to_resolve: float | None
    gloats: int
    gloat_tokens: int
    deadlocks: int


class Abilities(msgspec.Struct, frozen=True, kw_only=True):
    uses: int
    by_category: dict[str, int]
    by_rating: dict[int, int]
    by_category_and_rating: dict[str, dict[int, int]]
    super: int
    reactions: int


class ScenePace(msgspec.Struct, frozen=True, kw_only=True):
    scene: int
    events: int
    pages: int
    started: datetime | None
    ended: datetime | None


class Pace(msgspec.Struct, frozen=True, kw_only=True):
    scenes: int
    events_per_scene: float | None
    pages_per_scene: float | None
    #: Events outside any scene (seating, characters, framing).
    events_between_scenes: int
    #: Each scene (one campaign only).
    by_scene: tuple[ScenePace, ...]


class VictoryPoint(msgspec.Struct, frozen=True, kw_only=True):
    """A Complication resolved (edition ``capees``), with the scene's totals after it."""

    scene: int | None
    #: The page of the campaign it happened on (1 = its first page).
    page: int
    at: datetime
    faction: str
    vp: int
    hero: int
    opponent: int


class VictoryPoints(msgspec.Struct, frozen=True, kw_only=True):
    """Victory Points won by each faction (edition ``capees``; empty for ``capes``)."""

    by_faction: dict[str, int]
    #: Every resolution with the scene's running totals (one campaign only).
    over_time: tuple[VictoryPoint, ...]


class Analytics(msgspec.Struct, frozen=True, kw_only=True):
    """Figures of one campaign, or of all (``campaign_id`` None: aggregate figures only)."""

    campaign_id: UUID | None
    campaigns: int
    #: The store position the read model is as of.
    position: int
    #: Game events in effect (reverted ones are not counted anywhere but below).
    events: int
    reverted_events: int
    undos: int
    rewinds: int
    dice: Dice
    tokens: Tokens
    debt: Debt
    conflicts: Conflicts
    abilities: Abilities
    pace: Pace
    victory_points: VictoryPoints = msgspec.field(
        default_factory=lambda: VictoryPoints(by_faction={}, over_time=()))


def _mean(total: int, count: int) -> float | None:
    return total / count if count else None


def analyse(facts: Sequence[tuple[Any, ...]], per_scene: Sequence[tuple[Any, ...]],
            reverted: Sequence[tuple[Any, ...]], campaign_id: UUID | None,
            position: int) -> Analytics:
    """The figures of the facts in effect (sorted by campaign and position), their event counts
    per (campaign, scene) and the counts of reverted facts by kind."""
    one = campaign_id is not None
    names: dict[int, str] = {}
    faces: Counter[int] = Counter()
    seat_faces: dict[int, Counter[int]] = defaultdict(Counter)
    source_faces: dict[str, Counter[int]] = defaultdict(Counter)
    token_kind: Counter[str] = Counter()
    totals: Counter[tuple[str, int | None, int | None]] = Counter()
    flows: Counter[tuple[int, str, int | None, int | None]] = Counter()
    balances: list[Balance] = []
    debt_kind: Counter[str] = Counter()
    debt_drive: dict[str, Counter[str]] = defaultdict(Counter)
    debt_seat: dict[int, Counter[str]] = defaultdict(Counter)
    kinds: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"created": 0, "vetoed": 0, "resolved": 0, "deadlocked": 0, "goals_failed": 0,
                 "won_by_side": Counter()})
    drives: dict[str, Counter[str]] = defaultdict(Counter)
    pages_to_resolve: Counter[int] = Counter()
    gloats = gloat_tokens = deadlocks = 0
    ability_category: Counter[str] = Counter()
    ability_rating: Counter[int] = Counter()
    ability_both: dict[str, Counter[int]] = defaultdict(Counter)
    supers = reactions = undos = rewinds = 0
    scenes: dict[tuple[str, int], dict[str, Any]] = {}
    campaigns: set[str] = set()
    # Per campaign, as the facts go by in order:
    current = ""
    page_index = 0
    page_starts: list[int] = []
    opened: dict[int, int] = {}
    vp_faction: Counter[str] = Counter()
    vp_over_time: list[VictoryPoint] = []
    running: Counter[str] = Counter()

    for campaign, version, at, kind, label, seat, scene, value, data in facts:
        if campaign != current:
            current, page_index, page_starts, opened = campaign, 0, [], {}
            running = Counter()
            campaigns.add(campaign)
        info: Any = msgspec.json.decode(data) if data else None
        if kind == "player":
            names[seat] = label
        elif kind == "roll":
            faces[value] += 1
            seat_faces[seat][value] += 1
            source_faces[label][value] += 1
        elif kind == "token":
            token_kind[label] += value
            source, target = info["from"], info["to"]
            totals[(label, source, target) if one else (label, None, None)] += value
            flows[(page_index, label, source, target)] += value
        elif kind == "debt":
            debt_kind[label] += value
            debt_drive[info["drive"]][label] += value
            if seat is not None:
                debt_seat[seat][label] += value
        elif kind == "conflict":
            stats = kinds[info["kind"]]
            stats[label] += 1
            if label == "created":
                opened[value] = version
            elif label in ("resolved", "deadlocked"):
                if label == "resolved":
                    stats["won_by_side"][info["side"]] += 1
                    stats["goals_failed"] += bool(info["goal_failed"])
                else:
                    deadlocks += 1
                if value in opened:
                    start = opened.pop(value)
                    pages_to_resolve[1 + sum(start < p <= version for p in page_starts)] += 1
                _staked_drives(drives, info, label)
        elif kind == "gloat":
            gloats += 1
            gloat_tokens += value
        elif kind == "ability":
            ability_category[label] += 1
            ability_rating[value] += 1
            ability_both[label][value] += 1
            supers += bool(info["super"])
            reactions += bool(info["reaction"])
        elif kind == "page":
            if label == "started":
                page_index += 1
                page_starts.append(version)
                if scene is not None:
                    _scene(scenes, campaign, scene)["pages"] += 1
            elif one:
                balances.append(Balance(page=page_index, scene=scene,
                                        at=datetime.fromisoformat(at),
                                        tokens={int(k): v for k, v in info["tokens"].items()},
                                        debt={int(k): v for k, v in info["debt"].items()}))
        elif kind == "scene":
            _scene(scenes, campaign, value)["started" if label == "framed" else "ended"] = at
        elif kind == "record":
            undos += label == "undone"
            rewinds += label == "rewound"
        elif kind == "vp":
            vp_faction[label] += value
            running[label] += value
            if one:
                vp_over_time.append(VictoryPoint(
                    scene=scene, page=page_index, at=datetime.fromisoformat(at), faction=label,
                    vp=value, hero=running["hero"], opponent=running["opponent"]))
        if kind == "scene" and label == "ended":
            running = Counter()  # C-PROM-7: a scene's Victory Points end with it

    events = between = 0
    for campaign, scene, count in per_scene:
        campaigns.add(campaign)
        events += count
        if scene is None:
            between += count
        else:
            _scene(scenes, campaign, scene)["events"] += count
    reverted_counts = {kind: int(count) for kind, count in reverted}
    by_scene = tuple(
        ScenePace(scene=number, events=s["events"], pages=s["pages"],
                  started=datetime.fromisoformat(s["started"]) if s["started"] else None,
                  ended=datetime.fromisoformat(s["ended"]) if s["ended"] else None)
        for (_, number), s in sorted(scenes.items())
    )
    resolved_pages = sum(pages * n for pages, n in pages_to_resolve.items())
    return Analytics(
        campaign_id=campaign_id,
        campaigns=len(campaigns),
        position=position,
        events=events,
        reverted_events=reverted_counts.get("event", 0),
        undos=undos,
        rewinds=rewinds,
        dice=Dice(
            overall=distribution([faces[f] for f in range(1, FACES + 1)]),
            by_source={k: distribution([c[f] for f in range(1, FACES + 1)])
                       for k, c in sorted(source_faces.items())},
            by_player=tuple(
                PlayerDice(seat=seat, name=names.get(seat, ""),
                           dice=distribution([seat_faces[seat][f] for f in range(1, FACES + 1)]))
                for seat in sorted(set(names) | set(seat_faces)) if seat is not None
            ) if one else (),
            reverted=reverted_counts.get("roll", 0),
        ),
        tokens=Tokens(
            by_kind=dict(sorted(token_kind.items())),
            totals=tuple(Flow(kind=k, source=s, target=t, amount=n)
                         for (k, s, t), n in sorted(totals.items(), key=repr)),
            flows=tuple(Flow(kind=k, source=s, target=t, amount=n, page=p)
                        for (p, k, s, t), n in sorted(flows.items(), key=repr)) if one else (),
            balances=tuple(balances),
        ),
        debt=Debt(
            by_kind=dict(sorted(debt_kind.items())),
            by_drive={d: dict(sorted(c.items())) for d, c in sorted(debt_drive.items())},
            by_seat={s: dict(sorted(c.items())) for s, c in sorted(debt_seat.items())}
            if one else {},
        ),
        conflicts=Conflicts(
            by_kind={k: KindOutcomes(**{**v, "won_by_side": dict(sorted(v["won_by_side"].items()))})
                     for k, v in sorted(kinds.items())},
            by_drive={d: DriveOutcomes(**c) for d, c in sorted(drives.items())},
            pages_to_resolve=dict(sorted(pages_to_resolve.items())),
            mean_pages_to_resolve=_mean(resolved_pages, sum(pages_to_resolve.values())),
            gloats=gloats,
            gloat_tokens=gloat_tokens,
            deadlocks=deadlocks,
        ),
        abilities=Abilities(
            uses=sum(ability_category.values()),
            by_category=dict(sorted(ability_category.items())),
            by_rating=dict(sorted(ability_rating.items())),
            by_category_and_rating={k: dict(sorted(c.items()))
                                    for k, c in sorted(ability_both.items())},
            super=supers,
            reactions=reactions,
        ),
        pace=Pace(
            scenes=len(scenes),
            events_per_scene=_mean(sum(s.events for s in by_scene), len(by_scene)),
            pages_per_scene=_mean(sum(s.pages for s in by_scene), len(by_scene)),
            events_between_scenes=between,
            by_scene=by_scene if one else (),
        ),
        victory_points=VictoryPoints(by_faction=dict(sorted(vp_faction.items())),
                                     over_time=tuple(vp_over_time)),
    )


def _scene(scenes: dict[tuple[str, int], dict[str, Any]], campaign: str,
           number: int) -> dict[str, Any]:
    found = scenes.get((campaign, number))
    if found is None:
        found = scenes[(campaign, number)] = {"events": 0, "pages": 0, "started": None,
                                              "ended": None}
    return found


def _staked_drives(drives: dict[str, Counter[str]], info: dict[str, Any], label: str) -> None:
    """Count an ended conflict once for each Drive staked on it."""
    staked: dict[str, set[int]] = defaultdict(set)
    amounts: Counter[str] = Counter()
    for side, drive, amount in info["stakes"]:
        staked[drive].add(side)
        amounts[drive] += amount
    for drive, sides in staked.items():
        counts = drives[drive]
        counts["conflicts"] += 1
        counts["debt"] += amounts[drive]
        if label == "deadlocked":
            counts["deadlocked"] += 1
            continue
        winner = info["side"]
        counts["won"] += winner in sides
        counts["lost"] += bool(sides - {winner})
