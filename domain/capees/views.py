"""Read views of a CAPEES! campaign: the board and each player's ledger (C-SRV-3).

Pure functions of the state, so the CLI, the HTTP queries and the projections show the same
thing at any version.
"""

from __future__ import annotations

import msgspec

from ..shared import is_overdrawn
from . import commands as c
from .model import CampaignState, Character, Complication
from .moves import legal, waiting_for
from .table import control
from .victory import bonus, victory_points


class View(msgspec.Struct, frozen=True, kw_only=True):
    """Base of read views."""


class StakeView(View, frozen=True, kw_only=True):
    character: int
    drive: str
    amount: int


class SideView(View, frozen=True, kw_only=True):
    index: int
    #: "hero" or "opponent" (C-COMP-4).
    faction: str
    #: The splitter who opened it, None for an original side (C-SPLIT-3).
    owner: int | None
    dice: tuple[tuple[int, int], ...]
    total: int
    stakes: tuple[StakeView, ...]


class ComplicationView(View, frozen=True, kw_only=True):
    id: int
    name: str
    controlling_side: int | None
    #: The faction that Controls it, if a side does.
    controlled_by: str | None
    claimed_by: int | None
    #: What it would be worth resolved now (C-VP-2) and the Bonus its card would carry.
    vp: int | None
    bonus: int | None
    sides: tuple[SideView, ...]


class PresentView(View, frozen=True, kw_only=True):
    character: int
    name: str
    prominence: int
    faction: str
    narrator: int


class ActionView(View, frozen=True, kw_only=True):
    character: int
    seat: int
    rolled: bool
    split: bool
    #: The roll waiting to be kept or turned back: (complication, die, before, rolled).
    roll: tuple[int, int, int, int] | None
    #: The seat whose chance it is to react.
    reacting: int | None
    #: The die a reaction round is about: (complication, die) (C-REACT-1: a Trope reacts
    #: only to it, rated at least its value). It defaults to none, so boards stored before
    #: it existed still decode.
    reaction: tuple[int, int] | None = None


class OptionView(View, frozen=True, kw_only=True, omit_defaults=True):
    """One choice a move's form may list: the character it names, and for a claim, an
    absent opponent's stake or a gift of Story Tokens, the Complication; for a reaction, the
    Trope (``ability``); for an action's roll, the ability with the Complication and ``die``
    it may roll (``ability`` and ``die`` are left out of the other moves' choices)."""

    character: int
    complication: int | None
    ability: str | None = None
    die: int | None = None


#: The moves whose forms name a character (and a Complication): the board lists each seat's
#: legal choices for them, so a page offers what the server accepts and copies no rule
#: (C-PROM-3, C-PROM-6, C-CLAIM-1, C-CLAIM-2, C-STAKE-5, C-RES-3); and the reactions, by
#: character and Trope, and the rolls, by ability and die: which abilities are rated high
#: enough depends on the die (C-REACT-1, C-ABIL-6), so a form listing every one offered choices
#: the server always refused.
LISTED: tuple[type[c.Command], ...] = (c.BuyProminence, c.Balance, c.Claim, c.Stake,
                                       c.GiveTokens, c.React, c.RollAbility)


class Board(View, frozen=True, kw_only=True):
    name: str
    edition: str
    rules_version: str
    players: tuple[str, ...]
    editor: int | None
    story: int | None
    victory_total: int | None
    story_hero_vp: int
    story_opponent_vp: int
    scene: int | None
    step: str | None
    cursor: int | None
    page: int | None
    turn: int | None
    target: int | None
    hero_vp: int
    opponent_vp: int
    hero_prominence: int
    opponent_prominence: int
    present: tuple[PresentView, ...]
    action: ActionView | None
    #: Overdrawn Drives still to roll for this page: (character, drive).
    overdrawn: tuple[tuple[int, str], ...]
    waiting_for: dict[int, tuple[str, ...]]
    complications: tuple[ComplicationView, ...]
    stories_played: int
    scenes_played: int
    closed: bool
    #: seat -> a move of ``waiting_for`` among :data:`LISTED` -> the characters (with the
    #: Complication, for a claim or ``capees.give_tokens``: the stakes whose tokens the seat
    #: gives) it may name now; for ``capees.stake``, the absent opponents
    #: the Editor may stake for, the acting character aside; for ``capees.react``, each
    #: character with each Trope that may react (``ability``); for ``capees.roll_ability``,
    #: the acting character's abilities with the dice each may roll. It defaults to none, so boards
    #: stored before it existed still decode.
    options: dict[int, dict[str, tuple[OptionView, ...]]] = {}


