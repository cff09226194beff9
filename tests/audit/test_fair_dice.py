"""Commit-reveal dice (R-FAIR-1, R-FAIR-3, R-FAIR-4, R-FAIR-5): the construction and its life
in a campaign, on the real stores."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from pathlib import Path
from uuid import UUID

import pytest
from fair_play import (
    MEMORY,
    independent_die,
    new_table,
    play_until,
    played,
    rolls,
    sqlite_env,
    types,
)

from application.audit import verify_stored
from application.campaigns import Campaigns
from application.dice import ScriptedDice
from application.fair import LIMIT, derive, message
from domain.capes import commands as c
from domain.record.commands import Undo
from domain.record.events import DiceCommitted, DiceRevealed, SeatSeedAdded

CAMPAIGN = UUID("6f1c2a4e-8b7d-4c3e-9a1f-0d2e3b4c5a69")
SEED = bytes(range(32))


def test_the_dice_stream_passes_a_chi_square_test_over_60000_rolls() -> None:
    """R-FAIR-4: every face as likely as every other (5 degrees of freedom, p = 0.001)."""
    seeds = ((2, "ben's lucky seed"), (1, "ana"))
    counts = Counter(derive(SEED, CAMPAIGN, 3, counter, seeds) for counter in range(1, 60_001))
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    expected = 60_000 / 6
    chi_square = sum((counts[face] - expected) ** 2 / expected for face in range(1, 7))
    assert chi_square < 20.515, (chi_square, counts)


def test_successive_dice_are_not_correlated() -> None:
    """R-FAIR-4: pairs of successive dice are uniform over the 36 pairs as well (35 d.f.)."""
    dice = [derive(SEED, CAMPAIGN, 1, counter) for counter in range(1, 72_001)]
    pairs = Counter(zip(dice[::2], dice[1::2], strict=True))
    expected = 36_000 / 36
    chi_square = sum((pairs[(a, b)] - expected) ** 2 / expected
                     for a in range(1, 7) for b in range(1, 7))
    assert chi_square < 66.62, chi_square  # p = 0.001 with 35 degrees of freedom


def test_the_stream_matches_an_independent_recomputation_of_the_published_construction() -> None:
    """R-FAIR-4: the README's byte layout, recomputed from the standard library alone."""
    configurations = [
        {},
        {1: "ana"},
        {3: "cleo", 1: "ana", 2: "ben"},
        {2: "Ünïcödé ✓ seeds", 7: "x" * 256},
    ]
    for scene in (1, 2, 70_000):
        for seats in configurations:
            for counter in (*range(1, 400), 2**40 + 1):
                assert derive(SEED, CAMPAIGN, scene, counter, tuple(seats.items())) == \
                    independent_die(SEED, CAMPAIGN, scene, counter, seats), (scene, seats, counter)


def test_bytes_that_would_bias_the_dice_are_skipped() -> None:
    """R-FAIR-4: a first byte of 252..255 is rejected; the die comes from the next byte."""
    import hmac

    rejected = 0
    for counter in range(1, 5_000):
        block = hmac.new(SEED, message(CAMPAIGN, 1, counter, ()), hashlib.sha256).digest()
        if block[0] >= LIMIT:
            rejected += 1
            accepted = next(b for b in block if b < LIMIT)
            assert derive(SEED, CAMPAIGN, 1, counter) == 1 + accepted % 6
        else:
            assert derive(SEED, CAMPAIGN, 1, counter) == 1 + block[0] % 6
    assert rejected > 30  # about 4 in 256


def test_every_input_changes_the_die_stream() -> None:
    """R-FAIR-4: seed, campaign, scene, counter and the seats' seeds all go into each die."""
    def stream(**change: object) -> list[int]:
        args: dict[str, object] = {"seed": SEED, "campaign_id": CAMPAIGN, "scene": 1,
                                   "seeds": ((1, "a"),)}
        args.update(change)
        return [derive(counter=n, **args) for n in range(1, 65)]  # type: ignore[arg-type]

    base = stream()
    for change in ({"seed": bytes(32)}, {"campaign_id": UUID(int=1)}, {"scene": 2},
                   {"seeds": ((1, "b"),)}, {"seeds": ((2, "a"),)}, {"seeds": ()}):
        assert stream(**change) != base, change


