"""Seeded random legal play: how the long campaign of the cold loads and the history of the
projection rebuild are made."""

from __future__ import annotations

import random
import time
from typing import Any
from uuid import UUID

from application.campaigns import Campaigns
from benchmarks.mix import DRIVES, freeform
from domain.capes import commands as c
from domain.capes.moves import candidates, with_choice
from domain.errors import ChoiceRequired, DomainError


def random_play(app: Campaigns, seed: int, events: int, seconds: float) -> dict[str, Any]:
    """A campaign of about ``events`` events by seeded random play through ``execute``.

    Commands come from ``candidates(state)`` (the Decider judges them: some are refused) with
    choices filled by ``with_choice``, as in tests/test_invariants.py. Every candidate is
    drawn, staking, splitting and schisms before the turn's action included: a turn can always
    end (R-STAKE-4), so no game can freeze (``scripts/playtest`` checks it by the thousand).
    """
    rng = random.Random(seed)
    cid: UUID = app.create(c.CreateCampaign(name="Long campaign", starting_tokens=2)).campaign_id
    for name in ("Ana", "Ben", "Cleo"):
        app.execute(cid, c.SeatPlayer(name=name))
    hero = (("power", 5), ("style", 3), ("attitude", 3))
    for seat in (1, 2, 3):
        app.execute(cid, c.CreateCharacter(seat=seat, name=f"Hero {seat}",
                                           build=freeform(f"H{seat}", hero),
                                           drives=DRIVES if seat % 2 else None))
    outcome = app.execute(cid, c.CreateCharacter(
        seat=1, name="Bystander", build=freeform("B", (("skill", 3), ("style", 3),
                                                       ("attitude", 3)))))
    state, version = outcome.state, outcome.version
    accepted = refused = new_events = stuck = 0
    began = time.perf_counter()
    deadline = began + seconds
    while version < events and time.perf_counter() < deadline:
        options = candidates(state)
        if not options:
            break
        command = rng.choice(options)
        for _attempt in range(6):
            try:
                done = app.execute(cid, command)
            except ChoiceRequired as asked:
                if not asked.field or not asked.choices:
                    refused += 1
                    stuck += 1
                    break
                command = with_choice(command, asked.field, rng.choice(list(asked.choices)))
            except DomainError:
                refused += 1
                stuck += 1
                break
            else:
                state, version = done.state, done.version
                accepted += 1
                new_events += len(done.events)
                stuck = 0
                break
        if stuck > 5000:
            break
    elapsed = time.perf_counter() - began
    return {"campaign_id": cid, "version": version, "accepted": accepted, "refused": refused,
            "events": new_events, "seconds": elapsed, "accepted_per_s": accepted / elapsed,
            "tried_per_s": (accepted + refused) / elapsed, "events_per_s": new_events / elapsed,
            "scenes": state.scenes_played, "stuck": stuck > 5000}
