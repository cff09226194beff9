"""Resolving claims, Inspirations, Victory Points, and the end of a scene and of a story
(C-RES-*, C-INSP-*, C-VP-*, C-SCENE-3, C-SCENE-4)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import ChoiceRequired, InvalidReference, NotPermitted, RuleViolation
from .commands import CheckClaim, GiveTokens
from .decider import after, apply, handle, progression
from .events import (
    ClaimChecked,
    ClaimFailed,
    ComplicationCreated,
    ComplicationDiscarded,
    ComplicationResolved,
    DebtBack,
    Event,
    PageEnded,
    SceneEnded,
    SceneEnding,
    SetupStepBegan,
    StoryEnded,
    StoryTokensGiven,
)
from .model import CampaignState, Inspiration, Resolving
from .pages import can_claim
from .setup import inspired_dice, renamed
from .table import (
    add_debt,
    add_tokens,
    character,
    complication,
    control,
    rank,
    require_scene,
    require_seat,
    side_of,
    with_player,
    with_scene,
)
from .victory import others_than, recipients, resolve

replace = msgspec.structs.replace


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
    waiting = scene.resolving
    if waiting is not None:
        # C-RES-3: a resolution under way completes before the next claim is checked.
        raise RuleViolation("C-RES-3", f"Complication {waiting.complication} waits for "
                            f"{_seats(waiting.givers.values())} to give Story Tokens")
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
    gifts, givers = recipients(state, seat, c, command.gifts)
    # C-RES-4: the claimer's player must replace the Complication.
    if command.replacement is None:
        raise RuleViolation("C-RES-4", "name the Complication that replaces it")
    pending = Resolving(complication=c.id, character=claim.character, seat=seat,
                        replacement=command.replacement, inspiration=command.inspiration,
                        gifts=gifts, givers=givers)
    # The replacement is judged now, even when the resolution waits (C-SRV-2).
    events = completion(state, pending)
    if not givers:
        return events
    return (ClaimChecked(complication=c.id, character=claim.character, seat=seat,
                         replacement=command.replacement, inspiration=command.inspiration,
                         gifts=tuple(gifts.items()), givers=tuple(givers.items())),)


def completion(state: CampaignState, pending: Resolving) -> list[Event]:
    """The events of a claim resolving as ``pending`` says: the Complication resolved
    (C-RES-2, C-RES-3, C-INSP-1, C-VP-2) and its replacement (C-RES-4, C-INSP-3)."""
    seat = pending.seat
    events: list[Event] = [resolve(state, seat, pending.character,
                                   complication(state, pending.complication), pending.gifts)]
    later = after(state, events)
    hero, opponent = 1, 1
    if pending.inspiration is not None:
        card = later.player(seat).inspiration(pending.inspiration)
        if card is None:
            raise InvalidReference(f"seat {seat} holds no Inspiration {pending.inspiration}")
        hero, opponent = inspired_dice(card)  # C-INSP-3
        renamed(card, pending.replacement)
    events.append(ComplicationCreated(
        complication=state.next_complication, name=pending.replacement, seat=seat,
        hero_die=hero, opponent_die=opponent, inspiration=pending.inspiration))
    return events


def _seats(seats: Iterable[int]) -> str:
    return " and ".join(f"seat {s}" for s in sorted(set(seats)))


@handle.register
def _give(command: GiveTokens, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state, "resolution")
    pending = scene.resolving
    if pending is None or pending.complication != command.complication:
        raise RuleViolation("C-RES-3", f"no resolution of Complication {command.complication} "
                            f"waits for Story Tokens")
    who = character(state, command.character)
    giver = pending.givers.get(who.id)
    if giver is None:
        raise RuleViolation("C-RES-3", f"no Story Tokens of {who.name}'s stake wait to be "
                            f"given")
    if giver != command.seat:
        raise RuleViolation("C-RES-3", f"seat {giver}'s player chooses who gets the Story "
                            f"Tokens of {who.name}'s stake")
    others = others_than(state, giver)
    if command.to is None:
        raise ChoiceRequired("C-RES-3", f"who gets the Story Tokens of {who.name}'s stake?",
                             others, "to")
    if command.to not in others:
        raise RuleViolation("C-RES-3", "the tokens go to one other player, never oneself")
    events: list[Event] = [StoryTokensGiven(complication=pending.complication,
                                            character=who.id, seat=giver, to=command.to)]
    later = after(state, events)
    assert later.scene is not None and later.scene.resolving is not None
    if not later.scene.resolving.givers:
        # The last gift: the resolution completes as if the check had named them all.
        events.extend(completion(later, later.scene.resolving))
    return events


@apply.register
def _checked(event: ClaimChecked, state: CampaignState) -> CampaignState:
    return with_scene(state, resolving=Resolving(
        complication=event.complication, character=event.character, seat=event.seat,
        replacement=event.replacement, inspiration=event.inspiration,
        gifts=dict(event.gifts), givers=dict(event.givers)))


@apply.register
def _given(event: StoryTokensGiven, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None and scene.resolving is not None
    pending = scene.resolving
    return with_scene(state, resolving=replace(
        pending, gifts={**pending.gifts, event.character: event.to},
        givers={k: v for k, v in pending.givers.items() if k != event.character}))


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
    return with_scene(state, **vp, resolving=None,
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
