"""Helpers of the read-model tests: random legal campaigns (with undos and disputes), and what
each read model must hold, computed straight from the application (the fold of the events)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any
from uuid import UUID

from application.campaigns import Campaigns
from domain.capes import commands as c
from domain.capes import events as e
from domain.capes.moves import candidates, with_choice
from domain.capes.views import ledgers
from domain.editions import board_of
from domain.errors import ChoiceRequired, DomainError
from domain.record import is_reverted
from domain.record.commands import OpenDispute, Undo, Vote
from projections.analytics import AnalyticsModel
from projections.service import ReadModels

DRIVES = {"Justice": 3, "Hope": 2, "Truth": 2, "Love": 1, "Duty": 1}


def abilities(*categories: str) -> c.Freeform:
    return c.Freeform(abilities=tuple(
        c.AbilitySpec(name=f"{cat} {r}", category=cat, rating=r, super=cat == "power")  # type: ignore[arg-type]
        for cat in categories for r in (1, 2, 3)))


def open_table(app: Campaigns, name: str, players: int = 3, tokens: int = 2) -> UUID:
    """A campaign with ``players`` seats and a character each."""
    campaign = app.create(c.CreateCampaign(name=name, starting_tokens=tokens)).campaign_id
    for seat in range(1, players + 1):
        app.execute(campaign, c.SeatPlayer(name=f"Player {seat}"))
    for seat in range(1, players + 1):
        kind = ("power", "skill")[seat % 2]
        app.execute(campaign, c.CreateCharacter(
            seat=seat, name=f"Hero {seat}", build=abilities(kind, "style", "attitude"),
            drives=DRIVES if seat % 2 else None))
    return campaign


def play(app: Campaigns, campaign: UUID, rng: random.Random, commands: int,
         undo: float = 0.03, dispute: float = 0.015) -> int:
    """Up to ``commands`` random commands on the campaign: legal play (the Decider judges),
    with undos and disputes (settled by random votes) now and then; how many were accepted."""
    accepted = 0
    for _ in range(commands):
        record = app.get(campaign).record
        state = app.state(campaign)
        command: Any
        if record.dispute is not None:
            voters = [s for s in record.dispute.voters if s not in record.dispute.votes]
            command = Vote(seat=rng.choice(voters), uphold=rng.random() < 0.6)
        elif record.undoable and rng.random() < undo:
            command = Undo(seat=record.undoable[-1].seat)
        elif record.scene_start is not None and rng.random() < dispute:
            seat = rng.choice([p.seat for p in state.players])
            position = rng.randint(record.scene_start, record.game_version)
            command = OpenDispute(seat=seat, position=position, reason="no way")
        else:
            options = candidates(state)
            if not options:
                break
            command = rng.choice(options)
        for _attempt in range(6):
            try:
                app.execute(campaign, command)
                accepted += 1
                break
            except ChoiceRequired as asked:
                if not asked.field or not asked.choices:
                    break
                command = with_choice(command, asked.field, rng.choice(list(asked.choices)))
            except DomainError:
                break
    return accepted


# -- what the read models must hold ----------------------------------------------------------


def expected_timeline(app: Campaigns, campaign: UUID) -> list[tuple[Any, ...]]:
    record = app.get(campaign).record
    return [(r.originator_version, type(r.event).__name__, r.seat, r.narration,
             is_reverted(record, r.originator_version))
            for r in app.history(campaign, limit=100_000)]


def timeline_of(read_models: ReadModels, campaign: UUID) -> list[tuple[Any, ...]]:
    return [(t.position, t.type, t.seat, t.narration, t.reverted)
            for t in read_models.timeline.entries(campaign, limit=100_000)]


def in_effect(app: Campaigns, campaign: UUID) -> list[Any]:
    """The campaign's game events that no undo or upheld dispute has reverted."""
    record = app.get(campaign).record
    return [r for r in app.history(campaign, limit=100_000)
            if type(r.event) in e.EVENT_TYPES and not is_reverted(record, r.originator_version)]


