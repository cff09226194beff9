"""Actions, ability rolls, keeping a roll and reactions (C-TURN-2, C-ROLL-*, C-ABIL-3..6,
C-REACT-*)."""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from ..errors import ChoiceRequired, DomainError, InvalidReference, NotPermitted, RuleViolation
from ..shared import can_roll, is_blocking, is_fair
from .commands import EndAction, KeepRoll, PassReaction, React, RollAbility, StartAction, TurnBack
from .debt import stake_events
from .decider import after, apply, handle, progression
from .events import (
    AbilityBlocked,
    AbilityUsed,
    ActionEnded,
    ActionStarted,
    DebtGained,
    DieRolled,
    Event,
    ReactionPassed,
    ReactionsClosed,
    RollKept,
    RollTurnedBack,
)
from .model import Ability, Action, CampaignState, Character, Die, PendingRoll, ReactionRound
from .pages import acting_seat, actors, set_die
from .table import (
    add_debt,
    character,
    complication,
    narrated,
    require_scene,
    require_seat,
    with_character,
    with_scene,
)

replace = msgspec.structs.replace


def require_action(state: CampaignState, seat: int) -> Action:
    """The action under way, made by ``seat``, with no roll or reaction pending."""
    scene = require_scene(state, "actions")
    action = scene.action
    if action is None or action.seat != seat:
        raise RuleViolation("C-STAKE-4", "only during your own character's action")
    if action.roll is not None or action.reactions is not None:
        raise RuleViolation("C-ROLL-2", "the roll and its reactions come first")
    return action


def usable(who: Character, ability: Ability) -> bool:
    """C-ABIL-4: once a page, never while Blocked."""
    return ability.name not in who.blocked and ability.name not in who.used


def use(who: Character, name: str, drive: str | None, *, reaction: bool
        ) -> tuple[Ability, list[Event]]:
    """Check ``who`` may use the ability now; the events of its cost (C-ABIL-3)."""
    ability = who.ability(name)
    if ability is None:
        raise InvalidReference(f"{who.name} has no ability {name!r}")
    if reaction and ability.type != "trope":
        raise RuleViolation("C-ABIL-5", "only Tropes serve reactions")
    if not reaction and ability.type == "trope":
        raise RuleViolation("C-ABIL-5", "Tropes serve only reactions")
    if ability.name in who.blocked:
        raise RuleViolation("C-ABIL-4", f"{ability.name} is Blocked")
    if ability.name in who.used:
        raise RuleViolation("C-ABIL-4", f"{ability.name} was used this page already")
    events: list[Event] = [AbilityUsed(character=who.id, ability=ability.name,
                                       rating=ability.rating, super=ability.super,
                                       reaction=reaction)]
    if is_blocking(ability.super):
        if drive is not None:
            # C-ABIL-3: a blocking ability takes no Debt, so a Drive named for it is a
            # mistake, said, not dropped in silence (C-SRV-2).
            raise RuleViolation("C-ABIL-3", f"drive: {ability.name} is blocking: it is Blocked "
                                "and puts no Debt on any Drive; leave drive out")
        events.append(AbilityBlocked(character=who.id, ability=ability.name))
    else:
        names = [d.name for d in who.drives]
        if drive is None:
            raise ChoiceRequired("C-ABIL-3", f"which Drive of {who.name} takes the Debt?",
                                 names, "drive")
        if drive not in names:
            raise RuleViolation("C-ABIL-3", f"{who.name} has no Drive {drive}", names)
        events.append(DebtGained(character=who.id, drive=drive))
    return ability, events


def _die(state: CampaignState, complication_id: int, die_id: int) -> Die:
    c = complication(state, complication_id)
    for s in c.sides:
        for d in s.dice:
            if d.id == die_id:
                return d
    raise InvalidReference(f"no die {die_id} on {c.name}")


def _rolled(command: RollAbility | React, complication_id: int, die: Die, ability: Ability,
            who: Character, rule: str, reaction: bool) -> DieRolled:
    if not can_roll(ability.rating, die.value):
        raise RuleViolation(rule, f"{ability.name} (rating {ability.rating}) cannot roll a die "
                            f"showing {die.value}")
    if not is_fair(command.value):
        raise RuleViolation("C-TABLE-4", "every die is a fair 1-6 drawn by the server")
    return DieRolled(complication=complication_id, die=die.id, before=die.value,
                     rolled=command.value, character=who.id, seat=command.seat,
                     reaction=reaction, draw=command.draw)


