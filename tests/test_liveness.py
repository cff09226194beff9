"""No game can freeze: liveness as a tested property (issue 11; R-STAKE-4, R-SCHISM-1,
R-DEAD-1, R-X-DEAD-2).

Seeded random games through ``Campaigns`` (in-memory store), with every kind of move, checked
after every accepted command by ``scripts.liveness.check``: (a) some seat has an accepted
command that advances play, (b) every command ``waiting_for`` offers a seat is accepted for
some choice of its arguments, (c) the game's invariants. ``scripts/playtest --games N`` runs
the same games by the thousand.
"""

from __future__ import annotations

from collections import Counter

import pytest

from scripts.liveness import GameResult, play_game

#: Fixed seeds, few enough for CI (a few seconds), many enough to play every kind of move.
SEEDS = range(24)


@pytest.fixture(scope="module")
def games() -> list[GameResult]:
    return [play_game(seed, max_commands=300) for seed in SEEDS]


def test_no_seeded_game_freezes_and_the_board_offers_only_what_the_rules_accept(
    games: list[GameResult],
) -> None:
    """R-STAKE-4: after every accepted command some seat can move on, and every command the
    board offers is accepted for some arguments (a false offer raises inside play_game)."""
    frozen = [g.frozen for g in games if g.frozen]
    assert not frozen, frozen
    assert sum(g.scenes_ended for g in games) >= len(games) // 2, "scenes end"


def test_the_random_games_play_every_kind_of_move(games: list[GameResult]) -> None:
    """The liveness property is only as good as the moves tried: stakes, splits, schisms and
    Inspirations before acting, Goals, Free Conflicts of Exemplars, gloats, deadlocks (R-DEAD-1,
    R-X-DEAD-2), undo, character edits (R-CHAR-8), and turns ending with their provisional
    stakes given back (R-STAKE-4)."""
    kinds: Counter[str] = Counter()
    events: Counter[str] = Counter()
    for g in games:
        kinds.update(g.kinds)
        events.update(g.events)
    for kind in ("stake_debt before acting", "split_die before acting",
                 "schism before acting", "spend_inspiration before acting", "split_die",
                 "schism", "raise_inspiration", "react", "goal", "free conflict", "gloat",
                 "declare_deadlock", "veto", "edit_character", "claim", "resolve"):
        assert kinds[kind], f"no game played {kind}"
    for event in ("Undone", "ProvisionalStakesReturned", "ConflictDeadlocked", "SceneEnded",
                  "SideSchismed", "InspirationSpent"):
        assert events[event], f"no game recorded {event}"
