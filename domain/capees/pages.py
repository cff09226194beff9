"""A page: claims, Overdrawn rolls, the action turns' order, and the Editor's ruling
(C-PAGE-1, C-CLAIM-*, C-DEBT-*, C-TURN-1, C-SCENE-2)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import ChoiceRequired, InvalidReference, RuleViolation
from ..shared import is_fair, is_overdrawn, overdrawn_result
from .commands import Claim, EndScene, PassClaim, RollOverdrawn
from .decider import apply, handle, progression
from .events import (
    ClaimMade,
    ClaimPassed,
    Event,
    OverdrawnRolled,
    OverdrawnStepBegan,
    ResolutionBegan,
    SceneEnding,
    TurnBegan,
)
from .model import CampaignState, Character, Complication, Die
from .model import Claim as ClaimRecord
from .table import (
    complication,
    control,
    narrated,
    rank,
    require_cursor,
    require_editor,
    require_scene,
    require_seat,
    side_of,
    with_complication,
    with_scene,
)
from .victory import resolve

replace = msgspec.structs.replace


# -- claims (C-CLAIM-*) ----------------------------------------------------------------------


def claim_refusal(state: CampaignState, who: Character, c: Complication) -> RuleViolation | None:
    """Why ``who`` may not claim ``c`` now, if it may not (C-CLAIM-1, C-CLAIM-2)."""
    scene = state.scene
    assert scene is not None
    # C-SCENE-4 lets only unstaked Complications be claimed at a scene's end, which holds by
    # construction: the ending discards every staked one (C-SCENE-3) before the end-of-scene
    # claims begin, and nothing is staked outside an action (C-STAKE-4). One character may
    # claim several then (C-SCENE-4), so C-CLAIM-1's one claim holds only in a page.
    if scene.step != "final_claims" and scene.claim_of(who.id) is not None:
        return RuleViolation("C-CLAIM-1", f"{who.name} holds a claim this page already")
    if control(c) != side_of(state, c, who.id):
        return RuleViolation("C-CLAIM-1", f"{who.name}'s side does not Control {c.name}")
    holder = scene.claim_on(c.id)
    if holder is not None and scene.step == "claims":
        mine, theirs = scene.prominence.get(who.id, 0), scene.prominence.get(holder.character, 0)
        if mine <= theirs:
            return RuleViolation("C-CLAIM-2", f"{c.name} is claimed by a character of "
                                 f"Prominence {theirs}; {who.name} has {mine}")
    return None


def can_claim(state: CampaignState, seat: int) -> bool:
    """Whether the seat has a legal claim; if not, the server passes for it (C-SRV-3,
    C-CLAIM-3)."""
    scene = state.scene
    assert scene is not None
    return any(
        claim_refusal(state, state.characters[ch], c) is None
        for ch in scene.present() if scene.narrator.get(ch) == seat
        for c in state.complications.values())


@handle.register
def _claim(command: Claim, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state, "claims", "final_claims")
    require_cursor(scene, command.seat)
    who = narrated(state, command.seat, command.character)
    c = complication(state, command.complication)
    refusal = claim_refusal(state, who, c)
    if refusal is not None:
        raise refusal
    holder = scene.claim_on(c.id)
    events: list[Event] = [ClaimMade(seat=command.seat, character=who.id, complication=c.id,
                                     displaced=holder.character if holder else None)]
    if scene.step == "final_claims":
        # C-SCENE-4: an end-of-scene claim resolves at once, with no replacement (and no
        # stakes, so no Story Tokens to give: C-SCENE-3 discarded every staked Complication
        # first; see claim_refusal).
        assert not any(s.stakes for s in c.sides), "C-SCENE-3 left a staked Complication"
        events.append(resolve(state, command.seat, who.id, c, {}))
    return events


@handle.register
def _pass_claim(command: PassClaim, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state, "claims", "final_claims")
    require_cursor(scene, command.seat)
    return (ClaimPassed(seat=command.seat, to=state.next_seat(command.seat)),)


@apply.register
def _claimed(event: ClaimMade, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None
    claims = tuple(c for c in scene.claims
                   if c.complication != event.complication and c.character != event.character)
    return with_scene(state, claims=(*claims, ClaimRecord(character=event.character,
                                                          complication=event.complication)),
                      cursor=state.next_seat(event.seat), passes=0, fresh=False)


@apply.register
def _passed(event: ClaimPassed, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None
    return with_scene(state, cursor=event.to, passes=scene.passes + 1,
                      fresh=scene.fresh and event.forced)


# -- Overdrawn (C-DEBT-*) --------------------------------------------------------------------


def overdrawn_drives(state: CampaignState) -> tuple[tuple[int, str], ...]:
    """C-DEBT-2: each present character's Overdrawn Drives, in the order of C-TABLE-2."""
    scene = state.scene
    assert scene is not None
    present = sorted(scene.present(), key=lambda ch: (rank(state, scene.narrator[ch]), ch))
    return tuple((ch, d.name) for ch in present for d in state.characters[ch].drives
                 if is_overdrawn(d.debt, d.strength))  # C-DEBT-1


