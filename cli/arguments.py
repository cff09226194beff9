"""Argument types the subcommands share."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any
from uuid import UUID

import msgspec

from domain.record.commands import REASON_LENGTH, Reason
from domain.text import NAME_LENGTH, NARRATION_LENGTH, Name, Narration


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


def _as_the_api_takes(text: str, kind: Any, rule: str) -> str:
    """``text`` if the API would take it as ``kind`` (a type of :mod:`domain.text`), else a
    usage error saying ``rule``: what the console stores is what the API would."""
    try:
        taken: str = msgspec.convert(text, kind)
    except msgspec.ValidationError:
        raise argparse.ArgumentTypeError(f"{rule}: {text!r}") from None
    return taken


def name_arg(text: str) -> str:
    """A name as the API takes one (:data:`domain.text.Name`); anything else is a usage error
    naming the option, where it was a name the API would refuse stored from the console."""
    return _as_the_api_takes(
        text, Name, f"a name has 1 to {NAME_LENGTH} characters, not blanks alone (R-X-SRV-1), "
        "and no control character (a tab, a line break)")


def narration_arg(text: str) -> str:
    """Narration as the API takes it (:data:`domain.text.Narration`): empty is none; blanks
    alone or a control character are a usage error naming the option (R-X-SRV-1)."""
    return _as_the_api_takes(
        text, Narration, f"narration has at most {NARRATION_LENGTH} characters, not blanks "
        "alone (R-X-SRV-1; leave it out for none), and no control character but tabs and line "
        "breaks")


def reason_arg(text: str) -> str:
    """A dispute's reason as the API takes it (:data:`domain.record.commands.Reason`)."""
    return _as_the_api_takes(
        text, Reason, f"a reason has 1 to {REASON_LENGTH} characters, not blanks alone "
        "(R-X-SRV-1), and no control character but tabs and line breaks")
