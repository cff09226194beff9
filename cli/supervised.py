"""A process that ``capes serve`` runs beside its workers and starts again if it fails: the
read models' process (:mod:`cli.read_models_process`) and the shared writer process
(:mod:`cli.writer_hub`)."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import MutableMapping
from pathlib import Path

log = logging.getLogger(__name__)

#: Seconds before starting a process that failed again (doubling up to :data:`MAX_RETRY`).
RETRY = 1.0
MAX_RETRY = 30.0


class Supervised:
    """A child process of ``capes serve``, watched by a thread and started again when it ends
    without being asked to (after :attr:`retry` seconds, doubling up to :data:`MAX_RETRY`).

    Subclasses say what to run (:meth:`command`) and how to ask it to stop
    (:meth:`ask_to_stop`); a folder only this user can enter (:attr:`folder`) holds their
    sockets and goes with them."""

    #: What the messages call it.
    what = "process"
    #: What ``capes serve`` prints once it started it (``{pid}``: its process id).
    banner = "{pid}"
    #: Seconds before the first new start.
    retry = RETRY

    def __init__(self, environ: MutableMapping[str, str]) -> None:
        self.environ = environ
        self.folder = Path(tempfile.mkdtemp(prefix="capes-"))  # 0700: only this user
        self._process: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        #: How many times the process was started (the tests read it).
        self.starts = 0

    def command(self) -> tuple[list[str], dict[str, str], tuple[int, ...]]:
        """The process's arguments, environment and the descriptors it inherits (closed here
        once it has them)."""
        raise NotImplementedError

    def ask_to_stop(self, process: subprocess.Popen[bytes]) -> None:
        """Ask the process to finish and exit (default: SIGTERM)."""
        process.terminate()

    def start(self) -> None:
        """Start the process and the thread that starts it again if it fails."""
        self._spawn()
        self._thread = threading.Thread(target=self._watch, name=f"capes-watch-{self.what}",
                                        daemon=True)
        self._thread.start()

    @property
    def pid(self) -> int | None:
        return None if self._process is None else self._process.pid

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _spawn(self) -> None:
        argv, env, fds = self.command()
        try:
            self._process = subprocess.Popen([sys.executable, *argv], env=env, pass_fds=fds)
        finally:
            for fd in fds:  # the child's now: this process keeps no copy
                os.close(fd)
        self.starts += 1

    def _watch(self) -> None:
        retry = self.retry
        while not self._stopping.is_set():
            process = self._process
            assert process is not None
            code = process.wait()
            if self._stopping.is_set() or code == 0:
                return  # stopped on purpose (by stop(), or by Ctrl-C with the server)
            log.error("the %s ended with %s; starting it again in %.1f s", self.what, code, retry)
            print(f"capes: the {self.what} ended with {code}; starting it again in "
                  f"{retry:.1f} s", file=sys.stderr, flush=True)
            if self._stopping.wait(retry):
                return
            retry = min(max(retry, RETRY / 2) * 2, MAX_RETRY)
            self._spawn()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the process to stop, wait for it (killing it after ``timeout`` seconds)."""
        self._stopping.set()
        process = self._process
        if process is not None and process.poll() is None:
            self.ask_to_stop(process)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._thread is not None:
            self._thread.join(timeout)
        with contextlib.suppress(OSError):
            shutil.rmtree(self.folder)
