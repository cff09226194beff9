"""The writer in a process of its own (``CAPES_WRITER=process``, issue 15).

Why: a server process's event loop and its writer thread share one interpreter lock. Under
load the loop always has work, so each time the writer wants the lock back (to decide a group,
after each call into the store) it waits up to the interpreter's switch interval, and the loop
then waits for the writer's answer; measured under the game mix, the loop used about half a
core and the server about one, while the machine's second core was partly idle. In a process
of its own the writer has an interpreter of its own: the loop only reads requests, checks
tokens, and hands each command over a socket, and the writer decides and commits on another
core.

What crosses the socket: frames of a 4-byte length and a pickle. Each request names a tag, an
operation and its arguments; each answer carries the tag, an error or a value:

- ``x`` a command: the writer process answers with the command's HTTP answer and its live
  streams' message already encoded (:class:`Rendered`), so the loop encodes nothing;
- ``v`` the board or ledgers of now, rendered and encoded there (once per state of a
  campaign, whatever the number of seats reading it), or None when it cannot tell;
- ``l`` the campaign of now (:meth:`application.committer.Committer.latest`);
- ``c`` a named write (:mod:`api.operations`), in turn with the commands;
- ``stop``: finish what came before it, then exit.

What the writer process guarantees is the writer thread's (:mod:`application.committer`): one
writer, commands committed in groups in arrival order, no answer before its events are stored.
It runs its groups on its one thread; a campaign it does not hold yet is made ready (its log
verified, loaded) by a small pool of threads meanwhile, its commands waiting in order.

If the writer process dies, every request waiting on it gets a 503 saying that its command may
or may not have been stored, and the next request starts a new one. The writer process ignores
SIGINT and SIGTERM: it stops when the server tells it to (after finishing what it was sent) or
when the server's end of the socket closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import pickle
import selectors
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Empty, SimpleQueue
from typing import Any
from uuid import UUID

import msgspec
from litestar.exceptions import ServiceUnavailableException

from api.collector import Collector
from application.aggregate import Campaign
from application.campaigns import Campaigns, open_campaigns
from application.committer import Committer, Job, Result
from application.config import SettingError, persistence_env
from application.credentials import Keyring
from application.integrity import Integrity

log = logging.getLogger(__name__)

#: ``CAPES_WRITER``: where a server process's writes run.
MODES = ("thread", "process")
_LENGTH = struct.Struct("!I")
#: Seconds the server waits for a new writer process to say it is ready.
START_TIMEOUT = 60.0


def writer_mode(environ: Mapping[str, str]) -> str:
    """``CAPES_WRITER`` (default ``thread``; ``capes serve`` makes it ``process``:
    :func:`serve_default`). A value that is not one of :data:`MODES`, or ``process`` with an
    in-memory store (which another process cannot see), is refused before anything starts,
    naming the setting."""
    given = environ.get("CAPES_WRITER", "")
    mode = given.strip().lower() or "thread"
    if mode not in MODES:
        raise SettingError("CAPES_WRITER", given, "must be 'thread' (the writer is a thread of "
                           "each server process) or 'process' (a process of its own)")
    if mode == "process" and _in_memory(environ):
        raise SettingError("CAPES_WRITER", given, "an in-memory store (CAPES_DB=:memory:) is "
                           "seen by one process only: use 'thread', or a file or PostgreSQL")
    return mode


def serve_default(environ: Mapping[str, str]) -> str:
    """What ``capes serve`` runs when ``CAPES_WRITER`` is unset: ``process``, but for an
    in-memory store."""
    return "thread" if _in_memory(environ) else "process"


def _in_memory(environ: Mapping[str, str]) -> bool:
    return persistence_env(environ)["PERSISTENCE_MODULE"] == "eventsourcing.popo"


class Rendered(msgspec.Struct, frozen=True):
    """A command run by the writer process: its HTTP answer (an ``Applied``, as JSON) and what
    its campaign's live streams are sent (``api.services.live_message``), ready to write."""

    version: int
    position: int
    answer: bytes
    live: bytes


class WriterGone(ServiceUnavailableException):
    """The writer process stopped while a request waited on it (HTTP 503)."""


# -- frames --------------------------------------------------------------------------------


def frame(item: Any) -> bytes:
    """``item`` pickled, after its length."""
    body = pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL)
    return _LENGTH.pack(len(body)) + body


