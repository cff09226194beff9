"""The README's play-through runs as written."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)


def test_the_readme_play_through_runs_and_its_assertions_hold() -> None:
    """R-ROLL-2, R-ROLL-3, R-REACT-1: the README's scene plays as the rules say."""
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "the README opens with a play-through in a python block"
    namespace: dict[str, object] = {"__name__": "readme"}
    exec(compile(blocks[0], str(README), "exec"), namespace)
