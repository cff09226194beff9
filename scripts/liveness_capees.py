"""Random play of CAPEES! (edition ``capees``) that checks no table can freeze (C-SRV-4).

A game is 004's cast (``scripts/capees_table.py``: the Editor, four heroes, their Exemplars and
opponents) playing stories and scenes through the rules (``decide``, then ``fold``, as the
application does) with seeded dice. Most moves are drawn as the Capes player draws them
(``scripts/liveness.py``): a seat and command type the board offers (``waiting_for``), by
:data:`WEIGHTS`, then one of that seat's candidates of the type
(``domain.capees.moves.candidates``) the rules accept, as the board lists its forms (choices
the rules ask for filled at random). Now and then a candidate is drawn blind, offered or not,
or a junk command, mostly illegal, so refusals are played too. The Editor fixes a Victory Total
drawn from :data:`VICTORY_TOTALS` when a story begins (C-VP-4), so stories end within a game
and the next one begins (C-VP-5). At even seeds the Editor never rules a scene over before it
has stalled, so scenes run to their Victory Target.

After every command :func:`play` checks: a refused command changed nothing (C-SRV-2); the
invariants of :func:`check_invariants`; that some seat is offered a move and some candidate
move is accepted (else the game is *frozen*, C-SRV-4); with ``offers``, that every command
type the board offers a seat is accepted for some of its candidates (:func:`check_offers`).

Used by ``tests/rules_capees/test_capees_liveness.py`` (a few seeds in CI) and by
``scripts/playtest --edition capees`` (the soak: thousands of games with a progress bar).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import msgspec

from domain.capees import commands as c
from domain.capees import events as e
from domain.capees.model import CampaignState
from domain.capees.moves import accepted, candidates, waiting_for, with_choice
from domain.errors import ChoiceRequired, DomainError
from scripts.capees_table import Table, the_cast

#: Probability that a move is a junk command, mostly illegal.
JUNK_CHANCE = 0.05
#: Probability that a move is any candidate, offered or not (many are refused: C-SRV-2).
BLIND_CHANCE = 0.05
#: How often a command type the board offers is drawn (1 when not listed): claims and rolls,
#: which resolve Complications and score (C-VP-2), likelier than passing them by; the Editor's
#: ruling and new characters rarer, so scenes reach their Target (C-VP-3) and stories their
#: Victory Total (C-VP-5), while every kind of move still comes up.
WEIGHTS: dict[str, float] = {
    "claim": 3, "roll_ability": 3, "pass_claim": 0.5, "end_action": 0.7, "end_scene": 0.15,
    "create_character": 0.3,
}
#: Pages after which a scene has run long: from then on the moves that bring its end nearer
#: (:data:`CLOSING`) weigh one more time as much each page.
LONG_SCENE = 6
CLOSING = frozenset({"claim", "roll_ability", "keep_roll", "check_claim", "end_scene"})
#: Pages after which a scene has stalled: the Editor who never rules (even seeds) rules it
#: over then (C-SCENE-2), since some scenes never reach their Target (both dice of the only
#: Complication at 6, say: nobody Controls it, nobody can claim it).
STALLED = 12
#: C-VP-4: the Victory Totals the Editor fixes when a story begins (24 is the rules' default);
#: small ones end a story within a game, so the next one is played too.
VICTORY_TOTALS = (3, 6, 9, 12, 24)


class FalseOffer(AssertionError):
    """The board offers a command type the rules refuse for every candidate."""


def junk(rng: random.Random) -> c.Command:
    """A command drawn at random, mostly illegal."""
    seat, ident = rng.randint(0, 6), rng.randint(1, 30)
    return rng.choice([
        c.Claim(seat=seat, character=ident, complication=rng.randint(1, 9)),
        c.Stake(seat=seat, complication=rng.randint(1, 9), amount=rng.randint(1, 4)),
        c.Split(seat=seat, complication=rng.randint(1, 9), die=rng.randint(1, 5),
                into=rng.randint(2, 6), move=rng.randint(0, 3)),
        c.RollAbility(seat=seat, ability="Nope", complication=1, die=1),
        c.CheckClaim(seat=seat, complication=rng.randint(1, 9), replacement="Junk"),
        c.EndAction(seat=seat), c.PassReaction(seat=seat), c.PassClaim(seat=seat),
        c.EndScene(seat=seat), c.PassSetup(seat=seat),
        c.Balance(seat=seat, character=ident, points=rng.randint(1, 3)),
        c.BuyProminence(seat=seat, character=ident, side="hero"),
    ])


def weight(state: CampaignState, tag: str) -> float:
    """How likely random play draws the command type ``tag`` the board offers."""
    name = tag.removeprefix("capees.")
    scene = state.scene
    long = 0 if scene is None else max(0, scene.page - LONG_SCENE + 1)
    return WEIGHTS.get(name, 1.0) * (1 + long if name in CLOSING else 1)


def draw(state: CampaignState, rng: random.Random, *, rulings: bool = True) -> c.Command:
    """The next move: junk, a blind candidate, or mostly one the board offers (by
    :func:`weight`); without ``rulings`` the Editor ends a scene (C-SCENE-2) only once it
    has stalled."""
    chance = rng.random()
    options = candidates(state)
    if not rulings and (state.scene is None or state.scene.page < STALLED):
        options = [o for o in options if not isinstance(o, c.EndScene)] or options
    if chance < JUNK_CHANCE or not options:
        return junk(rng)
    offered = {(seat, tag) for seat, tags in waiting_for(state).items() for tag in tags}
    groups: dict[tuple[int, str], list[c.Command]] = {}
    for x in options:
        key = (getattr(x, "seat", 0), TAG_OF[type(x)])
        if key in offered:
            groups.setdefault(key, []).append(x)
    if chance < JUNK_CHANCE + BLIND_CHANCE or not groups:
        command = rng.choice(options)
    else:
        keys = sorted(groups)
        key = rng.choices(keys, weights=[weight(state, tag) for _, tag in keys])[0]
        # The forms the board lists for the move (``moves.legal``): its accepted candidates.
        command = rng.choice([x for x in groups[key] if accepted(state, x)] or groups[key])
    if isinstance(command, c.BeginStory):
        command = msgspec.structs.replace(command, victory_total=rng.choice(VICTORY_TOTALS))
    return command


def last_index(events: list[Any], kind: type[Any]) -> int:
    """Where the last event of ``kind`` is: searched from the end, so that checking after
    every move costs the current scene's or story's events, not the whole game's."""
    for i in range(len(events) - 1, -1, -1):
        if isinstance(events[i], kind):
            return i
    raise ValueError(f"no {kind.__name__} in the events")


