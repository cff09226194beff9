"""``capes`` subcommands of the read models (:mod:`projections`), run by the host on the store.

- ``capes projections run [--name N …] [--linger S] [--latest-every S] [--poll S]
  [--priority idle]``: follow the
  log and keep the read models up to date (``capes serve`` starts one for its workers, at
  ``--priority idle``: :mod:`cli.priority`; by hand, for servers run with
  ``CAPES_PROJECTIONS=external``), until SIGINT or SIGTERM. With ``CAPES_READ_MODELS_WAKE`` (a
  socket path), servers waiting for a position wake it. One runner of a store runs at a time
  (:mod:`projections.election`): another one running, it stands by and takes over when that
  one stops.
- ``capes projections rebuild [--name N …]``: empty read models and replay the whole log into
  them, with a progress bar (plain lines when the output is no terminal).
- ``capes projections status``: each read model's position against the store's last event,
  its layout and whether it was built from the store's log (read models of another layout
  than this release's, or of another log, are rebuilt from the log by whoever runs them, when
  it starts: :meth:`projections.service.ReadModels.upgrade`), and which process runs them.
- ``capes analytics CAMPAIGN [--json]`` or ``capes analytics --all [--json]``: the figures.
- ``capes campaigns [SEARCH] [--open | --closed] [--limit N]``: the campaign directory.

Each brings the read models it reads up to date first (safe beside a running server: a
position is applied once whoever applies it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import msgspec

from application.campaigns import open_campaigns
from application.collector import Collector
from application.config import describe_store
from application.placement import pin_here
from cli.arguments import campaign_arg
from cli.priority import PRIORITIES, lower_to_idle
from projections import lineage
from projections.analytics import Analytics, Distribution
from projections.runner import LATEST_EVERY, LINGER, POLL
from projections.service import MODELS, ReadModels
from projections.wake import ENV as WAKE_ENV
from projections.wake import PARENT_ENV, WakeListener

Body = Callable[[ReadModels, argparse.Namespace], int]


@contextmanager
def _read_models(names: list[str] | None = None, *, checkpoints: bool = True,
                 runs: bool = True, **kwargs: Any) -> Iterator[ReadModels]:
    app = open_campaigns(checkpoints=checkpoints)  # False at idle priority: see _run
    read_models: ReadModels | None = None
    try:
        read_models = ReadModels(app, names, runs=runs, **kwargs)
        yield read_models
    finally:
        if read_models is not None:
            read_models.close()
        app.close()


def _names(args: argparse.Namespace) -> list[str] | None:
    names: list[str] | None = args.name or None
    return names


def positions_text(positions: dict[str, int]) -> str:
    """The read models' positions for people: ``157`` when they are all there, else
    ``board 157, timeline 98`` (it printed the dict: ``{'board': 157, 'timeline': 98}``)."""
    if len(set(positions.values())) == 1:
        return str(next(iter(positions.values())))
    return ", ".join(f"{name} {position}" for name, position in positions.items())


def _run(args: argparse.Namespace) -> int:
    stop = threading.Event()
    running: list[ReadModels] = []  # once open: its runner is woken as well as stopped

    def asked_to_stop(*_: object) -> None:
        # Setting `stop` alone left the runner asleep in its poll (an hour with `--poll 3600`)
        # until the poll ended. From a thread: this handler runs on the main thread, which may
        # be inside an event's wait holding that event's (plain) lock, which set() takes.
        def wake() -> None:
            stop.set()
            for read_models in running:
                read_models.runner.stop(timeout=0)

        threading.Thread(target=wake, name="capes-stop", daemon=True).start()

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, asked_to_stop)
    wake = os.environ.get(WAKE_ENV, "").strip()
    # Without a wake, what wakes the runner (the store's NOTIFY on PostgreSQL, else a poll)
    # is followed at once: a server waiting for a position has no other way to hurry it.
    # With one, a NOTIFY is followed after the server's linger, gathering a busy table's
    # commands into one batch, and a waiting server cuts the linger short.
    linger = args.linger if args.linger is not None else (LINGER if wake else 0.0)
    # Likewise the board, ledgers and directory are gathered between writes only where a
    # waiting server can have them written at once.
    latest_every = (args.latest_every if args.latest_every is not None
                    else (LATEST_EVERY if wake else 0.0))
    idle = args.priority == "idle"
    # How this process runs, for its first line: its priority, and its CPU where it was placed.
    how = f" (priority: {lower_to_idle()})" if idle else ""
    # Beside the writer, where `capes serve` placed it (application/placement.py): before any
    # thread of this process starts, so that they all run there.
    pinned = pin_here(os.environ)
    how += f" (CPU {pinned})" if pinned is not None else ""
    # At idle priority this process never checkpoints the campaigns' SQLite file (the
    # servers' processes do): a restart of its log holds every writer while it runs, and a
    # process that gets the CPU only when nothing else wants it must hold nobody.
    with _read_models(_names(args), linger=linger, latest_every=latest_every, poll=args.poll,
                      checkpoints=not idle, woken_at=wake or None) as read_models:
        running.append(read_models)
        status = read_models.status()
        print(f"Following {describe_store()} for {', '.join(read_models.models)}: the store is "
              f"at {status['head']}, the read models at "
              f"{positions_text(status['positions'])}{how}",
              flush=True)
        listener = None
        if wake:
            parent = int(os.environ.get(PARENT_ENV, "0") or 0)
            listener = WakeListener(wake, read_models.runner.hurry,
                                    alive=lambda: not parent or os.getppid() == parent,
                                    on_gone=stop.set).start()
        # As the server and the writer do (application/collector.py): the campaigns this
        # process folds live long, and a full collection walked them all, several times a second.
        collector = Collector()
        collector.collect(everything=True)
        try:
            read_models.runner.run_forever(stop, between=collector.tick_if_due)
        finally:
            if listener is not None:
                listener.stop()  # its socket goes
                if not listener.alive():
                    # The server was killed before it could clean up: the folder it made
                    # for the socket goes too (rmdir: only if nothing else is in it).
                    with contextlib.suppress(OSError):
                        os.rmdir(os.path.dirname(wake))
        print(f"stopped at {positions_text(read_models.runner.positions())}")
    return 0


@contextmanager
def _progress(description: str, total: int, *, quiet: bool) -> Iterator[Callable[[int], None]]:
    """What a rebuild tells of its position, up to ``total``: a progress bar on a terminal; a
    plain line at each tenth of the way into a pipe or a file, which the bar's frames garbled
    (bar characters cut to the width, ellipses, escapes); nothing when ``quiet``."""
    if quiet:
        yield lambda at: None
    elif not sys.stdout.isatty():
        shown = 0

        def line(at: int) -> None:
            nonlocal shown
            at = min(at, total)
            tenth = at * 10 // total if total else 10
            if tenth > shown:
                shown = tenth
                print(f"{description}: {at:,} of {total:,} events", flush=True)

        yield line
    else:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), TimeRemainingColumn())
        with Progress(*columns) as bar:
            task = bar.add_task(description, total=total or 1)
            yield lambda at: bar.update(task, completed=min(at, total))
            bar.update(task, completed=total or 1)


def _rebuild(args: argparse.Namespace) -> int:
    with _read_models(_names(args)) as read_models:
        head = read_models.runner.head()
        names = ", ".join(read_models.models)
        with _progress(f"rebuilding {names}", head, quiet=args.quiet) as progress:
            position, seconds = read_models.rebuild(progress=progress)
        rate = position / seconds if seconds else 0.0
        print(f"rebuilt {names} to position {position} in {seconds:.2f} s "
              f"({rate:,.0f} events/s)")
        for campaign_id, stopped in read_models.runner.stopped.items():
            # One event they cannot apply never stops the read models (issue 13): say which.
            print(f"left out campaign {campaign_id} from its event {stopped.version} (store "
                  f"position {stopped.position}), which the read models cannot apply: "
                  f"{stopped.error}")
    return 0


#: Whether a read model was built from the store's log (:func:`projections.lineage.standing`).
LOGS = {lineage.MATCHES: "matches", lineage.UNKNOWN: "unknown (no mark yet)",
        lineage.ANOTHER_LOG: "ANOTHER LOG — rebuilt at next start"}


def _status(args: argparse.Namespace) -> int:
    # Only looks: a read model of another layout is rebuilt by whoever runs them, not here.
    with _read_models(_names(args), runs=False) as read_models:
        status = read_models.status()
        print(f"store {describe_store()}: last position {status['head']}")
        for name, position in status["positions"].items():
            behind = status["head"] - position
            layout, current = status["layouts"][name], MODELS[name].layout
            log, why = status["logs"][name]
            print(f"  {name:<10} at {position:>8}  layout {layout}"
                  + (f"  ({behind} behind)" if behind else "")
                  + (f"  (this release writes layout {current}: rebuilt when the read models "
                     "next start)" if layout != current else "")
                  + f"  log: {LOGS[log]}")
            if why is not None:
                print(f"    ({why})")
        if status["election"] is not None:
            runner = status["runner"]
            print(f"run by {runner}" if runner is not None else
                  "run by nobody now: the next runner to start or to try again takes over "
                  "(`capes serve`, `capes projections run`)")
    return 0


#: Fewer rolls than this and a chi-square test of the dice says nothing yet (each face
#: should be expected at least 5 times).
FEW_ROLLS = 30


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 roll``, ``2 rolls``, ``no rolls``."""
    if n == 0:
        return f"no {many or word + 's'}"
    return f"{n} {word if n == 1 else many or word + 's'}"


