"""Random play through ``Campaigns`` that checks no game can freeze (issue 11, R-STAKE-4).

A game seats 3-5 players with heroes of every strength (abilities rated up to 3 as well as up
to 5, with Drives or undifferentiated), mundane characters and Exemplars (shared ones too), and
plays whole scenes through the application (in-memory store, seeded dice) with every kind of
move the rules have: claims, Goals and Events, Free Conflicts of Exemplars, stakes, splits and
schisms before and after acting, Inspirations spent before acting and raised, reactions,
gloats, deadlocks, undo, and characters changed between scenes. Moves come from
``domain.capes.moves.candidates`` (the Decider judges them); choices a refusal asks for are
filled at random.

After every accepted command :func:`check` verifies, on the state the application returned:

(a) some seat has a command that advances play and is accepted (else the game is *frozen*);
(b) every command name the board's ``waiting_for`` offers a seat is accepted for at least one
    choice of its arguments (the board never offers what the rules refuse);
(c) the invariants of the game (:func:`check_invariants`).

Used by ``tests/test_liveness.py`` (a bounded number of seeded games in CI) and by
``scripts/playtest`` (the soak: thousands of games with a progress bar).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from application.campaigns import Campaigns
from application.dice import SeededDice
from domain.capes import EDITION
from domain.capes import commands as c
from domain.capes.model import HEROIC_DRIVES, VILLAINOUS_DRIVES, CampaignState
from domain.capes.moves import candidates, command_name, waiting_for, with_choice
from domain.errors import ChoiceRequired, DomainError
from domain.record.commands import Undo

#: How often a command name is drawn (1 when not listed): passing and ending are likelier than
#: opening new things, so scenes end, while every kind of move still comes up often.
WEIGHTS: dict[str, float] = {
    "create_conflict": 0.6, "choose_character": 0.5, "veto": 0.15, "pass_framing": 0.2,
    "claim": 2, "pass_claiming": 2, "roll_die": 3, "end_turn": 1.5, "resolve": 3,
    "accept_roll": 2, "pass_reaction": 2, "react": 0.5, "gloat": 0.4, "schism": 0.7,
    "split_die": 0.8, "raise_inspiration": 0.7, "declare_deadlock": 1.5, "start_turn": 2,
}
#: Commands that are never what advances a game by themselves (a veto only removes; agreeing
#: to a shared Exemplar, R-X-CHAR-2, builds a character but moves no scene on).
NOT_PROGRESS = frozenset({"veto", "link_exemplar"})
#: Probability that a move is an undo of the last acting seat's command (R-REC-1).
UNDO_CHANCE = 0.03
#: Choices tried per level when checking that a command is accepted for some arguments.
CHOICE_BREADTH = 8


class Frozen(AssertionError):
    """(a) failed: no seat has a command that advances play and is accepted."""


class FalseOffer(AssertionError):
    """(b) failed: ``waiting_for`` offers a command the rules refuse for every argument."""


@dataclass
class GameResult:
    """What one game did."""

    seed: int
    players: int
    commands: int = 0
    refused: int = 0
    undone: int = 0
    scenes_ended: int = 0
    #: Pages of each scene that ended.
    pages: list[int] = field(default_factory=list)
    #: Why the game froze, with the board's ``waiting_for``, if it did.
    frozen: str | None = None
    #: Accepted commands by name, and events appended by type (undos' included).
    kinds: dict[str, int] = field(default_factory=dict)
    events: dict[str, int] = field(default_factory=dict)

    def count(self, done: Any) -> None:
        for recorded in done.events:
            name = type(recorded.event).__name__
            self.events[name] = self.events.get(name, 0) + 1


# -- (c) invariants --------------------------------------------------------------------------


def check_invariants(state: CampaignState) -> None:
    """R-TABLE-2, R-TABLE-3, R-ROLL-1, R-CONF-2, R-SPLIT-1, R-STAKE-3, R-CONF-4, R-PAGE-4."""
    for p in state.players:
        assert p.tokens >= 0, "R-TABLE-2: Story Tokens never below 0"
        assert all(1 <= i.value <= 6 for i in p.inspirations), "R-TABLE-3"
    for ch in state.characters.values():
        assert all(d.debt >= 0 for d in ch.drives), "R-TABLE-2: Debt never below 0"
    for x in state.conflicts.values():
        assert len(x.sides) <= c.MAX_SIDES, "R-SCHISM-1: every side can be named"
        for side in x.sides:
            assert all(1 <= d.value <= 6 for d in side.dice), "R-ROLL-1: dice show 1-6"
            assert side.total == sum(d.value for d in side.dice), "R-CONF-2"
            stakes = sum(len(d.stakes) > 0 for d in side.dice)
            uncontrolled = sum(d.controller is None for d in side.dice)
            assert uncontrolled <= 1 or stakes == 0, "R-SPLIT-1"
            assert len(side.dice) <= side.staked + 1, "R-SPLIT-1: no more dice than Debt"
            for d in side.dice:
                assert (d.controller is None) == (not d.stakes), "R-STAKE-3"
        assert all(0 <= s < len(x.sides) for s in x.allies.values()), "R-CONF-4"
        assert all(0 <= s < len(x.sides) for s in x.claims), "R-PAGE-4"


# -- (a) and (b) ------------------------------------------------------------------------------


def accepted(state: CampaignState, command: c.Command, depth: int = 4) -> bool:
    """Whether the rules accept ``command`` for some choice of what it leaves out (a die
    value is drawn as a 3: any value is legal). ``depth`` bounds the choices of the command's
    own fields; a choice keyed by a die (``inspirations.7``: who gets its Inspiration, R-DEAD-1,
    R-RES-1) fills a new key each time and ends with the dice, so it does not count."""
    try:
        EDITION.decide(state, EDITION.with_dice(command, lambda: 3))
    except ChoiceRequired as asked:
        keyed = "." in (asked.field or "")
        if (depth == 0 and not keyed) or not asked.field or not asked.choices:
            return False
        left = depth if keyed else depth - 1
        return any(accepted(state, with_choice(command, asked.field, choice), left)
                   for choice in list(asked.choices)[:CHOICE_BREADTH])
    except DomainError:
        return False
    return True


def by_seat_and_name(options: list[c.Command]) -> dict[tuple[int, str], list[c.Command]]:
    grouped: dict[tuple[int, str], list[c.Command]] = {}
    for command in options:
        grouped.setdefault((getattr(command, "seat", 0), command_name(command)), []).append(command)
    return grouped


def check(state: CampaignState, *, offers: bool = True) -> None:
    """(a), (b) when ``offers``, and (c) on ``state``; raises Frozen, FalseOffer or an
    AssertionError naming the invariant."""
    check_invariants(state)
    options = by_seat_and_name(candidates(state))
    offered = waiting_for(state)
    if offers:
        for seat, names in offered.items():
            for name in names:
                if not any(accepted(state, x) for x in options.get((seat, name), [])):
                    raise FalseOffer(f"seat {seat} is offered {name!r}, which the rules refuse "
                                     f"for every candidate (waiting_for: {offered})")
    if not any(accepted(state, x) for (_, name), xs in options.items()
               if name not in NOT_PROGRESS for x in xs):
        raise Frozen(f"no seat has an accepted command (waiting_for: {offered})")


# -- setting up a table ------------------------------------------------------------------------

DRIVES = HEROIC_DRIVES + VILLAINOUS_DRIVES


def _abilities(rng: random.Random, prefix: str, weak: bool, mundane: bool) -> c.Freeform:
    """Three categories rated 1..k: weak characters have k = 3 everywhere."""
    main = "skill" if mundane else "power"
    sizes = (3, 3, 3) if weak else (rng.randint(3, 5), rng.randint(3, 4), 3)
    total = min(12, sum(sizes))
    sizes = (sizes[0], sizes[1], total - sizes[0] - sizes[1])
    specs = [
        c.AbilitySpec(name=f"{prefix} {category} {r}", category=category, rating=r,  # type: ignore[arg-type]
                      super=category == "style" and not mundane and rng.random() < 0.5)
        for category, k in zip((main, "style", "attitude"), sizes, strict=True)
        for r in range(1, k + 1)
    ]
    return c.Freeform(abilities=tuple(specs))


def _drives(rng: random.Random) -> dict[str, int] | None:
    """Five Drives summing to 9, or undifferentiated (None)."""
    if rng.random() < 0.35:
        return None
    names = rng.sample(DRIVES, 5)
    strengths = [1] * 5
    for _ in range(4):
        strengths[rng.randrange(5)] += 1
    while max(strengths) > 5:  # pragma: no cover - 1 + 4 is at most 5
        strengths[strengths.index(max(strengths))] -= 1
        strengths[strengths.index(min(strengths))] += 1
    return dict(zip(names, strengths, strict=True))


def new_table(app: Campaigns, rng: random.Random, players: int) -> UUID:
    """A campaign with ``players`` seats, one or two characters each, and Exemplars."""
    cid = app.create(c.CreateCampaign(name="Playtest", starting_tokens=rng.randint(0, 3)))
    campaign = cid.campaign_id
    for n in range(players):
        app.execute(campaign, c.SeatPlayer(name=f"Player {n + 1}"))
    number = 0
    for seat in range(1, players + 1):
        for _ in range(rng.choice((1, 1, 2))):
            number += 1
            mundane = rng.random() < 0.2
            app.execute(campaign, c.CreateCharacter(
                seat=seat, name=f"Character {number}",
                build=_abilities(rng, f"C{number}", weak=rng.random() < 0.5, mundane=mundane),
                drives=None if mundane else _drives(rng),  # type: ignore[arg-type]
            ))
    for move in _exemplar_links(app.state(campaign), rng):
        _try(app, campaign, move)
    return campaign


def _exemplar_links(state: CampaignState, rng: random.Random) -> Iterator[c.Command]:
    """A free Exemplar for some characters, and a shared second one (both players ask)."""
    ids = sorted(state.characters)
    for ch in ids:
        who = state.characters[ch]
        if who.undifferentiated or rng.random() < 0.4:
            continue
        others = [o for o in ids if o != ch]
        first = rng.choice(others)
        drive = rng.choice(who.drives).name
        yield c.LinkExemplar(seat=who.created_by, character=ch, exemplar=first, drive=drive)
        shared = [o for o in others if o != first
                  and state.characters[o].created_by != who.created_by]
        if shared and rng.random() < 0.5:
            other = rng.choice(shared)
            drive = rng.choice(who.drives).name
            for seat in (who.created_by, state.characters[other].created_by):
                yield c.LinkExemplar(seat=seat, character=ch, exemplar=other, drive=drive)


def _between_scenes(state: CampaignState, rng: random.Random) -> Iterator[c.Command]:
    """R-CHAR-8: a player may change a character they created (name, abilities or Drives)."""
    for who in state.characters.values():
        yield c.EditCharacter(seat=who.created_by, character=who.id,
                              name=f"{who.name.split(' (')[0]} ({rng.randint(1, 99)})")
        yield c.EditCharacter(seat=who.created_by, character=who.id,
                              build=_abilities(rng, f"E{who.id}", weak=rng.random() < 0.5,
                                               mundane=who.method == "freeform" and all(
                                                   a.category != "power" for a in who.abilities)))
        yield c.EditCharacter(seat=who.created_by, character=who.id,
                              drives=_drives(rng) or "undifferentiated")  # type: ignore[arg-type]


# -- playing -----------------------------------------------------------------------------------


def _try(app: Campaigns, campaign: UUID, command: Any, rng: random.Random | None = None
         ) -> Any:
    """Execute ``command``, filling asked-for choices at random; None when refused."""
    for _attempt in range(6):
        try:
            return app.execute(campaign, command)
        except ChoiceRequired as asked:
            if rng is None or not asked.field or not asked.choices:
                return None
            command = with_choice(command, asked.field, rng.choice(list(asked.choices)))
        except DomainError:
            return None
    return None


def _draw(rng: random.Random, options: list[c.Command]) -> c.Command:
    """A command name by WEIGHTS, then one of its candidates."""
    grouped: dict[str, list[c.Command]] = {}
    for command in options:
        grouped.setdefault(command_name(command), []).append(command)
    names = sorted(grouped)
    name = rng.choices(names, weights=[WEIGHTS.get(n, 1.0) for n in names])[0]
    return rng.choice(grouped[name])


def _kinds(state: CampaignState, command: c.Command) -> list[str]:
    """The command's name, and finer kinds of it the liveness test wants to see played."""
    name = command_name(command)
    kinds = [name]
    turn = state.page.turn if state.page is not None else None
    if turn is not None and not turn.acted and isinstance(
            command, (c.StakeDebt, c.SplitDie, c.Schism, c.SpendInspiration)):
        kinds.append(f"{name} before acting")
    if isinstance(command, c.CreateConflict):
        kinds.append("goal" if command.kind == "goal" else "event")
        if command.free_for is not None:
            kinds.append("free conflict")
    return kinds


