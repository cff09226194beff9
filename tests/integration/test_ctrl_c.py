"""A Ctrl-C at a terminal reaches ``capes serve`` and every process it started. Those load for
seconds on a busy machine, and a Ctrl-C in that time printed the traceback of whichever import
it stopped in each (and the writer process's failed the server's startup with another). They
start deaf to it: ``capes serve`` stops them (application/children.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.http.helpers import ROOT, ctrl_c_blocked, free_port


def started_by(pid: int) -> dict[int, bytes]:
    """The processes ``pid`` started, and theirs, with their command lines."""
    found = {}
    for task in os.listdir(f"/proc/{pid}/task"):
        for child in map(int, Path(f"/proc/{pid}/task/{task}/children").read_text().split()):
            found[child] = Path(f"/proc/{child}/cmdline").read_bytes()
            found |= started_by(child)
    return found


#: What each process of ``capes serve`` has in its command line.
READ_MODELS, WRITER = b"projections\0run", b"api.writer_process"


def test_every_process_capes_serve_starts_is_deaf_to_ctrl_c_and_capes_serve_is_not(
    tmp_path: Path,
) -> None:
    """(Its workers, if several: tests/http/test_workers.py.)"""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAPES_")}
    env["CAPES_DB"] = str(tmp_path / "c.sqlite")
    serve = subprocess.Popen(
        [sys.executable, "-m", "cli.main", "serve", "--port", str(free_port())], cwd=ROOT,
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wanted = [READ_MODELS, WRITER]
        deadline = time.monotonic() + 60
        while True:  # the processes started, whether or not they are ready
            started = started_by(serve.pid)
            found = sorted(part for command in started.values() for part in wanted
                           if part in command)
            if found == sorted(wanted):
                break
            assert serve.poll() is None and time.monotonic() < deadline, started
            time.sleep(0.05)
        assert [command for pid, command in started.items() if not ctrl_c_blocked(pid)] == []
        # capes serve blocks it only while it starts them: it takes its Ctrl-C.
        while ctrl_c_blocked(serve.pid):
            assert time.monotonic() < deadline, "capes serve is deaf to Ctrl-C"
            time.sleep(0.05)
    finally:
        os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(30)