def check_invariants(state: CampaignState, events: list[Any]) -> None:
    """C-TABLE-3, C-TABLE-4, C-SPLIT-2, C-VP-2, C-VP-5 on ``state``, the fold of ``events``."""
    for p in state.players:
        assert p.tokens >= 0, "C-TABLE-3: Story Tokens never below 0"
    for ch in state.characters.values():
        assert all(d.debt >= 0 for d in ch.drives), "C-TABLE-3: Debt never below 0"
    for x in state.complications.values():
        for side in x.sides:
            assert all(1 <= d.value <= 6 for d in side.dice), "C-TABLE-4"
            assert all(s.amount > 0 for s in side.stakes)
            if side.owner is not None:
                assert len(side.dice) <= side.staked, "C-SPLIT-2"
    scene, story = state.scene, state.story
    if scene is not None:
        assert all(p >= 0 for p in scene.prominence.values()), "C-TABLE-3"
        start = last_index(events, e.SceneStarted)
        won = [x for x in events[start:] if isinstance(x, e.ComplicationResolved)]
        assert scene.hero_vp == sum(x.vp for x in won if x.faction == "hero"), "C-VP-2"
        assert scene.opponent_vp == sum(x.vp for x in won if x.faction == "opponent")
    if story is not None:
        start = last_index(events, e.StoryBegun)
        ended = [x for x in events[start:] if isinstance(x, e.SceneEnded)]
        assert story.hero_vp == sum(x.hero_vp for x in ended), "C-VP-5"
        assert story.opponent_vp == sum(x.opponent_vp for x in ended), "C-VP-5"


