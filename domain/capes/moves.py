"""What the table is waiting for: who may do what now, and concrete candidate commands.

``waiting_for`` answers the board's "whose turn is it and what may they do" (by command type).
``candidates`` lists concrete commands worth trying now — most legal, some not — for random
play in property tests, simulations and benchmarks (like python-chess's legal moves, but the
Decider stays the judge: a candidate may still be refused).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import msgspec

from . import commands as c
from .model import CampaignState, Turn
from .resolution import deadlockable, pending
from .rolls import asked, usable
from .turns import turn_seat


def waiting_for(state: CampaignState) -> dict[int, tuple[str, ...]]:
    """seat -> the command types it may use now to move the game on (narration aside)."""
    if not state.created or state.closed or not state.players:
        return {}
    page = state.page
    moves: dict[int, list[str]] = {}

    def add(seat: int, *types: str) -> None:
        moves.setdefault(seat, []).extend(types)

    if state.scene is None:
        if state.next_framer is None:
            for p in state.players:
                add(p.seat, "frame_scene")
        else:
            add(state.next_framer, "frame_scene", "pass_framing")
        return {s: tuple(t) for s, t in moves.items()}
    if page is None:  # between a page's end and the next page's start, inside one command
        return {}
    if page.vetoable:
        for p in state.players:
            add(p.seat, "veto")
    if page.phase == "overdrawn":
        for o in page.overdrawn:
            add(state.scene.cast[o.character], "roll_overdrawn")
    elif page.phase == "claiming":
        add(page.cursor, "choose_character", "create_conflict", "claim", "pass_claiming")
    elif page.phase == "free_play":
        add(page.starter, "start_turn", "end_free_play")
    elif page.phase == "actions":
        _turn_moves(state, page.turn, add)
    elif page.phase == "resolution":
        waiting = pending(state)
        if waiting:
            add(waiting[0][0], "resolve", "gloat")
        elif any(deadlockable(state, x) for x in state.conflicts.values()):
            add(page.starter, "end_page")
        if any(deadlockable(state, x) for x in state.conflicts.values()):
            for p in state.players:
                add(p.seat, "declare_deadlock")
    return {s: tuple(dict.fromkeys(t)) for s, t in moves.items()}


def _turn_moves(state: CampaignState, turn: Turn | None, add: Callable[..., None]) -> None:
    page = state.page
    assert page is not None
    if turn is None:
        seat = turn_seat(state)
        if seat is not None:
            add(seat, "start_turn", *(("pass_turn",) if page.round == "bought" else ()))
    elif turn.roll is not None:
        add(turn.roll.seat, "accept_roll", "reject_roll")
    elif turn.reactions is not None:
        seat = asked(state)
        if seat is not None:
            add(seat, "react", "pass_reaction")
    else:
        if turn.and_then is not None:
            for seat in turn.and_then.seats:
                add(seat, "narrate")
        if not turn.acted:
            add(turn.seat, "roll_die", "raise_inspiration", "create_conflict")
        add(turn.seat, "stake_debt", "split_die", "schism", "spend_inspiration", "end_turn")


def candidates(state: CampaignState) -> list[c.Command]:
    """Concrete commands worth trying now (for random play); the Decider judges them."""
    return list(_candidates(state))


def _candidates(state: CampaignState) -> Iterator[c.Command]:
    page, scene = state.page, state.scene
    if not state.created or state.closed:
        return
    if scene is None:
        seat = state.next_framer or 1
        yield c.FrameScene(seat=seat, text="A scene")
        yield c.PassFraming(seat=seat)
        return
    assert page is not None
    for conflict_id in page.vetoable:
        for p in state.players:
            yield c.Veto(seat=p.seat, conflict=conflict_id)
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
        for x in state.conflicts.values():
            if deadlockable(state, x):
                yield c.DeclareDeadlock(seat=page.starter, conflict=x.id)
        yield c.EndPage(seat=page.starter)


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
    if not turn.acted:
        for x in state.conflicts.values():
            for s in x.sides:
                for d in s.dice:
                    for a in who.abilities:
                        if usable(who, a) and a.rating >= d.value:
                            yield c.RollDie(seat=turn.seat, ability=a.name, conflict=x.id, die=d.id)
        yield c.CreateConflict(seat=turn.seat, kind="event", text=f"Event {state.next_conflict}")
        for insp in state.player(turn.seat).inspirations:
            for a in who.abilities:
                yield c.RaiseInspiration(seat=turn.seat, ability=a.name, inspiration=insp.id)
    for x in state.conflicts.values():
        for side, s in enumerate(x.sides):
            for d in s.dice:
                if d.controller is None:
                    yield c.StakeDebt(seat=turn.seat, conflict=x.id, die=d.id)
                elif d.controller == who.id and d.value >= 2:
                    yield c.SplitDie(seat=turn.seat, conflict=x.id, die=d.id, into=2)
                    yield c.Schism(seat=turn.seat, conflict=x.id, side=side, dice=(d.id,))
                for insp in state.player(turn.seat).inspirations:
                    if insp.value > d.value:
                        yield c.SpendInspiration(
                            seat=turn.seat, inspiration=insp.id, conflict=x.id, die=d.id
                        )
    yield c.EndTurn(seat=turn.seat)
    yield c.EndTurn(seat=turn.seat)


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
