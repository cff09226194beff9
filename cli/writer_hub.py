"""One writer process for every worker of ``capes serve --workers N`` (issue 15).

Why: with a writer per worker, a campaign whose players' requests reached two workers had two
writers. On PostgreSQL they raced (a command decided on a head the other writer had just moved
was refused by the store and decided again), each reloaded what the other wrote, and each
committed half the groups; measured with the game mix, two workers ran fewer commands a second
than one. With one writer process for all, a campaign has one writer and one head, the workers
share only the HTTP work, and every worker's commands land in the same groups.

``capes serve`` starts it (``python -m api.writer_process --listen PATH --control FD``) before
its workers and names its socket to them in ``CAPES_WRITER_SOCKET`` (a folder only this user
can enter: the socket takes pickles). It stops when ``capes serve`` closes the pipe FD, after
finishing what it was sent; when ``capes serve`` dies the pipe closes too. If it fails it is
started again (the workers' requests waiting on it get a 503; their next ones connect anew).

On PostgreSQL ``capes serve`` can run several such writer processes (``CAPES_WRITERS``,
:func:`application.config.writer_count`), each the one writer of the campaigns whose id falls to
it (:mod:`api.writer_pool`): every worker connects to all of them and sends each campaign's
requests to its own. Why: with one writer for every worker, all the workers' commands go
through one process, which commits its groups one after another: the most a server can carry
whatever its workers and cores. PostgreSQL's inserts run side by side
(application/postgres_store.py), so two writers commit two groups at once; and since a
campaign still has one writer, they never race for it. (An SQLite file takes one writer at a
time: there it stays one.)
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Mapping, MutableMapping

from application.config import WRITER_SOCKET, writer_count, writer_mode, writer_sockets
from cli.supervised import Supervised


def wanted(environ: Mapping[str, str], workers: int) -> bool:
    """Whether ``capes serve`` shares writer processes between its workers: several
    workers whose writes run in a process (``CAPES_WRITER=process``, its default)."""
    return workers > 1 and writer_mode(environ) == "process"


def hubs(environ: MutableMapping[str, str], workers: int) -> list[WriterHub]:
    """The writer processes ``capes serve --workers N`` shares between its workers (none
    when :func:`wanted` says so): :func:`~application.config.writer_count` of them."""
    if not wanted(environ, workers):
        return []
    count = writer_count(environ, workers)
    environ.pop(WRITER_SOCKET, None)  # capes serve's own to set: see WriterHub.start
    return [WriterHub(environ, index, count) for index in range(count)]


class WriterHub(Supervised):
    """A shared writer process as a child of ``capes serve``, started again if it fails:
    the ``index``-th of ``count``, the writer of the campaigns whose id falls to it."""

    what = "writer process"
    retry = 0.1

    def __init__(self, environ: MutableMapping[str, str], index: int = 0,
                 count: int = 1) -> None:
        super().__init__(environ)
        self.path = str(self.folder / "writer.sock")
        self._control: int | None = None
        self.banner = ("Writes: one writer process for every worker (pid {pid})" if count == 1
                       else f"Writes: writer process {index + 1} of {count} for every worker, "
                            "each the writer of its share of the campaigns (pid {pid})")

    def start(self) -> None:
        """Start the process and add its socket to the ones named in this process's settings
        (which the workers inherit), after the writers started before it: every worker finds
        them in the same order."""
        named = writer_sockets(self.environ)
        if self.path not in named:
            self.environ[WRITER_SOCKET] = os.pathsep.join([*named, self.path])
        super().start()

    def command(self) -> tuple[list[str], dict[str, str], tuple[int, ...]]:
        # A new pipe for each start: the writer reads its end, and stops at its end of file.
        theirs, ours = os.pipe()
        self._close_control()
        self._control = ours
        env = {k: v for k, v in self.environ.items() if k != WRITER_SOCKET}
        return (["-m", "api.writer_process", "--listen", self.path, "--control", str(theirs)],
                env, (theirs,))

    def ask_to_stop(self, process: subprocess.Popen[bytes]) -> None:
        self._close_control()

    def _close_control(self) -> None:
        if self._control is not None:
            with contextlib.suppress(OSError):
                os.close(self._control)
            self._control = None

    def stop(self, timeout: float = 60.0) -> None:
        """Let the writer process finish what the workers sent it, then wait for it."""
        super().stop(timeout)
        self._close_control()