class DriveView(View, frozen=True, kw_only=True):
    name: str
    strength: int
    debt: int
    overdrawn: bool


class AbilityView(View, frozen=True, kw_only=True):
    name: str
    type: str
    rating: int
    super: bool
    blocked: bool
    used: bool


class CharacterView(View, frozen=True, kw_only=True):
    id: int
    name: str
    hero: bool
    full_sheet: bool
    narrated_by: int | None
    prominence: int
    drives: tuple[DriveView, ...]
    staked: tuple[tuple[int, str, int], ...]
    abilities: tuple[AbilityView, ...]
    exemplars: dict[str, int]


class InspirationView(View, frozen=True, kw_only=True):
    id: int
    name: str
    faction: str
    vp: int
    bonus: int


class Ledger(View, frozen=True, kw_only=True):
    seat: int
    name: str
    editor: bool
    tokens: int
    inspirations: tuple[InspirationView, ...]
    characters: tuple[CharacterView, ...]


def complication_view(state: CampaignState, c: Complication) -> ComplicationView:
    winner = control(c)
    scene = state.scene
    claim = scene.claim_on(c.id) if scene else None
    return ComplicationView(
        id=c.id, name=c.name, controlling_side=winner,
        controlled_by=c.sides[winner].faction if winner is not None else None,
        claimed_by=claim.character if claim else None,
        vp=victory_points(c, winner) if winner is not None else None,
        bonus=bonus(c, winner) if winner is not None else None,
        sides=tuple(SideView(
            index=i, faction=s.faction, owner=s.owner,
            dice=tuple((d.id, d.value) for d in s.dice), total=s.total,
            stakes=tuple(StakeView(character=st.character, drive=st.drive, amount=st.amount)
                         for st in s.stakes))
            for i, s in enumerate(c.sides)))


def board(state: CampaignState) -> Board:
    """The table as everyone sees it."""
    from .actions import asked

    story, scene = state.story, state.scene
    action = scene.action if scene else None
    waiting = waiting_for(state)
    return Board(
        name=state.name, edition=state.edition, rules_version=state.rules_version,
        players=tuple(p.name for p in state.players), editor=state.editor,
        story=story.number if story else None,
        victory_total=story.victory_total if story else None,
        story_hero_vp=story.hero_vp if story else 0,
        story_opponent_vp=story.opponent_vp if story else 0,
        scene=scene.number if scene else None, step=scene.step if scene else None,
        cursor=scene.cursor if scene and scene.step in (
            "inspirations", "prominence", "claims", "final_claims") else None,
        page=scene.page if scene and scene.page else None,
        turn=scene.turn if scene and scene.step == "actions" else None,
        target=scene.target if scene and scene.target else None,
        hero_vp=scene.hero_vp if scene else 0, opponent_vp=scene.opponent_vp if scene else 0,
        hero_prominence=scene.total("hero") if scene else 0,
        opponent_prominence=scene.total("opponent") if scene else 0,
        present=tuple(PresentView(character=ch, name=state.characters[ch].name,
                                  prominence=scene.prominence[ch], faction=scene.faction[ch],
                                  narrator=scene.narrator[ch])
                      for ch in scene.present()) if scene else (),
        action=ActionView(
            character=action.character, seat=action.seat, rolled=action.rolled,
            split=action.split,
            roll=(action.roll.complication, action.roll.die, action.roll.before,
                  action.roll.rolled) if action.roll else None,
            reacting=asked(state),
            reaction=(action.reactions.complication, action.reactions.die)
            if action.reactions and not action.roll else None) if action else None,
        overdrawn=scene.overdrawn if scene else (),
        waiting_for=waiting,
        options=options(state, waiting),
        complications=tuple(complication_view(state, c)
                            for c in sorted(state.complications.values(), key=lambda c: c.id)),
        stories_played=state.stories_played, scenes_played=state.scenes_played,
        closed=state.closed)


