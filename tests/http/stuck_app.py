"""An ASGI app whose startup never ends (as a worker's that waits for a database connection
it will not get), for tests/http/test_workers.py. Each worker that reaches its startup leaves a
file named for its process id in ``STUCK_APP_MARKS``."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await receive()  # lifespan.startup
        (Path(os.environ["STUCK_APP_MARKS"]) / str(os.getpid())).touch()
        time.sleep(3600)  # blocks the worker's event loop: SIGTERM cannot end it
