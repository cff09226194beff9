"""``capes tokens CAMPAIGN [--owner] [--seat N]…``: the host issues bearer tokens on the
configured store — for a lost owner token, a player who lost theirs, or a campaign played from
the console (``capes demo``, ``capes fork``), which has none.

A new token revokes the seat's (or the owner's) earlier one. A running server trusts the keys
it has in memory for at most :attr:`application.credentials.Keyring.fresh_for` seconds, so the
old token stops working there within that time.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from typing import Any
from uuid import UUID

from application.campaigns import Campaigns, open_campaigns
from application.config import describe_store
from application.credentials import OWNER, Keyring
from application.errors import CampaignNotFound
from application.integrity import Integrity
from cli.arguments import campaign_arg
from domain.errors import DomainError


def issue_tokens(app: Campaigns, campaign_id: UUID, *, owner: bool = True,
                 seats: list[int] | None = None) -> list[tuple[str, str]]:
    """New tokens for the owner (if ``owner``) and ``seats`` (None: every seat), each revoking
    the one before: ``(who, token)`` pairs, for people ("owner", "seat 2 (Ben)")."""
    players = {p.seat: p.name for p in app.state(campaign_id).players}
    if seats is None:
        seats = sorted(players)
    unknown = [seat for seat in seats if seat not in players]
    if unknown:
        raise ValueError(f"campaign {campaign_id} has no seat {unknown[0]} "
                         f"(seats: {', '.join(map(str, sorted(players))) or 'none yet'})")
    keyring = Keyring(dict(app.env))
    try:
        issued = [("owner", keyring.issue(campaign_id, OWNER))] if owner else []
        # Each seat's token is recorded in the log as issued by the owner (R-X-REC-4).
        issued += [(f"seat {seat} ({players[seat]})",
                    app.issue_token(campaign_id, seat, partial(keyring.issue, campaign_id))[1])
                   for seat in seats]
    finally:
        keyring.close()
    return issued


def print_tokens(issued: list[tuple[str, str]]) -> None:
    print("tokens (shown once; each replaces the one before):")
    width = max(len(who) for who, _ in issued) + 1
    for who, token in issued:
        print(f"  {who + ':':<{width}} {token}")


def _tokens(args: argparse.Namespace) -> int:
    app = open_campaigns()
    try:
        everyone = not args.owner and not args.seat
        try:
            # Tokens are recorded in the log (R-X-REC-4): a log that does not verify takes no
            # more (the host forks it from before the damage, `capes fork`, and issues the
            # fork's tokens).
            Integrity(app).ensure(args.campaign)
            # --owner alone is the owner's token alone (it reissued every seat's too).
            issued = issue_tokens(app, args.campaign, owner=args.owner or everyone,
                                  seats=None if everyone else args.seat or [])
        except CampaignNotFound:
            print(f"no campaign {args.campaign} in {describe_store()}", file=sys.stderr)
            return 1
        except (ValueError, DomainError) as e:
            print(f"refused: {e}" if isinstance(e, DomainError) else e, file=sys.stderr)
            return 1
        print(f"campaign {args.campaign} in {describe_store()}")
        print_tokens(issued)
        return 0
    finally:
        app.close()


def register(commands: Any) -> None:
    """Add ``tokens`` to ``capes``."""
    tokens = commands.add_parser(
        "tokens", help="issue new bearer tokens for a campaign's owner and seats",
        description="Issue new bearer tokens on the configured store. Each new token revokes "
        "the one it replaces. Without --owner or --seat: the owner and every seat.")
    tokens.add_argument("campaign", type=campaign_arg, help="the campaign's id")
    tokens.add_argument("--owner", action="store_true", help="a new owner token")
    tokens.add_argument("--seat", type=int, action="append", metavar="N",
                        help="a new token for seat N (repeat for more seats)")
    tokens.set_defaults(run=_tokens)