class Frames:
    """Cuts a byte stream into the items of its frames."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Any]:
        buffer = self._buffer
        buffer += data
        items, at, size = [], 0, len(buffer)
        while size - at >= 4:
            (length,) = _LENGTH.unpack_from(buffer, at)
            if size - at - 4 < length:
                break
            items.append(pickle.loads(buffer[at + 4:at + 4 + length]))
            at += 4 + length
        del buffer[:at]
        return items


def pack_error(error: BaseException) -> tuple[type[BaseException], tuple[Any, ...],
                                               dict[str, Any]]:
    """An exception as (class, args, attributes): the project's errors take other arguments
    than their ``args`` (``CampaignConflict(campaign_id, expected, current)``), which pickle
    alone would not rebuild."""
    return type(error), error.args, dict(getattr(error, "__dict__", {}))


def unpack_error(packed: tuple[type[BaseException], tuple[Any, ...],
                               dict[str, Any]]) -> BaseException:
    kind, args, attributes = packed
    error = kind.__new__(kind, *args)
    error.args = args
    error.__dict__.update(attributes)
    return error


def _answer(tag: int, error: BaseException | None, value: Any) -> bytes:
    """One answer's frame; an error or value that does not pickle becomes an error saying so."""
    try:
        return frame((tag, None if error is None else pack_error(error), value))
    except Exception as e:
        log.exception("the writer process could not send an answer")
        failed = RuntimeError(f"the writer's answer could not be sent: {e}")
        return frame((tag, pack_error(failed), None))


# -- the server's side ------------------------------------------------------------------------


class _Link(asyncio.Protocol):
    """The server's end of the socket: answers go to the futures waiting for them."""

    def __init__(self, writer: RemoteWriter) -> None:
        self.writer = writer
        self.frames = Frames()

    def data_received(self, data: bytes) -> None:
        pending = self.writer.pending
        for tag, error, value in self.frames.feed(data):
            future = pending.pop(tag, None)
            if future is None or future.done():
                continue
            if error is not None:
                future.set_exception(unpack_error(error))
            else:
                future.set_result(value)

    def connection_lost(self, exc: Exception | None) -> None:
        self.writer.lost()


class RemoteWriter:
    """The server's handle on its writer process: the writer thread's interface
    (``execute``, ``call``, ``latest``, ``start``, ``stop``) over a socket, plus ``view``."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = dict(environ)
        self.pending: dict[int, asyncio.Future[Any]] = {}
        self._tags = itertools.count(1)
        self._out: list[bytes] = []
        self._transport: asyncio.Transport | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._starting: asyncio.Future[None] | None = None
        self._stopping = False

    # -- lifecycle -----------------------------------------------------------------------

    async def start(self) -> None:
        """Start the writer process, once it answers (done by the first write if not before,
        and again after the process died)."""
        if self._transport is not None:
            return
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._spawn())
        starting = self._starting
        try:
            await asyncio.shield(starting)
        finally:
            if starting.done():
                self._starting = None

    async def _spawn(self) -> None:
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair()
        package_root = str(Path(__file__).resolve().parent.parent)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
        env |= self._environ
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "api.writer", str(theirs.fileno())],
                pass_fds=(theirs.fileno(),), env=env)
        finally:
            theirs.close()
        ready: asyncio.Future[Any] = loop.create_future()
        self.pending[0] = ready
        transport, _ = await loop.connect_accepted_socket(lambda: _Link(self), ours)
        self._transport = transport
        try:
            await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT)
        except BaseException:
            self._transport = None
            transport.close()
            raise

    async def stop(self) -> None:
        """Tell the writer process to finish what it was sent and exit; wait for it."""
        process, transport = self._process, self._transport
        self._stopping = True
        if transport is not None:
            self._send(frame((0, "stop", None)))
            self._flush()
        if process is not None:
            await asyncio.to_thread(_wait, process)
        if transport is not None:
            transport.close()
        self._transport = self._process = None

    def lost(self) -> None:
        """The writer process's end closed: everything waiting on it fails with a 503."""
        self._transport = None
        self._out.clear()
        pending, self.pending = self.pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(WriterGone(
                    "the writer process stopped: this request's command may or may not have "
                    "been stored; read the campaign's log before sending it again"))
        process = self._process
        if process is not None and process.poll() is None and not self._stopping:
            # It closed the socket but lives on (stuck): the next request starts another.
            with contextlib.suppress(ProcessLookupError):
                process.kill()

    # -- requests --------------------------------------------------------------------------

    async def _ask(self, operation: str, arguments: Any) -> Any:
        if self._transport is None:
            await self.start()
        loop = asyncio.get_running_loop()
        tag = next(self._tags)
        future: asyncio.Future[Any] = loop.create_future()
        self.pending[tag] = future
        self._send(frame((tag, operation, arguments)))
        # Shielded: a client that goes away does not take its command back once it is sent.
        return await asyncio.shield(future)

    def _send(self, data: bytes) -> None:
        # The requests of one pass of the event loop go in one write.
        if not self._out:
            asyncio.get_running_loop().call_soon(self._flush)
        self._out.append(data)

    def _flush(self) -> None:
        if self._out and self._transport is not None:
            self._transport.write(b"".join(self._out))
        self._out.clear()

    async def execute(self, campaign_id: UUID, command: Any, *, narration: str = "",
                      expected_version: int | None = None) -> Rendered:
        """Run a command; answered once its events are stored."""
        version, position, answer, live = await self._ask(
            "x", (campaign_id, command, narration, expected_version))
        return Rendered(version, position, answer, live)

    async def view(self, campaign_id: UUID, kind: str, position: int | None = None,
                   version: int | None = None) -> bytes | None:
        """The read model ``kind`` of now (``board_of``, ``ledgers_of``), as JSON, if the
        writer holds the campaign as stored (including ``position``; at ``version`` exactly
        if given); else None."""
        found: bytes | None = await self._ask("v", (campaign_id, kind, position, version))
        return found

    async def latest(self, campaign_id: UUID, position: int | None = None) -> Campaign | None:
        """``Committer.latest`` in the writer process."""
        found: Campaign | None = await self._ask("l", (campaign_id, position, None))
        return found

    async def call(self, operation: Callable[..., Any], *args: Any,
                   invalidates: UUID | None = None, **kwargs: Any) -> Any:
        """A named write (:mod:`api.operations`) in turn with the commands."""
        return await self._ask("c", (operation, args, kwargs, invalidates))


