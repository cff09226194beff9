"""PNG charts of a campaign's analytics (matplotlib, Agg backend, no pyplot state: safe to draw
from the server's worker threads)."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from application.extras import MissingExtra

from .analytics import FACES, Analytics

#: The charts, by the name in ``/campaigns/{id}/analytics/{chart}.png``.
CHARTS = ("dice", "tokens", "debt", "conflicts", "abilities", "pace", "victory_points")


def _figure(width: float = 7.0, height: float = 4.0) -> Any:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as e:
        raise MissingExtra("charts", "Charts") from e

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


def _legend(axes: Any, entries: list[tuple[Any, str]], **options: Any) -> None:
    """A legend of ``entries`` (an artist and its label) whose labels are plain text.

    A label holding a player's name is theirs to choose: matplotlib would parse ``$…$`` in it
    as mathtext (a malformed formula raised ValueError, a 500) and leave out a label starting
    with ``_``. The entries are passed explicitly (none left out) and their texts told not to
    parse math: per text, since ``rcParams`` is shared by the threads that draw charts.
    """
    legend = axes.legend([artist for artist, _ in entries], [label for _, label in entries],
                         **options)
    for text in legend.get_texts():
        text.set_parse_math(False)


def _empty(axes: Any, text: str) -> None:
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes)
    axes.set_axis_off()


#: Fewer rolls than this and a chi-square test of the dice means nothing yet (each face
#: should be expected at least five times).
FEW_ROLLS = 30
#: Marker shapes and line styles, one per player: equal series stay told apart.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
LINESTYLES = ("-", "--", "-.", ":")


def player_names(a: Analytics) -> dict[int, str]:
    """Each seat's player name (a seat only when the name is unknown)."""
    return {p.seat: p.name or f"seat {p.seat}" for p in a.dice.by_player}


def _dice(a: Analytics, axes: Any) -> None:
    dice = a.dice
    if dice.overall.rolls == 0:
        _empty(axes, "no dice rolled yet")
        return
    names = player_names(a)
    series = [(names[p.seat], p.dice.faces, p.dice.rolls) for p in dice.by_player] or [
        ("all rolls", dice.overall.faces, dice.overall.rolls)]
    width = 0.8 / len(series)
    faces = range(1, FACES + 1)
    entries: list[tuple[Any, str]] = []
    for i, (label, counts, rolls) in enumerate(series):
        xs = [f - 0.4 + width * (i + 0.5) for f in faces]
        bars = axes.bar(xs, counts, width)
        entries.append((bars, f"{label} ({rolls} roll{'s' if rolls != 1 else ''})"))
        if rolls:
            # Fair for this series: its own rolls spread evenly, a mark over each of its bars.
            axes.hlines([rolls / FACES] * FACES, [x - width / 2 for x in xs],
                        [x + width / 2 for x in xs], colors=bars.patches[0].get_facecolor(),
                        linestyles="dashed", linewidth=1.5)
    fair = axes.plot([], [], color="grey", linestyle="--")
    entries.append((fair[0], "fair: each player's rolls / 6"))
    overall = dice.overall
    if overall.rolls < FEW_ROLLS:
        judged = f"too few to judge fairness (a chi-square needs {FEW_ROLLS}+)"
    elif overall.p_value is not None and overall.chi_square is not None:
        judged = f"chi-square {overall.chi_square:.2f}, p = {overall.p_value:.3f}"
    else:  # pragma: no cover - the figures come together
        judged = ""
    axes.set_title(f"Dice: {overall.rolls} rolls, {judged}" if judged else "Dice")
    _integers(axes)
    axes.set_xticks(list(faces))
    axes.set_xlabel("face")
    axes.set_ylabel("rolls")
    _legend(axes, entries, fontsize="small")


def _balances(a: Analytics, axes: Any, field: str, title: str, unit: str) -> None:
    balances = a.tokens.balances
    if not balances:
        _empty(axes, "no page has ended yet")
        return
    names = player_names(a)
    seats = sorted({s for b in balances for s in getattr(b, field)} | set(names))
    pages = [b.page for b in balances]
    # Equal lines would hide each other: each player's is nudged sideways a little and has a
    # marker and a line style of its own.
    step = min(0.08, 0.5 / max(len(seats), 1))
    entries: list[tuple[Any, str]] = []
    for i, seat in enumerate(seats):
        shift = (i - (len(seats) - 1) / 2) * step
        name = names.get(seat, f"seat {seat}")
        lines = axes.step([page + shift for page in pages],
                          [getattr(b, field).get(seat, 0) for b in balances], where="post",
                          marker=MARKERS[i % len(MARKERS)],
                          linestyle=LINESTYLES[i % len(LINESTYLES)], linewidth=1.5,
                          markersize=6, alpha=0.85, label=name)
        entries.append((lines[0], name))
    _integers(axes)
    axes.set_xticks(pages)
    top = max((getattr(b, field).get(seat, 0) for b in balances for seat in seats), default=0)
    axes.set_ylim(bottom=-0.3, top=top + 1.2)  # room for the legend above the lines
    axes.set_title(title)
    axes.set_xlabel("page")
    axes.set_ylabel(unit)
    _legend(axes, entries, fontsize="small", ncols=min(len(seats), 4), loc="upper left")


def _tokens(a: Analytics, axes: Any) -> None:
    _balances(a, axes, "tokens", "Story Tokens per player at the end of each page", "tokens")


def _debt(a: Analytics, axes: Any) -> None:
    _balances(a, axes, "debt", "Debt of each player's characters at the end of each page",
              "Debt")


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
    bars = axes.bar(numbers, [s.events for s in scenes], label="events (bars, left scale)")
    axes.bar_label(bars, padding=2, fontsize="small")
    axes.set_xlabel("scene")
    axes.set_ylabel("events")
    axes.set_ylim(top=max(s.events for s in scenes) * 1.15 + 1)
    pages = axes.twinx()
    line = pages.plot(numbers, [s.pages for s in scenes], color="black", marker="o",
                      label="pages (dots, right scale)")
    for scene in scenes:
        pages.annotate(f"{scene.pages} page{'s' if scene.pages != 1 else ''}",
                       (scene.scene, scene.pages), textcoords="offset points", xytext=(8, 4),
                       fontsize="small")
    pages.set_ylabel("pages")
    pages.set_ylim(bottom=0, top=max(s.pages for s in scenes) + 1)
    _integers(pages)
    axes.set_xticks(numbers)
    axes.set_title("Pace: events and pages per scene")
    axes.legend([bars, *line], [bars.get_label(), line[0].get_label()], fontsize="small",
                loc="upper left")


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


def figure_of(analytics: Analytics, name: str) -> Any:
    """The matplotlib Figure of chart ``name`` (one of :data:`CHARTS`; KeyError otherwise)."""
    draw = _DRAW[name]
    figure = _figure()
    draw(analytics, figure.add_subplot())
    return figure


def chart(analytics: Analytics, name: str) -> bytes:
    """The PNG of chart ``name`` (one of :data:`CHARTS`; KeyError otherwise)."""
    return _png(figure_of(analytics, name))
