"""Helpers for the audit tests: campaigns played with the server's own (provably fair) dice.

The fair dice come from secret seeds the server draws with ``secrets``, so a test cannot script
them. :func:`played` plays random legal moves (``domain.capes.moves.candidates``) until enough
scenes have ended, starting over on a fresh campaign in the rare case random play gets stuck.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID

import msgspec
from stores import sqlite_file

from application.campaigns import Campaigns
from application.chain import linked
from application.mapper import MsgspecMapper
from domain.capes import commands as c
from domain.capes.moves import candidates, with_choice
from domain.errors import ChoiceRequired, DomainError
from domain.record.commands import AddSeed

MEMORY = {"PERSISTENCE_MODULE": "eventsourcing.popo"}


def sqlite_env(path: Path) -> dict[str, str]:
    return {"PERSISTENCE_MODULE": "eventsourcing.sqlite", "SQLITE_DBNAME": str(path)}


def abilities(*categories: str) -> c.Freeform:
    return c.Freeform(abilities=tuple(
        c.AbilitySpec(name=f"{cat} {r}", category=cat, rating=r)  # type: ignore[arg-type]
        for cat in categories for r in (1, 2, 3)))


def new_table(app: Campaigns, seats: int = 3, tokens: int = 2) -> UUID:
    """A campaign with ``seats`` players, each with a character; no scene yet."""
    campaign = app.create(c.CreateCampaign(name="Audit", starting_tokens=tokens)).campaign_id
    for seat in range(1, seats + 1):
        app.execute(campaign, c.SeatPlayer(name=f"P{seat}"))
        app.execute(campaign, c.CreateCharacter(
            seat=seat, name=f"Hero {seat}", build=abilities("power", "style", "attitude")))
    return campaign


def step(app: Campaigns, campaign: UUID, rng: random.Random) -> bool:
    """Try one random candidate move (filling in choices); whether it was accepted."""
    options = candidates(app.state(campaign))
    if not options:
        return False
    command = rng.choice(options)
    for _ in range(4):
        try:
            app.execute(campaign, command)
            return True
        except ChoiceRequired as asked:
            if not asked.field or not asked.choices:
                return False
            command = with_choice(command, asked.field, rng.choice(list(asked.choices)))
        except DomainError:
            return False
    return False


def add_seeds(app: Campaigns, campaign: UUID, rng: random.Random) -> None:
    """Every seat adds a seed to the dice of the scene, if they are open (R-FAIR-2)."""
    dice = app.get(campaign).record.dice
    if dice is None or dice.closed or dice.seeds:
        return
    for player in app.state(campaign).players:
        app.execute(campaign, AddSeed(seat=player.seat, seed=f"seat {player.seat} {rng.random()}"))


def play_until(app: Campaigns, campaign: UUID, done: Callable[[Campaigns, UUID], bool],
               rng: random.Random, seeds: bool = True, max_steps: int = 2000) -> bool:
    """Random moves until ``done``; False if play got nowhere in ``max_steps`` tries."""
    for _ in range(max_steps):
        if done(app, campaign):
            return True
        if seeds:
            add_seeds(app, campaign, rng)
        step(app, campaign, rng)
    return done(app, campaign)


def rolls(app: Campaigns, campaign: UUID) -> list[Any]:
    """The envelopes of every die rolled, in order."""
    return [r for r in app.history(campaign, limit=100_000)
            if type(r.event).__name__ in ("DieRolled", "OverdrawnDieRolled")]


def played(app: Campaigns, scenes: int = 1, min_rolls: int = 3, seeds: bool = True,
           seed: int = 0, attempts: int = 40) -> UUID:
    """A campaign of ``app`` in which ``scenes`` scenes ended with ``min_rolls`` dice rolled."""
    for attempt in range(attempts):
        rng = random.Random(seed * 1000 + attempt)
        campaign = new_table(app)

        def done(app: Campaigns, campaign: UUID) -> bool:
            return app.state(campaign).scenes_played >= scenes

        if play_until(app, campaign, done, rng, seeds) and len(rolls(app, campaign)) >= min_rolls:
            return campaign
    raise AssertionError(f"random play ended no {scenes} scene(s) with {min_rolls} rolls")


def types(records: Any) -> list[str]:
    return [type(r.event).__name__ for r in records]


# -- the published construction, recomputed independently --------------------------------------


def independent_die(seed: bytes, campaign: UUID, scene: int, counter: int,
                    seat_seeds: dict[int, str]) -> int:
    """A die as the README's "Provably fair dice" section describes it, from the stdlib only."""
    attempt = 0
    while True:
        message = bytearray(b"capes-dice-v1\x00")
        message += campaign.bytes
        message += scene.to_bytes(4, "big") + counter.to_bytes(8, "big")
        message += len(seat_seeds).to_bytes(2, "big")
        for seat in sorted(seat_seeds):
            text = seat_seeds[seat].encode("utf-8")
            message += seat.to_bytes(2, "big") + len(text).to_bytes(2, "big") + text
        message += attempt.to_bytes(4, "big")
        for byte in hmac.new(seed, bytes(message), hashlib.sha256).digest():
            if byte < 252:
                return byte % 6 + 1
        attempt += 1


