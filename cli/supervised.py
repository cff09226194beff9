"""A process that ``capes serve`` runs beside its workers and starts again if it fails: the
read models' process (:mod:`cli.read_models_process`) and the shared writer process
(:mod:`cli.writer_hub`)."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import MutableMapping
from pathlib import Path

from application.children import deaf_to_ctrl_c

#: uvicorn's logger, as the supervisor of ``capes serve --workers N`` (cli/workers.py): a line
#: here reads as the server's others do, with a worker or several.
log = logging.getLogger("uvicorn.error")

#: Seconds before starting a process that failed again (doubling up to :data:`MAX_RETRY`).
RETRY = 1.0
MAX_RETRY = 30.0

#: How a child that was asked to stop ends: by itself (0), or by SIGTERM when it came before the
#: child set its handler (SIGINT, Ctrl-C's, is blocked in children: application/children.py).
#: Anything else (SIGKILL from the out-of-memory killer, a crash) is a failure, and the child is
#: started again.
ASKED_TO_STOP = frozenset({0, -signal.SIGTERM})

#: The sockets' folders are ``capes-<pid of capes serve>-<random>`` in the temporary directory.
PREFIX = "capes-"


def new_folder() -> Path:
    """A new folder for a process's sockets, which only this user can enter (0700), named for
    this process (see :func:`sweep`)."""
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the sockets' folders (in ``root``, the temporary directory by default) of every
    ``capes serve`` that is gone; the folders removed.

    Each process cleans up after itself when it stops, and the writer and read models'
    processes also when their server was killed; but a SIGKILL to the whole process group
    leaves no one to do it, and the folders (a socket in each) stayed for ever. A folder goes
    only if it is this user's, holds nothing but sockets, and the process it is named for no
    longer runs: never a running server's, even one whose process is being started again."""
    root = Path(tempfile.gettempdir()) if root is None else root
    removed: list[Path] = []
    for folder in root.glob(f"{PREFIX}*-*"):
        pid = folder.name.removeprefix(PREFIX).partition("-")[0]
        if not pid.isdigit():
            continue  # not named for a process (a folder of someone else's, or an older one)
        try:
            if folder.is_symlink() or folder.lstat().st_uid != os.getuid():
                continue
            sockets = list(folder.iterdir())
            if not all(entry.is_socket() for entry in sockets):
                continue
            os.kill(int(pid), 0)  # raises if no process has that id
        except ProcessLookupError:
            # Named for a process that is gone here; but one in another PID namespace (a
            # container sharing this folder) could still serve on them.
            if any(_listened(path) for path in sockets):
                continue
            shutil.rmtree(folder, ignore_errors=True)
            if not folder.exists():
                removed.append(folder)
        except OSError:
            continue  # not a folder we may read, or the process is another user's: it runs
    return removed


def _listened(path: Path) -> bool:
    """Whether a process serves on the Unix socket ``path`` (of either kind: a connection of
    the wrong kind is refused as if nothing served)."""
    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
        with socket.socket(socket.AF_UNIX, kind) as probe:
            probe.settimeout(1.0)
            try:
                probe.connect(str(path))
            except (ConnectionRefusedError, FileNotFoundError):
                continue
            except OSError as e:
                if e.errno == errno.EPROTOTYPE:
                    continue
                return True  # it is there but busy, or not ours to try: leave it
            return True
    return False


class Supervised:
    """A child process of ``capes serve``, watched by a thread and started again when it ends
    without being asked to (after :attr:`retry` seconds, doubling up to :data:`MAX_RETRY`).

    Subclasses say what to run (:meth:`command`) and how to ask it to stop
    (:meth:`ask_to_stop`); a folder only this user can enter (:attr:`folder`) holds their
    sockets and goes with them (or, if they are all killed at once, with the next ``capes
    serve``'s :func:`sweep`)."""

    #: What the messages call it.
    what = "process"
    #: What ``capes serve`` prints once it started it (``{pid}``: its process id).
    banner = "{pid}"
    #: Seconds before the first new start.
    retry = RETRY

    def __init__(self, environ: MutableMapping[str, str]) -> None:
        self.environ = environ
        sweep()  # the folders of servers killed outright
        self.folder = new_folder()
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
            with deaf_to_ctrl_c():  # stopped by stop() (application/children.py)
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
            if self._stopping.is_set() or code in ASKED_TO_STOP:
                # Stopped on purpose: by stop(), or with the server by a service manager's
                # SIGTERM to the group. A child sets its own handler (and then exits 0) only
                # once its imports are done: in its first second the signal itself ends it,
                # and starting it again there made a group stop log an error.
                return
            # Logged only: it was printed too, and every start again said so twice.
            log.error("the %s ended with %s; starting it again in %.1f s", self.what, code, retry)
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
