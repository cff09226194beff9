"""The read models' own process, which ``capes serve`` starts beside its workers (issue 15).

Why a process: the read models fold and render every event. In a thread of the server they
ran a few times a second for tens of milliseconds each, holding the GIL while requests waited:
measured under the benchmark's game mix at half load, the p99 of commands went from about
40 ms to about 10 ms with the read models in a process of their own, and the most commands a
second from about 1,000 to 1,450 (it has the machine's other core). And with several workers,
one process runs them for all (each worker running its own repeated the others' work).

The server's workers then read them (``CAPES_PROJECTIONS=external``) and, when a query waits
for a position, wake the process through a socket (:mod:`projections.wake`). The process is
``capes projections run`` with that socket; it ends with the server (it watches that its
parent lives), and if it fails it is started again, a second later at first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping

from application.config import persistence_env
from cli.priority import serve_priority
from cli.supervised import Supervised
from projections.service import MODE, mode
from projections.wake import ENV as WAKE_ENV
from projections.wake import PARENT_ENV


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether ``capes serve`` should run the read models in a process of their own: the
    mode is ``process`` (the default) and the store is one that two processes can share."""
    if mode(environ) != "process":
        return False
    env = persistence_env(environ)
    if env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite":
        return "memory" not in env["SQLITE_DBNAME"]  # a file, not a database in this process
    return env["PERSISTENCE_MODULE"] == "eventsourcing.postgres"


class ReadModelsProcess(Supervised):
    """``capes projections run`` as a child of this process, restarted if it fails."""

    what = "read models' process"
    banner = "Read models: in a process of their own (pid {pid})"

    def __init__(self, environ: MutableMapping[str, str], *, linger: float | None = None,
                 poll: float | None = None) -> None:
        # At idle priority unless told otherwise: requests and writes first (cli/priority.py).
        priority = serve_priority(environ)  # before the folder: a bad setting leaves none
        super().__init__(environ)
        self.wake_path = str(self.folder / "read-models.sock")
        self._options = [*(["--linger", str(linger)] if linger is not None else []),
                         *(["--poll", str(poll)] if poll is not None else []),
                         "--priority", priority]

    def start(self) -> None:
        """Start the process and point this process's settings (which the workers inherit)
        at it: they read the read models and wake it."""
        self.environ[MODE] = "external"
        self.environ[WAKE_ENV] = self.wake_path
        super().start()

    def command(self) -> tuple[list[str], dict[str, str], tuple[int, ...]]:
        env = dict(self.environ) | {PARENT_ENV: str(os.getpid())}
        return ["-m", "cli", "projections", "run", *self._options], env, ()
