"""Random play of CAPEES!, legal and illegal, never freezes the table or breaks an invariant.

Fixed seeds, a bounded number of commands each, played through the end of a story into the
next (C-VP-5). After every command: someone can always move (C-SRV-4); every command type the
board offers is accepted for some candidate (C-SRV-3); no count goes below 0 (C-TABLE-3); dice
show 1-6 (C-TABLE-4); a split-off side never holds more dice than Debt staked under it
(C-SPLIT-2, C-SPLIT-3); scene and story Victory Points equal the sums the rules give (C-VP-2,
C-VP-5); a refused command changes nothing (C-SRV-2). At the end, replaying the events gives
the live state, every event survives a msgspec round trip, and every scene ended on its Target
or by the Editor's ruling (C-VP-3, C-SCENE-2). The games and checks are
``scripts/liveness_capees.py``'s, which ``scripts/playtest --edition capees`` plays by the
thousand.
"""

from __future__ import annotations

import functools
import random
from typing import Any, Union

import msgspec
import pytest
from capees_helpers import CTable, the_cast

from domain.capees import EDITION
from domain.capees import events as e
from domain.capees.moves import candidates, waiting_for, with_choice
from domain.edition import fold
from domain.errors import ChoiceRequired, DomainError
from scripts import liveness_capees as liveness
from scripts.capees_table import Table

AnyEvent = Union[e.EVENT_TYPES]  # type: ignore[valid-type]  # noqa: UP007


@functools.cache
def play(seed: int) -> Table:
    """The seeded game of ``scripts/liveness_capees.py``, which checks C-SRV-2, the
    invariants and the board's offers after every command; it must not freeze (C-SRV-4).
    Played once per seed for the whole module (the tests only read it)."""
    game = liveness.play(seed, offers=True)
    assert game.frozen is None, game.frozen
    return game.table


@pytest.mark.parametrize("seed", range(8))
def test_random_play_never_freezes_the_table_or_breaks_an_invariant(seed: int) -> None:
    """C-SRV-4, C-SRV-2, C-TABLE-3, C-TABLE-4, C-SPLIT-2, C-VP-2, C-VP-5."""
    t = play(seed)
    assert fold(EDITION, t.events) == t.state, "replaying the events gives the live state"
    raw = msgspec.json.encode(t.events)
    assert msgspec.json.decode(raw, type=list[AnyEvent]) == t.events  # type: ignore[valid-type]
    # C-VP-3, C-SCENE-2: a scene ends on its Target or by the Editor's ruling, nothing else.
    targets = {}
    for x in t.events:
        if isinstance(x, e.PlayBegan):
            target = x.target
        if isinstance(x, e.SceneEnding):
            targets[len(targets)] = (x.reason, target)
    state_vp = [(x.hero_vp, x.opponent_vp) for x in t.events if isinstance(x, e.SceneEnded)]
    for (reason, target), (hero, opponent) in zip(targets.values(), state_vp, strict=False):
        assert reason == "ruling" or max(hero, opponent) >= target


def test_random_play_gets_somewhere() -> None:
    """Across the seeds, scenes are set up, pages turn, claims resolve and scenes end, on
    their Target (C-VP-3) and by ruling (C-SCENE-2). Where each game goes hangs on every draw
    of its seed, so the seeds after the first 8 are played while something is still missing
    (an Overdrawn roll is rare: Debt must pile up unstaked past a Drive's strength)."""
    wanted = {"SceneEnding:target", "SceneEnding:ruling", "DieSplit", "OverdrawnRolled",
              "PlayBegan", "PageStarted", "DieRolled", "RollKept", "DebtStaked",
              "ComplicationResolved", "SceneEnded", "StoryEnded"}
    kinds: set[str] = set()
    for seed in range(24):
        if seed >= 8 and wanted <= kinds:
            break
        events = play(seed).events
        kinds |= {type(x).__name__ for x in events}
        kinds |= {f"SceneEnding:{x.reason}" for x in events if isinstance(x, e.SceneEnding)}
    for kind in sorted(wanted):
        assert kind in kinds, f"random play never reached {kind}"


def stories(events: list[Any]) -> list[tuple[int, int, int]]:
    """C-VP-5 over ``events``: for each story that ended, its Victory Total (C-VP-4) and the
    story totals it ended on, checking that it ended right after the scene that first brought
    either total to the Victory Total, and only then."""
    ended, total, vp = [], 0, [0, 0]
    for i, x in enumerate(events):
        if isinstance(x, e.StoryBegun):
            total, vp = x.victory_total, [0, 0]
        elif isinstance(x, e.SceneEnded):
            vp = [vp[0] + x.hero_vp, vp[1] + x.opponent_vp]
            after = events[i + 1] if i + 1 < len(events) else None
            assert isinstance(after, e.StoryEnded) == (max(vp) >= total), "C-VP-5"
        elif isinstance(x, e.StoryEnded):
            assert [x.hero_vp, x.opponent_vp] == vp, "C-VP-5: the story totals it ended on"
            ended.append((total, *vp))
    return ended


def test_random_play_ends_stories_and_plays_the_next() -> None:
    """C-VP-5: when a scene's end brings either story total to the Victory Total the Editor
    fixed (C-VP-4), the story ends; then a new story begins (C-X-STORY-1) and its scenes are
    played. The CI's seeds get there, the checks holding after every move through it (no
    freeze, C-SRV-4; every offer accepted; a refusal changes nothing, C-SRV-2; the
    invariants, the new story's Victory Points counted from 0)."""
    ended, next_played = 0, 0
    for seed in range(8):
        events = play(seed).events
        ended += bool(stories(events))
        first_end = next((i for i, x in enumerate(events) if isinstance(x, e.StoryEnded)),
                         len(events))
        later = events[first_end:]
        next_played += any(isinstance(x, e.StoryBegun) for x in later) and any(
            isinstance(x, e.PageStarted) for x in later)
    assert ended >= 3, f"{ended} of the 8 games ended a story"
    assert next_played >= 2, f"{next_played} of the 8 games played the next story"


def _some_move(t: CTable, rng: random.Random) -> bool:
    """Play one of the candidate moves that the rules accept (filling in asked choices)."""
    options = candidates(t.state)
    rng.shuffle(options)
    for command in options:
        for _attempt in range(6):
            t.dice = [rng.randint(1, 6)]
            try:
                t.do(command)
                return True
            except ChoiceRequired as asked:
                if not asked.field or not asked.choices:
                    break
                command = with_choice(command, asked.field, rng.choice(list(asked.choices)))
            except DomainError:
                break
    return False


@pytest.mark.parametrize("seed", range(4))
def test_some_offered_move_is_always_legal(seed: int) -> None:
    """C-SRV-4: wherever play waits, one of the moves offered is accepted, so legal play
    never stops (through stories, scenes, setup, pages and their ends); and every command
    type offered is accepted for some arguments."""
    rng = random.Random(seed)
    t = the_cast(CTable())
    for step in range(400):
        assert _some_move(t, rng), f"frozen at step {step}: {waiting_for(t.state)}"
        liveness.check_invariants(t.state, t.events)
        liveness.check_offers(t.state)
    assert any(isinstance(x, e.SceneEnded) for x in t.events)
