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

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, MutableMapping
from pathlib import Path

from application.config import persistence_env
from projections.service import MODE, mode
from projections.wake import ENV as WAKE_ENV
from projections.wake import PARENT_ENV

log = logging.getLogger(__name__)

#: Seconds before starting a process that failed again (doubling up to :data:`MAX_RETRY`).
RETRY = 1.0
MAX_RETRY = 30.0


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether ``capes serve`` should run the read models in a process of their own: the
    mode is ``process`` (the default) and the store is one that two processes can share."""
    if mode(environ) != "process":
        return False
    env = persistence_env(environ)
    if env["PERSISTENCE_MODULE"] == "eventsourcing.sqlite":
        return "memory" not in env["SQLITE_DBNAME"]  # a file, not a database in this process
    return env["PERSISTENCE_MODULE"] == "eventsourcing.postgres"


class ReadModelsProcess:
    """``capes projections run`` as a child of this process, restarted if it fails."""

    def __init__(self, environ: MutableMapping[str, str], *, linger: float | None = None,
                 poll: float | None = None) -> None:
        self.environ = environ
        self._folder = Path(tempfile.mkdtemp(prefix="capes-"))  # 0700: only this user
        self.wake_path = str(self._folder / "read-models.sock")
        self._options = [*(["--linger", str(linger)] if linger is not None else []),
                         *(["--poll", str(poll)] if poll is not None else [])]
        self._process: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        #: How many times the process was started (the tests read it).
        self.starts = 0

    def start(self) -> None:
        """Start the process and point this process's settings (which the workers inherit)
        at it: they read the read models and wake it."""
        self.environ[MODE] = "external"
        self.environ[WAKE_ENV] = self.wake_path
        self._spawn()
        self._thread = threading.Thread(target=self._watch, name="capes-read-models-watch",
                                        daemon=True)
        self._thread.start()

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _spawn(self) -> None:
        env = dict(self.environ) | {PARENT_ENV: str(os.getpid())}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "cli.main", "projections", "run", *self._options], env=env)
        self.starts += 1

    def _watch(self) -> None:
        retry = RETRY
        while not self._stopping.is_set():
            process = self._process
            assert process is not None
            code = process.wait()
            if self._stopping.is_set() or code == 0:
                return  # stopped on purpose (by stop(), or by Ctrl-C with the server)
            log.error("the read models' process ended with %s; starting it again in %.0f s",
                      code, retry)
            print(f"capes: the read models' process ended with {code}; starting it again in "
                  f"{retry:.0f} s", file=sys.stderr, flush=True)
            if self._stopping.wait(retry):
                return
            retry = min(retry * 2, MAX_RETRY)
            self._spawn()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the process (it finishes the batch it is on) and wait for it."""
        self._stopping.set()
        process = self._process
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._thread is not None:
            self._thread.join(timeout)
        with contextlib.suppress(OSError):
            shutil.rmtree(self._folder)
