"""Read views of a campaign's state: the board and each player's ledger.

Pure functions of the state, so the CLI, the HTTP queries and the projections all show the
same thing, and a view at any past version is the view of the state at that version.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from .characters import awaited, overdrawn
from .model import CampaignState, Character, Conflict, Phase
from .moves import can_veto, free_pairs, waiting_for
from .pages import claimable
from .resolution import deadlockable, pending
from .rolls import asked
from .staking import schism_dice, schism_sides


class View(msgspec.Struct, frozen=True, kw_only=True):
    """Base of read views."""


class DieView(View, frozen=True, kw_only=True):
    id: int
    value: int
    controller: int | None
    staked: int


class SideView(View, frozen=True, kw_only=True):
    index: int
    label: str
    total: int
    dice: tuple[DieView, ...]
    allies: tuple[int, ...]
    claimed_by: int | None


class ConflictView(View, frozen=True, kw_only=True):
    id: int
    kind: str
    text: str
    creator: int
    names: tuple[int, ...]
    controlling_side: int | None
    sides: tuple[SideView, ...]


class TurnView(View, frozen=True, kw_only=True):
    seat: int
    character: int
    bought: bool
    acted: bool
    #: The roll waiting for its accept/reject decision: (conflict, die, before, rolled).
    roll: tuple[int, int, int, int] | None
    #: The seat whose chance it is to React, while reactions are open.
    reacting: int | None
    #: R-ROLL-4: the seats of which one must complete the narration ("And Then").
    and_then: tuple[int, ...] | None
    #: While the chance to React is open (R-REACT-1): the die it is about, (conflict, die).
    #: A player asked to React was not told which die, nor so what rating it takes. Defaults
    #: to none, so boards stored before it existed still decode.
    reacting_to: tuple[int, int] | None = None


class ExemplarRequestView(View, frozen=True, kw_only=True):
    """A shared Exemplar one player asked for, waiting for the other (R-CHAR-6, R-X-CHAR-2):
    ``awaiting`` agrees by sending the same ``link_exemplar``."""

    asked_by: int
    #: The seat whose agreement is awaited; None when the link can no longer be made (the
    #: character was changed since: R-CHAR-8).
    awaiting: int | None
    character: int
    character_name: str
    exemplar: int
    exemplar_name: str
    drive: str


class Board(View, frozen=True, kw_only=True):
    name: str
    edition: str
    rules_version: str
    players: tuple[str, ...]
    scenes_played: int
    next_framer: int | None
    scene: int | None
    scene_text: str | None
    framer: int | None
    #: character id -> seat playing it this scene.
    cast: dict[int, int]
    page: int | None
    starter: int | None
    phase: Phase | None
    round: str | None
    turn: TurnView | None
    #: seat -> the commands it may use now to move the game on.
    waiting_for: dict[int, tuple[str, ...]]
    vetoable: tuple[int, ...]
    conflicts: tuple[ConflictView, ...]
    closed: bool
    #: Shared Exemplars asked for by one player and waiting for the other (R-X-CHAR-2). It
    #: defaults to none, so boards stored before it existed still decode.
    exemplar_requests: tuple[ExemplarRequestView, ...] = ()
    #: In the resolution phase, the Conflict its seat resolves or gloats on now (R-PAGE-7,
    #: R-RES-1): the only one ``resolve`` and ``gloat`` take. Defaults to none (older boards).
    resolving: int | None = None
    #: In the claiming phase, seat -> the Exemplar pairs whose Free Conflict it may add now
    #: (R-CHAR-6, R-PAGE-3): ``create_conflict`` with ``free_for`` one of them costs nothing.
    free_conflicts: dict[int, tuple[tuple[int, int], ...]] = {}
    #: In the claiming phase, seat -> the sides it may claim now, as (conflict, side)
    #: (R-PAGE-4, R-X-CLAIM-1): not a Conflict created this page, nor a side claimed already.
    claimable: dict[int, tuple[tuple[int, int], ...]] = {}
    #: The seats that have made this page's free Claim (R-PAGE-3): a further ``claim`` costs
    #: them a Story Token, which the table page shows. Defaults to none (older boards).
    free_claims_used: tuple[int, ...] = ()
    #: Conflict id -> the seats that may veto it now (R-CONF-3: an Event, anyone; a Goal, the
    #: players of the characters it names). Defaults to none (older boards).
    vetoers: dict[int, tuple[int, ...]] = {}
    #: While the turn's seat may make a Schism, Conflict id -> the dice its character may take
    #: (R-SCHISM-1: those it controls, not an original side's only die); the page offered every
    #: die of the side. Defaults to none (older boards).
    schism_dice: dict[int, tuple[int, ...]] = {}
    #: Likewise, Conflict id -> the sides a Schism may leave (R-SCHISM-1); the page offered
    #: every Conflict and side. Defaults to none (older boards).
    schism_sides: dict[int, tuple[int, ...]] = {}
    #: Likewise, Conflict id -> the sides whose uncontrolled die a Schism may split first
    #: (``split_uncontrolled``: R-SCHISM-1, R-SPLIT-1, R-STAKE-2: the character must be allied
    #: to the side); the page judged by the die's value alone. Defaults to none (older boards).
    schism_splits: dict[int, tuple[int, ...]] = {}
    #: The Conflicts any seat may declare Deadlocked now (R-DEAD-1, R-X-DEAD-2), by id: the
    #: only ones ``declare_deadlock`` takes. Defaults to none (older boards).
    deadlockable: tuple[int, ...] = ()


class DriveView(View, frozen=True, kw_only=True):
    name: str
    strength: int
    debt: int
    overdrawn: bool


class StakeView(View, frozen=True, kw_only=True):
    conflict: int
    die: int
    drive: str
    amount: int


class CharacterView(View, frozen=True, kw_only=True):
    id: int
    name: str
    played_by: int | None
    drives: tuple[DriveView, ...]
    staked: tuple[StakeView, ...]
    blocked: tuple[str, ...]


class InspirationView(View, frozen=True, kw_only=True):
    id: int
    value: int
    source: int


class Ledger(View, frozen=True, kw_only=True):
    seat: int
    name: str
    tokens: int
    inspirations: tuple[InspirationView, ...]
    characters: tuple[CharacterView, ...]


def conflict_view(c: Conflict) -> ConflictView:
    return ConflictView(
        id=c.id,
        kind=c.kind,
        text=c.text,
        creator=c.creator,
        names=c.names,
        controlling_side=c.controlling_side,
        sides=tuple(
            SideView(
                index=i,
                label=s.label,
                total=s.total,
                dice=tuple(
                    DieView(id=d.id, value=d.value, controller=d.controller, staked=d.staked)
                    for d in s.dice
                ),
                allies=c.allies_of(i),
                claimed_by=c.claims.get(i),
            )
            for i, s in enumerate(c.sides)
        ),
    )


def board(state: CampaignState) -> Board:
    """The table as everyone sees it."""
    scene, page = state.scene, state.page
    turn = page.turn if page else None
    moves = waiting_for(state)
    conflicts = sorted(state.conflicts.values(), key=lambda c: c.id)
    schism = _schism_offers(state, conflicts, moves)
    return Board(
        name=state.name,
        edition=state.edition,
        rules_version=state.rules_version,
        players=tuple(p.name for p in state.players),
        scenes_played=state.scenes_played,
        next_framer=state.next_framer,
        scene=scene.number if scene else None,
        scene_text=scene.text if scene else None,
        framer=scene.framer if scene else None,
        cast=dict(scene.cast) if scene else {},
        page=page.number if page else None,
        starter=page.starter if page else None,
        phase=page.phase if page else None,
        round=page.round if page and page.phase == "actions" else None,
        turn=TurnView(
            seat=turn.seat,
            character=turn.character,
            bought=turn.bought,
            acted=turn.acted,
            roll=(turn.roll.conflict, turn.roll.die, turn.roll.before, turn.roll.rolled)
            if turn.roll
            else None,
            reacting=asked(state),
            and_then=turn.and_then.seats if turn.and_then else None,
            reacting_to=(turn.reactions.conflict, turn.reactions.die) if turn.reactions else None,
        )
        if turn
        else None,
        waiting_for=moves,
        vetoable=tuple(sorted(page.vetoable)) if page else (),
        conflicts=tuple(conflict_view(c) for c in conflicts),
        closed=state.closed,
        exemplar_requests=tuple(
            ExemplarRequestView(
                asked_by=r.seat,
                awaiting=awaited(state, r),
                character=r.character,
                character_name=state.characters[r.character].name,
                exemplar=r.exemplar,
                exemplar_name=state.characters[r.exemplar].name,
                drive=r.drive,
            )
            for r in state.exemplar_requests
        ),
        resolving=next((c for _, c in pending(state)[:1]), None)
        if page and page.phase == "resolution"
        else None,
        free_conflicts={
            p.seat: pairs
            for p in state.players
            if (pairs := tuple(free_pairs(state, p.seat)))
        }
        if page and page.phase == "claiming"
        else {},
        claimable={
            p.seat: sides
            for p in state.players
            if (
                sides := tuple(
                    (c.id, side)
                    for c in conflicts
                    for side in claimable(state, c, p.seat)
                )
            )
        }
        if page and page.phase == "claiming"
        else {},
        free_claims_used=tuple(sorted(page.free_claims_used)) if page else (),
        vetoers={
            x: seats
            for x in sorted(page.vetoable)
            if (seats := tuple(p.seat for p in state.players if can_veto(state, p.seat, x)))
        }
        if page
        else {},
        schism_dice=schism[0],
        schism_sides=schism[1],
        schism_splits=schism[2],
        deadlockable=tuple(x.id for x in conflicts if deadlockable(state, x)),
    )


_Offer = dict[int, tuple[int, ...]]


def _schism_offers(
    state: CampaignState, conflicts: list[Conflict], moves: dict[int, tuple[str, ...]]
) -> tuple[_Offer, _Offer, _Offer]:
    """The board's ``schism_dice``, ``schism_sides`` and ``schism_splits`` (R-SCHISM-1), by
    Conflict id (those with any), while the turn's seat may make a Schism; else none."""
    turn = state.page.turn if state.page else None
    if turn is None or "schism" not in moves.get(turn.seat, ()):
        return {}, {}, {}
    who = state.characters[turn.character]

    def offer(of: Callable[[Conflict], tuple[int, ...]]) -> _Offer:
        return {x.id: found for x in conflicts if (found := of(x))}

    return (
        offer(lambda x: schism_dice(turn, who, x)),
        offer(lambda x: schism_sides(turn, who, x)),
        offer(lambda x: schism_sides(turn, who, x, split=True)),
    )


