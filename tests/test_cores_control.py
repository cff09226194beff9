"""The bench's control of the machine's two cores (``scripts/benchmarks/cores.py``): the same
loop timed on one core alone and beside a busy loop on the other, at either priority, and how
many cores' work the two do when both are busy. No figure is asserted (benchmarks are not
timed tests): only that each condition is measured and reported as the section says."""

from __future__ import annotations

import os
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture()
def cores(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("the control needs two cores; this process may use one")
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from benchmarks import cores

    monkeypatch.setattr(cores, "ITERATIONS", 200_000)
    return cores


def test_each_condition_is_timed_in_every_round_and_the_two_cores_work_follows(
        cores: ModuleType) -> None:
    r = cores.cores_part(quick=True)
    assert all(len(r["seen"][name]) == r["rounds"] == 2
               for name in ("alone", "beside", "beside_idle"))
    assert all(v > 0 for values in r["seen"].values() for v in values)
    assert r["both_busy_cores"] == pytest.approx(2 * r["alone"] / r["beside"])
    assert r["by_round"] == pytest.approx(
        [2 * a / b for a, b in zip(r["seen"]["alone"], r["seen"]["beside"], strict=True)])


def test_the_section_names_the_figure_and_every_round(cores: ModuleType) -> None:
    r = {"rounds": 2, "stolen_jiffies": 3, "alone": 1.0, "beside": 1.6, "beside_idle": 1.5,
         "both_busy_cores": 1.25, "by_round": [1.25, 1.29],
         "seen": {"alone": [1.0, 1.1], "beside": [1.6, 1.7], "beside_idle": [1.5, 1.4]}}
    text = cores.cores_report(r, "2026-11-29 04:00 UTC (commit abc)")
    assert text.startswith(cores.HEADING)
    assert "**1.25 cores' work**" in text
    assert "round by round 1.25, 1.29" in text
    assert "| beside a busy loop on core 1 | **1.60 s** | 1.60, 1.70 |" in text
