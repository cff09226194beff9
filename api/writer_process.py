"""The writer process itself: ``python -m api.writer_process FD``, started by the server's
:class:`api.writer.RemoteWriter` (see :mod:`api.writer` for why and what crosses the socket)."""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from queue import Empty, SimpleQueue
from typing import Any
from uuid import UUID

import msgspec

from api.collector import Collector
from api.routes.queries import RENDERERS
from api.services import RenderedViews, applied_of, live_message
from api.writer import Frames, answer_frame, frame
from application.aggregate import Campaign
from application.campaigns import Campaigns, Outcome, open_campaigns
from application.committer import Committer, Job, Result
from application.credentials import Keyring
from application.integrity import Integrity

log = logging.getLogger(__name__)


class WriterProcess:
    """The writer process: reads requests, runs them in groups, sends the answers."""

    def __init__(self, sock: socket.socket, environ: Mapping[str, str]) -> None:
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
                job.position = arguments[2] if op == "v" else arguments[1]  # "l": (id, position)
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
            return answer_frame(tag, error, None)
        try:
            if op == "x":
                value = self._rendered(value)
            elif op == "v":
                value = self._view(arguments, value)
        except Exception as e:
            return answer_frame(tag, e, None)
        return answer_frame(tag, None, value)

    def _rendered(self, outcome: Outcome) -> tuple[int, int, bytes, bytes]:
        applied = applied_of(outcome)
        return (outcome.version, outcome.position, self.encoder.encode(applied),
                live_message(applied.events))

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
                failed += [answer_frame(tag, error, None) for tag, _, _ in requests]
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
    """``python -m api.writer_process FD``: the writer process of a server, on socket FD."""
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
