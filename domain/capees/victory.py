"""What a resolved Complication gives: Debt back or gone, Story Tokens, its Inspiration card
and its Victory Points (C-RES-2, C-RES-3, C-INSP-1, C-VP-2, C-X-RES-1)."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ChoiceRequired, RuleViolation
from ..shared import losing_return
from .events import ComplicationResolved, DebtBack, Gift
from .model import CampaignState, Complication
from .table import control


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


def others_than(state: CampaignState, seat: int) -> list[int]:
    """C-RES-3: the players a giver may give Story Tokens to (never themself)."""
    return [p.seat for p in state.players if p.seat != seat]


def recipients(state: CampaignState, seat: int, c: Complication, gifts: Mapping[int, int]
               ) -> tuple[dict[int, int], dict[int, int]]:
    """C-RES-3, C-X-RES-1: who gets each winning staker's Story Tokens, as far as the check
    by ``seat`` (the claimer's player) decides it: (character -> recipient) named in ``gifts``
    for the stakes ``seat`` chooses for or filled in for a giver with one other player, and
    (character -> giver) for the stakes whose player has still to choose."""
    winner = control(c)
    assert winner is not None
    spent = c.sides[winner].stakes
    strangers = sorted(set(gifts) - {s.character for s in spent})
    if strangers:
        # C-SRV-2: a recipient for anyone else is a mistake, said, not silently dropped.
        names = ", ".join(state.characters[x].name if x in state.characters else str(x)
                          for x in strangers)
        raise RuleViolation("C-RES-3", f"only a staker on the Controlling side gives Story "
                            f"Tokens; {names} has none staked there")
    known: dict[int, int] = {}
    givers: dict[int, int] = {}
    for s in spent:
        giver = player_of(state, s.character)
        name = state.characters[s.character].name
        others = others_than(state, giver)
        if giver != seat:
            # C-RES-3: the staking player chooses, not the claimer's.
            if s.character in gifts:
                raise RuleViolation("C-RES-3", f"seat {giver}'s player chooses who gets the "
                                    f"Story Tokens of {name}'s stake, not seat {seat}'s")
            if len(others) == 1:
                known[s.character] = others[0]
            else:
                givers[s.character] = giver
            continue
        # C-X-RES-1: the check names the recipient of the claimer's player's own stakes.
        recipient = gifts.get(s.character)
        if recipient is None:
            if len(others) != 1:
                raise ChoiceRequired("C-RES-3", f"who gets the {s.amount} Story Token(s) of "
                                     f"{name}'s stake?", others, f"gifts.{s.character}")
            recipient = others[0]
        if recipient not in others:
            raise RuleViolation("C-RES-3", "the tokens go to one other player, never oneself")
        known[s.character] = recipient
    return known, givers


def resolve(state: CampaignState, seat: int, character_id: int, c: Complication,
            gifts: Mapping[int, int]) -> ComplicationResolved:
    """The event of ``c`` resolving for ``character_id``'s side (C-RES-2, C-RES-3,
    C-INSP-1, C-VP-2), the winning stakes' Story Tokens going as ``gifts`` says (character ->
    recipient; a stake left out gives nothing yet)."""
    winner = control(c)
    assert winner is not None
    returned = [DebtBack(character=s.character, drive=s.drive, amount=losing_return(s.amount))
                for i, side in enumerate(c.sides) if i != winner for s in side.stakes]
    spent = c.sides[winner].stakes
    given = [Gift(giver=player_of(state, s.character), recipient=gifts[s.character],
                  count=s.amount) for s in spent if s.character in gifts]
    return ComplicationResolved(
        complication=c.id, character=character_id, seat=seat,
        faction=c.sides[winner].faction, vp=victory_points(c, winner), bonus=bonus(c, winner),
        inspiration=state.next_inspiration, returned=tuple(returned), spent=spent,
        gifts=tuple(given))
