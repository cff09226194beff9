"""Charts a player can read (issue 14, item 7): equal lines stay visible, each player's dice
are held against their own fair share, few rolls are not judged, every mark is labelled, and
players are named, not numbered — a fork's players too."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from uuid import UUID

import msgspec
import pytest

from application.campaigns import Campaigns
from application.config import persistence_env
from application.dice import ScriptedDice
from cli.demo import DEMO_DICE, play_demo
from projections.analytics import FACES, Analytics
from projections.charts import CHARTS, FEW_ROLLS, chart, figure_of
from projections.service import ReadModels


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[Campaigns, ReadModels, UUID]]:
    app = Campaigns(persistence_env({"CAPES_DB": ":memory:"}), dice=ScriptedDice(DEMO_DICE))
    campaign = play_demo(app, out=lambda _: None)
    read_models = ReadModels(app, ["analytics"])
    read_models.runner.catch_up()
    yield app, read_models, campaign
    read_models.close()
    app.close()


def analytics(demo: tuple[Campaigns, ReadModels, UUID], campaign: UUID | None = None
              ) -> Analytics:
    _, read_models, played = demo
    read_models.runner.catch_up()
    figures = read_models.analytics.analytics(campaign or played)
    assert figures is not None
    return figures


def axes_of(figures: Analytics, name: str) -> Any:
    return figure_of(figures, name).axes[0]


def test_each_players_dice_are_held_against_their_own_fair_share(demo: Any) -> None:
    figures = analytics(demo)
    axes = axes_of(figures, "dice")
    fair = {round(float(y), 6) for c in axes.collections for y in c.get_segments()
            for y in {p[1] for p in y}}
    assert fair == {round(p.dice.rolls / FACES, 6) for p in figures.dice.by_player}
    assert len(fair) == 2, "Ana rolled twice, Ben and Cleo three times each"


def test_a_chi_square_on_few_rolls_is_not_shown_as_a_verdict(demo: Any) -> None:
    figures = analytics(demo)
    assert figures.dice.overall.rolls < FEW_ROLLS
    title = axes_of(figures, "dice").get_title()
    assert "too few to judge" in title and "p =" not in title


@pytest.mark.parametrize("name", ["tokens", "debt"])
def test_players_with_equal_figures_stay_visible(demo: Any, name: str) -> None:
    """In the demo Ana and Cleo hold the same tokens from page 2 on."""
    lines = [line for line in axes_of(analytics(demo), name).get_lines()
             if not line.get_label().startswith("_")]
    assert [line.get_label() for line in lines] == ["Ana", "Ben", "Cleo"]
    drawn = [tuple(zip(line.get_xdata(), line.get_ydata(), strict=True)) for line in lines]
    assert len(set(drawn)) == len(drawn)
    for i, one in enumerate(lines):
        for other in lines[i + 1:]:
            assert list(one.get_xdata()) != list(other.get_xdata()), "never drawn on top"
            assert one.get_marker() != other.get_marker()


def test_every_mark_of_the_pace_chart_is_labelled(demo: Any) -> None:
    figure = figure_of(analytics(demo), "pace")
    legend = figure.axes[0].get_legend()
    assert legend is not None
    texts = [t.get_text() for t in legend.get_texts()]
    assert any("events" in t for t in texts) and any("pages" in t for t in texts)
    assert any("3 pages" in t.get_text() for t in figure.axes[1].texts), "the dot's value"


def test_a_forks_players_are_named_in_its_charts(demo: Any) -> None:
    app, _, campaign = demo
    # From where the move holding event 100 ended (a fork starts where a move ended, R-X-REC-6).
    move = app.history(campaign, 99, 1)[0].command
    ended = max(r.originator_version for r in app.history(campaign, 99, 50) if r.command == move)
    fork = app.fork(campaign, ended, name="What if").campaign_id
    figures = analytics(demo, fork)
    assert [p.name for p in figures.dice.by_player] == ["Ana", "Ben", "Cleo"]
    for name in CHARTS:
        figure = figure_of(figures, name)
        labels = [t.get_text() for axes in figure.axes if axes.get_legend()
                  for t in axes.get_legend().get_texts()]
        assert not any(label.startswith("seat ") for label in labels), (name, labels)


def renamed(figures: Analytics, names: tuple[str, ...]) -> Analytics:
    """``figures`` with its players renamed ``names``, in seat order."""
    players = tuple(msgspec.structs.replace(p, name=n)
                    for p, n in zip(figures.dice.by_player, names, strict=True))
    return msgspec.structs.replace(
        figures, dice=msgspec.structs.replace(figures.dice, by_player=players))


@pytest.mark.parametrize("name", ["dice", "tokens", "debt"])
def test_players_names_are_drawn_as_plain_text_in_every_legend(demo: Any, name: str) -> None:
    """A name is the player's to choose: ``$…$`` in it is no formula (a malformed one made the
    chart a 500) and a leading ``_`` does not leave the player out of the legend."""
    names = ("Eve $\\frac{$ x", "_Ben", "$x^2$")
    figures = renamed(analytics(demo), names)
    assert chart(figures, name).startswith(b"\x89PNG")
    texts = figure_of(figures, name).axes[0].get_legend().get_texts()
    shown = [t.get_text() for t in texts if not t.get_text().startswith("fair")]
    assert [label.split(" (")[0] for label in shown] == list(names)
    assert not any(t.get_parse_math() for t in texts)
