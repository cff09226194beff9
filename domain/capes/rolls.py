"""Using abilities, rolling, the roll decision, reactions and "And Then".

Rules: R-ABIL-1, R-ABIL-2, R-ROLL-1..4, R-REACT-1.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import msgspec

from ..errors import ChoiceRequired, InvalidReference, NotPermitted, RuleViolation
from ..shared import can_roll as rated_for
from ..shared import is_blocking, is_fair
from .characters import add_debt
from .commands import AcceptRoll, Narrate, PassReaction, React, RejectRoll, RollDie
from .conflicts import seats_allied
from .decider import after, apply, handle, progression
from .events import (
    AbilityBlocked,
    AbilityUsed,
    AndThenRequired,
    CharacterAllied,
    DebtGained,
    DieRolled,
    Event,
    Narrated,
    ReactionPassed,
    ReactionsClosed,
    ReactionsOpened,
    RollAccepted,
    RollRejected,
)
from .model import Ability, CampaignState, Character, Die, PendingRoll, ReactionWindow, Turn
from .pages import set_die
from .scenes import require_page
from .table import character, conflict, require_seat, with_character
from .turns import require_turn

replace = msgspec.structs.replace


# -- using an ability (R-ABIL-1, R-ABIL-2) ---------------------------------------------------


def usable(who: Character, ability: Ability) -> bool:
    """R-ABIL-1: a used mundane ability is Blocked until the scene ends."""
    return ability.super or ability.name not in who.blocked


def use_ability(
    state: CampaignState, who: Character, name: str, drive: str | None, *, reaction: bool,
    check: Callable[[Ability], None] | None = None,
) -> tuple[Ability, list[Event]]:
    """Check that ``who`` can use the ability now; the events of its cost (R-ABIL-1).

    ``check`` refuses what the ability cannot do (its rating against the die, R-ABIL-2): it
    runs before the player is asked which Drive takes the Debt, so a client is never asked
    to choose for a move that is refused anyway."""
    ability = who.ability(name)
    if ability is None:
        raise InvalidReference(
            f"{who.name} has no ability {name!r}; abilities: "
            + ", ".join(a.name for a in who.abilities)
        )
    if not usable(who, ability):
        raise RuleViolation("R-ABIL-1", f"{ability.name} is Blocked until the scene ends")
    if check is not None:
        check(ability)
    events: list[Event] = [
        AbilityUsed(
            character=who.id,
            ability=ability.name,
            rating=ability.rating,
            super=ability.super,
            reaction=reaction,
        )
    ]
    if not is_blocking(ability.super):
        # R-ABIL-1: a super ability gives 1 Debt on a Drive of the player's choice.
        drives = [d.name for d in who.drives]
        if drive is None:
            if len(drives) > 1:
                raise ChoiceRequired(
                    "R-ABIL-1", f"which Drive of {who.name} takes the Debt?", drives, "drive"
                )
            drive = drives[0]
        slot = who.drive(drive)
        if slot is None:
            raise RuleViolation("R-ABIL-1", f"{who.name} has no Drive {drive}", drives)
        events.append(DebtGained(character=who.id, drive=slot.name))
    else:
        if drive is not None:
            # R-ABIL-1: a mundane ability gives no Debt, so a Drive named for it is a mistake,
            # said, not dropped in silence (R-SRV-2).
            raise RuleViolation("R-ABIL-1", f"drive: {ability.name} is mundane: it is Blocked "
                                "and gives no Debt on any Drive; leave drive out")
        events.append(AbilityBlocked(character=who.id, ability=ability.name))
    return ability, events


def can_roll(die: Die, rule: str, value: int) -> Callable[[Ability], None]:
    """The check that an ability may roll ``die``: rated at least the die (R-ABIL-2 for an
    action, R-REACT-1 for a reaction), with a value drawn by the server (R-ROLL-1)."""

    def check(ability: Ability) -> None:
        if not rated_for(ability.rating, die.value):
            raise RuleViolation(
                rule,
                f"{ability.name} (rating {ability.rating}) cannot roll a die showing {die.value}",
            )
        if not is_fair(value):
            raise RuleViolation("R-ROLL-1", "every die is a fair 1-6 drawn by the server")

    return check


def _roll_event(
    conflict_id: int, die: Die, command: RollDie | React, character_id: int, reaction: bool,
) -> DieRolled:
    """The roll of ``die``, checked by :func:`can_roll` already."""
    return DieRolled(conflict=conflict_id, die=die.id, before=die.value, rolled=command.value,
                     character=character_id, seat=command.seat, reaction=reaction,
                     draw=command.draw)


def require_turn_to_act(state: CampaignState, seat: int) -> Turn:
    """R-TURN-1: the seat's turn, which has not yet used its Ability or created its Conflict."""
    turn = require_turn(state, seat)
    if turn.acted:
        raise RuleViolation(
            "R-TURN-1", "this turn has used its Ability or created its Conflict already"
        )
    return turn


