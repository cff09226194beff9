"""What the table is waiting for: who may do what now, and concrete candidate commands.

``waiting_for`` answers the board's "whose turn is it and what may they do" (by command type).
It offers a seat a command only when the rules accept that command for at least one choice of
its arguments (R-STAKE-4: the board never offers what the rules refuse, and some seat can
always move); the checks are the rule modules' own. ``candidates`` lists concrete commands of
every kind worth trying now — most legal, some not — for random play in property tests,
simulations and benchmarks (like python-chess's legal moves, but the Decider stays the judge:
a candidate may still be refused, or answer with a choice to make).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import msgspec

from . import commands as c
from .characters import awaited
from .conflicts import goal_key
from .model import CampaignState, Character, Conflict, Turn
from .pages import claimable
from .resolution import deadlockable, pending, tie_of_sixes
from .rolls import ally_choices, asked, usable
from .staking import may_stake, schisms
from .table import MIN_PLAYERS
from .turns import turn_seat

#: The largest Inspiration (R-ABIL-2).
MAX_INSPIRATION = 6


def waiting_for(state: CampaignState) -> dict[int, tuple[str, ...]]:
    """seat -> the command types it may use now to move the game on (narration aside)."""
    if not state.created or state.closed or len(state.players) < MIN_PLAYERS:
        return {}
    page = state.page
    moves: dict[int, list[str]] = {}

    def add(seat: int, *types: str) -> None:
        moves.setdefault(seat, []).extend(types)

    for seat, _ in _agreements(state):
        add(seat, "link_exemplar")
    if state.scene is None:
        if state.next_framer is None:
            for p in state.players:
                add(p.seat, "frame_scene")
        else:
            add(state.next_framer, "frame_scene", "pass_framing")
        return {s: tuple(dict.fromkeys(t)) for s, t in moves.items()}
    if page is None:  # between a page's end and the next page's start, inside one command
        return {s: tuple(dict.fromkeys(t)) for s, t in moves.items()}
    for p in state.players:
        if any(can_veto(state, p.seat, x) for x in page.vetoable):
            add(p.seat, "veto")
    if page.phase == "overdrawn":
        for o in page.overdrawn:
            add(state.scene.cast[o.character], "roll_overdrawn")
    elif page.phase == "claiming":
        _claiming_moves(state, page.cursor, add)
    elif page.phase == "free_play":
        if state.scene.characters_of(page.starter):
            add(page.starter, "start_turn")
        add(page.starter, "end_free_play")
    elif page.phase == "actions":
        _turn_moves(state, page.turn, add)
    elif page.phase == "resolution":
        waiting = pending(state)
        if waiting:
            seat, conflict_id = waiting[0]
            add(seat, "resolve")
            if _can_gloat(state.conflicts[conflict_id]):
                add(seat, "gloat")
        elif any(tie_of_sixes(state, x) for x in state.conflicts.values()):
            # R-X-DEAD-1: the page waits for a possible Deadlock, and only its Starter ends
            # it. A tie of sixes a Schism could untie (R-X-DEAD-3) only waits in a page an
            # older release stopped for its Deadlock: the Starter ends that one too.
            add(page.starter, "end_page")
    if any(deadlockable(state, x) for x in state.conflicts.values()):
        for p in state.players:
            add(p.seat, "declare_deadlock")
    return {s: tuple(dict.fromkeys(t)) for s, t in moves.items()}


def _agreements(state: CampaignState) -> Iterator[tuple[int, c.LinkExemplar]]:
    """R-CHAR-6, R-X-CHAR-2: each pending shared Exemplar's awaited seat, and the
    ``link_exemplar`` that agrees to it (the same link, sent by that seat)."""
    for r in state.exemplar_requests:
        seat = awaited(state, r)
        if seat is not None:
            yield seat, c.LinkExemplar(seat=seat, character=r.character, exemplar=r.exemplar,
                                       drive=r.drive)


def can_veto(state: CampaignState, seat: int, conflict_id: int) -> bool:
    """R-CONF-3: anyone vetoes an Event; a Goal, only a player of a character it names."""
    x = state.conflicts.get(conflict_id)
    if x is None or state.scene is None:
        return False
    return x.kind == "event" or any(state.scene.cast.get(ch) == seat for ch in x.names)


def _can_gloat(x: Conflict) -> bool:
    """R-GLOAT-1: the claimed side has a die above 1 to set to 1."""
    side = x.controlling_side
    return side is not None and any(d.value > 1 for d in x.sides[side].dice)


def free_pairs(state: CampaignState, seat: int) -> list[tuple[int, int]]:
    """Exemplar pairs whose Free Conflict ``seat`` may add now (R-CHAR-6)."""
    scene = state.scene
    if scene is None:
        return []
    pairs = []
    for who in state.characters.values():
        for e in who.exemplars:
            pair = (min(who.id, e.other), max(who.id, e.other))
            if (
                who.id in scene.cast
                and e.other in scene.cast
                and seat in (scene.cast[who.id], scene.cast[e.other])
                and pair not in scene.free_conflicts_used
                and pair not in pairs
            ):
                pairs.append(pair)
    return pairs


def _claiming_moves(state: CampaignState, seat: int, add: Callable[..., None]) -> None:
    scene, page = state.scene, state.page
    assert scene is not None and page is not None
    tokens = state.player(seat).tokens
    if any(ch not in scene.cast for ch in state.characters) and (
        tokens >= 1 or not scene.characters_of(seat)
    ):
        add(seat, "choose_character")
    if tokens >= 1 or free_pairs(state, seat):
        add(seat, "create_conflict")
    if (tokens >= 1 or seat not in page.free_claims_used) and any(
        claimable(state, x, seat) for x in state.conflicts.values()
    ):
        add(seat, "claim")
    add(seat, "pass_claiming")


def _turn_moves(state: CampaignState, turn: Turn | None, add: Callable[..., None]) -> None:
    page = state.page
    assert page is not None
    if turn is None:
        seat = turn_seat(state)
        if seat is not None:
            add(seat, "start_turn", *(("pass_turn",) if page.round == "bought" else ()))
        return
    if turn.roll is not None:
        for accept, name in ((True, "accept_roll"), (False, "reject_roll")):
            if decision_sides(state, turn, accept):
                add(turn.roll.seat, name)
        return
    if turn.reactions is not None:
        seat = asked(state)
        if seat is not None:
            add(seat, "react", "pass_reaction")
        return
    if turn.and_then is not None:
        # R-X-ROLL-2: the action is not over until its And Then is narrated; nothing else
        # (no Stake, Split, Schism, Inspiration, nor the turn's end) comes first.
        for seat in turn.and_then.seats:
            add(seat, "narrate")
        return
    who = state.characters[turn.character]
    if not turn.acted:
        if any(True for _ in _rolls(state, turn, who)):
            add(turn.seat, "roll_die")
        if any(True for _ in _raises(state, turn, who)):
            add(turn.seat, "raise_inspiration")
        if not turn.staked:
            add(turn.seat, "create_conflict")
    if any(True for _ in _stakes(state, turn, who)):
        add(turn.seat, "stake_debt")
    if any(True for _ in _splits(state, turn, who)):
        add(turn.seat, "split_die")
    if any(schisms(turn, who, x) for x in state.conflicts.values()):
        add(turn.seat, "schism")
    if any(True for _ in _spends(state, turn.seat)):
        add(turn.seat, "spend_inspiration")
    # R-STAKE-4: a turn can always end (after its And Then, which is always possible).
    add(turn.seat, "end_turn")


def decision_sides(state: CampaignState, turn: Turn, accept: bool) -> list[int]:
    """The sides the roll's decision may ally to (R-ROLL-3, bound by a promise: R-X-STAKE-1)."""
    roll = turn.roll
    assert roll is not None
    choices = ally_choices(state, roll, accept)
    promised = {s for x, s in turn.promised if x == roll.conflict}
    if promised and not roll.reaction:
        choices = [s for s in choices if s in promised]
    return choices