def _wait(process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        log.error("the writer process did not stop within %.0f s: killed", timeout)
        process.kill()
        process.wait()


# -- the writer process's side ----------------------------------------------------------------


class WriterProcess:
    """The writer process: reads requests, runs them in groups, sends the answers."""

    def __init__(self, sock: socket.socket, environ: Mapping[str, str]) -> None:
        # The API's rendering comes with it (imported here: the server process has it already).
        from api.routes.queries import RENDERERS
        from api.services import RenderedViews

        self.sock = sock
        self.campaigns: Campaigns = open_campaigns(environ)
        self.keyring = Keyring(dict(self.campaigns.env))
        self.committer = Committer(self.campaigns, integrity=Integrity(self.campaigns))
        self.views = RenderedViews()
        self.renderers = RENDERERS
        self.encoder = msgspec.json.Encoder()
        #: Requests for campaigns being made ready, in arrival order.
        self._parked: dict[UUID, list[tuple[int, str, Any]]] = {}
        self._prepared: SimpleQueue[tuple[UUID, BaseException | None, bool]] = SimpleQueue()
        self._pool = ThreadPoolExecutor(4, thread_name_prefix="capes-prepare")
        self._wake_r, self._wake_w = os.pipe()

    def run(self) -> None:
        self.committer.start_watch()
        # As in the server process (api.collector): what lives long is frozen out of the
        # collector's reach, so that no full collection pauses every table's writes.
        collector = Collector()
        collector.collect(everything=True)
        selector = selectors.DefaultSelector()
        selector.register(self.sock, selectors.EVENT_READ, "requests")
        selector.register(self._wake_r, selectors.EVENT_READ, "prepared")
        frames = Frames()
        self._send([frame((0, None, "ready"))])
        stopping = closed = False
        while not (stopping and not self._parked):
            requests: list[tuple[int, str, Any]] = []
            ready: list[tuple[int, str, Any]] = []
            for key, _ in selector.select(timeout=collector.every):
                if key.data == "requests":
                    data = self.sock.recv(1 << 20)
                    if not data:
                        stopping = closed = True
                        selector.unregister(self.sock)
                    requests += frames.feed(data)
                else:
                    os.read(self._wake_r, 4096)
            ready += self._unparked()
            answers = self._run(ready, prepared=True)
            if any(op == "stop" for _, op, _ in requests):
                stopping = True
            answers += self._run(requests, prepared=False)
            if not closed:
                self._send(answers)
            if collector.due():
                collector.tick()
        self._pool.shutdown(wait=True)
        self.committer.stop()
        for close in (self.campaigns.close, self.keyring.close):
            with contextlib.suppress(Exception):
                close()

    def _send(self, answers: list[bytes]) -> None:
        if answers:
            with contextlib.suppress(OSError):  # the server is gone: nobody to answer
                self.sock.sendall(b"".join(answers))

    def _run(self, requests: list[tuple[int, str, Any]], *, prepared: bool) -> list[bytes]:
        """Answer ``requests`` in order: reads of a campaign held as stored at once, the rest
        in groups; a request for a campaign not ready waits for it (:meth:`_park`)."""
        committer = self.committer
        answers: list[bytes] = []
        jobs: list[Job] = []
        asked: dict[int, tuple[str, Any]] = {}
        for request in requests:
            tag, op, arguments = request
            if op == "stop":
                continue
            if op == "c":
                operation, args, kwargs, invalidates = arguments
                job = Job(tag=tag)
                job.call = _bind(operation, self.campaigns, self.keyring, args, kwargs)
                job.invalidates = invalidates
                jobs.append(job)
                asked[tag] = (op, arguments)
                continue
            campaign_id = arguments[0]
            if campaign_id in self._parked or (not prepared and not committer.ready(campaign_id)):
                self._park(campaign_id, request)
                continue
            job = Job(tag=tag)
            job.campaign_id = campaign_id
            if op == "x":
                _, job.command, job.narration, job.expected_version = arguments
            else:
                job.read = True
                job.position = arguments[2] if op == "v" else arguments[1]
                head = committer.current(campaign_id, job.position)
                if head is not None:
                    answers.append(self._answer(tag, op, arguments, head, None))
                    continue
                job.since = time.monotonic()
            jobs.append(job)
            asked[tag] = (op, arguments)
        for start in range(0, len(jobs), committer.max_group):
            results: list[Result] = committer.process(jobs[start:start + committer.max_group])
            for job, value, error in results:
                op, arguments = asked[job.tag]
                answers.append(self._answer(job.tag, op, arguments, value, error))
        return answers

    def _answer(self, tag: int, op: str, arguments: Any, value: Any,
                error: BaseException | None) -> bytes:
        if error is not None:
            return _answer(tag, error, None)
        try:
            if op == "x":
                value = self._rendered(value)
            elif op == "v":
                value = self._view(arguments, value)
        except Exception as e:
            return _answer(tag, e, None)
        return _answer(tag, None, value)

    def _rendered(self, outcome: Any) -> tuple[int, int, bytes, bytes]:
        from api.schemas import Applied, event_out
        from api.services import live_message

        events = tuple(event_out(r) for r in outcome.events)
        answer = self.encoder.encode(
            Applied(version=outcome.version, events=events, position=outcome.position))
        return outcome.version, outcome.position, answer, live_message(events)

    def _view(self, arguments: Any, campaign: Campaign | None) -> bytes | None:
        campaign_id, kind, _, version = arguments
        if campaign is None or (version is not None and campaign.version != version):
            return None
        render = self.renderers[kind]
        shown: bytes = self.views.render(campaign_id, kind, campaign.state,
                                         lambda state: self.encoder.encode(render(state)))
        return shown

    # -- campaigns not ready yet ------------------------------------------------------------

    def _park(self, campaign_id: UUID, request: tuple[int, str, Any]) -> None:
        waiting = self._parked.get(campaign_id)
        if waiting is None:
            self._parked[campaign_id] = [request]
            self._pool.submit(self._prepare, campaign_id)
        else:
            waiting.append(request)

    def _prepare(self, campaign_id: UUID) -> None:
        """On a thread of the pool: make the campaign ready, then wake the main thread."""
        try:
            forget = self.committer.prepare(campaign_id)
            self._prepared.put((campaign_id, None, forget))
        except BaseException as e:
            self._prepared.put((campaign_id, e, False))
        os.write(self._wake_w, b"!")

    def _unparked(self) -> list[tuple[int, str, Any]]:
        """The requests of the campaigns made ready since, in arrival order; those of a
        campaign that could not be made ready are answered with its error here."""
        ready: list[tuple[int, str, Any]] = []
        failed: list[bytes] = []
        while True:
            try:
                campaign_id, error, forget = self._prepared.get_nowait()
            except Empty:
                break
            requests = self._parked.pop(campaign_id, [])
            if error is not None:
                failed += [_answer(tag, error, None) for tag, _, _ in requests]
                continue
            if forget:
                self.committer.forget(campaign_id)
            ready += requests
        self._send(failed)
        return ready


def _bind(operation: Callable[..., Any], campaigns: Campaigns, keyring: Keyring,
          args: tuple[Any, ...], kwargs: dict[str, Any]) -> Callable[[], Any]:
    return lambda: operation(campaigns, keyring, *args, **kwargs)


def main(argv: list[str] | None = None) -> None:
    """``python -m api.writer FD``: the writer process of a server, on the socket FD."""
    argv = sys.argv[1:] if argv is None else argv
    # The server decides when its writer stops (after what it sent is done): a Ctrl-C or a
    # SIGTERM to the whole process group reaches the server, which then tells it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="capes writer: %(message)s")
    sock = socket.socket(fileno=int(argv[0]))
    sock.setblocking(True)
    WriterProcess(sock, os.environ).run()


if __name__ == "__main__":
    main()
