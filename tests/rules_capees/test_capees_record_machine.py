"""CAPEES! through the application, with the record's moves: a hypothesis state machine.

The other random play of the edition (``test_capees_liveness.py``) runs the rules alone. Here
004's cast plays through ``Campaigns`` (in-memory store, a snapshot every few events), mixing
the candidate moves with undos, disputes, votes, the owner's settling and seeds, on a clock
that lets disputes expire. After every step: a refused command appended nothing (C-SRV-2);
the invariants of ``scripts/liveness_capees.py``; the live game is the fold of the events in
effect (R-REC-5), and the campaign loaded from its whole log (no snapshot) is the live one. At
the end the board and ledgers read models are what the live campaign shows (C-SRV-3).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from application.campaigns import Campaigns
from application.dice import SeededDice
from domain.capees import EDITION, views
from domain.capees import events as e
from domain.capees.moves import candidates, with_choice
from domain.edition import fold
from domain.editions import board_of
from domain.errors import ChoiceRequired, DomainError
from domain.record.commands import AddSeed, OpenDispute, SetTableOptions, SettleDispute, Undo, Vote
from domain.record.decider import is_reverted
from domain.record.model import TableOptions
from projections.service import ReadModels
from scripts.capees_table import Table, the_cast
from scripts.liveness_capees import check_invariants

MEMORY = {"PERSISTENCE_MODULE": "eventsourcing.popo"}


class AppTable(Table):
    """``scripts.capees_table.Table`` played through ``Campaigns`` instead of the rules alone,
    so ``the_cast`` seats and builds 004's cast in a stored campaign."""

    def __init__(self, app: Campaigns) -> None:
        self.app = app
        self.campaign: Any = None
        super().__init__()

    def do(self, command: Any) -> tuple[Any, ...]:
        if self.campaign is None:
            outcome = self.app.create(command)
            self.campaign = outcome.campaign_id
        else:
            outcome = self.app.execute(self.campaign, command)
        self.state = outcome.state
        return tuple(outcome.events)


class CapeesAtTheTable(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.now = datetime(2026, 1, 1, tzinfo=UTC)
        self.app = Campaigns(MEMORY, dice=SeededDice(5), snapshot_interval=7, clock=self.clock)
        self.read_models = ReadModels(self.app)
        table = the_cast(AppTable(self.app))
        self.id = table.campaign
        # Short disputes, settled by the owner too: expiry and settling get played.
        self.app.execute(self.id, SetTableOptions(options=TableOptions(
            owner_settles=True, dispute_minutes=5)))

    def clock(self) -> datetime:
        self.now += timedelta(seconds=40)
        return self.now

    def try_(self, command: Any, data: st.DataObject) -> None:
        """Run ``command``, filling the choices the rules ask for; a refusal changes nothing."""
        for _ in range(4):
            before = self.app.get(self.id)
            try:
                self.app.execute(self.id, command)
                return
            except ChoiceRequired as asked:
                assert self.app.get(self.id) == before, "C-SRV-2: asked, nothing changed"
                if not asked.field or not asked.choices:
                    return
                command = with_choice(command, asked.field,
                                      data.draw(st.sampled_from(list(asked.choices))))
            except DomainError:
                assert self.app.get(self.id) == before, "C-SRV-2: refused, nothing changed"
                return

    @property
    def seats(self) -> list[int]:
        return [p.seat for p in self.app.state(self.id).players]

    @rule(data=st.data())
    def play(self, data: st.DataObject) -> None:
        options = candidates(self.app.state(self.id))
        if options:
            self.try_(data.draw(st.sampled_from(options)), data)

    @rule(data=st.data())
    def undo(self, data: st.DataObject) -> None:
        self.try_(Undo(seat=data.draw(st.sampled_from(self.seats))), data)

    @rule(data=st.data())
    def dispute(self, data: st.DataObject) -> None:
        version = self.app.get(self.id).version
        self.try_(OpenDispute(seat=data.draw(st.sampled_from(self.seats)), reason="No way",
                              position=data.draw(st.integers(max(1, version - 12), version))),
                  data)

    @precondition(lambda self: self.app.get(self.id).record.dispute is not None)
    @rule(data=st.data(), uphold=st.booleans())
    def vote(self, data: st.DataObject, uphold: bool) -> None:
        self.try_(Vote(seat=data.draw(st.sampled_from(self.seats)), uphold=uphold), data)

    @rule(data=st.data(), uphold=st.booleans())
    def owner_settles(self, data: st.DataObject, uphold: bool) -> None:
        self.try_(SettleDispute(uphold=uphold), data)

    @rule(data=st.data())
    def add_seed(self, data: st.DataObject) -> None:
        self.try_(AddSeed(seat=data.draw(st.sampled_from(self.seats)), seed="mine"), data)

    @invariant()
    def the_game_is_the_fold_of_its_events_in_effect(self) -> None:
        live = self.app.get(self.id)
        records = self.app.history(self.id, limit=100_000)
        in_effect = [r.event for r in records if type(r.event) in e.EVENT_TYPES
                     and not is_reverted(live.record, r.originator_version)]
        check_invariants(live.state, in_effect)
        assert fold(EDITION, in_effect) == live.state, "R-REC-5"
        replayed = self.app.advance(None, records)
        assert replayed is not None and replayed.state == live.state
        assert replayed.record == live.record

    def teardown(self) -> None:
        try:
            self.read_models.runner.catch_up()
            live = self.app.get(self.id)
            assert self.read_models.board.board(self.id) == board_of(
                live.edition, live.state, live.record)
            assert self.read_models.ledgers.ledgers(self.id) == views.ledgers(live.state)
        finally:
            self.read_models.close()
            self.app.close()


CapeesAtTheTable.TestCase.settings = settings(
    max_examples=6, stateful_step_count=30, deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
test_capees_with_undos_and_disputes_keeps_to_its_log = CapeesAtTheTable.TestCase
