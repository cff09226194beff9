"""Resolving claims, Inspirations, Victory Points, and the end of a scene and of a story
(C-RES-*, C-INSP-*, C-VP-*, C-SCENE-3, C-SCENE-4)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from ..errors import ChoiceRequired, InvalidReference, NotPermitted, RuleViolation
from ..shared import losing_return
from .commands import CheckClaim
from .decider import after, apply, handle, progression
from .events import (
    ClaimFailed,
    ComplicationCreated,
    ComplicationDiscarded,
    ComplicationResolved,
    DebtBack,
    Event,
    Gift,
    PageEnded,
    SceneEnded,
    SceneEnding,
    SetupStepBegan,
    StoryEnded,
)
from .model import CampaignState, Complication, Inspiration
from .pages import can_claim
from .setup import inspired_dice
from .table import (
    add_debt,
    add_tokens,
    complication,
    control,
    rank,
    require_scene,
    require_seat,
    side_of,
    with_player,
    with_scene,
)

replace = msgspec.structs.replace


def victory_points(c: Complication, winner: int) -> int:
    """C-VP-2: the sum of every die on every side but the Controlling one."""
    return sum(s.total for i, s in enumerate(c.sides) if i != winner)


def bonus(c: Complication, winner: int) -> int:
    """C-INSP-1: the winner's highest die minus the highest die on the other sides."""
    others = max((s.highest for i, s in enumerate(c.sides) if i != winner), default=0)
    return c.sides[winner].highest - others


def player_of(state: CampaignState, character_id: int) -> int:
    """The player who makes a character's moves: its narrator, or for an absent character
    the Editor (C-RES-3, C-EDITOR-1)."""
    scene = state.scene
    if scene is not None and character_id in scene.narrator:
        return scene.narrator[character_id]
    assert state.editor is not None
    return state.editor


def resolve(state: CampaignState, seat: int, character_id: int, c: Complication,
            gifts: Mapping[int, int]) -> list[Event]:
    """The events of ``c`` resolving for ``character_id``'s side (C-RES-2, C-RES-3,
    C-INSP-1, C-VP-2)."""
    winner = control(c)
    assert winner is not None
    returned = [DebtBack(character=s.character, drive=s.drive, amount=losing_return(s.amount))
                for i, side in enumerate(c.sides) if i != winner for s in side.stakes]
    spent = c.sides[winner].stakes
    given = []
    for s in spent:
        giver = player_of(state, s.character)
        others = [p.seat for p in state.players if p.seat != giver]
        # C-X-RES-1: the resolving command names each winning staker's recipient.
        recipient = gifts.get(s.character)
        if recipient is None:
            if len(others) != 1:
                raise ChoiceRequired("C-RES-3", f"who gets the {s.amount} Story Token(s) of "
                                     f"{state.characters[s.character].name}'s stake?", others,
                                     f"gifts.{s.character}")
            recipient = others[0]
        if recipient not in others:
            raise RuleViolation("C-RES-3", "the tokens go to one other player, never oneself")
        given.append(Gift(giver=giver, recipient=recipient, count=s.amount))
    return [ComplicationResolved(
        complication=c.id, character=character_id, seat=seat,
        faction=c.sides[winner].faction, vp=victory_points(c, winner), bonus=bonus(c, winner),
        inspiration=state.next_inspiration, returned=tuple(returned), spent=spent,
        gifts=tuple(given))]


def pending_claims(state: CampaignState) -> list[tuple[int, int]]:
    """(seat, complication) of the claims still to check, in the order of C-TABLE-2."""
    scene = state.scene
    assert scene is not None
    return sorted(((scene.narrator[c.character], c.complication) for c in scene.claims),
                  key=lambda x: (rank(state, x[0]), x[1]))


@handle.register
def _check(command: CheckClaim, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state, "resolution")
    claim = scene.claim_on(command.complication)
    if claim is None:
        raise InvalidReference(f"no claim on Complication {command.complication}")
    seat = scene.narrator[claim.character]
    if seat != command.seat:
        raise NotPermitted(f"seat {seat} checks this claim")
    first = pending_claims(state)[0][0]
    if first != seat:
        raise RuleViolation("C-RES-1", f"claims are checked in seat order: seat {first} first")
    c = complication(state, command.complication)
    events = resolve(state, seat, claim.character, c, command.gifts)
    # C-RES-4: the claimer's player must replace the Complication.
    if command.replacement is None:
        raise RuleViolation("C-RES-4", "name the Complication that replaces it")
    later = after(state, events)
    hero, opponent = 1, 1
    if command.inspiration is not None:
        card = later.player(seat).inspiration(command.inspiration)
        if card is None:
            raise InvalidReference(f"seat {seat} holds no Inspiration {command.inspiration}")
        hero, opponent = inspired_dice(card)  # C-INSP-3
    events.append(ComplicationCreated(
        complication=state.next_complication, name=command.replacement, seat=seat,
        hero_die=hero, opponent_die=opponent, inspiration=command.inspiration))
    return events