# -- tampering with a SQLite store ---------------------------------------------------------------


def blob(db: Path, campaign: UUID, position: int) -> tuple[str, bytes]:
    with sqlite_file(db) as conn:
        topic, state = conn.execute(
            "SELECT topic, state FROM stored_events WHERE originator_id=? AND "
            "originator_version=?", (campaign.hex, position)).fetchone()
    return topic, bytes(state)


def write(db: Path, campaign: UUID, position: int, topic: str, state: bytes) -> None:
    with sqlite_file(db) as conn:
        conn.execute("UPDATE stored_events SET topic=?, state=? WHERE originator_id=? AND "
                     "originator_version=?", (topic, state, campaign.hex, position))


def delete(db: Path, campaign: UUID, position: int) -> None:
    with sqlite_file(db) as conn:
        conn.execute("DELETE FROM stored_events WHERE originator_id=? AND originator_version=?",
                     (campaign.hex, position))


def forge(db: Path, app: Campaigns, campaign: UUID, position: int,
          change: Callable[[Any], Any]) -> None:
    """What a forger who knows the construction does: change the event at ``position`` (as an
    envelope) and rewrite the chain of it and of every event after it, so the chain holds."""
    mapper = MsgspecMapper()
    records = app.history(campaign, limit=100_000)
    head = records[position - 2].chain if position > 1 else ""
    changed = [change(records[position - 1]), *records[position:]]
    for record in linked(mapper, campaign, head, (msgspec.structs.replace(r, chain="")
                                                  for r in changed)):
        stored = mapper.to_stored_event(record)
        write(db, campaign, record.originator_version, stored.topic, stored.state)


def positions_of(records: Any, name: str) -> Iterator[int]:
    return (r.originator_version for r in records if type(r.event).__name__ == name)


def rewrite_raw(db: Path, campaign: UUID, position: int,
                change: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Change the stored JSON body at ``position`` and re-chain it and every body after it,
    working on the stored JSON alone (as a store written by older code would hold it)."""
    from application.chain import canonical, genesis, link

    with sqlite_file(db) as conn:
        rows = conn.execute(
            "SELECT originator_version, state FROM stored_events WHERE originator_id=? "
            "ORDER BY originator_version", (campaign.hex,)).fetchall()
        bodies = {version: msgspec.json.decode(state) for version, state in rows}
        previous = (bytes.fromhex(bodies[position - 1]["chain"]) if position > 1
                    else genesis(campaign))
        bodies[position] = change(bodies[position])
        for version in sorted(v for v in bodies if v >= position):
            body = bodies[version]
            previous = link(previous, canonical(body, version))
            body["chain"] = previous.hex()
            conn.execute("UPDATE stored_events SET state=? WHERE originator_id=? AND "
                         "originator_version=?",
                         (msgspec.json.encode(body), campaign.hex, version))
        # Snapshots are a cache, and they know the chain as it was: drop them.
        conn.execute("DELETE FROM stored_snapshots WHERE originator_id=?", (campaign.hex,))
