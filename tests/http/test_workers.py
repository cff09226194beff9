"""``capes serve --workers N`` always ends when asked to (cli/workers.py): a worker that does
not stop within its time is killed, where uvicorn's supervisor waited for it for ever."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers import free_port

ROOT = Path(__file__).resolve().parents[2]

#: A supervisor of two workers of tests/http/stuck_app.py, given a second to stop them.
SUPERVISOR = """
import sys, uvicorn
from cli.workers import serve_workers
serve_workers(uvicorn.Config("stuck_app:app", workers=2, port=int(sys.argv[1]),
                             log_level="warning"), stop_wait=1)
"""


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_workers_that_cannot_stop_are_killed_and_the_server_ends(tmp_path: Path) -> None:
    env = os.environ | {"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests' / 'http'}",
                        "STUCK_APP_MARKS": str(tmp_path)}
    supervisor = subprocess.Popen([sys.executable, "-c", SUPERVISOR, str(free_port())], env=env,
                                  stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(workers := [int(mark.name) for mark in tmp_path.iterdir()]) < 2:
            assert time.monotonic() < deadline, "the workers never reached their startup"
            assert supervisor.poll() is None, supervisor.communicate()[1]
            time.sleep(0.05)
        supervisor.send_signal(signal.SIGINT)  # Ctrl-C
        _, log = supervisor.communicate(timeout=30)  # raises if it still waits for them
    finally:
        if supervisor.poll() is None:
            os.killpg(supervisor.pid, signal.SIGKILL)
    assert not [pid for pid in workers if running(pid)]
    for pid in workers:
        assert f"Child process [{pid}] did not stop within 1 s: killed" in log


#: Starts two workers of tests/http/stuck_app.py and prints, for each as it starts loading,
#: whether it is deaf to Ctrl-C, then whether the supervisor is.
STARTED = """
import signal, uvicorn
from cli.workers import Workers
from helpers import ctrl_c_blocked
workers = Workers(uvicorn.Config("stuck_app:app", workers=2, log_level="warning"), [],
                  stop_wait=1)
workers.init_processes()
for worker in workers.processes:
    print(ctrl_c_blocked(worker.pid))
print(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set()))
workers.terminate_all()
workers.join_all()
"""


def test_workers_start_deaf_to_ctrl_c_and_the_supervisor_does_not(tmp_path: Path) -> None:
    """A Ctrl-C while the workers loaded (seconds on a busy machine) printed each one's
    traceback of the import it stopped; they need none: the supervisor stops them."""
    env = os.environ | {"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests' / 'http'}",
                        "STUCK_APP_MARKS": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", STARTED], env=env, capture_output=True,
                          text=True, timeout=60, start_new_session=True)
    # (Once a worker serves, uvicorn's handlers take Ctrl-C: its event loop unblocks it.)
    assert done.stdout.splitlines() == ["True", "True", "False"], done.stderr


#: One worker of tests/http/stuck_app.py, then every way uvicorn starts another: one that died
#: replaced, one more on SIGTTIN, each replaced on SIGHUP (the new one never ready: killed).
REPLACED = """
import os, signal, sys, time, uvicorn
from pathlib import Path
from cli.workers import Workers
marks = Path(sys.argv[1])
workers = Workers(uvicorn.Config("stuck_app:app", workers=1, log_level="critical",
                                 timeout_worker_healthcheck=int(sys.argv[2])), [], stop_wait=1)

def started(process):
    while not (marks / str(process.pid)).exists():
        time.sleep(0.05)

workers.init_processes()
started(workers.processes[0])
first = workers.processes[0]
os.kill(first.pid, signal.SIGKILL)
first.join()
workers.keep_subprocess_alive()
started(workers.processes[0])
workers.handle_ttin()
started(workers.processes[1])
workers.restart_all()
workers.terminate_all()
workers.join_all()
"""


def test_workers_started_again_are_deaf_to_ctrl_c_as_the_first_ones(tmp_path: Path) -> None:
    """uvicorn starts a worker again when one died, one more on SIGTTIN, and replaces them all
    on SIGHUP: each of those loaded hearing Ctrl-C, and printed a traceback for it."""
    env = os.environ | {"PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests' / 'http'}",
                        "STUCK_APP_MARKS": str(tmp_path)}
    # SIGHUP's replacement must reach its startup before the supervisor gives up on it.
    subprocess.run([sys.executable, "-c", REPLACED, str(tmp_path), "20"], env=env, timeout=120,
                   check=True, start_new_session=True)
    marks = {mark.name: mark.read_text() for mark in tmp_path.iterdir()}
    # The first, its replacement, the one more, and SIGHUP's replacement of the first.
    assert len(marks) >= 4, marks
    assert set(marks.values()) == {"deaf"}, marks