def table(headers: list[str], rows: list[list[Any]], indent: str = "  ") -> list[str]:
    """Rows under headers in columns: the first left-aligned, the others right-aligned."""
    cells = [headers] + [["-" if v is None else str(v) for v in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    return [indent + "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                               for i, (cell, w) in enumerate(zip(row, widths, strict=True))
                               ).rstrip() for row in cells]


def _dice_row(label: str, d: Distribution) -> list[Any]:
    return [label, d.rolls, *d.faces,
            f"{d.mean:.2f}" if d.mean is not None else None,
            f"{d.chi_square:.2f}" if d.chi_square is not None else None,
            f"{d.p_value:.3f}" if d.p_value is not None else None]


def _players(a: Analytics) -> dict[int, str]:
    return {p.seat: p.name or f"seat {p.seat}" for p in a.dice.by_player}


def analytics_text(a: Analytics) -> str:
    """The figures for people: sentences and tables (``--json`` has every figure)."""
    names = _players(a)

    def who(seat: int | None) -> str:
        return "the bank" if seat is None else names.get(seat, f"seat {seat}")

    title = f"campaign {a.campaign_id}" if a.campaign_id else plural(a.campaigns, "campaign")
    reverted = ("none reverted" if not a.reverted_events else
                f"{a.reverted_events} reverted ({plural(a.undos, 'undo')}, "
                f"{plural(a.rewinds, 'upheld dispute')}), left out of every figure")
    out = [f"Analytics of {title} (store position {a.position})",
           f"{plural(a.events, 'event')} in effect; {reverted}.", ""]

    dice = a.dice
    rolls = dice.overall.rolls
    out.append(f"Dice: {plural(rolls, 'roll')}." + (
        f" Too few to judge the dice: a chi-square test needs {FEW_ROLLS} or more."
        if 0 < rolls < FEW_ROLLS else
        " A p-value under 0.01 would say the dice look loaded." if rolls else ""))
    if rolls:
        rows = [_dice_row("all", dice.overall)]
        rows += [_dice_row(source, d) for source, d in dice.by_source.items()]
        rows += [_dice_row(p.name or f"seat {p.seat}", p.dice) for p in dice.by_player]
        out += table(["", "rolls", "1", "2", "3", "4", "5", "6", "mean", "chi-square", "p"],
                     rows)
    if dice.reverted:
        out.append(f"  ({plural(dice.reverted, 'reverted roll')} not counted)")

    tokens = a.tokens
    out += ["", "Story Tokens: " + (", ".join(f"{kind} {n}" for kind, n in
                                              tokens.by_kind.items()) or "none moved yet") + "."]
    for flow in tokens.totals:
        if flow.source is not None and flow.target is not None and a.campaign_id:
            out.append(f"  {who(flow.source)} gave {who(flow.target)} "
                       f"{plural(flow.amount, 'token')} ({flow.kind}).")
    if tokens.balances and names:
        last = tokens.balances[-1]
        out.append(f"  At the end of page {last.page}:")
        seats = sorted(set(last.tokens) | set(last.debt))
        out += table(["", "tokens", "Debt"],
                     [[who(seat), last.tokens.get(seat, 0), last.debt.get(seat, 0)]
                      for seat in seats], indent="    ")

    debt = a.debt
    out += ["", "Debt: " + (", ".join(f"{n} {kind}" for kind, n in debt.by_kind.items())
                            or "none yet") + "."]
    if debt.by_drive:
        kinds = list(debt.by_kind)
        out += table(["Drive", *kinds], [[drive, *(counts.get(k, 0) for k in kinds)]
                                         for drive, counts in debt.by_drive.items()])

    c = a.conflicts
    out += ["", "Conflicts:" + ("" if c.by_kind else " none yet.")]
    if c.by_kind:
        out += table(["kind", "created", "resolved", "deadlocked", "vetoed", "goals failed"],
                     [[kind, k.created, k.resolved, k.deadlocked, k.vetoed, k.goals_failed]
                      for kind, k in c.by_kind.items()])
        for kind, k in c.by_kind.items():
            for side, n in k.won_by_side.items():
                out.append(f"  Side {side} won {plural(n, kind)}.")
    for drive, d in c.by_drive.items():
        out.append(f"  {drive} was staked on {plural(d.conflicts, 'conflict')}: won {d.won}, "
                   f"lost {d.lost}, deadlocked {d.deadlocked}; Debt staked {d.debt}.")
    if c.pages_to_resolve:
        took = ", ".join(f"{plural(pages, 'page')} {'once' if n == 1 else f'{n} times'}"
                         for pages, n in c.pages_to_resolve.items())
        mean = f" (mean {c.mean_pages_to_resolve:.1f})" if c.mean_pages_to_resolve else ""
        out.append(f"  Resolving took {took}{mean}.")
    out.append(f"  {plural(c.gloats, 'gloat').capitalize()} "
               f"({plural(c.gloat_tokens, 'token')}); {plural(c.deadlocks, 'deadlock')}.")

    ab = a.abilities
    out += ["", f"Abilities: {plural(ab.uses, 'use')} ({ab.super} super, "
                f"{plural(ab.reactions, 'reaction')})."]
    if ab.uses:
        out.append("  By category: " + ", ".join(f"{k} {n}" for k, n in ab.by_category.items())
                   + "; by rating: " + ", ".join(f"{r}: {n}" for r, n in ab.by_rating.items())
                   + ".")

    p = a.pace
    average = (f"; on average {p.events_per_scene:.0f} events and "
               f"{p.pages_per_scene:.1f} pages per scene"
               if p.events_per_scene is not None and p.pages_per_scene is not None else "")
    out += ["", f"Pace: {plural(p.scenes, 'scene')}{average}; "
                f"{plural(p.events_between_scenes, 'event')} between scenes."]
    if p.by_scene:
        out += table(["scene", "events", "pages"],
                     [[s.scene, s.events, s.pages] for s in p.by_scene])
    vp = a.victory_points
    if vp.by_faction:  # edition capees
        out += ["", "Victory Points: " + ", ".join(f"{faction} {n}" for faction, n in
                                                   vp.by_faction.items()) + "."]
        if vp.over_time:
            out += table(["scene", "page", "won by", "VP", "Hero", "Opponent"],
                         [[v.scene, v.page, v.faction, v.vp, v.hero, v.opponent]
                          for v in vp.over_time])
    return "\n".join(out)


def _analytics(args: argparse.Namespace) -> int:
    if (args.campaign is None) == (not args.all):
        print("capes analytics: name a campaign, or --all (not both)", file=sys.stderr)
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


def _seconds(text: str) -> float:
    seconds = float(text)
    if not 0 <= seconds <= 3600:
        raise argparse.ArgumentTypeError(f"not a number of seconds from 0 to 3600: {text}")
    return seconds


def register(commands: Any) -> None:
    """Add the read models' subcommands to ``capes``."""
    projections = commands.add_parser(
        "projections", help="run, rebuild or check the read models",
        description=f"The read models ({', '.join(MODELS)}) kept from the "
        "event log: follow it (run), rebuild them from the whole log (rebuild), or show "
        "their positions (status).")
    actions = projections.add_subparsers(dest="action", required=True)

    def named(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
        parser.add_argument("--name", action="append", choices=list(MODELS),
                            help="a read model (repeat for more; default: all)")
        return parser

    run = named(actions.add_parser(
        "run", help="keep the read models up to date (a separate process; the servers run with "
        "CAPES_PROJECTIONS=external)",
        description="Follow the log and keep the read models up to date until SIGINT or "
        "SIGTERM, for servers run with CAPES_PROJECTIONS=external. One runner of a store runs "
        "at a time: another one running, this one stands by and takes over when it stops."))
    run.add_argument("--linger", type=_seconds, default=None,
                     help="seconds to wait, once woken by the store, for more events to take "
                     f"in the same batch (default {LINGER:g} with CAPES_READ_MODELS_WAKE, else "
                     "0)")
    run.add_argument("--latest-every", type=_seconds, default=None,
                     help="seconds to gather the changes of the board, ledgers and directory "
                     "(each campaign's latest state) between writes, unless a server waits "
                     f"for them (default {LATEST_EVERY:g} with CAPES_READ_MODELS_WAKE, else 0)")
    run.add_argument("--poll", type=_seconds, default=POLL,
                     help="seconds between looks at the store when nothing wakes the read "
                     "models (default %(default)s)")
    run.add_argument("--priority", choices=PRIORITIES, default="normal",
                     help="idle: use only the CPU other processes leave (Linux SCHED_IDLE, "
                     "else nice 19), as `capes serve` runs them (default %(default)s)")
    run.set_defaults(run=_run)
    rebuild = named(actions.add_parser(
        "rebuild", help="rebuild read models from the whole event history",
        description="Empty the read models and replay the whole event log into them, showing "
        "the progress."))
    rebuild.add_argument("--quiet", action="store_true", help="no progress bar")
    rebuild.set_defaults(run=_rebuild)
    named(actions.add_parser(
        "status", help="the read models' positions and layouts",
        description="Print each read model's position against the store's last event, its "
        "layout, and which process runs them.")).set_defaults(run=_status)

    analytics = commands.add_parser(
        "analytics", help="print a campaign's analytics (or all campaigns')",
        description="Print a campaign's figures (or every campaign's, with --all): dice, Story "
        "Tokens, Debt, conflicts, abilities and pace, and a CAPEES! campaign's Victory Points, "
        "as tables or as JSON.")
    analytics.add_argument("campaign", type=campaign_arg, nargs="?",
                           help="the campaign's id (or --all)")
    analytics.add_argument("--all", action="store_true", help="across every campaign")
    analytics.add_argument("--json", action="store_true", help="the figures as JSON")
    analytics.set_defaults(run=_analytics)

    campaigns = commands.add_parser(
        "campaigns", help="list and search campaigns",
        description="List the store's campaigns, newest activity first, or those whose name or "
        "a player's name contains SEARCH.")
    campaigns.add_argument("search", nargs="?", default="",
                           help="part of a campaign's or a player's name")
    which = campaigns.add_mutually_exclusive_group()
    which.add_argument("--open", dest="closed", action="store_false", default=None,
                       help="only campaigns still open")
    which.add_argument("--closed", dest="closed", action="store_true",
                       help="only closed campaigns")
    campaigns.add_argument("--limit", type=int, default=50,
                           help="at most this many (default %(default)s)")
    campaigns.set_defaults(run=_campaigns)


__all__ = ["analytics_text", "positions_text", "register"]
