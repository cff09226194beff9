"""A server process as ``capes serve`` runs it, but with scripted dice (the demo's), so a
browser test plays the same story every time: ``uvicorn browser.scripted_server:create
--factory`` (``tests/`` on the path). Production code has no way to script dice."""

from __future__ import annotations

import os

from litestar import Litestar

from api.app import create_app
from application.campaigns import open_campaigns
from application.dice import ScriptedDice

#: The dice, comma-separated (default: the demo's, then a few spare ones).
DICE = "CAPES_TEST_DICE"


def create() -> Litestar:
    values = [int(v) for v in os.environ[DICE].split(",")]
    return create_app(open_campaigns(os.environ, dice=ScriptedDice(values)))
