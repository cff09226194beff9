"""Staking Debt: the checks and events every stake shares, in an action, a reaction or a
split (C-STAKE-1, C-STAKE-2, C-STAKE-3)."""

from __future__ import annotations

from ..errors import ChoiceRequired, InvalidReference, RuleViolation
from ..shared import stake_room
from .events import DebtStaked, Event
from .model import CampaignState, Character, Complication
from .table import control, side_of


def staked_on(c: Complication, character_id: int) -> tuple[str | None, int]:
    """The Drive a character stakes from on ``c`` and how much it has staked there."""
    mine = [s for side in c.sides for s in side.stakes if s.character == character_id]
    return (mine[0].drive if mine else None), sum(s.amount for s in mine)


def stake_events(state: CampaignState, who: Character, c: Complication, amount: int,
                 drive: str | None, *, field: str, controlled_ok: bool = False) -> list[Event]:
    """The events of ``who`` staking ``amount`` Debt on ``c`` (C-STAKE-1..3); ``field`` is
    the caller's command field for the staking Drive, named when the player must choose."""
    side = side_of(state, c, who.id)
    used, total = staked_on(c, who.id)

    def controlled() -> None:
        """C-STAKE-3: not where the staker's side Controls (but for ``controlled_ok``)."""
        if not controlled_ok and control(c) == side:
            raise RuleViolation("C-STAKE-3", f"{who.name}'s side Controls {c.name}: stakes go "
                                "only where your side does not Control")

    if used is not None:
        if drive not in (None, used):
            raise RuleViolation("C-STAKE-2", f"{who.name} stakes on {c.name} from {used} only")
        drive = used
    if drive is None:
        # Nothing staked on c yet (total is 0): a Drive can make the stake when it holds the
        # Debt (C-STAKE-1) and its strength allows it (C-STAKE-2).
        holding = [d for d in who.drives if d.debt >= amount]
        if not holding:
            raise RuleViolation("C-STAKE-1", f"no Drive of {who.name} holds {amount} Debt")
        able = [d.name for d in holding if stake_room(d.strength, 0, d.debt) >= amount]
        if not able:
            raise RuleViolation("C-STAKE-2", f"stakes on one Complication never exceed the "
                                f"Drive's strength; no Drive of {who.name} holding {amount} "
                                "Debt is that strong")
        if len(able) > 1:
            # Choices come last: a stake refused whatever the Drive is refused, not asked.
            controlled()
            raise ChoiceRequired("C-STAKE-1", f"which Drive of {who.name} stakes?", able,
                                 field)
        drive = able[0]
    slot = who.drive(drive)
    if slot is None:
        raise InvalidReference(f"{who.name} has no Drive {drive}")
    if total + amount > slot.strength:
        raise RuleViolation("C-STAKE-2", f"stakes on one Complication never exceed the "
                            f"Drive's strength ({slot.strength}); {total} staked already")
    if amount > stake_room(slot.strength, total, slot.debt):
        raise RuleViolation("C-STAKE-1", f"{who.name}'s {drive} holds {slot.debt} Debt")
    # Checked last, so a stake the Drive could never make is refused for that first (W-5).
    controlled()
    return [DebtStaked(character=who.id, drive=drive, complication=c.id, side=side,
                       amount=amount)]