# -- actions ---------------------------------------------------------------------------------


@handle.register
def _start(command: StartAction, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state, "actions")
    seat = acting_seat(state)
    if seat != command.seat:
        raise RuleViolation("C-TURN-1", f"it is seat {seat}'s action, not seat {command.seat}'s")
    mine = [ch for ch in actors(state) if scene.narrator[ch] == command.seat]
    chosen = command.character
    if chosen is None:
        if len(mine) > 1:
            raise ChoiceRequired("C-TABLE-2", "which of your characters acts now?", mine,
                                 "character")
        chosen = mine[0]
    if chosen not in mine:
        raise RuleViolation("C-TURN-1", f"character {chosen} has no action left in turn "
                            f"{scene.turn}")
    return (ActionStarted(seat=command.seat, character=chosen),)


@apply.register
def _started(event: ActionStarted, state: CampaignState) -> CampaignState:
    return with_scene(state, action=Action(character=event.character, seat=event.seat),
                      fresh=False)


@handle.register
def _end(command: EndAction, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    action = require_action(state, command.seat)
    return (ActionEnded(character=action.character),)


@apply.register
def _ended(event: ActionEnded, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None
    return with_scene(state, action=None, acted=(*scene.acted, event.character))


# -- rolls -----------------------------------------------------------------------------------


@handle.register
def _roll(command: RollAbility, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    action = require_action(state, command.seat)
    if action.rolled:
        raise RuleViolation("C-TURN-2", "an action rolls at most one die")
    who = character(state, action.character)
    die = _die(state, command.complication, command.die)
    ability, events = use(who, command.ability, command.drive, reaction=False)
    # C-ROLL-1: any die, on any side of any Complication; C-ABIL-6: rated at least the die.
    events.append(_rolled(command, command.complication, die, ability, who, "C-ABIL-6", False))
    return events


@apply.register
def _used(event: AbilityUsed, state: CampaignState) -> CampaignState:
    who = state.characters[event.character]
    return with_character(state, replace(who, used=tuple(sorted({*who.used, event.ability}))))


@apply.register
def _blocked(event: AbilityBlocked, state: CampaignState) -> CampaignState:
    who = state.characters[event.character]
    return with_character(state, replace(who, blocked=tuple(sorted({*who.blocked,
                                                                    event.ability}))))


@apply.register
def _debt(event: DebtGained, state: CampaignState) -> CampaignState:
    return add_debt(state, event.character, event.drive, event.amount)


@apply.register
def _die_rolled(event: DieRolled, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None and scene.action is not None
    roll = PendingRoll(seat=event.seat, character=event.character,
                       complication=event.complication, die=event.die, before=event.before,
                       rolled=event.rolled, reaction=event.reaction)
    state = set_die(state, event.complication, event.die, event.rolled)
    return with_scene(state, action=replace(scene.action, roll=roll,
                                            rolled=scene.action.rolled or not event.reaction))


def _pending(state: CampaignState, seat: int) -> PendingRoll:
    scene = require_scene(state, "actions")
    roll = scene.action.roll if scene.action else None
    if roll is None:
        raise RuleViolation("C-ROLL-2", "no roll waits to be kept or turned back")
    if roll.seat != seat:
        raise NotPermitted(f"seat {roll.seat} keeps or turns back this roll")
    return roll


@handle.register
def _keep(command: KeepRoll, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    roll = _pending(state, command.seat)
    # C-REACT-2: the chance to react goes clockwise from the player who made the kept roll.
    n = len(state.players)
    order = tuple((roll.seat - 1 + i) % n + 1 for i in range(n))
    return (RollKept(complication=roll.complication, die=roll.die, value=roll.rolled,
                     order=order),)


@handle.register
def _turn_back(command: TurnBack, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    roll = _pending(state, command.seat)
    return (RollTurnedBack(complication=roll.complication, die=roll.die, value=roll.before),)


@apply.register
def _kept(event: RollKept, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None and scene.action is not None
    window = ReactionRound(complication=event.complication, die=event.die, order=event.order)
    return with_scene(state, action=replace(scene.action, roll=None, reactions=window))


@apply.register
def _turned_back(event: RollTurnedBack, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None and scene.action is not None
    state = set_die(state, event.complication, event.die, event.value)
    window = scene.action.reactions
    if window is not None:
        # C-REACT-2: a reaction turned back counts as that player's chance.
        window = replace(window, asked=window.asked + 1)
    return with_scene(state, action=replace(scene.action, roll=None, reactions=window))


# -- reactions -------------------------------------------------------------------------------


def asked(state: CampaignState) -> int | None:
    """The seat whose chance it is to react, if a reaction round is open."""
    scene = state.scene
    action = scene.action if scene else None
    if action is None or action.reactions is None or action.roll is not None:
        return None
    window = action.reactions
    return window.order[window.asked] if window.asked < len(window.order) else None


def can_react(state: CampaignState, seat: int) -> bool:
    """C-REACT-1: the seat narrates a present character with a usable Trope rated at least
    the die's value."""
    scene = state.scene
    assert scene is not None and scene.action is not None and scene.action.reactions
    window = scene.action.reactions
    value = _die(state, window.complication, window.die).value
    return any(
        a.type == "trope" and usable(state.characters[ch], a) and can_roll(a.rating, value)
        for ch in scene.present() if scene.narrator.get(ch) == seat
        for a in state.characters[ch].abilities)


@handle.register
def _react(command: React, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    unused = [name for name, value in (("stake_on", command.stake_on),
                                       ("stake_drive", command.stake_drive))
              if value is not None and not command.stake]
    if unused:
        # C-REACT-3: they say where the stake before the roll goes and which Drive it comes
        # from; with no stake they would be dropped in silence (C-SRV-2).
        raise RuleViolation("C-REACT-3", f"{' and '.join(unused)} without a stake: stake is "
                            "0, so nothing is staked before the reaction roll; give stake, "
                            f"or leave {' and '.join(unused)} out")
    scene = require_scene(state, "actions")
    seat = asked(state)
    if seat is None:
        raise RuleViolation("C-REACT-1", "no kept roll to react to")
    if seat != command.seat:
        raise RuleViolation("C-REACT-2", f"it is seat {seat}'s chance to react")
    assert scene.action is not None and scene.action.reactions is not None
    window = scene.action.reactions
    who = narrated(state, command.seat, command.character)
    events: list[Event] = []
    if command.stake:
        # C-REACT-3: a stake just before the reaction roll.
        target = complication(state, command.stake_on or window.complication)
        try:
            events.extend(stake_events(state, who, target, command.stake, command.stake_drive,
                                       field="stake_drive"))
        except ChoiceRequired as choice:
            raise _asked_last(command, state, choice) from None
    later = after(state, events)
    who = later.characters[who.id]
    ability, costs = use(who, command.ability, command.drive, reaction=True)
    events.extend(costs)
    die = _die(later, window.complication, window.die)
    events.append(_rolled(command, window.complication, die, ability, who, "C-REACT-1", True))
    return events


def _asked_last(command: React, state: CampaignState,
                choice: ChoiceRequired) -> DomainError:
    """Choices come last (docs/rules.md, "Refusals"; C-REACT-3, C-STAKE-1): the stake's Drive is
    asked only when the reaction is legal with one of the Drives offered; else the refusal it
    gets with the first.
    """
    refusals: list[RuleViolation] = []
    for drive in choice.choices:
        try:
            _react(msgspec.structs.replace(command, stake_drive=str(drive)), state)
        except ChoiceRequired:  # another choice (a RuleViolation too), asked after this one
            pass
        except RuleViolation as refused:
            refusals.append(refused)
            continue
        return choice
    return refusals[0]


@handle.register
def _pass_reaction(command: PassReaction, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    seat = asked(state)
    if seat != command.seat:
        raise RuleViolation("C-REACT-2", f"it is seat {seat}'s chance to react"
                            if seat else "no reaction round is open")
    return (ReactionPassed(seat=command.seat),)


@apply.register
def _reaction_passed(event: ReactionPassed, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None and scene.action is not None and scene.action.reactions
    window = scene.action.reactions
    return with_scene(state, action=replace(
        scene.action, reactions=replace(window, asked=window.asked + 1)))


@apply.register
def _closed(event: ReactionsClosed, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None and scene.action is not None
    return with_scene(state, action=replace(scene.action, reactions=None))


@progression
def _reactions(state: CampaignState) -> Iterable[Event]:
    scene = state.scene
    action = scene.action if scene else None
    if action is None or action.reactions is None or action.roll is not None:
        return ()
    seat = asked(state)
    if seat is None:
        # C-REACT-2: every player has had a chance since the last kept roll.
        return (ReactionsClosed(complication=action.reactions.complication,
                                die=action.reactions.die),)
    if not can_react(state, seat):
        return (ReactionPassed(seat=seat, forced=True),)  # C-SRV-3
    return ()
