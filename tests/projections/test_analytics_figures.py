"""The analytics of a scripted campaign whose every roll is known: ``capes demo``'s scene with
``DEMO_DICE``. And the chi-square figure against known values of the chi-square distribution."""

from __future__ import annotations

import math
from collections.abc import Iterator
from uuid import UUID

import pytest
from stores import MakeApp

from application.campaigns import Campaigns
from application.dice import ScriptedDice
from cli.demo import ANA, BEN, CLEO, DEMO_DICE, play_demo
from projections.analytics import Analytics
from projections.charts import CHARTS, chart
from projections.service import ReadModels
from projections.stats import chi_square, upper_gamma_q

# The script's rolls in order (DEMO_DICE = 4, 2, 5, 6, 5, 4, 6, 2): Cleo's Police Procedure 4,
# Ben's Lightning reaction 2, Ana's Shadow Step 5 (rejected: still rolled), Ben's Wind Wall 6,
# Cleo's Marksmanship 5, Ana's Night Vision 4, Cleo's Streetwise 6, Ben's Thunderclap 2.
ROLLS = {ANA: [5, 4], BEN: [2, 6, 2], CLEO: [4, 5, 6]}


def faces(rolls: list[int]) -> tuple[int, ...]:
    return tuple(rolls.count(face) for face in range(1, 7))


def chi_square_p5(x: float) -> float:
    """The chi-square survival function for 5 degrees of freedom, in closed form."""
    return math.erfc(math.sqrt(x / 2)) + math.sqrt(2 * x / math.pi) * math.exp(-x / 2) * (
        1 + x / 3)


@pytest.fixture
def demo(store_env: dict[str, str], make_app: MakeApp) -> Iterator[tuple[Analytics, Campaigns,
                                                                         UUID, ReadModels]]:
    app = make_app(store_env, dice=ScriptedDice(DEMO_DICE))
    campaign = play_demo(app, out=lambda _: None)
    read_models = ReadModels(app)
    read_models.runner.catch_up()
    figures = read_models.analytics.analytics(campaign)
    assert figures is not None
    yield figures, app, campaign, read_models
    read_models.close()


def test_the_dice_of_the_demo_per_player_and_overall(demo: tuple[Analytics, ...]) -> None:
    figures = demo[0]
    assert sorted(r for rolls in ROLLS.values() for r in rolls) == sorted(DEMO_DICE)
    dice = figures.dice
    assert dice.overall.faces == faces(list(DEMO_DICE)) == (0, 2, 0, 2, 2, 2)
    assert dice.overall.rolls == 8 and dice.overall.mean == sum(DEMO_DICE) / 8
    # Expected 8/6 per face: (4 x (2 - 4/3)^2 + 2 x (4/3)^2) / (4/3) = 4.
    assert dice.overall.chi_square == pytest.approx(4.0)
    assert dice.overall.p_value == pytest.approx(chi_square_p5(4.0), rel=1e-9)
    assert dice.overall.p_value == pytest.approx(0.5494159513527805, rel=1e-9)
    assert {(p.seat, p.name): p.dice.faces for p in dice.by_player} == {
        (ANA, "Ana"): faces(ROLLS[ANA]), (BEN, "Ben"): faces(ROLLS[BEN]),
        (CLEO, "Cleo"): faces(ROLLS[CLEO])}
    assert dice.by_source["reaction"].faces == faces([2])
    assert dice.by_source["ability"].rolls == 7
    assert dice.reverted == 0


def test_the_tokens_debt_conflicts_abilities_and_pace_of_the_demo(
    demo: tuple[Analytics, ...]
) -> None:
    figures = demo[0]
    # One Story Token each to start; Ana buys a turn; Ben gives 2 on resolving the capture;
    # Cleo gloats once.
    assert figures.tokens.by_kind == {"start": 3, "turn": 1, "gift": 2, "gloat": 1}
    assert [(b.page, b.tokens) for b in figures.tokens.balances] == [
        (1, {1: 0, 2: 1, 3: 1}), (2, {1: 2, 2: 1, 3: 2}), (3, {1: 2, 2: 1, 3: 2})]
    gifts = [f for f in figures.tokens.totals if f.kind == "gift"]
    assert [(f.source, f.target, f.amount) for f in gifts] == [(BEN, ANA, 2)]
    # Tempest stakes Power on the capture (won), Nightjar Justice against it (lost).
    drives = figures.conflicts.by_drive
    assert (drives["Power"].conflicts, drives["Power"].won, drives["Power"].lost) == (1, 1, 0)
    assert (drives["Justice"].conflicts, drives["Justice"].won,
            drives["Justice"].lost) == (1, 0, 1)
    kinds = figures.conflicts.by_kind
    assert (kinds["event"].created, kinds["event"].resolved, kinds["event"].won_by_side) == (
        1, 1, {0: 1})
    assert (kinds["goal"].created, kinds["goal"].resolved, kinds["goal"].won_by_side) == (
        1, 1, {0: 1})
    # The capture: created on page 1, resolved on page 2; the bridge: page 1 to page 3.
    assert figures.conflicts.pages_to_resolve == {2: 1, 3: 1}
    assert figures.conflicts.mean_pages_to_resolve == 2.5
    assert (figures.conflicts.gloats, figures.conflicts.gloat_tokens,
            figures.conflicts.deadlocks) == (1, 1, 0)
    # Seven rolls and a reaction, and Nightjar raising an Inspiration with Shadow Step.
    abilities = figures.abilities
    assert (abilities.uses, abilities.reactions, abilities.super) == (9, 1, 6)
    assert abilities.by_category == {"power": 6, "skill": 3}
    assert abilities.by_rating == {1: 3, 2: 3, 3: 2, 5: 1}
    pace = figures.pace
    assert pace.scenes == 1 and [s.pages for s in pace.by_scene] == [3]
    assert figures.undos == figures.rewinds == figures.reverted_events == 0


