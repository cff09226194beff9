"""What the table is waiting for, and concrete candidate commands (C-SRV-4).

``waiting_for`` answers "who may do what now" by command type, and offers a type only when
some command of it is accepted now (the parts of an action — stake, split, roll — are tried
against the Decider, since their legality depends on dice, stakes and Debt); ``candidates``
lists concrete commands worth trying (most legal, some not) for random play, the demo and
benchmarks, and ``legal`` those of them the Decider accepts, which the board lists for the
moves whose forms name a character or a Complication. The Decider stays the judge.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from ..errors import ChoiceRequired, DomainError
from . import commands as c
from .model import FACTIONS, CampaignState


def accepted(state: CampaignState, command: c.Command, depth: int = 3) -> bool:
    """Whether the Decider accepts ``command`` (its die a 1), for some choice it asks for."""
    from .decider import decide, with_dice

    try:
        decide(state, with_dice(command, lambda: 1))
        return True
    except ChoiceRequired as asked:
        if depth == 0 or not asked.field:
            return False
        return any(accepted(state, with_choice(command, asked.field, choice), depth - 1)
                   for choice in asked.choices)
    except DomainError:
        return False


def _offered(state: CampaignState, seat: int, *kinds: type[c.Command]) -> list[str]:
    """The tags (without ``capees.``) of ``kinds`` some candidate of ``seat`` is accepted for."""
    found = []
    options = [x for x in candidates(state) if getattr(x, "seat", None) == seat]
    for kind in kinds:
        if any(accepted(state, x) for x in options if type(x) is kind):
            found.append(command_name(kind))
    return found


def legal(state: CampaignState, seat: int, kind: type[c.Command]) -> list[c.Command]:
    """The candidates of ``seat`` of type ``kind`` that the Decider accepts (for some choice
    it would ask for): every character and Complication a form of that move may name now."""
    return [x for x in candidates(state)
            if type(x) is kind and getattr(x, "seat", None) == seat and accepted(state, x)]


def command_name(kind: type[c.Command]) -> str:
    """The tag of a command type without its ``capees.`` prefix (``claim``)."""
    return str(kind.__struct_config__.tag).removeprefix("capees.")


def waiting_for(state: CampaignState) -> dict[int, tuple[str, ...]]:
    """seat -> the command types (tags, ``capees.claim``…) it may use now to move the game on."""
    from .actions import asked
    from .pages import acting_seat
    from .resolution import pending_claims

    if not state.created or state.closed or not state.players:
        return {}
    moves: dict[int, list[str]] = {}

    def add(seat: int, *types: str) -> None:
        moves.setdefault(seat, []).extend(types)

    scene, editor = state.scene, state.editor
    if editor is None:
        for p in state.players:
            add(p.seat, "create_character", *_offered(state, p.seat, c.BeginStory))
        return _tags(moves)
    if scene is None:
        # Offered only when accepted: the first scene of a story names a hero (C-PROM-2).
        add(editor, *_offered(state, editor, c.StartScene))
        return _tags(moves)
    step = scene.step
    if step == "inspirations":
        add(scene.cursor, "use_inspiration", "pass_setup")
    elif step == "complications":
        add(editor, "add_complication", *(("pass_setup",) if state.complications else ()))
    elif step == "prominence":
        add(scene.cursor, "buy_prominence", "pass_setup")
    elif step == "balancing":
        # C-SRV-4: the Editor can always create a character to balance with.
        add(editor, *_offered(state, editor, c.Balance), "create_character")
    elif step in ("claims", "final_claims"):
        add(scene.cursor, "claim", "pass_claim")
    elif step == "overdrawn" and scene.overdrawn:
        add(scene.narrator[scene.overdrawn[0][0]], "roll_overdrawn")
    elif step == "actions":
        action = scene.action
        if action is None:
            seat = acting_seat(state)
            if seat is not None:
                add(seat, "start_action")
        elif action.roll is not None:
            add(action.roll.seat, "keep_roll", "turn_back")
        elif action.reactions is not None:
            seat = asked(state)
            if seat is not None:
                add(seat, "react", "pass_reaction")
        else:
            add(action.seat, *_offered(state, action.seat, c.Stake, c.Split, c.RollAbility),
                "end_action")
    elif step == "resolution":
        if scene.resolving is not None:
            # C-RES-3: the resolution waits for each staker's player to give its tokens.
            for seat in sorted(set(scene.resolving.givers.values())):
                add(seat, "give_tokens")
            return _tags(moves)
        waiting = pending_claims(state)
        if waiting:
            add(waiting[0][0], "check_claim")
    if step in ("claims", "overdrawn", "actions") and scene.fresh and scene.page >= 2:
        add(editor, "end_scene")  # C-SCENE-2
    return _tags(moves)


def _tags(moves: dict[int, list[str]]) -> dict[int, tuple[str, ...]]:
    return {s: tuple(dict.fromkeys(f"capees.{x}" for x in t)) for s, t in moves.items()}


def candidates(state: CampaignState) -> list[c.Command]:
    """Concrete commands worth trying now (for random play); the Decider judges them."""
    return list(_candidates(state))


def _candidates(state: CampaignState) -> Iterator[c.Command]:
    from .actions import asked
    from .pages import acting_seat, actors, highest_dice, overdrawn_choices
    from .resolution import pending_claims

    scene, editor = state.scene, state.editor
    if not state.created or state.closed:
        return
    if editor is None:
        heroes = {ch.created_by for ch in state.characters.values() if ch.hero}
        for p in state.players:
            if p.seat not in heroes:
                yield c.BeginStory(seat=p.seat, editor=p.seat)
            yield c.CreateCharacter(seat=p.seat, name=f"Passer-by {state.next_character}")
        return
    if scene is None:
        for ch in state.characters.values():
            if ch.hero:
                yield c.StartScene(seat=editor, featured=ch.id)
        yield c.StartScene(seat=editor)
        return
    step = scene.step
    others = [x for x in state.characters.values() if not x.hero and x.full_sheet]
    if step == "inspirations":
        for card in state.player(scene.cursor).inspirations:
            yield c.UseInspiration(seat=scene.cursor, inspiration=card.id, name=f"New {card.id}")
        yield c.PassSetup(seat=scene.cursor)
    elif step == "complications":
        yield c.AddComplication(seat=editor, name=f"Trouble {state.next_complication}")
        if state.complications:
            yield c.PassSetup(seat=editor)
    elif step == "prominence":
        for sheet in state.characters.values():
            for side in FACTIONS:
                yield c.BuyProminence(seat=scene.cursor, character=sheet.id, side=side)
        yield c.PassSetup(seat=scene.cursor)
        yield c.PassSetup(seat=scene.cursor)
    elif step == "balancing":
        hero, opponent = scene.total("hero"), scene.total("opponent")
        lower = "hero" if hero < opponent else "opponent"
        for other in others:
            yield c.Balance(seat=editor, character=other.id, points=max(1, abs(hero - opponent)),
                            side=scene.faction.get(other.id, lower))  # type: ignore[arg-type]
        yield c.CreateCharacter(seat=editor, name=f"Minion {state.next_character}",
                                drives=MINION_DRIVES, abilities=MINION_ABILITIES)
    elif step in ("claims", "final_claims"):
        for present in scene.present():
            for x in state.complications:
                yield c.Claim(seat=scene.cursor, character=present, complication=x)
        yield c.PassClaim(seat=scene.cursor)
    elif step == "overdrawn" and scene.overdrawn:
        for rolling in overdrawn_choices(state):
            for cid, die in highest_dice(state, rolling)[:2]:
                yield c.RollOverdrawn(seat=scene.narrator[rolling], character=rolling,
                                      die=(cid, die.id))
    elif step == "actions":
        yield from _action_candidates(state, asked(state), acting_seat(state), actors(state))
    if step in ("claims", "overdrawn", "actions") and scene.fresh and scene.page >= 2:
        yield c.EndScene(seat=editor)
    if step == "resolution" and scene.resolving is not None:
        # The recipient is asked for (ChoiceRequired), so one candidate per stake.
        for staker, seat in scene.resolving.givers.items():
            yield c.GiveTokens(seat=seat, complication=scene.resolving.complication,
                               character=staker)
    elif step == "resolution":
        for seat, cid in pending_claims(state)[:1]:
            yield c.CheckClaim(seat=seat, complication=cid, replacement=f"Aftermath {cid}")
            for card in state.player(seat).inspirations[-1:]:
                yield c.CheckClaim(seat=seat, complication=cid, replacement=f"Echo {cid}",
                                   inspiration=card.id)


def _action_candidates(state: CampaignState, reacting: int | None, acting: int | None,
                       left: list[int]) -> Iterator[c.Command]:
    scene = state.scene
    assert scene is not None
    action = scene.action
    if action is None:
        if acting is not None:
            for ch in left:
                if scene.narrator[ch] == acting:
                    yield c.StartAction(seat=acting, character=ch)
        return
    who = state.characters[action.character]
    drive = who.drives[0].name if who.drives else None
    if action.roll is not None:
        yield c.KeepRoll(seat=action.roll.seat)
        yield c.TurnBack(seat=action.roll.seat)
        return
    if action.reactions is not None:
        if reacting is None:
            return
        for ch in scene.present():
            if scene.narrator[ch] != reacting:
                continue
            them = state.characters[ch]
            for a in them.abilities:
                if a.type == "trope":
                    yield c.React(seat=reacting, character=ch, ability=a.name,
                                  drive=them.drives[0].name if a.super else None)
        yield c.PassReaction(seat=reacting)
        return
    for x in state.complications.values():
        for d in (d for s in x.sides for d in s.dice):
            if not action.rolled:
                for a in who.abilities:
                    if a.type != "trope" and a.rating >= d.value:
                        yield c.RollAbility(seat=action.seat, ability=a.name, complication=x.id,
                                            die=d.id, drive=drive if a.super else None)
            if not action.split and d.value >= 2:
                yield c.Split(seat=action.seat, complication=x.id, die=d.id, into=2)
                yield c.Split(seat=action.seat, complication=x.id, die=d.id, into=2, move=1,
                              stake=1)
                yield c.Split(seat=action.seat, complication=x.id, die=d.id, into=2, move=1)
        for slot in who.drives:
            if slot.debt:
                yield c.Stake(seat=action.seat, complication=x.id, drive=slot.name)
        if action.seat == state.editor:
            # C-STAKE-5: the Editor may stake for an absent opponent (the Decider says who).
            for other in state.characters.values():
                if other.id not in scene.prominence:
                    yield c.Stake(seat=action.seat, complication=x.id, character=other.id)
    yield c.EndAction(seat=action.seat)
    yield c.EndAction(seat=action.seat)


def _ladder(prefix: str, kind: str, n: int, super_: bool = False) -> tuple[c.AbilitySpec, ...]:
    return tuple(c.AbilitySpec(name=f"{prefix} {i}", type=kind, rating=i,  # type: ignore[arg-type]
                               super=super_) for i in range(1, n + 1))


#: A stock non-hero sheet (C-NPC-2), for a character created to balance with (C-SRV-4).
MINION_DRIVES = {"Greed": 2, "Fear": 2, "Loyalty": 2, "Rage": 2, "Need": 1}
MINION_ABILITIES = (_ladder("Skill", "skill", 3) + _ladder("Attitude", "attitude", 4)
                    + _ladder("Trope", "trope", 5))


def with_choice(command: c.Command, field: str, value: object) -> c.Command:
    """``command`` with the choice a ChoiceRequired asked for filled in."""
    name, _, key = field.partition(".")
    if key:
        mapping = dict(getattr(command, name))
        mapping[int(key)] = value
        value = mapping
    elif isinstance(value, list):
        value = tuple(value)
    return msgspec.structs.replace(command, **{name: value})
