"""Argument types the subcommands share."""

from __future__ import annotations

import argparse
from datetime import datetime
from uuid import UUID

import msgspec

from domain.text import NAME_LENGTH, Name


def campaign_arg(text: str) -> UUID:
    """A campaign's id on the command line; anything else is a usage error naming it."""
    try:
        return UUID(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a campaign id: {text!r}") from None


def zoned_time(text: str) -> datetime:
    """An ISO time with its zone (``2026-11-22T20:00Z``, ``…+01:00``); one without is a usage
    error, as the HTTP API refuses it: the log's times are in UTC, and a time without a zone
    cannot be compared with them (which one it means is a guess)."""
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO time: {text!r}") from None
    if at.utcoffset() is None:
        raise argparse.ArgumentTypeError(f"give the time with its zone, e.g. {text}Z")
    return at


def name_arg(text: str) -> str:
    """A name as the API takes one (:data:`domain.text.Name`); anything else is a usage error
    naming the option, where it was a name the API would refuse stored from the console."""
    try:
        return msgspec.convert(text, Name)
    except msgspec.ValidationError:
        raise argparse.ArgumentTypeError(
            f"a name has 1 to {NAME_LENGTH} characters and no control character (a tab, a "
            f"line break): {text!r}") from None