def _character_view(state: CampaignState, ch: Character) -> CharacterView:
    cast = state.scene.cast if state.scene else {}
    return CharacterView(
        id=ch.id,
        name=ch.name,
        played_by=cast.get(ch.id),
        drives=tuple(
            DriveView(name=d.name, strength=d.strength, debt=d.debt, overdrawn=overdrawn(ch, d))
            for d in ch.drives
        ),
        staked=tuple(
            StakeView(conflict=c.id, die=d.id, drive=st.drive, amount=st.amount)
            for c in sorted(state.conflicts.values(), key=lambda c: c.id)
            for s in c.sides
            for d in s.dice
            for st in d.stakes
            if st.character == ch.id
        ),
        blocked=ch.blocked,
    )


def ledgers(state: CampaignState) -> tuple[Ledger, ...]:
    """Each player's Story Tokens, Inspirations, and characters with their Debt.

    A player's characters are those they play in the scene, or between scenes, those they made.
    """
    cast = state.scene.cast if state.scene else None

    def theirs(seat: int, ch: Character) -> bool:
        return cast.get(ch.id) == seat if cast is not None else ch.created_by == seat

    return tuple(
        Ledger(
            seat=p.seat,
            name=p.name,
            tokens=p.tokens,
            inspirations=tuple(
                InspirationView(id=i.id, value=i.value, source=i.source) for i in p.inspirations
            ),
            characters=tuple(
                _character_view(state, ch)
                for ch in sorted(state.characters.values(), key=lambda c: c.id)
                if theirs(p.seat, ch)
            ),
        )
        for p in state.players
    )