def highest_dice(state: CampaignState, character_id: int) -> list[tuple[int, Die]]:
    """C-DEBT-2: the highest dice of the character's sides across all Complications."""
    found = [(c.id, d) for c in state.complications.values()
             for d in c.sides[side_of(state, c, character_id)].dice]
    best = max((d.value for _, d in found), default=0)
    return [(cid, d) for cid, d in found if d.value == best]


def _begun(state: CampaignState, character_id: int) -> bool:
    """Whether the character has made some of its Overdrawn rolls and not all: Debt does not
    change in the Overdrawn step, so it has fewer Drives left to roll than are Overdrawn."""
    scene = state.scene
    assert scene is not None
    left = sum(1 for ch, _ in scene.overdrawn if ch == character_id)
    return 0 < left < sum(1 for ch, _ in overdrawn_drives(state) if ch == character_id)


def overdrawn_choices(state: CampaignState) -> list[int]:
    """C-DEBT-2, C-X-DEBT-1: the characters that may roll for an Overdrawn Drive now: those of
    the first seat in order still to roll, in the order its player chooses, each character's
    Drives one after another (C-TABLE-2)."""
    scene = state.scene
    assert scene is not None
    if not scene.overdrawn:
        return []
    first = scene.overdrawn[0][0]
    if _begun(state, first):
        return [first]
    seat = scene.narrator[first]
    return list(dict.fromkeys(ch for ch, _ in scene.overdrawn if scene.narrator[ch] == seat))


@handle.register
def _roll_overdrawn(command: RollOverdrawn, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state, "overdrawn")
    who = narrated(state, command.seat, command.character)
    mine = [d for ch, d in scene.overdrawn if ch == who.id]
    choices = overdrawn_choices(state)
    if mine and who.id not in choices and _begun(state, choices[0]):
        raise RuleViolation("C-TABLE-2", f"{state.characters[choices[0]].name}'s Overdrawn "
                            "rolls first: a player takes their characters one after another")
    if who.id not in choices:
        raise RuleViolation("C-DEBT-2", "the Overdrawn rolls go in seat order: "
                            + ", ".join(f"{state.characters[c].name}'s {d}"
                                        for c, d in scene.overdrawn))
    drive = command.drive or mine[0]
    if drive not in mine:
        raise RuleViolation("C-DEBT-2", f"{who.name} rolls for its Overdrawn "
                            + " and ".join(mine) + f", not {drive}")
    dice = highest_dice(state, who.id)
    if command.die is not None:
        chosen = [(cid, d) for cid, d in dice if (cid, d.id) == tuple(command.die)]
        if not chosen:
            raise RuleViolation("C-DEBT-2", "roll one of the highest dice of your sides")
    elif len(dice) > 1:
        raise ChoiceRequired("C-DEBT-2", "several dice share the highest value: pick one",
                             [[cid, d.id] for cid, d in dice], "die")
    else:
        chosen = dice
    if not chosen:
        raise InvalidReference("no die to roll")
    if not is_fair(command.value):
        raise RuleViolation("C-TABLE-4", "every die is a fair 1-6 drawn by the server")
    cid, die = chosen[0]
    kept = overdrawn_result(die.value, command.value) != die.value
    return (OverdrawnRolled(character=who.id, drive=drive, complication=cid, die=die.id,
                            before=die.value, rolled=command.value, kept=kept,
                            draw=command.draw),)


