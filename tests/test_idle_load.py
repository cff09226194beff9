"""The bench's stand-in for the read models' CPU (``scripts/idle_load.py``): a process that
burns a share of one core at the read models' idle priority, beside the controls with a store,
until it is stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture()
def idle_load(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    import idle_load

    return idle_load


def test_it_owes_work_while_it_has_used_less_than_its_share_of_the_time(
        idle_load: ModuleType) -> None:
    assert idle_load.owed(0.25, wall=2.0, cpu=0.4) == pytest.approx(0.1)
    assert idle_load.owed(0.25, wall=2.0, cpu=0.5) == pytest.approx(0.0)
    assert idle_load.owed(0.25, wall=2.0, cpu=0.6) < 0


@pytest.mark.parametrize("cores", [0.0, -0.5, 1.5])
def test_a_share_outside_one_core_is_refused(idle_load: ModuleType, cores: float) -> None:
    with pytest.raises(ValueError, match="cores must be in"):
        idle_load.owed(cores, 1.0, 0.0)


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="SCHED_IDLE is Linux's")
def test_it_runs_at_the_read_models_idle_priority_until_it_is_stopped() -> None:
    proc = subprocess.Popen([sys.executable, str(SCRIPTS / "idle_load.py"), "--cores", "0.2"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "idle_load: 0.20 of a core at SCHED_IDLE"
        assert os.sched_getscheduler(proc.pid) == os.SCHED_IDLE
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_share_outside_one_core_stops_it_before_any_work() -> None:
    done = subprocess.run([sys.executable, str(SCRIPTS / "idle_load.py"), "--cores", "2"],
                          capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "cores must be in (0, 1], not 2.0" in done.stderr