# -- concrete moves of the turn's character ---------------------------------------------------


def _rolls(state: CampaignState, turn: Turn, who: Character) -> Iterator[c.RollDie]:
    """R-ABIL-2: a usable ability rated at least the die; on the promised Conflict, if any."""
    promised = {x for x, _ in turn.promised}
    for x in state.conflicts.values():
        if promised and x.id not in promised:
            continue
        for s in x.sides:
            for d in s.dice:
                for a in who.abilities:
                    if usable(who, a) and a.rating >= d.value:
                        yield c.RollDie(seat=turn.seat, ability=a.name, conflict=x.id, die=d.id)


def _raises(state: CampaignState, turn: Turn, who: Character) -> Iterator[c.RaiseInspiration]:
    """R-ABIL-2: an Inspiration below 6 and a usable ability rated at least it; no promise."""
    if turn.promised:
        return
    for insp in state.player(turn.seat).inspirations:
        for a in who.abilities:
            if insp.value < MAX_INSPIRATION and usable(who, a) and a.rating >= insp.value:
                yield c.RaiseInspiration(seat=turn.seat, ability=a.name, inspiration=insp.id)


def _stakes(state: CampaignState, turn: Turn, who: Character) -> Iterator[c.StakeDebt]:
    for x in state.conflicts.values():
        for index, s in enumerate(x.sides):
            for d in s.dice:
                if d.controller is None and may_stake(turn, who, x, index):
                    yield c.StakeDebt(seat=turn.seat, conflict=x.id, die=d.id)


