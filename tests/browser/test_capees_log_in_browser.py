"""What the CAPEES! page says happened: a ledger's stakes name the Complication they lie on,
as the board's cards do (C-STAKE-1).

Each position (``tests/capees_positions.py``) is set up over HTTP by the seats' tokens, on a
real server with scripted dice; then a seat opens the table in Chromium (the ``reach`` fixture
of the pickers' tests).
"""

from __future__ import annotations

from typing import Any

import pytest
from capees_positions import GIVING
from test_capees_pickers_in_browser import dice, reach, run

from cli.demo_capees import ALICE

pytestmark = pytest.mark.browser

__all__ = ["dice", "reach", "run"]  # the fixtures this module's tests use


def test_a_ledgers_stake_names_the_complication_it_lies_on(reach: Any) -> None:
    """C-STAKE-1: given Night Maiden's 1 Justice Debt staked on Robbery (#1), then Alice's
    ledger says so by its name, as the card does (it said "on #1", and the player had to
    look the number up on the cards)."""
    alice = reach(GIVING, ALICE)
    ledger = alice.text_content(f'#ledgers article[data-seat="{ALICE}"]')
    assert "Staked: 1 Justice on #1 Robbery" in ledger, ledger
    assert not alice.errors, alice.errors