def test_a_scene_commits_closes_and_reveals_and_every_die_recomputes(
    store_env: dict[str, str],
) -> None:
    """R-FAIR-1, R-FAIR-3, R-FAIR-4, R-FAIR-5: the whole life of a scene's dice."""
    app = Campaigns(store_env)
    try:
        campaign = played(app, scenes=1, min_rolls=2)
        log = app.history(campaign, limit=100_000)
        kinds = types(log)
        framed = kinds.index("SceneFramed")
        committed = kinds.index("DiceCommitted")
        assert log[committed].command == log[framed].command, "committed in the same command"
        closed = kinds.index("SeedsClosed")
        first_roll = min(kinds.index(k) for k in ("DieRolled", "OverdrawnDieRolled") if k in kinds)
        assert committed < closed < first_roll
        assert log[closed + 1].command == log[first_roll].command, "right before the roll"
        assert log[closed].seat is None, "the server closes them, in a step of its own"
        seeds = {r.event.seat: r.event.seed for r in log[committed:closed]
                 if isinstance(r.event, SeatSeedAdded)}
        assert sorted(seeds) == [1, 2, 3]
        revealed = kinds.index("DiceRevealed")
        assert log[revealed].command == log[kinds.index("SceneEnded")].command
        seed = bytes.fromhex(log[revealed].event.seed)
        assert hashlib.sha256(seed).hexdigest() == log[committed].event.commitment
        counters = []
        for r in rolls(app, campaign):
            counter, value = r.event.draw, r.event.rolled
            counters.append(counter)
            assert value == independent_die(seed, campaign, 1, counter, seeds)
        assert counters == list(range(1, len(counters) + 1)), "one counter per die, in order"
        assert app.get(campaign).record.rolls == counters[-1]
        report = verify_stored(app, campaign)
        assert report.ok and report.fair, report.summary()
        assert report.scenes[0].status == "verified" and report.scenes[0].seats == (1, 2, 3)
    finally:
        app.close()


def test_an_undone_roll_is_rolled_again_with_a_new_counter() -> None:
    """R-FAIR-4, R-REC-1: the counter is never rewound, so undoing cannot fish for a roll."""
    app = Campaigns(MEMORY)
    rng = random.Random(5)
    for _ in range(40):
        campaign = new_table(app)
        if not play_until(app, campaign, lambda a, cid: bool(rolls(a, cid)), rng):
            continue
        rolled = rolls(app, campaign)[-1]
        assert rolled.event.draw == 1
        app.execute(campaign, Undo(seat=rolled.seat))
        assert app.get(campaign).record.rolls == 1, "the record keeps the counter"
        if not play_until(app, campaign, lambda a, cid: len(rolls(a, cid)) >= 2, rng):
            continue
        assert [r.event.draw for r in rolls(app, campaign)][:2] == [1, 2]
        assert verify_stored(app, campaign).ok
        return
    raise AssertionError("no roll")  # pragma: no cover


def test_the_secret_seed_survives_a_restart(tmp_path: Path) -> None:
    """R-FAIR-1: the seed is stored, not kept in memory: another process rolls and reveals."""
    env = sqlite_env(tmp_path / "restart.sqlite")
    for attempt in range(20):
        first = Campaigns(env)
        campaign = new_table(first)
        first.execute(campaign, c.FrameScene(seat=1, text="Before the restart"))
        commitment = first.get(campaign).record.dice.commitment  # type: ignore[union-attr]
        first.close()

        again = Campaigns(env)
        try:
            rng = random.Random(attempt)
            if not play_until(again, campaign,
                              lambda a, cid: a.state(cid).scenes_played >= 1, rng):
                continue  # random play got stuck: another campaign
            log = again.history(campaign, limit=100_000)
            revealed = next(r.event for r in log if isinstance(r.event, DiceRevealed))
            assert hashlib.sha256(bytes.fromhex(revealed.seed)).hexdigest() == commitment
            assert all(r.event.draw > 0 for r in rolls(again, campaign)), "derived"
            assert verify_stored(again, campaign).ok
            return
        finally:
            again.close()
    raise AssertionError("no scene ended")  # pragma: no cover


def test_undoing_a_scenes_start_reveals_its_seed_and_framing_again_commits_anew() -> None:
    """R-FAIR-5, R-FAIR-1: a scene taken back reveals; the next one has a new commitment."""
    app = Campaigns(MEMORY)
    campaign = new_table(app)
    framed = app.execute(campaign, c.FrameScene(seat=1, text="A false start"))
    assert types(framed.events)[-1] == "DiceCommitted"
    undone = app.execute(campaign, Undo(seat=1))
    assert types(undone.events) == ["Undone", "DiceRevealed"]
    again = app.execute(campaign, c.FrameScene(seat=1, text="The real start"))
    first, second = (r.event for r in app.history(campaign, limit=1000)
                     if isinstance(r.event, DiceCommitted))
    assert first.commitment != second.commitment and first.scene == second.scene == 1
    assert types(again.events)[-1] == "DiceCommitted"
    assert verify_stored(app, campaign).ok