def options(state: CampaignState, waiting: dict[int, tuple[str, ...]]
            ) -> dict[int, dict[str, tuple[OptionView, ...]]]:
    """For each seat's move of ``waiting`` among :data:`LISTED`: the characters (and
    Complications) the Decider accepts it for, in the order of the candidates, once each."""
    shown: dict[int, dict[str, tuple[OptionView, ...]]] = {}
    for seat, moves in waiting.items():
        for kind in LISTED:
            tag = str(kind.__struct_config__.tag)
            if tag not in moves:
                continue
            found = (_option(state, x) for x in legal(state, seat, kind))
            shown.setdefault(seat, {})[tag] = tuple(dict.fromkeys(x for x in found if x))
    return shown


def _option(state: CampaignState, command: c.Command) -> OptionView | None:
    """The choice a legal command of :data:`LISTED` makes; None for a stake of the acting
    character's own Debt, which names nobody (the form's default)."""
    if isinstance(command, c.Claim | c.Stake | c.GiveTokens):
        if command.character is None:
            return None
        return OptionView(character=command.character, complication=command.complication)
    if isinstance(command, c.BuyProminence | c.Balance):
        return OptionView(character=command.character, complication=None)
    if isinstance(command, c.React):
        return OptionView(character=command.character, complication=None,
                          ability=command.ability)
    if isinstance(command, c.RollAbility) and state.scene and state.scene.action:
        return OptionView(character=state.scene.action.character,
                          complication=command.complication, ability=command.ability,
                          die=command.die)
    return None


def _character_view(state: CampaignState, ch: Character) -> CharacterView:
    scene = state.scene
    return CharacterView(
        id=ch.id, name=ch.name, hero=ch.hero, full_sheet=ch.full_sheet,
        narrated_by=scene.narrator.get(ch.id) if scene else None,
        prominence=scene.prominence.get(ch.id, 0) if scene else 0,
        drives=tuple(DriveView(name=d.name, strength=d.strength, debt=d.debt,
                               overdrawn=is_overdrawn(d.debt, d.strength)) for d in ch.drives),
        staked=tuple((c.id, st.drive, st.amount)
                     for c in sorted(state.complications.values(), key=lambda c: c.id)
                     for s in c.sides for st in s.stakes if st.character == ch.id),
        abilities=tuple(AbilityView(name=a.name, type=a.type, rating=a.rating, super=a.super,
                                    blocked=a.name in ch.blocked, used=a.name in ch.used)
                        for a in ch.abilities),
        exemplars={e.drive: e.character for e in ch.exemplars})


def ledgers(state: CampaignState) -> tuple[Ledger, ...]:
    """Each player's Story Tokens, Inspiration cards, and characters with their Debt.

    A player's characters are those they narrate in the scene, or between scenes, those they
    made.
    """
    scene = state.scene

    def theirs(seat: int, ch: Character) -> bool:
        if scene is not None and ch.id in scene.narrator:
            return scene.narrator[ch.id] == seat
        return ch.created_by == seat

    return tuple(
        Ledger(seat=p.seat, name=p.name, editor=state.editor == p.seat, tokens=p.tokens,
               inspirations=tuple(InspirationView(id=i.id, name=i.name, faction=i.faction,
                                                  vp=i.vp, bonus=i.bonus)
                                  for i in p.inspirations),
               characters=tuple(_character_view(state, ch)
                                for ch in sorted(state.characters.values(), key=lambda c: c.id)
                                if theirs(p.seat, ch)))
        for p in state.players)