def _splits(state: CampaignState, turn: Turn, who: Character) -> Iterator[c.SplitDie]:
    for x in state.conflicts.values():
        for index, s in enumerate(x.sides):
            for d in s.dice:
                if d.controller == who.id and d.value >= 2 and may_stake(turn, who, x, index):
                    for into in range(2, d.value + 1):
                        if may_stake(turn, who, x, index, into - 1):
                            yield c.SplitDie(seat=turn.seat, conflict=x.id, die=d.id, into=into)


def _spends(state: CampaignState, seat: int) -> Iterator[c.SpendInspiration]:
    """R-INSP-1: an Inspiration above a die's value raises it."""
    for insp in state.player(seat).inspirations:
        for x in state.conflicts.values():
            for s in x.sides:
                for d in s.dice:
                    if insp.value > d.value:
                        yield c.SpendInspiration(seat=seat, inspiration=insp.id,
                                                 conflict=x.id, die=d.id)


# -- candidates for random play ---------------------------------------------------------------


def candidates(state: CampaignState) -> list[c.Command]:
    """Concrete commands worth trying now (for random play); the Decider judges them."""
    return list(_candidates(state))


def _candidates(state: CampaignState) -> Iterator[c.Command]:
    page, scene = state.page, state.scene
    if not state.created or state.closed:
        return
    for _, agree in _agreements(state):
        yield agree
    if scene is None:
        if state.next_framer is None:
            for p in state.players:
                yield c.FrameScene(seat=p.seat, text="A scene")
        else:
            yield c.FrameScene(seat=state.next_framer, text="A scene")
            yield c.PassFraming(seat=state.next_framer)
        return
    assert page is not None
    for conflict_id in sorted(page.vetoable):
        for p in state.players:
            yield c.Veto(seat=p.seat, conflict=conflict_id)
    for x in state.conflicts.values():
        if deadlockable(state, x):
            for p in state.players:
                yield c.DeclareDeadlock(seat=p.seat, conflict=x.id)
    if page.phase == "overdrawn":
        for o in page.overdrawn:
            yield c.RollOverdrawn(
                seat=scene.cast[o.character], character=o.character, drive=o.drive
            )
    elif page.phase == "claiming":
        seat = page.cursor
        for ch in state.characters:
            if ch not in scene.cast:
                yield c.ChooseCharacter(seat=seat, character=ch)
        for x in state.conflicts.values():
            for side in range(len(x.sides)):
                yield c.Claim(seat=seat, conflict=x.id, side=side)
        yield from _creations(state, seat, claiming=True)
        yield c.PassClaiming(seat=seat)
        yield c.PassClaiming(seat=seat)
    elif page.phase == "free_play":
        yield c.EndFreePlay(seat=page.starter)
        for ch in scene.characters_of(page.starter):
            yield c.StartTurn(seat=page.starter, character=ch)
    elif page.phase == "actions":
        yield from _turn_candidates(state)
    elif page.phase == "resolution":
        for seat, conflict_id in pending(state)[:1]:
            yield c.Resolve(seat=seat, conflict=conflict_id)
            yield c.Gloat(seat=seat, conflict=conflict_id)
        yield c.EndPage(seat=page.starter)


