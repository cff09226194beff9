"""The baseline for ``scripts/bench``: a bare Litestar app with one msgspec POST route.

Served by the same server software as ``capes serve`` (uvicorn, one worker)::

    python -m uvicorn --app-dir scripts bare_app:app --port 8001

``POST /commands`` decodes a small command body into msgspec Structs and answers with a small
Struct: request parsing, validation and response encoding, and nothing else — no store, no
authentication, no thread hop. It is what one worker of this stack does at best.
"""

from __future__ import annotations

from typing import Literal

import msgspec
from litestar import Litestar, post


class Narrate(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    type: Literal["narrate"] = "narrate"
    text: str
    seat: int = 0


class CommandRequest(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    command: Narrate
    narration: str = ""


class Applied(msgspec.Struct, frozen=True, kw_only=True):
    version: int
    seat: int
    text: str


@post("/commands", status_code=200)
async def run_command(data: CommandRequest) -> Applied:
    return Applied(version=1, seat=data.command.seat, text=data.command.text)


app = Litestar(route_handlers=[run_command])
