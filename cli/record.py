"""``capes`` subcommands about the record of play: history, state at a time, diffs, forks,
undo and disputes, run by the host directly on the store (no tokens: whoever runs the CLI has
the database already).

- ``capes log CAMPAIGN [--after N] [--limit M]``: the event log, reverted events marked.
- ``capes state CAMPAIGN [--version N | --at ISO]``: the board and ledgers as they were.
- ``capes diff CAMPAIGN FROM [TO]``: what changed between two versions, per player and conflict.
- ``capes fork CAMPAIGN [--version N] [--name NAME]``: a new campaign from that moment.
- ``capes undo CAMPAIGN --seat N``; ``capes dispute CAMPAIGN --seat N --event P --reason R``;
  ``capes vote CAMPAIGN --seat N (--uphold | --reject)``; ``capes settle CAMPAIGN (--uphold |
  --reject)`` (as the owner, when the table allows it).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any
from uuid import UUID

import msgspec

from application.campaigns import Campaigns, open_campaigns
from application.credentials import Keyring
from application.integrity import Integrity
from cli.arguments import campaign_arg, name_arg, narration_arg, reason_arg, zoned_time
from domain.editions import play_of
from domain.errors import DomainError
from domain.record import is_reverted
from domain.record.commands import OpenDispute, SettleDispute, Undo, Vote

from .render import board_text, ledgers_text


def _names(app: Campaigns, campaign: UUID) -> dict[int, str]:
    return {ch.id: ch.name for ch in app.state(campaign).characters.values()}


def _run(func: Any, *, writes: bool = False) -> Any:
    """Run a subcommand body; a refusal is printed with its rule and exits 1.

    ``writes``: the body appends to the campaign's log (a command, a fork), so the log is
    verified first, as the server does (:class:`~application.integrity.Integrity`): a log that
    does not verify takes nothing more (the console chained new events onto a damaged log, and
    forked the damage into a campaign that verified)."""

    def wrapper(args: argparse.Namespace) -> int:
        app = open_campaigns()
        try:
            if writes:
                Integrity(app).ensure(args.campaign)
            result: int = func(app, args)
            return result
        except DomainError as refused:
            print(f"refused: {refused}", file=sys.stderr)
            return 1
        finally:
            app.close()

    return wrapper


def _writes(func: Any) -> Any:
    """:func:`_run` for a body that appends to the log."""
    return _run(func, writes=True)


@_run
def _log(app: Campaigns, args: argparse.Namespace) -> int:
    record = app.get(args.campaign).record
    for r in app.history(args.campaign, args.after, args.limit):
        mark = " (reverted)" if is_reverted(record, r.originator_version) else ""
        seat = f"seat {r.seat}" if r.seat else "owner/lobby"
        said = f"  {r.narration!r}" if r.narration else ""
        body = msgspec.json.encode(r.event).decode()
        print(f"{r.originator_version:>6} {r.timestamp:%Y-%m-%d %H:%M:%S} {seat:<11} "
              f"{body}{said}{mark}")
    return 0


@_run
def _state(app: Campaigns, args: argparse.Namespace) -> int:
    version = args.version
    if args.at is not None:
        version = app.version_at(args.campaign, args.at)
        if version == 0:
            print(f"campaign {args.campaign} did not exist yet at {args.at}", file=sys.stderr)
            return 1
    state = app.state(args.campaign, version)
    play = play_of(state.edition)
    print(board_text(play.board(state), _names(app, args.campaign)))
    print(ledgers_text(play.ledgers(state)))
    return 0


@_run
def _diff(app: Campaigns, args: argparse.Namespace) -> int:
    after = app.state(args.campaign, args.to)
    changes = play_of(after.edition).diff(app.state(args.campaign, args.source), after)
    print(msgspec.json.format(msgspec.json.encode(changes)).decode())
    return 0


@_writes
def _fork(app: Campaigns, args: argparse.Namespace) -> int:
    outcome = app.fork(args.campaign, args.version, name=args.name)
    print(f"forked campaign {outcome.campaign_id} from {args.campaign} at version "
          f"{app.get(outcome.campaign_id).record.forked_from[1]}"  # type: ignore[index]
          f"; `capes tokens {outcome.campaign_id}` gives its owner and seats tokens")
    return 0


def _record_command(build: Any) -> Any:
    @_writes
    def run(app: Campaigns, args: argparse.Namespace) -> int:
        opened: list[Keyring] = []

        def remove_seats(campaign_id: UUID, seats: tuple[int, ...], dispute: int) -> None:
            # A seat this dispute took away loses its token (R-X-REC-8), as on the server.
            opened.append(Keyring(dict(app.env)))
            opened[-1].remove_seats(campaign_id, seats, dispute)

        app.on_seats_removed = remove_seats
        try:
            outcome = app.execute(args.campaign, build(args), narration=args.narration)
        finally:
            for keyring in opened:
                keyring.close()
        for r in outcome.events:
            print(f"{r.originator_version:>6} {msgspec.json.encode(r.event).decode()}")
        return 0

    return run


def register(commands: Any) -> None:
    """Add the record's subcommands to ``capes``."""

    def with_campaign(name: str, help: str, description: str) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = commands.add_parser(name, help=help,
                                                              description=description)
        parser.add_argument("campaign", type=campaign_arg, help="the campaign's id")
        return parser

    log = with_campaign("log", "print a campaign's event log",
                        "Print a campaign's event log, one event a line: its version, time, "
                        "seat, the event and what was said; reverted events are marked.")
    log.add_argument("--after", type=int, default=0,
                     help="start after this position (default %(default)s: from the first)")
    log.add_argument("--limit", type=int, default=1000,
                     help="at most this many events (default %(default)s)")
    log.set_defaults(run=_log)

    state = with_campaign("state", "print the board and ledgers, now or in the past",
                          "Print a campaign's board and ledgers as they are now, or as they "
                          "were after a version or at a time.")
    when = state.add_mutually_exclusive_group()
    when.add_argument("--version", type=int,
                      help="as it was after this many events (default: now)")
    when.add_argument("--at", type=zoned_time, help="an ISO time with its zone")
    state.set_defaults(run=_state)

    changes = with_campaign("diff", "what changed between two versions",
                            "Print, as JSON, what changed in a campaign between two versions, "
                            "per player and conflict.")
    changes.add_argument("source", type=int, metavar="FROM", help="the earlier version")
    changes.add_argument("to", type=int, nargs="?", metavar="TO",
                         help="the later version (default: now)")
    changes.set_defaults(run=_diff)

    fork = with_campaign("fork", "start a new campaign from this one's game at a version",
                         "Start a new campaign from this one's game as it was at a version "
                         "(default: now); the source is left as it is.")
    fork.add_argument("--version", type=int,
                      help="fork the game as it was after this many events (default: now)")
    fork.add_argument("--name", type=name_arg,
                      help="the fork's name (default: the campaign's, marked a fork)")
    fork.set_defaults(run=_fork)

    def acting(name: str, help: str, description: str, build: Any,
               seat: bool = True) -> argparse.ArgumentParser:
        parser = with_campaign(name, help, description + " Run on the store directly: no "
                               "token is asked for.")
        if seat:
            parser.add_argument("--seat", type=int, required=True, help="the acting seat")
        parser.add_argument("--narration", default="", type=narration_arg,
                            help="what is said at the table, kept in the log")
        parser.set_defaults(run=_record_command(build))
        return parser

    acting("undo", "take back a seat's last command",
           "Take back the acting seat's last command, as the table allows.",
           lambda a: Undo(seat=a.seat))
    dispute = acting("dispute", "dispute a move of the current scene",
                     "Open a dispute of a move of the current scene, naming an event of it "
                     "and why; the table then votes on it.",
                     lambda a: OpenDispute(seat=a.seat, position=a.event, reason=a.reason))
    dispute.add_argument("--event", type=int, required=True,
                         help="the position of an event of the disputed move")
    dispute.add_argument("--reason", required=True, type=reason_arg,
                         help="why the move is disputed")
    for name, help, description, build in (
        ("vote", "vote on the open dispute",
         "Vote as a seat to uphold the open dispute (take the move back) or reject it.",
         lambda a: Vote(seat=a.seat, uphold=a.uphold)),
        ("settle", "settle the open dispute as the owner",
         "Settle the open dispute as the campaign's owner, where the table allows it: "
         "uphold it (take the move back) or reject it.",
         lambda a: SettleDispute(uphold=a.uphold)),
    ):
        parser = acting(name, help, description, build, seat=name == "vote")
        choice = parser.add_mutually_exclusive_group(required=True)
        choice.add_argument("--uphold", dest="uphold", action="store_true",
                            help="take the disputed move back")
        choice.add_argument("--reject", dest="uphold", action="store_false",
                            help="let the disputed move stand")