def set_die(state: CampaignState, complication_id: int, die_id: int, value: int
            ) -> CampaignState:
    c = state.complications[complication_id]
    sides = tuple(replace(s, dice=tuple(replace(d, value=value) if d.id == die_id else d
                                        for d in s.dice)) for s in c.sides)
    return with_complication(state, replace(c, sides=sides))


@apply.register
def _overdrawn_step(event: OverdrawnStepBegan, state: CampaignState) -> CampaignState:
    return with_scene(state, step="overdrawn", overdrawn=event.drives)


@apply.register
def _overdrawn_rolled(event: OverdrawnRolled, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None
    if event.kept:
        state = set_die(state, event.complication, event.die, event.rolled)
    # C-X-DEBT-1: the character's other Overdrawn Drives, if any, are rolled for next.
    rest = [x for x in scene.overdrawn if x != (event.character, event.drive)]
    rest.sort(key=lambda x: x[0] != event.character)
    return with_scene(state, overdrawn=tuple(rest), fresh=False)


# -- action turns (C-TURN-1) -----------------------------------------------------------------


def actors(state: CampaignState) -> list[int]:
    """C-TURN-1: the present characters still to act in this turn, in the order of play."""
    scene = state.scene
    assert scene is not None
    return sorted((ch for ch in scene.present()
                   if scene.prominence[ch] >= scene.turn and ch not in scene.acted),
                  key=lambda ch: (rank(state, scene.narrator[ch]), ch))


def acting_seat(state: CampaignState) -> int | None:
    """The seat whose character acts next, when no action is under way."""
    scene = state.scene
    if scene is None or scene.step != "actions" or scene.action is not None:
        return None
    left = actors(state)
    return state.scene.narrator[left[0]] if left and state.scene else None


@apply.register
def _turn(event: TurnBegan, state: CampaignState) -> CampaignState:
    return with_scene(state, step="actions", turn=event.turn, acted=())


@apply.register
def _resolution(event: ResolutionBegan, state: CampaignState) -> CampaignState:
    return with_scene(state, step="resolution")


# -- the Editor's ruling (C-SCENE-2) ---------------------------------------------------------


@handle.register
def _end_scene(command: EndScene, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state, "claims", "overdrawn", "actions")
    require_editor(state, command.seat, "ends a scene by ruling (C-SCENE-2)")
    if scene.page < 2 or not scene.fresh:  # C-X-SCENE-1
        raise RuleViolation("C-SCENE-2", "the Editor ends a scene right after a page's "
                            "Victory check, before the next page's first move")
    return (SceneEnding(reason="ruling", seat=command.seat),)


# -- forced moves of a page ------------------------------------------------------------------


@progression
def _page(state: CampaignState) -> Iterable[Event]:
    scene = state.scene
    if scene is None:
        return ()
    n = len(state.players)
    if scene.step in ("claims", "final_claims"):
        if scene.step == "claims" and scene.passes >= n:
            return (OverdrawnStepBegan(drives=overdrawn_drives(state)),)
        if scene.passes < n and not can_claim(state, scene.cursor):
            return (ClaimPassed(seat=scene.cursor, to=state.next_seat(scene.cursor),
                                forced=True),)
    elif scene.step == "overdrawn" and not scene.overdrawn:
        return (TurnBegan(turn=1),)
    elif scene.step == "actions" and scene.action is None and not actors(state):
        highest = max(scene.prominence[ch] for ch in scene.present())
        if scene.turn < highest:
            return (TurnBegan(turn=scene.turn + 1),)
        return (ResolutionBegan(),)
    return ()