@handle.register
def _roll(command: RollDie, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    turn = require_turn_to_act(state, command.seat)
    c = conflict(state, command.conflict)
    found = c.die(command.die)
    if found is None:
        raise InvalidReference(f"conflict {c.id} has no die {command.die}")
    if any(pc != c.id for pc, _ in turn.promised):
        raise RuleViolation(
            "R-STAKE-2",
            "Debt was staked on another Conflict this turn: roll "
            "there, so the character becomes allied to that side",
        )
    who = character(state, turn.character)
    die = found[1]
    _, events = use_ability(state, who, command.ability, command.drive, reaction=False,
                            check=can_roll(die, "R-ABIL-2", command.value))
    events.append(_roll_event(c.id, die, command, who.id, False))
    return events


# -- the roll decision (R-ROLL-2, R-ROLL-3) --------------------------------------------------


def ally_choices(state: CampaignState, roll: PendingRoll, accept: bool) -> list[int]:
    """R-ROLL-3: the sides the decision did not hurt."""
    c = state.conflicts[roll.conflict]
    found = c.die(roll.die)
    assert found is not None
    own = found[0]
    kept, other = (roll.rolled, roll.before) if accept else (roll.before, roll.rolled)
    if kept > other:
        return [own]
    if kept < other:
        return [i for i in range(len(c.sides)) if i != own]
    return list(range(len(c.sides)))


def _decide(state: CampaignState, seat: int, accept: bool, ally: int | None) -> list[Event]:
    require_seat_state = require_page(state)
    turn = require_seat_state.turn
    if turn is None or turn.roll is None:
        raise RuleViolation("R-ROLL-2", "there is no roll to accept or reject")
    roll = turn.roll
    if roll.seat != seat:
        raise RuleViolation("R-ROLL-2", f"the roller, seat {roll.seat}, decides")
    choices = ally_choices(state, roll, accept)
    promised = sorted({s for c, s in turn.promised if c == roll.conflict})
    if promised and not roll.reaction:
        # R-STAKE-2: Debt staked before the roll on a side not yet allied binds the decision.
        choices = [s for s in choices if s in promised]
        if not choices:
            raise RuleViolation(
                "R-STAKE-2",
                f"Debt was staked on side {promised[0]}, so this decision must "
                "ally the character to it; " + ("reject" if accept else "accept") + " instead",
            )
    if ally is None:
        if len(choices) > 1:
            raise ChoiceRequired(
                "R-ROLL-3", "which side does the character ally with?", choices, "ally"
            )
        ally = choices[0]
    if ally not in choices:
        raise RuleViolation(
            "R-ROLL-3", "the character allies with a side the decision did not hurt", choices
        )
    value = roll.rolled if accept else roll.before
    decided: Event = (RollAccepted if accept else RollRejected)(
        conflict=roll.conflict, die=roll.die, value=value
    )
    events: list[Event] = [
        decided,
        CharacterAllied(character=roll.character, conflict=roll.conflict, side=ally),
    ]
    if accept and not roll.reaction:
        # R-REACT-1: every player may React, in turn order starting with the acting player.
        events.append(
            ReactionsOpened(
                conflict=roll.conflict, die=roll.die, order=state.clockwise_from(turn.seat)
            )
        )
    elif not roll.reaction:
        events.extend(and_then(after(state, events), roll.conflict))
    return events


@handle.register
def _accept(command: AcceptRoll, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    return _decide(state, command.seat, True, command.ally)


@handle.register
def _reject(command: RejectRoll, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    return _decide(state, command.seat, False, command.ally)


# -- reactions (R-REACT-1) -------------------------------------------------------------------


def can_react(state: CampaignState, seat: int, value: int) -> bool:
    """R-X-REACT-1: a seat with no usable ability rated >= the die is passed over."""
    assert state.scene is not None
    return any(
        usable(state.characters[ch], a) and a.rating >= value
        for ch in state.scene.characters_of(seat)
        for a in state.characters[ch].abilities
    )


def asked(state: CampaignState) -> int | None:
    """The seat whose chance it is to React now, or None when the window closes."""
    page = state.page
    if page is None or page.turn is None or page.turn.reactions is None or page.turn.roll:
        return None
    w = page.turn.reactions
    value = state.conflicts[w.conflict].die(w.die)
    assert value is not None
    for k in range(len(w.order)):
        seat = w.order[(w.cursor + k) % len(w.order)]
        fresh = seat not in w.reacted and seat not in w.passed
        if fresh and can_react(state, seat, value[1].value):
            return seat
    return None


def _require_asked(state: CampaignState, seat: int) -> ReactionWindow:
    page = require_page(state)
    turn = page.turn
    if turn is None or turn.reactions is None:
        raise RuleViolation("R-REACT-1", "there is no accepted roll to React to")
    if turn.roll is not None:
        raise RuleViolation("R-ROLL-2", f"seat {turn.roll.seat} must accept or reject first")
    if seat in turn.reactions.reacted:
        raise RuleViolation("R-REACT-1", "each player reacts at most once per action")
    expected = asked(state)
    if expected != seat:
        raise RuleViolation("R-REACT-1", f"it is seat {expected}'s chance to React, in turn order")
    return turn.reactions


@handle.register
def _react(command: React, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    window = _require_asked(state, command.seat)
    who = character(state, command.character)
    assert state.scene is not None
    if state.scene.cast.get(who.id) != command.seat:
        raise NotPermitted(f"seat {command.seat} does not play {who.name} in this scene")
    found = state.conflicts[window.conflict].die(window.die)
    assert found is not None
    _, events = use_ability(state, who, command.ability, command.drive, reaction=True,
                            check=can_roll(found[1], "R-REACT-1", command.value))
    events.append(_roll_event(window.conflict, found[1], command, who.id, True))
    return events


@handle.register
def _pass_reaction(command: PassReaction, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    _require_asked(state, command.seat)
    return (ReactionPassed(seat=command.seat),)


@progression
def _reactions_close(state: CampaignState) -> Iterable[Event]:
    # R-REACT-1: the window closes when all who have not reacted pass in a row.
    page = state.page
    if page is None or page.turn is None or page.turn.reactions is None or page.turn.roll:
        return ()
    if asked(state) is not None:
        return ()
    w = page.turn.reactions
    closed = ReactionsClosed(conflict=w.conflict, die=w.die)
    return [closed, *and_then(after(state, [closed]), w.conflict)]


# -- And Then (R-ROLL-4) ---------------------------------------------------------------------


def and_then(state: CampaignState, conflict_id: int) -> list[Event]:
    """R-ROLL-4: who must complete the narration after a roll, if anyone."""
    c = state.conflicts.get(conflict_id)
    page = state.page
    if c is None or page is None:
        return []
    side = c.controlling_side
    if side is None:
        return []
    seats = seats_allied(state, c, side)
    if not seats or page.last_narrator in seats:
        return []
    return [AndThenRequired(conflict=c.id, side=side, seats=seats)]


@handle.register
def _narrate(command: Narrate, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    if command.and_then:  # R-X-ROLL-1: completing an And Then is a narration
        page = state.page
        prompt = page.turn.and_then if page and page.turn else None
        if prompt is None:
            raise RuleViolation("R-ROLL-4", "no And Then is waiting to be completed")
        if command.seat not in prompt.seats:
            raise RuleViolation(
                "R-ROLL-4",
                "only a player allied to the controlling side completes the narration",
                prompt.seats,
            )
    return (Narrated(seat=command.seat, text=command.text, and_then=command.and_then),)


# -- folds -----------------------------------------------------------------------------------


def _with_turn(state: CampaignState, turn: Turn) -> CampaignState:
    assert state.page is not None
    return replace(state, page=replace(state.page, turn=turn))


def _turn(state: CampaignState) -> Turn:
    assert state.page is not None and state.page.turn is not None
    return state.page.turn


@apply.register
def _ability_used(event: AbilityUsed, state: CampaignState) -> CampaignState:
    if event.reaction:
        return state
    # R-STAKE-4: once the Ability is used, the Debt staked before it is no longer provisional.
    return _with_turn(state, replace(_turn(state), acted=True, used_ability=True, provisional=()))


@apply.register
def _debt_gained(event: DebtGained, state: CampaignState) -> CampaignState:
    who = state.characters[event.character]
    return with_character(state, add_debt(who, event.drive, event.amount))


@apply.register
def _blocked(event: AbilityBlocked, state: CampaignState) -> CampaignState:
    who = state.characters[event.character]
    return with_character(state, replace(who, blocked=tuple(sorted({*who.blocked,
                                                                     event.ability}))))


@apply.register
def _rolled(event: DieRolled, state: CampaignState) -> CampaignState:
    state = set_die(state, event.conflict, event.die, event.rolled)
    turn = _turn(state)
    roll = PendingRoll(
        seat=event.seat,
        character=event.character,
        conflict=event.conflict,
        die=event.die,
        before=event.before,
        rolled=event.rolled,
        reaction=event.reaction,
    )
    turn = replace(turn, roll=roll)
    if event.reaction and turn.reactions is not None:
        w = turn.reactions
        turn = replace(
            turn,
            reactions=replace(
                w, reacted=w.reacted | {event.seat}, cursor=w.order.index(event.seat)
            ),
        )
    assert state.page is not None
    state = replace(state, page=replace(state.page, last_narrator=event.seat))
    return _with_turn(state, turn)


def _decided(state: CampaignState, die: int, value: int, accepted: bool) -> CampaignState:
    turn = _turn(state)
    roll = turn.roll
    assert roll is not None
    state = set_die(state, roll.conflict, die, value)
    turn = replace(turn, roll=None)
    if not roll.reaction:
        turn = replace(turn, promised=())
    elif turn.reactions is not None:
        w = turn.reactions
        cursor = w.order.index(roll.seat) + 1
        # R-REACT-1: an accepted reaction gives everyone who has not reacted a new chance.
        passed = frozenset() if accepted else w.passed
        turn = replace(turn, reactions=replace(w, cursor=cursor, passed=passed))
    return _with_turn(state, turn)


@apply.register
def _accepted(event: RollAccepted, state: CampaignState) -> CampaignState:
    return _decided(state, event.die, event.value, True)


@apply.register
def _rejected(event: RollRejected, state: CampaignState) -> CampaignState:
    return _decided(state, event.die, event.value, False)


@apply.register
def _opened(event: ReactionsOpened, state: CampaignState) -> CampaignState:
    window = ReactionWindow(conflict=event.conflict, die=event.die, order=event.order)
    return _with_turn(state, replace(_turn(state), reactions=window))


@apply.register
def _reaction_passed(event: ReactionPassed, state: CampaignState) -> CampaignState:
    turn = _turn(state)
    w = turn.reactions
    assert w is not None
    w = replace(w, passed=w.passed | {event.seat}, cursor=w.order.index(event.seat) + 1)
    return _with_turn(state, replace(turn, reactions=w))


@apply.register
def _closed(event: ReactionsClosed, state: CampaignState) -> CampaignState:
    return _with_turn(state, replace(_turn(state), reactions=None))


@apply.register
def _and_then(event: AndThenRequired, state: CampaignState) -> CampaignState:
    from .model import AndThen

    prompt = AndThen(conflict=event.conflict, side=event.side, seats=event.seats)
    return _with_turn(state, replace(_turn(state), and_then=prompt))


@apply.register
def _narrated(event: Narrated, state: CampaignState) -> CampaignState:
    page = state.page
    if page is None:
        return state
    page = replace(page, last_narrator=event.seat)
    if event.and_then and page.turn is not None:
        page = replace(page, turn=replace(page.turn, and_then=None))
    return replace(state, page=page)
