"""``capes`` subcommands that audit campaigns (R-FAIR-6, R-FAIR-7), on the configured store.

- ``capes verify [CAMPAIGN] [--head N:HASH] [--strict] [--json]``: check a campaign's hash chain,
  commitments and dice, or every campaign of the store; ``capes verify --file EXPORT`` checks an
  export file without importing it. Exit status 0 only when everything holds (with
  ``--strict``, also only when every die was derived and checked); 1 otherwise.
- ``capes export CAMPAIGN --format ndjson|parquet [--output FILE]``: every event of the log.
- ``capes import FILE``: verify an export, then store it under a new campaign id, printing the
  new id and fresh tokens for its owner and seats.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec

from application.aggregate import UnfoldableLog
from application.audit import (
    Report,
    parse_head,
    stored_campaign_ids,
    stored_entries,
    verify,
    verify_stored,
)
from application.campaigns import Campaigns, open_campaigns
from application.errors import CampaignNotFound
from application.transfer import FORMATS, ExportError, export, read
from cli.arguments import campaign_arg
from cli.tokens import issue_tokens, print_tokens


def _head(text: str) -> tuple[int, str, str]:
    try:
        position, chain = parse_head(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return position, chain, "--head"


def _show(report: Report, args: argparse.Namespace) -> bool:
    passed = report.ok and (report.fair or not args.strict)
    if args.json:
        print(msgspec.json.encode(report).decode())
    else:
        print(report.summary())
        if report.ok and not passed:
            print("  --strict: FAILED, not every die is proven fair")
    return passed


def _verify(args: argparse.Namespace) -> int:
    if args.file is not None:
        try:
            source, log = read(args.file)
        except (ExportError, OSError) as e:
            print(f"cannot read {args.file}: {e}", file=sys.stderr)
            return 1
        return 0 if _show(verify(source, log, heads=args.head), args) else 1
    app = open_campaigns()
    try:
        ids = [args.campaign] if args.campaign is not None else stored_campaign_ids(app)
        if not ids:
            print("no campaign in the store")
            return 0
        passed = True
        if args.campaign is not None and not app.recorder.select_events(args.campaign, limit=1):
            print(f"no campaign {args.campaign} in the store", file=sys.stderr)
            return 1
        for campaign_id in ids:
            passed = _show(verify_stored(app, campaign_id, args.head), args) and passed
        return 0 if passed else 1
    finally:
        app.close()


def _export(args: argparse.Namespace) -> int:
    if args.format == "parquet" and args.output is None and sys.stdout.isatty():
        print("capes: a Parquet file is binary and would garble the terminal: write it to a "
              "file with -o FILE (or pipe it)", file=sys.stderr)
        return 2
    app = open_campaigns()
    try:
        campaign = app.get(args.campaign)
        log = stored_entries(app, args.campaign)
        data = export(args.campaign, log, campaign.record, args.format)
    except CampaignNotFound:
        print(f"no campaign {args.campaign} in the store", file=sys.stderr)
        return 1
    finally:
        app.close()
    if args.output is None:
        sys.stdout.flush()
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    else:
        args.output.write_bytes(data)
        print(f"exported {len(log)} events of campaign {args.campaign} to {args.output}",
              file=sys.stderr)
    return 0


def import_file(app: Campaigns, path: Path) -> tuple[Report, UUID | None]:
    """Verify the export at ``path`` and, only if it holds, store it under a new id. Raises
    :class:`UnfoldableLog` (nothing stored) when its chain holds but its events make no game."""
    source, log = read(path)
    report = verify(source, log)
    if not report.ok:
        return report, None
    return report, app.import_log(source, log).campaign_id


def _import(args: argparse.Namespace) -> int:
    app = open_campaigns()
    try:
        try:
            report, campaign_id = import_file(app, args.file)
        except (ExportError, OSError) as e:
            print(f"cannot import {args.file}: {e}", file=sys.stderr)
            return 1
        except UnfoldableLog as e:
            print(f"nothing was imported: {e}", file=sys.stderr)
            return 1
        print(report.summary())
        if campaign_id is None:
            print("nothing was imported: the export does not verify", file=sys.stderr)
            return 1
        issued = issue_tokens(app, campaign_id)
        print(f"\nimported as campaign {campaign_id} ({app.get(campaign_id).version} events)")
        print_tokens(issued)
        return 0
    finally:
        app.close()


def register(commands: Any) -> None:
    """Add ``verify``, ``export`` and ``import`` to ``capes``."""
    check = commands.add_parser(
        "verify", help="check campaigns' hash chains, dice commitments and dice",
        description="Check a campaign's hash chain, dice commitments and dice (R-FAIR-6, "
        "R-FAIR-7), or every campaign of the store, or an export file (--file). Exit status 0 "
        "only when everything holds, else 1.")
    check.add_argument("campaign", type=campaign_arg, nargs="?",
                       help="the campaign (default: every campaign in the store)")
    check.add_argument("--file", type=Path, help="verify an export file instead of the store")
    check.add_argument("--head", type=_head, action="append", default=[],
                       metavar="POSITION:CHAIN", help="a chain known from earlier (a player's "
                       "last seen event): the log must still contain it")
    check.add_argument("--strict", action="store_true",
                       help="also fail unless every die was derived and checked")
    check.add_argument("--json", action="store_true", help="print each report as JSON")
    check.set_defaults(run=_verify)

    out = commands.add_parser(
        "export", help="write a campaign's whole log, chain included",
        description="Write every event of a campaign's log, its hash chain included, as NDJSON "
        "or Parquet, to standard output or a file; `capes verify --file` checks it.")
    out.add_argument("campaign", type=campaign_arg, help="the campaign's id")
    out.add_argument("--format", choices=FORMATS, default="ndjson",
                     help="ndjson (one JSON object per line) or parquet (needs the parquet "
                     "extra; --output or a pipe, never a terminal); default %(default)s")
    out.add_argument("--output", "-o", type=Path, help="the file (default: standard output)")
    out.set_defaults(run=_export)

    into = commands.add_parser(
        "import", help="verify an export and store it as a new campaign",
        description="Verify an export (NDJSON or Parquet) and, only if it holds, store it as a "
        "new campaign, printing its id and new tokens for its owner and seats.")
    into.add_argument("file", type=Path, help="an export (NDJSON or Parquet)")
    into.set_defaults(run=_import)
