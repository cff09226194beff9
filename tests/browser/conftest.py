"""Browser tests: Playwright for Python driving Debian's Chromium (``apt-get install
chromium``; Playwright's own browser download cannot reach the internet here).

Chromium missing: the tests are skipped with the reason, except under CI=true, where they
fail, so CI can never go green without having run them (``.ci/run`` installs Chromium).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))

from stores import in_ci

#: The browser: Debian's Chromium unless CAPES_CHROMIUM names another build.
CHROMIUM = os.environ.get("CAPES_CHROMIUM", "/usr/bin/chromium")
#: Without the background-networking flags Chromium keeps trying this machine's closed network.
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def browser_problem() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[dev]')"
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless Chromium per test module (each test makes its own contexts). Not for the
    session: Playwright's sync API keeps an event loop running in this thread while it is
    open, and the tests after it that call ``asyncio.run`` would fail."""
    problem = browser_problem()
    if problem is not None:
        if in_ci():
            pytest.fail(f"the browser tests must run in CI: {problem}")
        pytest.skip(f"Browser not available: {problem}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        yield launched
        launched.close()