@apply.register
def _resolved(event: ComplicationResolved, state: CampaignState) -> CampaignState:
    c = state.complications[event.complication]
    for back in event.returned:
        state = add_debt(state, back.character, back.drive, back.amount)
    for gift in event.gifts:
        state = add_tokens(state, gift.recipient, gift.count)
    card = Inspiration(id=event.inspiration, name=c.name, faction=event.faction, vp=event.vp,
                       bonus=event.bonus)
    player = state.player(event.seat)
    state = with_player(state, event.seat, inspirations=(*player.inspirations, card))
    complications = {k: v for k, v in state.complications.items() if k != c.id}
    state = replace(state, complications=complications, next_inspiration=event.inspiration + 1)
    scene = state.scene
    assert scene is not None
    vp = {"hero_vp": scene.hero_vp + event.vp} if event.faction == "hero" \
        else {"opponent_vp": scene.opponent_vp + event.vp}
    return with_scene(state, **vp,
                      claims=tuple(x for x in scene.claims if x.complication != c.id))


@apply.register
def _failed(event: ClaimFailed, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None
    return with_scene(state, claims=tuple(x for x in scene.claims
                                          if x.complication != event.complication))


@apply.register
def _discarded(event: ComplicationDiscarded, state: CampaignState) -> CampaignState:
    for back in event.returned:
        state = add_debt(state, back.character, back.drive, back.amount)
    return replace(state, complications={k: v for k, v in state.complications.items()
                                         if k != event.complication})


@apply.register
def _page_ended(event: PageEnded, state: CampaignState) -> CampaignState:
    return with_scene(state, step="play", claims=(), action=None)


@apply.register
def _ending(event: SceneEnding, state: CampaignState) -> CampaignState:
    return with_scene(state, step="ending", claims=(), action=None)


@apply.register
def _scene_ended(event: SceneEnded, state: CampaignState) -> CampaignState:
    story = state.story
    assert story is not None
    # C-VP-5: the scene totals go to the story's; C-PROM-7: the rest of the scene is gone.
    return replace(state, scene=None, complications={}, scenes_played=event.scene,
                   story=replace(story, hero_vp=story.hero_vp + event.hero_vp,
                                 opponent_vp=story.opponent_vp + event.opponent_vp))


@apply.register
def _story_ended(event: StoryEnded, state: CampaignState) -> CampaignState:
    return replace(state, story=None, stories_played=event.story)


def _final_claimable(state: CampaignState) -> bool:
    return any(can_claim(state, p.seat) for p in state.players)


@progression
def _resolution(state: CampaignState) -> Iterable[Event]:
    scene = state.scene
    if scene is None:
        story = state.story
        if story is not None and max(story.hero_vp, story.opponent_vp) >= story.victory_total \
                and story.scenes > 0:
            # C-VP-5: a story total at its Victory Total ends the story.
            return (StoryEnded(story=story.number, hero_vp=story.hero_vp,
                               opponent_vp=story.opponent_vp),)
        return ()
    editor = state.editor
    assert editor is not None
    if scene.step == "resolution":
        for claim in sorted(scene.claims, key=lambda x: (rank(state, scene.narrator[x.character]),
                                                         x.complication)):
            c = state.complications[claim.complication]
            if control(c) != side_of(state, c, claim.character):
                # C-RES-1: the claim ends and the Complication stays as it is.
                return (ClaimFailed(character=claim.character, complication=c.id),)
        if not scene.claims:
            # C-VP-3: the Victory check.
            if max(scene.hero_vp, scene.opponent_vp) >= scene.target:
                return (SceneEnding(reason="target", seat=editor),)
            return (PageEnded(page=scene.page),)
    elif scene.step == "ending":
        # C-SCENE-3: staked Complications are discarded, their stakes back, not doubled.
        for c in sorted(state.complications.values(), key=lambda x: x.id):
            if any(s.stakes for s in c.sides):
                return (ComplicationDiscarded(complication=c.id, returned=tuple(
                    DebtBack(character=s.character, drive=s.drive, amount=s.amount)
                    for side in c.sides for s in side.stakes)),)
        return (SetupStepBegan(step="final_claims", seat=editor),)
    elif scene.step == "final_claims" and (scene.passes >= len(state.players)
                                           or not _final_claimable(state)):
        # C-SCENE-4: whatever is left is discarded.
        left = sorted(state.complications)
        if left:
            return tuple(ComplicationDiscarded(complication=i) for i in left)
        return (SceneEnded(scene=scene.number, hero_vp=scene.hero_vp,
                           opponent_vp=scene.opponent_vp),)
    return ()
