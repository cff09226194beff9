"""A run of ``scripts/bench`` keeps the figures it does not make itself: the random play's
(``scripts/playtest --write``) and the soak's (``scripts/soak --out``). Runs AJ and AK, written
with ``--out`` to a new file and copied over docs/benchmarks.md, had dropped both."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


@pytest.fixture()
def run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))
    from benchmarks import run

    doc = tmp_path / "benchmarks.md"
    doc.write_text("# Benchmarks\n\n## Reliability\n\nno loss\n\n## Findings\n\n- one\n")
    monkeypatch.setattr(run, "DOC", doc)
    return run


def test_a_run_written_to_a_new_file_keeps_the_soak_figures_of_the_benchmarks_file(
        run: ModuleType, tmp_path: Path) -> None:
    assert run.kept_section(run.RELIABILITY, tmp_path / "new.md") == "## Reliability\n\nno loss\n"


def test_the_section_of_the_file_written_over_comes_first(run: ModuleType,
                                                          tmp_path: Path) -> None:
    out = tmp_path / "out.md"
    out.write_text("# Benchmarks\n\n## Reliability\n\nnewer\n")
    assert run.kept_section(run.RELIABILITY, out) == "## Reliability\n\nnewer\n"


def test_a_section_neither_file_has_is_not_kept(run: ModuleType, tmp_path: Path) -> None:
    assert run.kept_section(run.RANDOM_PLAY_HEADING, tmp_path / "new.md") is None