def _creations(state: CampaignState, seat: int, *, claiming: bool) -> Iterator[c.CreateConflict]:
    """An Event, a Goal naming each character the seat plays, and (claiming) Free Conflicts."""
    scene = state.scene
    assert scene is not None
    number = state.next_conflict
    yield c.CreateConflict(seat=seat, kind="event", text=f"Event {number}")
    failed = {ch for ch, _ in scene.failed_goals}
    for ch in scene.characters_of(seat):
        text = f"Goal {number}" if ch not in failed else f"Goal {number} (again)"
        if (ch, goal_key(text)) not in scene.failed_goals:
            yield c.CreateConflict(seat=seat, kind="goal", text=text, names=(ch,))
    if claiming:
        for pair in free_pairs(state, seat):
            yield c.CreateConflict(seat=seat, kind="event", text=f"Free Conflict {number}",
                                   free_for=pair)


def _turn_candidates(state: CampaignState) -> Iterator[c.Command]:
    page, scene = state.page, state.scene
    assert page is not None and scene is not None
    turn = page.turn
    if turn is None:
        seat = turn_seat(state)
        if seat is not None:
            for ch in scene.characters_of(seat):
                yield c.StartTurn(seat=seat, character=ch)
            if page.round == "bought":
                yield c.PassTurn(seat=seat)
        return
    if turn.roll is not None:
        for accept in (c.AcceptRoll, c.RejectRoll):
            yield accept(seat=turn.roll.seat)
        return
    if turn.reactions is not None:
        seat = asked(state)
        if seat is None:
            return
        for ch in scene.characters_of(seat):
            who = state.characters[ch]
            for a in who.abilities:
                if usable(who, a):
                    yield c.React(seat=seat, character=ch, ability=a.name)
        yield c.PassReaction(seat=seat)
        yield c.PassReaction(seat=seat)
        return
    who = state.characters[turn.character]
    if turn.and_then is not None:
        for seat in turn.and_then.seats:
            yield c.Narrate(seat=seat, text="And then...", and_then=True)
        return  # R-X-ROLL-2: the And Then comes first
    if not turn.acted:
        yield from _rolls(state, turn, who)
        yield from _creations(state, turn.seat, claiming=False)
        yield from _raises(state, turn, who)
    yield from _stakes(state, turn, who)
    yield from _splits(state, turn, who)
    for x in state.conflicts.values():
        yield from schisms(turn, who, x)
    yield from _spends(state, turn.seat)
    yield c.EndTurn(seat=turn.seat)


def command_name(command: object) -> str:
    """The ``type`` tag of a command (``roll_die``), as ``waiting_for`` names it."""
    tag = type(command).__struct_config__.tag  # type: ignore[attr-defined]
    return str(tag)


def with_choice(command: c.Command, field: str, value: object) -> c.Command:
    """``command`` with the choice a ChoiceRequired asked for filled in.

    ``field`` is ``"ally"``-like (a field) or ``"inspirations.7"``-like (an entry of a mapping).
    """
    name, _, key = field.partition(".")
    if key:
        mapping = dict(getattr(command, name))
        mapping[int(key)] = value
        value = mapping
    return msgspec.structs.replace(command, **{name: value})
