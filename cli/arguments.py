"""Argument types the subcommands share."""

from __future__ import annotations

import argparse
from uuid import UUID


def campaign_arg(text: str) -> UUID:
    """A campaign's id on the command line; anything else is a usage error naming it."""
    try:
        return UUID(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a campaign id: {text!r}") from None
