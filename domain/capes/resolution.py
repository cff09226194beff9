"""The resolution phase: resolving, gloating, deadlocks (R-PAGE-7, R-RES-*, R-GLOAT-1, R-DEAD-1,
R-X-DEAD-3).

Clockwise from the Starter, each player resolves or gloats on every Conflict whose Controlling
side they claimed; the page ends by itself once nothing is left to resolve (and no Conflict
could still be declared Deadlocked: then the Starter ends it, R-X-DEAD-1).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence

import msgspec

from ..errors import ChoiceRequired, InvalidReference, RuleViolation
from ..shared import losing_return
from .characters import add_debt, stake_limit
from .commands import MAX_SIDES, DeclareDeadlock, EndPage, Gloat, Resolve
from .conflicts import goal_key, seats_allied, sides_of_seat
from .decider import apply, handle, progression
from .events import (
    ConflictDeadlocked,
    ConflictResolved,
    DebtReturned,
    Event,
    Gloated,
    InspirationMade,
    PageEnded,
    TokenGift,
)
from .inspirations import give_inspirations
from .model import CampaignState, Conflict, Die
from .pages import set_die
from .scenes import require_page
from .table import add_tokens, conflict, require_seat, with_character

replace = msgspec.structs.replace


def pending(state: CampaignState) -> list[tuple[int, int]]:
    """(seat, conflict) still to resolve or gloat on, in resolution order (R-PAGE-7): each
    Conflict whose Controlling side a seat claimed, unless that seat gloated on it this page
    (R-X-GLOAT-1: a gloat that hands control to a side another seat claimed hands that seat
    the Conflict)."""
    page = state.page
    assert page is not None
    return [
        (seat, c.id)
        for seat in state.clockwise_from(page.starter)
        for c in sorted(state.conflicts.values(), key=lambda c: c.id)
        if c.id not in page.handled
        and (c.id, seat) not in page.gloated
        and c.controlling_side is not None
        and c.claims.get(c.controlling_side) == seat
    ]


def could_stake(state: CampaignState, c: Conflict, character_id: int) -> bool:
    """R-DEAD-1 / R-STAKE-1: whether the character holds Debt it may still stake on ``c``: on
    the Drive it stakes from there (any Drive, before its first stake), below its limit."""
    who = state.characters.get(character_id)
    if who is None:
        return False
    chosen = c.stake_drive.get(who.id)
    staked = c.stake_total.get(who.id, 0)
    return any(
        d.debt > 0 and staked < stake_limit(who, d)
        for d in who.drives
        if chosen is None or d.name == chosen
    )


def schisms_could_untie(c: Conflict) -> bool:
    """R-X-DEAD-3: whether Schisms (R-SCHISM-1) could leave a single side at the top of the
    tied ``c``.

    A Schism lowers the side it leaves and makes a new side lower than that side was, so
    the tie ends when all but one of the sides tied at the top are lowered: each needs a die
    a character controls and another die that stays behind (moving a side's only die, or
    all of a new side's dice, leaves the same total on one side), and each Schism needs room
    for its new side."""
    top = max(s.total for s in c.sides)
    tied = [s for s in c.sides if s.total == top]
    lowerable = [
        s for s in tied if len(s.dice) >= 2 and any(d.controller is not None for d in s.dice)
    ]
    needed = len(tied) - 1
    return len(lowerable) >= needed and len(c.sides) + needed <= MAX_SIDES


def tie_of_sixes(state: CampaignState, c: Conflict) -> bool:
    """R-DEAD-1 as written: tied, every die a six, and no ally could stake more Debt on it."""
    return (
        c.controlling_side is None
        and all(d.value == 6 for s in c.sides for d in s.dice)
        and not any(could_stake(state, c, ch) for ch in c.allies)
    )


def locked(state: CampaignState, c: Conflict) -> bool:
    """R-DEAD-1: a tie of sixes no ally could stake more Debt on, which no Schism could
    untie either (R-X-DEAD-3)."""
    return tie_of_sixes(state, c) and not schisms_could_untie(c)


def stale(state: CampaignState, c: Conflict) -> bool:
    """R-X-DEAD-2: tied, and nothing about it changed through the last whole page (this one,
    at its resolution; the one before, in the claiming phase)."""
    page = state.page
    if c.controlling_side is not None or page is None:
        return False
    whole = page.number if page.phase == "resolution" else page.number - 1
    return max(c.changed_on, c.created_on) < (page.scene, whole)


def deadlockable(state: CampaignState, c: Conflict) -> bool:
    """Whether a player may declare ``c`` Deadlocked now (R-DEAD-1, R-X-DEAD-2)."""
    page = state.page
    if page is None:
        return False
    if page.phase == "resolution":
        return locked(state, c) or stale(state, c)
    return page.phase == "claiming" and stale(state, c)


def _require_claimant(state: CampaignState, seat: int, conflict_id: int) -> tuple[Conflict, int]:
    page = require_page(state)
    if page.phase != "resolution":
        raise RuleViolation("R-PAGE-7", "Conflicts are resolved in the resolution phase")
    c = conflict(state, conflict_id)
    side = c.controlling_side
    if side is None:
        raise RuleViolation(
            "R-RES-1", "the Conflict is tied: nobody controls it, so it cannot be resolved"
        )
    if c.claims.get(side) != seat:
        raise RuleViolation(
            "R-RES-1", "only the player who claimed the Controlling side resolves a Conflict"
        )
    if c.id in page.handled or (c.id, seat) in page.gloated:
        raise RuleViolation(
            "R-X-GLOAT-1", "you gloated on this Conflict this page: it waits for the next one"
        )
    first = pending(state)[0][0]
    if first != seat:
        raise RuleViolation("R-PAGE-7", f"seat {first} resolves first, clockwise from the Starter")
    return c, side


def _returned(c: Conflict, sides: Iterable[int]) -> tuple[DebtReturned, ...]:
    """R-RES-2: Debt staked on a losing side returns doubled to its Drive."""
    return tuple(
        DebtReturned(character=st.character, drive=st.drive, amount=losing_return(st.amount))
        for i in sides
        for d in c.sides[i].dice
        for st in d.stakes
    )


def _gifts(
    state: CampaignState,
    c: Conflict,
    resolver: int,
    side: int,
    requested: Mapping[int, Mapping[int, int]],
) -> tuple[TokenGift, ...]:
    """R-RES-3: who gives Story Tokens for the Debt on the winning side, and to whom."""
    assert state.scene is not None
    cast = state.scene.cast
    losing = {i for i in range(len(c.sides)) if i != side}
    givers: dict[int, int] = {}
    for d in c.sides[side].dice:
        for st in d.stakes:
            g = cast[st.character]
            givers[g] = givers.get(g, 0) + st.amount
    # Any side but the winner is a losing one, a side that disappeared too (R-X-RES-2).
    losers = {cast[ch] for ch, ever in c.once_allied.items() if ever - {side} and ch in cast}
    creator = c.creator
    mine = sides_of_seat(state, c, creator)
    creator_first = bool(mine & losing) or not mine
    owed = creator_first and any(g != creator and a for g, a in givers.items())

    if not requested:
        # R-X-TOKEN-1: left out, the tokens are given only where one legal way exists; else
        # every way is offered, so that a picker shows each (not one way to copy and edit).
        ways = _ways(givers, losers, creator, owed, state.clockwise_from(resolver))
        if len(ways) > 1:
            raise ChoiceRequired(
                "R-RES-3",
                "give the Story Tokens of the winning side's Debt: giver seat -> {recipient "
                "seat: count}; each choice is a legal way",
                ways,
                "tokens",
            )
        requested = ways[0]

    to_creator = 0
    gifts: list[TokenGift] = []
    for g, amounts in sorted(requested.items()):
        if g not in givers:
            raise RuleViolation(
                "R-RES-3", f"seat {g} has no Debt on the winning side to give", sorted(givers)
            )
        total = sum(amounts.values())
        if total > givers[g] or (losers - {g} and total != givers[g]):
            raise RuleViolation(
                "R-RES-3", f"seat {g} gives exactly {givers[g]} Story Token(s), not {total}"
            )
        for r, n in sorted(amounts.items()):
            if r == g:
                raise RuleViolation("R-RES-3", "no player gives a Story Token to themself")
            if r not in losers and not (r == creator and creator_first):
                raise RuleViolation(
                    "R-RES-3", f"seat {r} was never allied to a losing side", sorted(losers - {g})
                )
            to_creator += n if r == creator else 0
            gifts.append(TokenGift(giver=g, recipient=r, count=n))
    missing = [g for g, a in givers.items() if a and g not in requested and losers - {g}]
    if missing:
        raise RuleViolation("R-RES-3", f"seat {missing[0]} must give its Story Tokens too")
    if owed and to_creator < 1:
        raise RuleViolation(
            "R-RES-3", f"the Conflict's creator, seat {creator}, gets the first Story Token"
        )
    if creator not in losers and to_creator > 1:
        raise RuleViolation("R-RES-3", f"the creator, seat {creator}, gets 1 Story Token only")
    return tuple(gifts)


#: The most ways of giving Story Tokens a refusal lists (R-X-TOKEN-1): a giver of 6 tokens
#: to 3 players has 28, two such givers 784; past this, the first ones, clockwise.
MAX_TOKEN_WAYS = 30


def _ways(
    givers: Mapping[int, int],
    losers: set[int],
    creator: int,
    owed: bool,
    order: Iterable[int],
) -> list[dict[int, dict[int, int]]]:
    """R-X-TOKEN-1: the ways of giving the tokens (at most :data:`MAX_TOKEN_WAYS`): the
    creator's token from the first giver clockwise who is not the creator, each giver's other
    tokens split every way among the other players ever allied to a losing side."""
    options: list[tuple[int, list[dict[int, int]]]] = []
    for g in order:
        amount = givers.get(g, 0)
        first: dict[int, int] = {}
        if owed and amount and g != creator:
            first[creator] = 1
            amount -= 1
            owed = False
        others = sorted(losers - {g})
        # Tokens no one may receive are not given.
        splits = list(_splits(amount, others)) if others else [{}]
        options.append((g, [_added(first, split) for split in splits]))
    ways: list[dict[int, dict[int, int]]] = []
    for chosen in itertools.product(*(mine for _, mine in options)):
        ways.append({g: mine for (g, _), mine in zip(options, chosen, strict=True) if mine})
        if len(ways) == MAX_TOKEN_WAYS:
            break
    return ways


def _splits(amount: int, recipients: Sequence[int]) -> Iterator[dict[int, int]]:
    """Every way of giving ``amount`` tokens to ``recipients`` (a count of 0 left out)."""
    if len(recipients) == 1 or amount == 0:
        yield {recipients[0]: amount} if amount else {}
        return
    head, rest = recipients[0], recipients[1:]
    for n in range(amount, -1, -1):
        for split in _splits(amount - n, rest):
            yield {head: n, **split} if n else split


def _added(a: Mapping[int, int], b: Mapping[int, int]) -> dict[int, int]:
    return {r: a.get(r, 0) + b.get(r, 0) for r in sorted(a.keys() | b.keys())}


def suggest_pairs(c: Conflict) -> tuple[tuple[int, int], ...]:
    """One legal pairing for R-RES-4: pair across the two sides with most dice left."""
    left = {
        i: sorted(s.dice, key=lambda d: (-d.value, d.id)) for i, s in enumerate(c.sides) if s.dice
    }
    pairs = []
    while sum(1 for dice in left.values() if dice) >= 2:
        a, b = sorted((i for i in left if left[i]), key=lambda i: (-len(left[i]), i))[:2]
        pairs.append((left[a].pop(0).id, left[b].pop(0).id))
    return tuple(pairs)


class _Recipients:
    """R-RES-4 / R-DEAD-1: who may get the Inspiration of a die on a side."""

    def __init__(
        self, state: CampaignState, c: Conflict, requested: Mapping[int, int], rule: str
    ) -> None:
        self.state, self.c, self.requested, self.rule = state, c, requested, rule
        self.used: set[int] = set()

    def choose(self, die: Die, side: int, value: int, candidates: list[int]) -> int | None:
        self.used.add(die.id)
        wanted = self.requested.get(die.id)
        if wanted is not None:
            if wanted not in candidates:
                raise RuleViolation(
                    self.rule,
                    f"seat {wanted} may not get the Inspiration of die {die.id}",
                    candidates,
                )
            return wanted
        if not candidates:
            return None  # R-X-RES-1: a side with no allies gives no Inspiration
        if len(candidates) > 1:
            raise ChoiceRequired(
                self.rule,
                f"who gets the Inspiration of {value} from die {die.id} (side {side})?",
                candidates,
                f"inspirations.{die.id}",
            )
        return candidates[0]

    def check_unused(self) -> None:
        extra = sorted(set(self.requested) - self.used)
        if extra:
            raise RuleViolation(self.rule, f"die {extra[0]} makes no Inspiration to give")


def _pairs(c: Conflict, requested: tuple[tuple[int, int], ...] | None) -> list[tuple[Die, Die]]:
    """R-RES-4: the resolver's pairing of dice from different sides, every die used."""
    where = {d.id: (i, d) for i, s in enumerate(c.sides) for d in s.dice}
    with_dice = [i for i, s in enumerate(c.sides) if s.dice]
    if requested is None:
        uniform = all(len({d.value for d in c.sides[i].dice}) == 1 for i in with_dice)
        if len(with_dice) <= 1:
            requested = ()
        elif len(with_dice) == 2 and uniform:
            a, b = (c.sides[i].dice for i in with_dice)
            requested = tuple((x.id, y.id) for x, y in zip(a, b, strict=False))
        else:
            raise ChoiceRequired(
                "R-RES-4",
                "pair each die with a die of another side, until every die is used; the "
                "choice shown is one legal pairing",
                [suggest_pairs(c)],
                "pairs",
            )
    used: set[int] = set()
    pairs = []
    for first, second in requested:
        for x in (first, second):
            if x not in where:
                raise InvalidReference(f"conflict {c.id} has no die {x}")
            if x in used:
                raise RuleViolation("R-RES-4", f"die {x} is paired twice")
            used.add(x)
        if where[first][0] == where[second][0]:
            raise RuleViolation("R-RES-4", f"dice {first} and {second} are on the same side")
        pairs.append((where[first][1], where[second][1]))
    left_sides = {i for x, (i, _) in where.items() if x not in used}
    if len(left_sides) > 1:
        raise RuleViolation(
            "R-RES-4",
            f"keep pairing until every die is used: dice are left on sides {sorted(left_sides)}",
        )
    return pairs


@handle.register
def _resolve(command: Resolve, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    c, side = _require_claimant(state, command.seat, command.conflict)
    resolver = command.seat
    losing = [i for i in range(len(c.sides)) if i != side]
    side_of = {d.id: i for i, s in enumerate(c.sides) for d in s.dice}
    mine = sides_of_seat(state, c, resolver)
    chooser = _Recipients(state, c, command.inspirations, "R-RES-4")

    def recipient(die: Die, value: int) -> int | None:
        s = side_of[die.id]
        if s == side:
            return resolver
        # To another player allied to that side; to themself only with characters on both.
        seats = [
            x for x in seats_allied(state, c, s) if x != resolver or (side in mine and s in mine)
        ]
        return chooser.choose(die, s, value, seats)

    made: list[InspirationMade] = []

    def make(die: Die, value: int, dice: tuple[int, ...]) -> None:
        seat = recipient(die, value)
        if seat is not None:
            made.append(
                InspirationMade(
                    inspiration=state.next_inspiration + len(made),
                    seat=seat,
                    value=value,
                    dice=dice,
                )
            )

    pairs = _pairs(c, command.pairs)
    for a, b in pairs:
        if a.value != b.value:  # equal dice give nothing
            high, low = (a, b) if a.value > b.value else (b, a)
            make(high, high.value - low.value, (a.id, b.id))
    paired = {d.id for p in pairs for d in p}
    for s in c.sides:
        for d in s.dice:
            if d.id not in paired:
                make(d, d.value, (d.id,))
    chooser.check_unused()
    return (
        ConflictResolved(
            conflict=c.id,
            seat=resolver,
            side=side,
            debt_returned=_returned(c, losing),
            debt_spent=tuple(st for d in c.sides[side].dice for st in d.stakes),
            tokens=_gifts(state, c, resolver, side, command.tokens),
            inspirations=tuple(made),
            # R-X-CONF-2: a Goal succeeds when its first side wins; otherwise it failed.
            goal_failed_by=c.names if c.kind == "goal" and side != 0 else (),
        ),
    )


@handle.register
def _gloat(command: Gloat, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    c, side = _require_claimant(state, command.seat, command.conflict)
    # R-GLOAT-1: each time, the highest non-1 die of the claimant's side becomes 1.
    above = sorted((d for d in c.sides[side].dice if d.value > 1), key=lambda d: (-d.value, d.id))
    if command.times > len(above):
        raise RuleViolation("R-GLOAT-1", f"only {len(above)} dice of the side show more than 1")
    dice = tuple(d.id for d in above[: command.times])
    return (Gloated(conflict=c.id, seat=command.seat, dice=dice, tokens=command.times),)


@handle.register
def _deadlock(command: DeclareDeadlock, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    page = require_page(state)
    c = conflict(state, command.conflict)
    if page.phase not in ("resolution", "claiming") or (
        page.phase == "claiming" and not stale(state, c)
    ):
        raise RuleViolation(
            "R-DEAD-1", "a Deadlock is declared at resolution (or, R-X-DEAD-2, of a tie left "
            "unchanged through a whole page, in the claiming phase)"
        )
    if not deadlockable(state, c):
        if page.phase == "resolution" and tie_of_sixes(state, c):
            raise RuleViolation(
                "R-X-DEAD-3",
                "a Schism could still untie it: a character controlling a die on a tied side "
                "may move it to a new side, leaving another side in control",
            )
        raise RuleViolation(
            "R-DEAD-1",
            "only a tie nobody can change is Deadlocked: every die a six and no ally able to "
            "stake more Debt on it, or (R-X-DEAD-2) a tie left unchanged through this page",
        )
    chooser = _Recipients(state, c, command.inspirations, "R-DEAD-1")
    made: list[InspirationMade] = []
    for i, s in enumerate(c.sides):
        for d in s.dice:
            seat = chooser.choose(d, i, d.value, list(seats_allied(state, c, i)))
            if seat is not None:
                made.append(
                    InspirationMade(
                        inspiration=state.next_inspiration + len(made),
                        seat=seat,
                        value=d.value,
                        dice=(d.id,),
                    )
                )
    chooser.check_unused()
    return (
        ConflictDeadlocked(
            conflict=c.id,
            seat=command.seat,
            debt_returned=_returned(c, range(len(c.sides))),
            inspirations=tuple(made),
        ),
    )


@handle.register
def _end_page(command: EndPage, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    page = require_page(state)
    if page.phase != "resolution":
        raise RuleViolation("R-PAGE-7", "the page ends after the resolution phase")
    waiting = pending(state)
    if waiting:
        raise RuleViolation(
            "R-PAGE-7", f"seat {waiting[0][0]} still resolves conflict {waiting[0][1]}"
        )
    if command.seat != page.starter:
        raise RuleViolation("R-X-DEAD-1", f"the Starter (seat {page.starter}) ends the page")
    return (PageEnded(scene=page.scene, page=page.number),)


@progression
def _page_ends(state: CampaignState) -> Iterable[Event]:
    page = state.page
    if page is None or page.phase != "resolution" or pending(state):
        return ()
    if any(locked(state, c) for c in state.conflicts.values()):
        return ()  # R-X-DEAD-1: someone may still declare it; the Starter ends the page
    return (PageEnded(scene=page.scene, page=page.number),)


# -- folds -----------------------------------------------------------------------------------


def _remove(
    state: CampaignState,
    conflict_id: int,
    returned: Iterable[DebtReturned],
    made: Iterable[InspirationMade],
) -> CampaignState:
    for r in returned:
        state = with_character(state, add_debt(state.characters[r.character], r.drive, r.amount))
    state = give_inspirations(state, made, conflict_id)
    conflicts = {i: c for i, c in state.conflicts.items() if i != conflict_id}
    page = state.page
    assert page is not None
    page = replace(
        page, handled=page.handled | {conflict_id}, vetoable=page.vetoable - {conflict_id}
    )
    return replace(state, conflicts=conflicts, page=page)


@apply.register
def _resolved(event: ConflictResolved, state: CampaignState) -> CampaignState:
    c = state.conflicts[event.conflict]
    for gift in event.tokens:
        state = add_tokens(state, gift.recipient, gift.count)
    if event.goal_failed_by and state.scene is not None:
        failed = {(ch, goal_key(c.text)) for ch in event.goal_failed_by}
        failed_goals = tuple(sorted({*state.scene.failed_goals, *failed}))
        state = replace(state, scene=replace(state.scene, failed_goals=failed_goals))
    return _remove(state, event.conflict, event.debt_returned, event.inspirations)


@apply.register
def _gloated(event: Gloated, state: CampaignState) -> CampaignState:
    for die in event.dice:
        state = set_die(state, event.conflict, die, 1)
    state = add_tokens(state, event.seat, event.tokens)
    page = state.page
    assert page is not None
    # R-X-GLOAT-1: the gloater is done with it this page; another claimant may not be.
    gloated = page.gloated | {(event.conflict, event.seat)}
    return replace(state, page=replace(page, gloated=gloated))


@apply.register
def _deadlocked(event: ConflictDeadlocked, state: CampaignState) -> CampaignState:
    return _remove(state, event.conflict, event.debt_returned, event.inspirations)