def test_the_events_counted_are_the_campaigns_game_events(demo: tuple[object, ...]) -> None:
    figures, app, campaign, _ = demo
    assert isinstance(figures, Analytics) and isinstance(app, Campaigns)
    from domain.capes.events import EVENT_TYPES

    log = app.history(campaign, limit=10_000)  # type: ignore[arg-type]
    game = [r for r in log if type(r.event) in EVENT_TYPES]
    assert figures.events == len(game)
    assert figures.pace.by_scene[0].events + figures.pace.events_between_scenes == len(game)


def test_across_campaigns_only_aggregate_figures_are_given(demo: tuple[object, ...]) -> None:
    _, app, _, read_models = demo
    assert isinstance(app, Campaigns) and isinstance(read_models, ReadModels)
    app.dice = ScriptedDice(DEMO_DICE)
    play_demo(app, out=lambda _: None)  # the same scene again, in a second campaign
    read_models.runner.catch_up()
    across = read_models.all_analytics(max_age=0)
    assert across.campaign_id is None and across.campaigns == 2
    assert across.dice.overall.faces == tuple(2 * n for n in faces(list(DEMO_DICE)))
    assert across.dice.overall.chi_square == pytest.approx(8.0)
    assert across.conflicts.pages_to_resolve == {2: 2, 3: 2}
    # Nothing that names a campaign, a seat or a player, and no per-page series.
    assert across.dice.by_player == () and across.tokens.balances == ()
    assert across.tokens.flows == () and across.pace.by_scene == ()
    assert across.debt.by_seat == {}
    assert all(f.source is None and f.target is None for f in across.tokens.totals)


def test_every_chart_is_a_png(demo: tuple[Analytics, ...]) -> None:
    figures = demo[0]
    for name in CHARTS:
        assert chart(figures, name).startswith(b"\x89PNG\r\n\x1a\n"), name


@pytest.mark.parametrize("statistic, p", [(11.0705, 0.05), (15.0863, 0.01), (9.2364, 0.10),
                                          (1.6103, 0.90), (0.0, 1.0)])
def test_the_chi_square_p_value_matches_the_table_for_five_degrees_of_freedom(
    statistic: float, p: float
) -> None:
    assert upper_gamma_q(2.5, statistic / 2) == pytest.approx(p, abs=2e-5)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 10, 30])
def test_the_incomplete_gamma_function_agrees_with_closed_forms(k: int) -> None:
    for x in (0.01, 0.5, 1.0, 2.5, 7.0, 20.0, 60.0):
        if k == 5:
            assert upper_gamma_q(2.5, x / 2) == pytest.approx(chi_square_p5(x), rel=1e-9)
        elif k == 2:  # exponential: Q(1, x/2) = exp(-x/2)
            assert upper_gamma_q(1, x / 2) == pytest.approx(math.exp(-x / 2), rel=1e-9)
        elif k == 1:  # Q(1/2, x/2) = erfc(sqrt(x/2))
            assert upper_gamma_q(0.5, x / 2) == pytest.approx(math.erfc(math.sqrt(x / 2)),
                                                              rel=1e-9, abs=1e-300)
        else:  # integer a: Q(a, y) = exp(-y) * sum(y^i / i!, i < a)
            if k % 2 == 0:
                a, y = k // 2, x / 2
                closed = math.exp(-y) * sum(y**i / math.factorial(i) for i in range(a))
                assert upper_gamma_q(a, y) == pytest.approx(closed, rel=1e-9)
            else:
                assert 0.0 <= upper_gamma_q(k / 2, x / 2) <= 1.0


def test_a_fair_looking_die_and_a_loaded_one() -> None:
    assert chi_square([0] * 6) is None
    statistic, p = chi_square([100] * 6)  # type: ignore[misc]
    assert statistic == 0.0 and p == 1.0
    statistic, p = chi_square([100, 100, 100, 100, 100, 200])  # type: ignore[misc]
    assert statistic == pytest.approx(500 / 7) and p == pytest.approx(chi_square_p5(500 / 7))
    assert p < 1e-12
