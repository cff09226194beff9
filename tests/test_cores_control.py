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
    alone, beside = r["seen"]["alone"], r["seen"]["beside"]
    assert r["by_round"] == pytest.approx([2 * a / b for a, b in zip(alone, beside, strict=True)])
    assert r["both_busy_cores"] == pytest.approx(sum(r["by_round"]) / 2)  # two rounds' median


def test_the_section_names_the_figures_and_the_rounds_spread(cores: ModuleType) -> None:
    r = {"rounds": 2, "stolen_jiffies": 3, "alone": 1.05, "beside": 1.65, "beside_idle": 1.45,
         "both_busy_cores": 1.27, "both_busy_cores_idle": 1.45,
         "by_round": [1.25, 1.29], "by_round_idle": [1.33, 1.57],
         "seen": {"alone": [1.0, 1.1], "beside": [1.6, 1.7], "beside_idle": [1.5, 1.4]}}
    text = cores.cores_report(r, "2026-11-29 04:00 UTC (commit abc)")
    assert text.startswith(cores.HEADING)
    assert "**1.27 cores' work**" in text and "from 1.25 to 1.29" in text
    assert "**1.45** with the busy loop at idle priority (from 1.33 to 1.57)" in text
    assert "| beside a busy loop on core 1 | **1.65 s** | 1.60 to 1.70 s |" in text