BY_TAG = {msgspec.inspect.type_info(k).tag: k for k in c.COMMAND_TYPES}  # type: ignore[attr-defined]
TAG_OF = {kind: tag for tag, kind in BY_TAG.items()}


def check_offers(state: CampaignState) -> None:
    """C-SRV-3, C-SRV-4: every command type the board offers a seat is accepted for some of
    its candidate commands (the board never offers what the rules refuse)."""
    options = candidates(state)
    for seat, tags in waiting_for(state).items():
        for tag in tags:
            kind = BY_TAG[tag]
            if not any(accepted(state, x) for x in options
                       if type(x) is kind and getattr(x, "seat", None) == seat):
                raise FalseOffer(f"seat {seat} is offered {tag!r}, which the rules refuse for "
                                 f"every candidate")


def frozen(state: CampaignState) -> str | None:
    """C-SRV-4: why nobody can move, or None when some candidate move is accepted."""
    offered = waiting_for(state)
    if not offered:
        return "the board offers nobody a move"
    # The moves of the offered types first: one of them is nearly always accepted, so the
    # search stops early; the others are still tried before the game is called frozen.
    options = sorted(candidates(state), key=lambda x: (
        TAG_OF[type(x)] not in offered.get(getattr(x, "seat", -1), ())))
    if not any(accepted(state, x) for x in options):
        return f"no candidate move is accepted (waiting_for: {offered})"
    return None


@dataclass
class Game:
    """What one game did; ``table`` holds its events and final state."""

    seed: int
    table: Table
    commands: int = 0
    refused: int = 0
    #: Why and when the game froze, if it did (the game stops there).
    frozen: str | None = None
    #: Pages of each scene that ended.
    pages: list[int] = field(default_factory=list)
    #: Stories that ended on their Victory Total (C-VP-5).
    stories_ended: int = 0

    @property
    def scenes_ended(self) -> int:
        return len(self.pages)


def pages_per_scene(events: list[Any]) -> list[int]:
    """The pages of each scene that ended, in order."""
    pages, counted = [], 0
    for x in events:
        if isinstance(x, e.SceneStarted):
            counted = 0
        elif isinstance(x, e.PageStarted):
            counted += 1
        elif isinstance(x, e.SceneEnded):
            pages.append(counted)
    return pages


def play(seed: int, commands: int = 500, *, scenes: int | None = None,
         offers: bool = False) -> Game:
    """One seeded game of ``commands`` moves (or until ``scenes`` scenes ended), checked after
    every move. A frozen game is reported in the result, not raised; a refused command that
    changed something, a false offer (``offers``) or a broken invariant raises."""
    rng = random.Random(seed)
    t = the_cast(Table())
    t.dice = []
    game = Game(seed=seed, table=t)
    ended = 0
    for step in range(commands):
        # At even seeds the Editor rules only stalled scenes, so scenes run to their Target.
        command = draw(t.state, rng, rulings=seed % 2 == 1)
        start = len(t.events)
        for _attempt in range(6):
            before, count = t.state, len(t.events)
            t.dice = [rng.randint(1, 6)]
            try:
                t.do(command)
                game.commands += 1
                break
            except ChoiceRequired as asked:
                assert t.state is before and len(t.events) == count
                if not asked.field or not asked.choices:
                    game.refused += 1
                    break
                command = with_choice(command, asked.field, rng.choice(list(asked.choices)))
            except DomainError:
                assert t.state is before and len(t.events) == count, "C-SRV-2"
                game.refused += 1
                break
        check_invariants(t.state, t.events)
        if offers:
            check_offers(t.state)
        why = frozen(t.state)
        if why is not None:
            game.frozen = f"seed {seed}, after {step + 1} moves: {why}"
            break
        ended += sum(isinstance(x, e.SceneEnded) for x in t.events[start:])
        if scenes is not None and ended >= scenes:
            break
    game.pages = pages_per_scene(t.events)
    game.stories_ended = sum(isinstance(x, e.StoryEnded) for x in t.events)
    return game