def expected_figures(app: Campaigns, campaign: UUID) -> dict[str, Any]:
    """Figures of the analytics computed straight from the events in effect."""
    records = in_effect(app, campaign)
    reverted = [r for r in app.history(campaign, limit=100_000)
                if type(r.event) in e.EVENT_TYPES
                and is_reverted(app.get(campaign).record, r.originator_version)]
    rolls: Counter[int] = Counter()
    by_seat: dict[int, Counter[int]] = {}
    conflicts: Counter[str] = Counter()
    gloats = 0
    for r in records:
        ev = r.event
        if isinstance(ev, e.DieRolled):
            rolls[ev.rolled] += 1
            by_seat.setdefault(ev.seat, Counter())[ev.rolled] += 1
        elif isinstance(ev, e.OverdrawnDieRolled):
            rolls[ev.rolled] += 1
            before = app.state(campaign, r.originator_version - 1)
            seat = before.scene.cast[ev.character]
            by_seat.setdefault(seat, Counter())[ev.rolled] += 1
        elif isinstance(ev, e.ConflictCreated):
            conflicts[f"created {ev.kind}"] += 1
        elif isinstance(ev, e.ConflictResolved):
            conflicts["resolved"] += 1
        elif isinstance(ev, e.ConflictDeadlocked):
            conflicts["deadlocked"] += 1
        elif isinstance(ev, e.Gloated):
            gloats += 1
    return {
        "events": len(records),
        "reverted_events": len(reverted),
        "faces": tuple(rolls[f] for f in range(1, 7)),
        "by_seat": {s: tuple(n[f] for f in range(1, 7)) for s, n in by_seat.items()},
        "conflicts": dict(conflicts),
        "gloats": gloats,
        "abilities": sum(isinstance(r.event, e.AbilityUsed) for r in records),
        "pages": sum(isinstance(r.event, e.PageStarted) for r in records),
    }


def figures_of(model: AnalyticsModel, campaign: UUID) -> dict[str, Any]:
    a = model.analytics(campaign)
    assert a is not None
    conflicts: Counter[str] = Counter()
    for kind, k in a.conflicts.by_kind.items():
        if k.created:
            conflicts[f"created {kind}"] += k.created
        if k.resolved:
            conflicts["resolved"] += k.resolved
        if k.deadlocked:
            conflicts["deadlocked"] += k.deadlocked
    return {
        "events": a.events,
        "reverted_events": a.reverted_events,
        "faces": a.dice.overall.faces,
        "by_seat": {p.seat: p.dice.faces for p in a.dice.by_player if p.dice.rolls},
        "conflicts": dict(conflicts),
        "gloats": a.conflicts.gloats,
        "abilities": a.abilities.uses,
        "pages": sum(s.pages for s in a.pace.by_scene),
    }


def check_read_models(app: Campaigns, read_models: ReadModels, campaigns: list[UUID]) -> None:
    """Every read model of every campaign equals what the application's fold says."""
    for campaign in campaigns:
        now = app.get(campaign)
        state = now.state
        # The campaign's board: an open dispute shows in it (R-REC-2).
        assert read_models.board.board(campaign) == board_of(now.edition, state, now.record)
        assert read_models.ledgers.ledgers(campaign) == ledgers(state)
        assert timeline_of(read_models, campaign) == expected_timeline(app, campaign)
        listing = read_models.directory.get(campaign)
        current = app.get(campaign)
        assert listing is not None
        assert (listing.name, listing.players, listing.version, listing.closed,
                listing.created, listing.last_activity) == (
            state.name, tuple(p.name for p in state.players), current.version, state.closed,
            current.created_on, current.modified_on)
        assert figures_of(read_models.analytics, campaign) == expected_figures(app, campaign)


def dump(read_models: ReadModels) -> dict[str, Any]:
    return {name: model.store.dump() for name, model in read_models.models.items()}