def play_game(seed: int, *, max_commands: int = 400, scenes: int = 2,
              offers: bool = True) -> GameResult:
    """One seeded game through an in-memory ``Campaigns``, checked after every accepted
    command (:func:`check`); stops after ``scenes`` scenes or ``max_commands`` accepted
    commands. A frozen game is reported in the result, not raised; a false offer or a broken
    invariant raises."""
    rng = random.Random(seed)
    app = Campaigns(dice=SeededDice(seed))
    try:
        players = rng.randint(3, 5)
        result = GameResult(seed=seed, players=players)
        campaign = new_table(app, rng, players)
        state: CampaignState = app.state(campaign)
        last_seat = 0
        pages_before = 0
        while result.commands < max_commands and result.scenes_ended < scenes:
            try:
                check(state, offers=offers)
            except Frozen as e:
                result.frozen = f"seed {seed}, after {result.commands} commands: {e}"
                return result
            if last_seat and rng.random() < UNDO_CHANCE:
                done = _try(app, campaign, Undo(seat=last_seat))
                if done is not None:
                    result.count(done)
                    result.undone += 1
                    result.commands += 1
                    state = done.state
                    continue
            options = candidates(state)
            if state.scene is None and rng.random() < 0.3:
                options = [*options, *_between_scenes(state, rng)]
            command = _draw(rng, options)
            done = _try(app, campaign, command, rng)
            if done is None:
                result.refused += 1
                continue
            result.count(done)
            for name in _kinds(state, command):
                result.kinds[name] = result.kinds.get(name, 0) + 1
            result.commands += 1
            last_seat = getattr(command, "seat", 0)
            scene_before = state.scene
            if scene_before is not None:
                pages_before = scene_before.pages
            state = done.state
            if scene_before is not None and state.scene is None and state.scenes_played > (
                    scene_before.number - 1):
                result.scenes_ended += 1
                result.pages.append(pages_before)
        return result
    finally:
        app.close()
