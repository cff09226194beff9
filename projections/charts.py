"""PNG charts of a campaign's analytics (matplotlib, Agg backend, no pyplot state: safe to draw
from the server's worker threads)."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from .analytics import FACES, Analytics

#: The charts, by the name in ``/campaigns/{id}/analytics/{chart}.png``.
CHARTS = ("dice", "tokens", "debt", "conflicts", "abilities", "pace", "victory_points")


def _figure(width: float = 7.0, height: float = 4.0) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def _png(figure: Any) -> bytes:
    out = io.BytesIO()
    figure.savefig(out, format="png")
    return out.getvalue()


def _integers(axes: Any) -> None:
    from matplotlib.ticker import MaxNLocator

    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))


def _empty(axes: Any, text: str) -> None:
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes)
    axes.set_axis_off()


def _dice(a: Analytics, axes: Any) -> None:
    dice = a.dice
    series = [(p.name or f"seat {p.seat}", p.dice.faces) for p in dice.by_player] or [
        ("all rolls", dice.overall.faces)]
    if dice.overall.rolls == 0:
        _empty(axes, "no dice rolled yet")
        return
    width = 0.8 / len(series)
    faces = range(1, FACES + 1)
    for i, (label, counts) in enumerate(series):
        axes.bar([f - 0.4 + width * (i + 0.5) for f in faces], counts, width, label=label)
    axes.axhline(dice.overall.rolls / FACES / (len(series) if dice.by_player else 1),
                 color="grey", linestyle="--", linewidth=1, label="fair (per series)")
    p = dice.overall.p_value
    axes.set_title(f"Dice: {dice.overall.rolls} rolls, chi-square "
                   f"{dice.overall.chi_square:.2f}, p = {p:.3f}" if p is not None else "Dice")
    _integers(axes)
    axes.set_xticks(list(faces))
    axes.set_xlabel("face")
    axes.set_ylabel("rolls")
    axes.legend(fontsize="small")


def _balances(a: Analytics, axes: Any, field: str, title: str) -> None:
    balances = a.tokens.balances
    if not balances:
        _empty(axes, "no page has ended yet")
        return
    seats = sorted({s for b in balances for s in getattr(b, field)})
    names = {p.seat: p.name for p in a.dice.by_player}
    pages = [b.page for b in balances]
    for seat in seats:
        axes.step(pages, [getattr(b, field).get(seat, 0) for b in balances], where="post",
                  marker="o", label=names.get(seat) or f"seat {seat}")
    _integers(axes)
    axes.set_title(title)
    axes.set_xlabel("page")
    axes.legend(fontsize="small")


def _tokens(a: Analytics, axes: Any) -> None:
    _balances(a, axes, "tokens", "Story Tokens per player at the end of each page")


def _debt(a: Analytics, axes: Any) -> None:
    _balances(a, axes, "debt", "Debt of each player's characters at the end of each page")


def _conflicts(a: Analytics, axes: Any) -> None:
    kinds = a.conflicts.by_kind
    if not kinds:
        _empty(axes, "no conflicts yet")
        return
    outcomes = ("created", "resolved", "deadlocked", "vetoed", "goals_failed")
    names = sorted(kinds)
    width = 0.8 / len(outcomes)
    for i, outcome in enumerate(outcomes):
        axes.bar([k - 0.4 + width * (i + 0.5) for k in range(len(names))],
                 [getattr(kinds[n], outcome) for n in names], width, label=outcome)
    _integers(axes)
    axes.set_xticks(range(len(names)), names)
    axes.set_title(f"Conflicts by kind (gloats {a.conflicts.gloats}, "
                   f"deadlocks {a.conflicts.deadlocks})")
    axes.legend(fontsize="small")


def _abilities(a: Analytics, axes: Any) -> None:
    table = a.abilities.by_category_and_rating
    if not table:
        _empty(axes, "no abilities used yet")
        return
    categories = sorted(table)
    ratings = sorted({r for c in table.values() for r in c})
    bottom = [0] * len(categories)
    for rating in ratings:
        counts = [table[c].get(rating, 0) for c in categories]
        axes.bar(categories, counts, bottom=bottom, label=f"rating {rating}")
        bottom = [b + n for b, n in zip(bottom, counts, strict=True)]
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.set_title(f"Abilities used: {a.abilities.uses} ({a.abilities.super} super, "
                   f"{a.abilities.reactions} reactions)")
    axes.legend(fontsize="small")


def _pace(a: Analytics, axes: Any) -> None:
    scenes = a.pace.by_scene
    if not scenes:
        _empty(axes, "no scene yet")
        return
    numbers = [s.scene for s in scenes]
    axes.bar(numbers, [s.events for s in scenes], label="events")
    axes.set_xlabel("scene")
    axes.set_ylabel("events")
    pages = axes.twinx()
    pages.plot(numbers, [s.pages for s in scenes], color="black", marker="o", label="pages")
    pages.set_ylabel("pages")
    pages.set_ylim(bottom=0, top=max(s.pages for s in scenes) + 1)
    _integers(pages)
    axes.set_xticks(numbers)
    axes.set_title("Pace: events and pages per scene")


def _victory_points(a: Analytics, axes: Any) -> None:
    """Edition capees: each scene's Hero and Opponent totals after every resolution."""
    points = a.victory_points.over_time
    if not points:
        _empty(axes, "no Victory Points yet (edition capees)")
        return
    steps = range(1, len(points) + 1)
    axes.step(steps, [p.hero for p in points], where="post", marker="o", label="Hero")
    axes.step(steps, [p.opponent for p in points], where="post", marker="o", label="Opponent")
    for step, p in zip(steps, points, strict=True):
        axes.annotate(f"s{p.scene} p{p.page}", (step, max(p.hero, p.opponent)),
                      fontsize="x-small", textcoords="offset points", xytext=(0, 4))
    _integers(axes)
    axes.set_xlabel("Complication resolved")
    axes.set_ylabel("scene Victory Points")
    axes.set_title("Victory Points over time " + ", ".join(
        f"({k} {v})" for k, v in a.victory_points.by_faction.items()))
    axes.legend(fontsize="small")


_DRAW: dict[str, Callable[[Analytics, Any], None]] = {
    "dice": _dice, "tokens": _tokens, "debt": _debt, "conflicts": _conflicts,
    "abilities": _abilities, "pace": _pace, "victory_points": _victory_points,
}


def chart(analytics: Analytics, name: str) -> bytes:
    """The PNG of chart ``name`` (one of :data:`CHARTS`; KeyError otherwise)."""
    draw = _DRAW[name]
    figure = _figure()
    draw(analytics, figure.add_subplot())
    return _png(figure)
