"""Staking Debt, splitting dice, schisms (R-STAKE-*, R-SPLIT-1, R-SCHISM-1).

All three are moves made before or after the one thing of a turn, never during the action or
its reactions, nor while its And Then waits (R-TURN-1, R-X-ROLL-2), and only by the player
whose turn it is, for the turn's character.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import ChoiceRequired, InvalidReference, RuleViolation
from ..shared import split_values, stake_room
from .characters import add_debt, stake_limit
from .commands import MAX_SIDES, Schism, SplitDie, StakeDebt
from .decider import apply, handle
from .events import CharacterAllied, DebtStaked, DieSplit, Event, SideSchismed
from .model import CampaignState, Character, Conflict, Die, DriveName, Side, Stake, Turn
from .table import changed, character, conflict, require_seat, with_character
from .turns import require_turn

replace = msgspec.structs.replace


def require_between(state: CampaignState, seat: int) -> Turn:
    """R-TURN-1: before or after the action, never during it or its reactions.

    R-X-ROLL-2: an And Then still waiting is part of the action (it completes the action's
    narration), so Stakes, Splits, Schisms and Inspirations wait for it too."""
    turn = require_turn(state, seat)
    if turn.roll is not None or turn.reactions is not None:
        raise RuleViolation(
            "R-TURN-1", "not during the action or its reactions: wait until they are over"
        )
    if turn.and_then is not None:
        # R-X-ROLL-2: meanwhile a Schism could take a named seat's character off the
        # Controlling side, and a Schism or an Inspiration could hand control to another
        # side: the seats named would no longer be the ones R-ROLL-4 asks for.
        raise RuleViolation(
            "R-X-ROLL-2",
            "And Then: the action is not over until a player allied to the controlling side "
            f"(seat {', '.join(map(str, turn.and_then.seats))}) completes its narration",
        )
    return turn


def _staking_turn(turn: Turn) -> None:
    """R-STAKE-1: Debt is staked only in a turn that uses an Ability."""
    if turn.acted and not turn.used_ability:
        raise RuleViolation(
            "R-STAKE-1",
            "Debt is staked only in a turn that uses an Ability; this turn created a Conflict",
        )


def _stake_drive(
    turn: Turn, who: Character, c: Conflict, amount: int, wanted: str | None
) -> DriveName:
    """R-STAKE-1: which Drive the Debt comes from, and whether it may."""
    chosen = c.stake_drive.get(who.id)
    if chosen is not None and wanted is not None and wanted != chosen:
        raise RuleViolation(
            "R-STAKE-1", f"{who.name} stakes from one Drive per Conflict: {chosen} here", [chosen]
        )
    name = wanted or chosen
    if name is None:
        holding = [d for d in who.drives if d.debt >= amount]
        if not holding:
            raise RuleViolation("R-STAKE-1", f"no Drive of {who.name} holds {amount} Debt")
        # Only a Drive that may put this much on this Conflict is a choice (a refusal lists
        # legal options only); when none may, the first holding it is refused below, saying why.
        staked = c.stake_total.get(who.id, 0)
        legal = [d.name for d in holding if stake_room(stake_limit(who, d), staked, d.debt)
                 >= amount]
        if len(legal) > 1:
            raise ChoiceRequired("R-STAKE-1", "stake from which Drive?", legal, "drive")
        name = legal[0] if legal else holding[0].name
    slot = who.drive(name)
    if slot is None:
        raise RuleViolation(
            "R-STAKE-1", f"{who.name} has no Drive {name}", [d.name for d in who.drives]
        )
    if slot.debt < amount:
        raise RuleViolation(
            "R-STAKE-1", f"only Debt the Drive holds: {slot.name} holds {slot.debt}"
        )
    limit = stake_limit(who, slot)
    total = c.stake_total.get(who.id, 0) + amount
    if total > limit:
        raise RuleViolation(
            "R-STAKE-1",
            f"at most {limit} Debt from {slot.name} on one Conflict; that would make {total}",
        )
    return slot.name


def _stake_side(turn: Turn, who: Character, c: Conflict, side: int) -> None:
    """R-STAKE-2: on a side the character is allied to, or will be by this turn's Ability.

    R-X-STAKE-1: before the Ability, such a stake is a promise of one side of one Conflict.
    """
    if c.allies.get(who.id) == side:
        return
    if turn.used_ability:
        raise RuleViolation("R-STAKE-2", f"{who.name} is not allied to side {side}")
    if any(p != (c.id, side) for p in turn.promised):
        raise RuleViolation(
            "R-STAKE-2",
            "this turn's Ability can ally the character to one "
            "side only; Debt is promised to another already",
        )


def _die(c: Conflict, die_id: int) -> tuple[int, Die]:
    found = c.die(die_id)
    if found is None:
        raise InvalidReference(f"conflict {c.id} has no die {die_id}")
    return found


def _check_split(die: Die, into: int, debt: int) -> None:
    """R-SPLIT-1: into 2 to v dice, for at least one new Debt under each new die."""
    if not 2 <= into <= die.value:
        raise RuleViolation(
            "R-SPLIT-1", f"a die showing {die.value} splits into 2 to {die.value} dice, not {into}"
        )
    if debt < into - 1:
        raise RuleViolation(
            "R-SPLIT-1",
            f"splitting into {into} stakes at least {into - 1} new Debt, one under each new die",
        )


def _split(
    c: Conflict, die: Die, into: int, debt: int, who: Character, drive: DriveName
) -> list[Event]:
    """The events of splitting ``die`` into ``into`` dice, Debt under each new one."""
    # R-SPLIT-1: as even as possible, largest first; R-X-SPLIT-1: the die keeps the first.
    values = split_values(die.value, into)
    new = tuple((c.next_die + i, v) for i, v in enumerate(values[1:]))
    events: list[Event] = [
        DieSplit(conflict=c.id, die=die.id, value=values[0], new_dice=new, character=who.id)
    ]
    # One Debt under each new die; any extra goes under the first (R-SPLIT-1 "at least",
    # R-X-SPLIT-1).
    for i, (die_id, _) in enumerate(new):
        amount = 1 + (debt - (into - 1) if i == 0 else 0)
        events.append(
            DebtStaked(character=who.id, drive=drive, conflict=c.id, die=die_id, amount=amount)
        )
    return events


def _at_die(
    state: CampaignState, command: StakeDebt | SplitDie
) -> tuple[Turn, Character, Conflict, int, Die]:
    """The turn, its character, and the conflict, side and die the command names."""
    require_seat(state, command)
    turn = require_between(state, command.seat)
    who = character(state, turn.character)
    c = conflict(state, command.conflict)
    side, die = _die(c, command.die)
    return turn, who, c, side, die


def _checked_stake(turn: Turn, who: Character, c: Conflict, side: int, amount: int,
                   wanted: str | None) -> DriveName:
    """The Drive the Debt comes from, once every staking rule holds (R-STAKE-1, R-STAKE-2).

    The side is checked before the Drive is asked for: a client is never asked to choose for
    a move the rules refuse anyway. No check that the turn can still act: a turn can always
    end, and Debt staked before the Ability is provisional (R-STAKE-4)."""
    _staking_turn(turn)
    _stake_side(turn, who, c, side)
    return _stake_drive(turn, who, c, amount, wanted)


@handle.register
def _stake(command: StakeDebt, state: CampaignState) -> Iterable[Event]:
    turn, who, c, side, die = _at_die(state, command)
    if die.controller is not None:
        raise RuleViolation(
            "R-STAKE-3",
            "Debt goes under an uncontrolled die (to control it) "
            f"or pays for a Split; die {die.id} is controlled already",
        )
    drive = _checked_stake(turn, who, c, side, command.amount, command.drive)
    return (
        DebtStaked(character=who.id, drive=drive, conflict=c.id, die=die.id, amount=command.amount),
    )


@handle.register
def _split_die(command: SplitDie, state: CampaignState) -> Iterable[Event]:
    turn, who, c, side, die = _at_die(state, command)
    if die.controller != who.id:
        raise RuleViolation("R-SPLIT-1", f"{who.name} may split only a die it controls")
    debt = command.debt if command.debt is not None else command.into - 1
    _check_split(die, command.into, debt)
    drive = _checked_stake(turn, who, c, side, debt, command.drive)
    return _split(c, die, command.into, debt, who, drive)


@handle.register
def _schism(command: Schism, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    if command.drive is not None and command.split_uncontrolled is None:
        # R-SCHISM-1: drive pays for splitting the uncontrolled die first; with no split it
        # would be dropped in silence (R-SRV-2).
        raise RuleViolation("R-SCHISM-1", "drive without split_uncontrolled: the Schism splits "
                            "no die first, so no Debt is staked; give split_uncontrolled, or "
                            "leave drive out")
    turn = require_between(state, command.seat)
    who = character(state, turn.character)
    c = conflict(state, command.conflict)
    if command.side >= len(c.sides):
        raise InvalidReference(f"conflict {c.id} has sides 0..{len(c.sides) - 1}")
    side = c.sides[command.side]
    events: list[Event] = []
    moved = list(command.dice)
    for die_id in moved:
        where, die = _die(c, die_id)
        if where != command.side or die.controller != who.id:
            raise RuleViolation(
                "R-SCHISM-1",
                f"{who.name} moves only dice it controls on "
                f"side {command.side}; die {die_id} is not one",
            )
    if len(set(moved)) != len(moved):
        raise RuleViolation("R-SCHISM-1", "a die is moved once")
    added = 0
    free: list[Die] = []
    if command.split_uncontrolled is not None:
        # R-SCHISM-1: split the uncontrolled die first and leave it behind.
        free = [d for d in side.dice if d.controller is None]
        if not free:
            raise RuleViolation("R-SCHISM-1", f"side {command.side} has no uncontrolled die")
        added = command.split_uncontrolled - 1
        _check_split(free[0], added + 1, added)
        # R-STAKE-2 / R-X-STAKE-1: the split's Debt is staked on this side first, so the
        # character must be allied to it (or, before the ability, promise it).
        _staking_turn(turn)
        _stake_side(turn, who, c, command.side)
    if not moved and not added:
        raise RuleViolation("R-SCHISM-1", "a Schism moves at least one die")
    left = len(side.dice) - len(moved)
    if command.side < 2 and left < 1:
        raise RuleViolation("R-SCHISM-1", "a Schism may not leave an original side with no dice")
    # R-SCHISM-1: a side that is not an original one and is left empty disappears.
    removed = command.side if command.side >= 2 and left < 1 else None
    count = len(c.sides) + 1 - (removed is not None)
    if count > MAX_SIDES:
        raise RuleViolation(
            "R-SCHISM-1",
            f"a Conflict has at most {MAX_SIDES} sides (every side a command names can be named)",
        )
    if added:
        drive = _stake_drive(turn, who, c, added, command.drive)
        events.extend(_split(c, free[0], added + 1, added, who, drive))
        moved.extend(range(c.next_die, c.next_die + added))
    new_side = count - 1
    events.append(
        SideSchismed(
            conflict=c.id,
            side=command.side,
            new_side=new_side,
            label=command.label,
            dice=tuple(moved),
            character=who.id,
            removed=removed,
        )
    )
    # R-X-SCHISM-1: the character that schisms is allied to the new side.
    events.append(CharacterAllied(character=who.id, conflict=c.id, side=new_side))
    return events


# -- folds -----------------------------------------------------------------------------------


def _map_dice(c: Conflict, die_id: int, change: dict[str, object]) -> Conflict:
    sides = tuple(
        replace(s, dice=tuple(replace(d, **change) if d.id == die_id else d for d in s.dice))
        for s in c.sides
    )
    return replace(c, sides=sides)


def _provisional(state: CampaignState, c: Conflict, character_id: int) -> CampaignState:
    """R-STAKE-4: before the turn's Ability, keep the Conflict as it was before the turn's
    first stake on it, for ending the turn without the Ability."""
    page = state.page
    if page is None or page.turn is None:
        return state
    turn = page.turn
    if turn.used_ability or turn.character != character_id:
        return state
    if any(p.id == c.id for p in turn.provisional):
        return state
    turn = replace(turn, provisional=(*turn.provisional, c))
    return replace(state, page=replace(page, turn=turn))


@apply.register
def _staked(event: DebtStaked, state: CampaignState) -> CampaignState:
    c = state.conflicts[event.conflict]
    state = _provisional(state, c, event.character)
    found = c.die(event.die)
    assert found is not None
    side, die = found
    stake = Stake(character=event.character, drive=event.drive, amount=event.amount)
    c = _map_dice(c, die.id, {"controller": event.character, "stakes": (*die.stakes, stake)})
    c = replace(
        c,
        stake_drive={**c.stake_drive, event.character: event.drive},
        stake_total={
            **c.stake_total,
            event.character: c.stake_total.get(event.character, 0) + event.amount,
        },
    )
    allied = c.allies.get(event.character) == side
    state = changed(state, c)
    state = with_character(
        state, add_debt(state.characters[event.character], event.drive, -event.amount)
    )
    page = state.page
    if page is not None and page.turn is not None:
        turn = replace(page.turn, staked=True)
        if not allied and (c.id, side) not in turn.promised:
            turn = replace(turn, promised=(*turn.promised, (c.id, side)))
        state = replace(state, page=replace(page, turn=turn))
    return state


@apply.register
def _split_fold(event: DieSplit, state: CampaignState) -> CampaignState:
    c = state.conflicts[event.conflict]
    state = _provisional(state, c, event.character)
    found = c.die(event.die)
    assert found is not None
    index, _ = found
    c = _map_dice(c, event.die, {"value": event.value})
    side = c.sides[index]
    new = tuple(Die(id=i, value=v) for i, v in event.new_dice)
    sides = list(c.sides)
    sides[index] = replace(side, dice=side.dice + new)
    c = replace(c, sides=tuple(sides), next_die=max(i for i, _ in event.new_dice) + 1)
    return changed(state, c)


#: R-X-RES-2: the side number a side that disappeared leaves in ``once_allied``: never the
#: winning side, so an alliance to it still counts as one to a losing side (R-RES-3).
GONE = -1


def _without_side(c: Conflict, removed: int) -> Conflict:
    """R-SCHISM-1: ``c`` without its side ``removed`` (empty), the later sides moved down."""

    def moved(side: int) -> int:
        return side - 1 if side > removed else side

    return replace(
        c,
        sides=c.sides[:removed] + c.sides[removed + 1:],
        allies={ch: moved(s) for ch, s in c.allies.items() if s != removed},
        once_allied={
            ch: frozenset(GONE if s == removed else moved(s) for s in ever)
            for ch, ever in c.once_allied.items()
        },
        claims={moved(s): seat for s, seat in c.claims.items() if s != removed},
    )


@apply.register
def _schismed(event: SideSchismed, state: CampaignState) -> CampaignState:
    c = state.conflicts[event.conflict]
    moving = set(event.dice)
    old = c.sides[event.side]
    dice = tuple(d for d in old.dice if d.id in moving)
    sides = list(c.sides)
    sides[event.side] = replace(old, dice=tuple(d for d in old.dice if d.id not in moving))
    sides.append(Side(label=event.label, dice=dice))
    c = replace(c, sides=tuple(sides))
    if event.removed is not None:
        c = _without_side(c, event.removed)
    state = changed(state, c)
    page = state.page
    if page is not None and page.turn is not None:
        # Debt staked to split for the Schism went to the new side, which allies the character.
        kept = tuple(p for p in page.turn.promised if p[0] != event.conflict)
        state = replace(state, page=replace(page, turn=replace(page.turn, promised=kept)))
    return state


# -- what the board offers (see moves.waiting_for) -------------------------------------------


def may_stake(turn: Turn, who: Character, c: Conflict, side: int, amount: int = 1) -> bool:
    """Whether ``amount`` Debt may go on ``side`` of ``c`` now (R-STAKE-1, R-STAKE-2), by the
    same checks the commands make; a Drive still to be chosen counts as possible."""
    try:
        _staking_turn(turn)
        _stake_side(turn, who, c, side)
        _stake_drive(turn, who, c, amount, None)
    except ChoiceRequired:
        return True
    except RuleViolation:
        return False
    return True


def schisms(turn: Turn, who: Character, c: Conflict) -> list[Schism]:
    """Schisms of ``c`` the turn's character may make now (R-SCHISM-1): one per side, moving
    every die it controls there (or, of a side whose uncontrolled die it may split, that)."""
    found: list[Schism] = []
    for index, side in enumerate(c.sides):
        mine = tuple(d.id for d in side.dice if d.controller == who.id)
        count = len(c.sides) + 1 - (index >= 2 and len(mine) == len(side.dice))
        if count > MAX_SIDES:
            continue
        if mine and (index >= 2 or len(mine) < len(side.dice)):
            found.append(Schism(seat=turn.seat, conflict=c.id, side=index, dice=mine))
        elif mine and len(mine) > 1:
            found.append(Schism(seat=turn.seat, conflict=c.id, side=index, dice=mine[1:]))
        free = [d for d in side.dice if d.controller is None and d.value >= 2]
        if free and count <= MAX_SIDES and may_stake(turn, who, c, index):
            found.append(Schism(seat=turn.seat, conflict=c.id, side=index,
                                split_uncontrolled=2))
    return found


def schism_dice(turn: Turn, who: Character, c: Conflict) -> tuple[int, ...]:
    """The dice of ``c`` a Schism by the turn's character may take now (R-SCHISM-1): every die
    it controls on a side one of :func:`schisms` leaves with dice (not an original side's only
    die, nor any where no new side has room). The table page offers just these."""
    sides = sorted({s.side for s in schisms(turn, who, c) if s.dice})
    return tuple(d.id for i in sides for d in c.sides[i].dice if d.controller == who.id)


def schism_sides(
    turn: Turn, who: Character, c: Conflict, *, split: bool = False
) -> tuple[int, ...]:
    """The sides of ``c`` a Schism by the turn's character may leave now (R-SCHISM-1); with
    ``split``, those whose uncontrolled die it may split first (``split_uncontrolled``:
    R-SPLIT-1, and R-STAKE-2, the split's Debt going on that side). By :func:`schisms`, the
    commands' own checks: the table page offers just these."""
    return tuple(sorted({s.side for s in schisms(turn, who, c)
                         if not split or s.split_uncontrolled is not None}))
