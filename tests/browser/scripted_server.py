"""A server process as ``capes serve`` runs it, but with scripted dice (the demo's), so a
browser test plays the same story every time: ``uvicorn browser.scripted_server:create
--factory`` (``tests/`` on the path). Production code has no way to script dice, nor time.

``CAPES_TEST_CLOCK``, if set, names a file holding how many seconds the server's clock runs
ahead of the real one, read at each tick: a test moves time on (a dispute's expiry,
R-REC-4) by writing it, with no restart."""

from __future__ import annotations

import os
from datetime import datetime, timedelta
from pathlib import Path

from litestar import Litestar

from api.app import create_app
from application.campaigns import open_campaigns, utc_now
from application.dice import ScriptedDice

#: The dice, comma-separated (default: the demo's, then a few spare ones).
DICE = "CAPES_TEST_DICE"
#: The file of the clock's lead in seconds (default: no file, the real clock).
CLOCK = "CAPES_TEST_CLOCK"


def ahead(path: Path) -> datetime:
    """Now, moved on by the seconds the file at ``path`` holds (none while it is empty)."""
    return utc_now() + timedelta(seconds=float(path.read_text() or 0))


def create() -> Litestar:
    values = [int(v) for v in os.environ[DICE].split(",")]
    skew = os.environ.get(CLOCK)
    clock = (lambda: ahead(Path(skew))) if skew else None
    return create_app(open_campaigns(os.environ, dice=ScriptedDice(values), clock=clock))
