"""What a resolved Complication gives: Debt back or gone, Story Tokens, its Inspiration card
and its Victory Points (C-RES-2, C-RES-3, C-INSP-1, C-VP-2, C-X-RES-1)."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ChoiceRequired, RuleViolation
from ..shared import losing_return
from .events import ComplicationResolved, DebtBack, Event, Gift
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


def resolve(state: CampaignState, seat: int, character_id: int, c: Complication,
            gifts: Mapping[int, int]) -> list[Event]:
    """The events of ``c`` resolving for ``character_id``'s side (C-RES-2, C-RES-3,
    C-INSP-1, C-VP-2)."""
    winner = control(c)
    assert winner is not None
    returned = [DebtBack(character=s.character, drive=s.drive, amount=losing_return(s.amount))
                for i, side in enumerate(c.sides) if i != winner for s in side.stakes]
    spent = c.sides[winner].stakes
    strangers = sorted(set(gifts) - {s.character for s in spent})
    if strangers:
        # C-SRV-2: a recipient for anyone else is a mistake, said, not silently dropped.
        names = ", ".join(state.characters[x].name if x in state.characters else str(x)
                          for x in strangers)
        raise RuleViolation("C-RES-3", f"only a staker on the Controlling side gives Story "
                            f"Tokens; {names} has none staked there")
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
