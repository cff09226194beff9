"""Staking Debt and splitting dice (C-STAKE-*, C-SPLIT-*)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import RuleViolation
from ..shared import split_values
from .actions import require_action
from .commands import Split
from .commands import Stake as StakeCommand
from .debt import stake_events
from .decider import after, apply, handle
from .events import DebtStaked, DieSplit, Event
from .model import CampaignState, Side, Stake
from .table import (
    add_debt,
    character,
    complication,
    require_seat,
    side_of,
    with_complication,
    with_scene,
)

replace = msgspec.structs.replace


@handle.register
def _stake(command: StakeCommand, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    action = require_action(state, command.seat)
    c = complication(state, command.complication)
    who = character(state, action.character)
    if command.character is not None and command.character != who.id:
        # C-STAKE-5: the Editor, in the action of an opponent he narrates, for an absent one.
        absent = character(state, command.character)
        scene = state.scene
        assert scene is not None
        if state.editor != command.seat or scene.faction.get(who.id) != "opponent":
            raise RuleViolation("C-STAKE-5", "only the Editor, in the action of an opponent "
                                "he narrates, stakes for an absent opponent")
        # C-X-STAKE-1: an absent opponent is a full-sheet non-hero, not present, no Exemplar.
        exemplars = {e.character for ch in state.characters.values() for e in ch.exemplars}
        if absent.id in scene.prominence or absent.hero or absent.id in exemplars \
                or not absent.full_sheet:
            raise RuleViolation("C-STAKE-5", f"{absent.name} is not an absent opponent: absent "
                                "heroes and Exemplars never stake")
        who = absent
    return stake_events(state, who, c, command.amount, command.drive, field="drive")


@apply.register
def _staked(event: DebtStaked, state: CampaignState) -> CampaignState:
    c = state.complications[event.complication]
    side = c.sides[event.side]
    stakes = list(side.stakes)
    for i, s in enumerate(stakes):
        if s.character == event.character and s.drive == event.drive:
            stakes[i] = replace(s, amount=s.amount + event.amount)
            break
    else:
        stakes.append(Stake(character=event.character, drive=event.drive,
                            amount=event.amount))
    sides = list(c.sides)
    sides[event.side] = replace(side, stakes=tuple(stakes))
    state = with_complication(state, replace(c, sides=tuple(sides)))
    return add_debt(state, event.character, event.drive, -event.amount)


@handle.register
def _split(command: Split, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    if command.drive is not None and not command.stake:
        # C-SPLIT-4: drive names the Drive of the Debt staked just before the split; with no
        # stake it would be dropped in silence (C-SRV-2).
        raise RuleViolation("C-SPLIT-4", "drive without a stake: stake is 0, so nothing is "
                            "staked before the split; give stake, or leave drive out")
    action = require_action(state, command.seat)
    if action.split:
        raise RuleViolation("C-SPLIT-1", "one split per action")
    who = character(state, action.character)
    c = complication(state, command.complication)
    side_index = side_of(state, c, who.id)
    side = c.sides[side_index]
    die = next((d for d in side.dice if d.id == command.die), None)
    if die is None:
        raise RuleViolation("C-SPLIT-1", f"split a die of {who.name}'s own side on {c.name}")
    if not 2 <= command.into <= die.value:
        raise RuleViolation("C-SPLIT-1", f"a {die.value} splits into 2 to {die.value} dice")
    opens = command.move > 0
    if opens:
        if command.move >= command.into:
            raise RuleViolation("C-SPLIT-3", "at least one but not all of the new dice move")
        if side.owner == who.id or any(s.owner == who.id for s in c.sides):
            raise RuleViolation("C-SPLIT-3", f"{who.name} opened its side on {c.name} already")
    events: list[Event] = []
    if command.stake:
        # C-SPLIT-4: a split opening a new side may bring stakes even where its side Controls.
        events.extend(stake_events(state, who, c, command.stake, command.drive, field="drive",
                                   controlled_ok=opens))
    later = after(state, events)
    side = later.complications[c.id].sides[side_index]
    values = split_values(die.value, command.into)
    new_ids = tuple(range(c.next_die, c.next_die + command.into - 1))
    moved = new_ids[len(new_ids) - command.move:] if opens else ()
    if opens:
        mine = sum(s.amount for s in side.stakes if s.character == who.id)
        if command.move > mine:
            raise RuleViolation("C-SPLIT-2", f"the new side would hold {command.move} dice "
                                f"on {mine} staked Debt")
    elif len(side.dice) + command.into - 1 > side.staked:
        raise RuleViolation("C-SPLIT-2", f"{len(side.dice) + command.into - 1} dice on "
                            f"{side.staked} staked Debt")
    events.append(DieSplit(complication=c.id, side=side_index, die=die.id, value=values[0],
                           new_dice=tuple(zip(new_ids, values[1:], strict=True)),
                           character=who.id, moved=moved))
    return events


@apply.register
def _split_fold(event: DieSplit, state: CampaignState) -> CampaignState:
    from .model import Die

    c = state.complications[event.complication]
    side = c.sides[event.side]
    dice = tuple(replace(d, value=event.value) if d.id == event.die else d for d in side.dice)
    dice += tuple(Die(id=i, value=v) for i, v in event.new_dice)
    sides = list(c.sides)
    if event.moved:
        moving = set(event.moved)
        mine = tuple(s for s in side.stakes if s.character == event.character)
        sides[event.side] = replace(
            side, dice=tuple(d for d in dice if d.id not in moving),
            stakes=tuple(s for s in side.stakes if s.character != event.character))
        sides.append(Side(faction=side.faction, owner=event.character,
                          dice=tuple(d for d in dice if d.id in moving), stakes=mine))
    else:
        sides[event.side] = replace(side, dice=dice)
    next_die = max((i for i, _ in event.new_dice), default=c.next_die - 1) + 1
    state = with_complication(state, replace(c, sides=tuple(sides), next_die=next_die))
    scene = state.scene
    if scene is not None and scene.action is not None:
        state = with_scene(state, action=replace(scene.action, split=True))
    return state


