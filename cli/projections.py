"""``capes`` subcommands of the read models (:mod:`projections`), run by the host on the store.

- ``capes projections run [--name N …]``: follow the log and keep the read models up to date
  (for a deployment whose servers run with ``CAPES_PROJECTIONS=external``), until SIGINT or
  SIGTERM.
- ``capes projections rebuild [--name N …]``: empty read models and replay the whole log into
  them, with a progress bar.
- ``capes projections status``: each read model's position against the store's last event.
- ``capes analytics CAMPAIGN [--json]`` or ``capes analytics --all [--json]``: the figures.
- ``capes campaigns [SEARCH] [--open | --closed] [--limit N]``: the campaign directory.

Each brings the read models it reads up to date first (safe beside a running server: a
position is applied once whoever applies it).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from uuid import UUID

import msgspec

from application.campaigns import open_campaigns
from application.config import describe_store
from projections.analytics import Analytics, Distribution
from projections.service import MODELS, ReadModels

Body = Callable[[ReadModels, argparse.Namespace], int]


@contextmanager
def _read_models(names: list[str] | None = None) -> Iterator[ReadModels]:
    app = open_campaigns()
    read_models: ReadModels | None = None
    try:
        read_models = ReadModels(app, names, runs=True)
        yield read_models
    finally:
        if read_models is not None:
            read_models.close()
        app.close()


def _names(args: argparse.Namespace) -> list[str] | None:
    names: list[str] | None = args.name or None
    return names


def _run(args: argparse.Namespace) -> int:
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with _read_models(_names(args)) as read_models:
        status = read_models.status()
        print(f"Following {describe_store()} for {', '.join(read_models.models)}: the store is "
              f"at {status['head']}, the read models at {status['positions']}", flush=True)
        read_models.runner.run_forever(stop)
        print(f"stopped at {read_models.runner.positions()}")
    return 0


def _rebuild(args: argparse.Namespace) -> int:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    with _read_models(_names(args)) as read_models:
        head = read_models.runner.head()
        names = ", ".join(read_models.models)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns, disable=args.quiet) as bar:
            task = bar.add_task(f"rebuilding {names}", total=head or 1)
            position, seconds = read_models.rebuild(
                progress=lambda at: bar.update(task, completed=min(at, head)))
            bar.update(task, completed=head or 1)
        rate = position / seconds if seconds else 0.0
        print(f"rebuilt {names} to position {position} in {seconds:.2f} s "
              f"({rate:,.0f} events/s)")
    return 0


def _status(args: argparse.Namespace) -> int:
    with _read_models(_names(args)) as read_models:
        status = read_models.status()
        print(f"store {describe_store()}: last position {status['head']}")
        for name, position in status["positions"].items():
            behind = status["head"] - position
            print(f"  {name:<10} at {position:>8}" + (f"  ({behind} behind)" if behind else ""))
    return 0


def _bar(d: Distribution) -> str:
    if not d.rolls:
        return "no rolls"
    faces = " ".join(f"{face}:{n}" for face, n in enumerate(d.faces, 1))
    fairness = (f"chi-square {d.chi_square:.2f}, p = {d.p_value:.3f}"
                if d.chi_square is not None and d.p_value is not None else "")
    return f"{d.rolls:>4} rolls  {faces}  mean {d.mean:.2f}  {fairness}"


def analytics_text(a: Analytics) -> str:
    """The figures for people."""
    title = f"campaign {a.campaign_id}" if a.campaign_id else f"{a.campaigns} campaign(s)"
    out = [f"== Analytics of {title} (store position {a.position})",
           f"events {a.events} in effect; {a.reverted_events} reverted "
           f"({a.undos} undo(s), {a.rewinds} rewind(s))", "", "Dice (fair: p not small)",
           f"  overall   {_bar(a.dice.overall)}"]
    out += [f"  {source:<9} {_bar(d)}" for source, d in a.dice.by_source.items()]
    out += [f"  {p.name or p.seat:<9} {_bar(p.dice)}" for p in a.dice.by_player]
    if a.dice.reverted:
        out.append(f"  ({a.dice.reverted} reverted roll(s) not counted)")
    out += ["", "Story Tokens"]
    out += [f"  {kind:<9} {n}" for kind, n in a.tokens.by_kind.items()]
    for flow in a.tokens.totals:
        if flow.source is not None and flow.target is not None:
            out.append(f"  seat {flow.source} -> seat {flow.target}: {flow.amount} ({flow.kind})")
    if a.tokens.balances:
        last = a.tokens.balances[-1]
        out.append(f"  after page {last.page}: tokens {last.tokens}, Debt {last.debt}")
    out += ["", "Debt"]
    out += [f"  {kind:<9} {n}" for kind, n in a.debt.by_kind.items()]
    out += [f"  {drive}: {counts}" for drive, counts in a.debt.by_drive.items()]
    c = a.conflicts
    out += ["", "Conflicts"]
    for kind, k in c.by_kind.items():
        out.append(f"  {kind:<6} created {k.created}, resolved {k.resolved} (by side "
                   f"{k.won_by_side}), deadlocked {k.deadlocked}, vetoed {k.vetoed}, "
                   f"goals failed {k.goals_failed}")
    for drive, d in c.by_drive.items():
        out.append(f"  staked {drive}: {d.conflicts} conflict(s), won {d.won}, lost {d.lost}, "
                   f"deadlocked {d.deadlocked}, Debt {d.debt}")
    mean = f"{c.mean_pages_to_resolve:.2f}" if c.mean_pages_to_resolve is not None else "-"
    out.append(f"  pages to resolve {c.pages_to_resolve} (mean {mean}); gloats {c.gloats} "
               f"({c.gloat_tokens} token(s)); deadlocks {c.deadlocks}")
    ab = a.abilities
    out += ["", f"Abilities used {ab.uses} ({ab.super} super, {ab.reactions} reactions)",
            f"  by category {ab.by_category}", f"  by rating {ab.by_rating}"]
    p = a.pace
    per_scene = f"{p.events_per_scene:.1f}" if p.events_per_scene is not None else "-"
    pages = f"{p.pages_per_scene:.1f}" if p.pages_per_scene is not None else "-"
    out += ["", f"Pace: {p.scenes} scene(s), {per_scene} events and {pages} pages per scene, "
            f"{p.events_between_scenes} events between scenes"]
    out += [f"  scene {s.scene}: {s.events} events, {s.pages} pages" for s in p.by_scene]
    return "\n".join(out)


def _analytics(args: argparse.Namespace) -> int:
    if (args.campaign is None) == (not args.all):
        print("name a campaign, or --all", file=sys.stderr)
        return 2
    with _read_models(["analytics"]) as read_models:
        read_models.runner.catch_up()
        figures = (read_models.analytics.analytics(args.campaign) if args.campaign
                   else read_models.analytics.analytics(None))
        if figures is None:
            print(f"no campaign {args.campaign} in {describe_store()}", file=sys.stderr)
            return 1
        if args.json:
            print(msgspec.json.format(msgspec.json.encode(figures)).decode())
        else:
            print(analytics_text(figures))
    return 0


def _campaigns(args: argparse.Namespace) -> int:
    with _read_models(["directory"]) as read_models:
        read_models.runner.catch_up()
        found = read_models.directory.search(args.search, closed=args.closed,
                                             limit=args.limit)
        for c in found:
            state = "closed" if c.closed else "open"
            fork = f" fork of {c.forked_from}@{c.forked_at}" if c.forked_from else ""
            print(f"{c.campaign_id}  {c.name!r} ({c.edition}, {state}{fork}) "
                  f"players: {', '.join(c.players) or '-'}; {c.version} events, "
                  f"last {c.last_activity:%Y-%m-%d %H:%M}")
        if not found:
            print("no campaign found", file=sys.stderr)
    return 0


def _campaign(text: str) -> UUID:
    try:
        return UUID(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a campaign id: {text!r}") from None


def register(commands: Any) -> None:
    """Add the read models' subcommands to ``capes``."""
    projections = commands.add_parser("projections", help="run, rebuild or check the read "
                                      "models")
    actions = projections.add_subparsers(dest="action", required=True)

    def named(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        parser.add_argument("--name", action="append", choices=list(MODELS),
                            help="a read model (repeat for more; default: all)")
        return parser

    named(actions.add_parser("run", help="keep the read models up to date (a separate "
                             "process; the servers run with CAPES_PROJECTIONS=external)")
          ).set_defaults(run=_run)
    rebuild = named(actions.add_parser("rebuild", help="rebuild read models from the whole "
                                       "event history"))
    rebuild.add_argument("--quiet", action="store_true", help="no progress bar")
    rebuild.set_defaults(run=_rebuild)
    named(actions.add_parser("status", help="the read models' positions")).set_defaults(
        run=_status)

    analytics = commands.add_parser("analytics", help="print a campaign's analytics (or all "
                                    "campaigns')")
    analytics.add_argument("campaign", type=_campaign, nargs="?")
    analytics.add_argument("--all", action="store_true", help="across every campaign")
    analytics.add_argument("--json", action="store_true", help="the figures as JSON")
    analytics.set_defaults(run=_analytics)

    campaigns = commands.add_parser("campaigns", help="list and search campaigns")
    campaigns.add_argument("search", nargs="?", default="",
                           help="part of a campaign's or a player's name")
    which = campaigns.add_mutually_exclusive_group()
    which.add_argument("--open", dest="closed", action="store_false", default=None)
    which.add_argument("--closed", dest="closed", action="store_true")
    campaigns.add_argument("--limit", type=int, default=50)
    campaigns.set_defaults(run=_campaigns)


__all__ = ["analytics_text", "register"]