def test_undoing_a_scenes_end_commits_to_a_new_seed_for_the_rest_of_it() -> None:
    """R-FAIR-1, R-FAIR-5: back in a scene whose seed is public, the dice need a new one."""
    app = Campaigns(MEMORY)
    for attempt in range(40):
        rng = random.Random(attempt)
        campaign = new_table(app)
        if not play_until(app, campaign, lambda a, cid: a.state(cid).scenes_played >= 1, rng):
            continue
        ending = app.history(campaign, limit=100_000)[-1]
        assert type(ending.event).__name__ == "DiceRevealed"
        if ending.seat is None:
            continue
        undone = app.execute(campaign, Undo(seat=ending.seat))
        assert types(undone.events) == ["Undone", "DiceCommitted"]
        assert app.state(campaign).scene is not None
        play_until(app, campaign, lambda a, cid: a.state(cid).scenes_played >= 1, rng)
        report = verify_stored(app, campaign)
        assert report.ok, report.summary()
        assert [s.scene for s in report.scenes][:2] == [1, 1]
        return
    raise AssertionError("no scene ended by a seat's command")  # pragma: no cover


def test_closing_a_campaign_in_a_scene_reveals_its_seed() -> None:
    """R-FAIR-5: a closed campaign plays no scene."""
    app = Campaigns(MEMORY)
    campaign = new_table(app)
    app.execute(campaign, c.FrameScene(seat=1, text="Cut short"))
    closed = app.execute(campaign, c.CloseCampaign())
    assert types(closed.events) == ["CampaignClosed", "DiceRevealed"]
    assert verify_stored(app, campaign).ok


def test_a_fork_in_the_middle_of_a_scene_commits_to_its_own_dice() -> None:
    """R-FAIR-1, R-REC-6: the fork's dice are drawn under its own id and seed."""
    app = Campaigns(MEMORY)
    campaign = new_table(app)
    app.execute(campaign, c.FrameScene(seat=1, text="Forked"))
    fork = app.fork(campaign)
    assert types(fork.events) == ["CampaignForked", "ForkedFrom", "DiceCommitted"]
    rng = random.Random(3)
    play_until(app, fork.campaign_id, lambda a, cid: a.state(cid).scenes_played >= 1, rng)
    assert verify_stored(app, fork.campaign_id).ok
    assert verify_stored(app, campaign).ok


def test_dice_given_by_a_test_are_recorded_as_not_derived_and_reported_so() -> None:
    """R-FAIR-7: an explicit dice source bypasses the derivation; verify says so, and passes."""
    app = Campaigns(MEMORY, dice=ScriptedDice([3] * 5000))

    def revealed_a_roll(app: Campaigns, campaign: UUID) -> bool:
        kinds = types(app.history(campaign, limit=100_000))
        return "DieRolled" in kinds and "DiceRevealed" in kinds[kinds.index("DieRolled"):]

    rng = random.Random(2)
    for _ in range(40):
        campaign = new_table(app)
        if play_until(app, campaign, revealed_a_roll, rng, max_steps=1500):
            break
    assert all(r.event.draw == 0 and r.event.rolled == 3 for r in rolls(app, campaign))
    report = verify_stored(app, campaign)
    assert report.ok and not report.fair
    assert "not derived" in {s.status for s in report.scenes}
    assert "not provably fair: dice were not derived" in report.summary()


@pytest.mark.parametrize("seats", [0, 2])
def test_the_seats_seeds_are_the_ones_the_dice_were_drawn_with(seats: int) -> None:
    """R-FAIR-2, R-FAIR-4: with or without seats' seeds, verify recomputes the same dice."""
    app = Campaigns(MEMORY)
    campaign = played(app, scenes=1, min_rolls=1, seeds=bool(seats), seed=seats)
    log = app.history(campaign, limit=100_000)
    added = [r for r in log if isinstance(r.event, SeatSeedAdded)]
    assert len(added) == (3 if seats else 0)
    assert verify_stored(app, campaign).fair
