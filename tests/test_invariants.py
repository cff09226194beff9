"""Random play, legal and illegal, never breaks an invariant of the game.

Hypothesis drives a table through commands drawn from what the table is waiting for
(``domain.capes.moves.candidates``) mixed with malformed and illegal ones. After every command:
no negative Story Tokens or Debt (R-TABLE-2), dice and Inspirations in 1-6 (R-ROLL-1,
R-TABLE-3), a side's dice never outnumber its staked Debt (R-SPLIT-1), a refused command
changes nothing (R-SRV-2), and replaying the events gives the live state.
"""

from __future__ import annotations

from typing import Union

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rulebook import Table, state_of

from domain.capes import commands as c
from domain.capes.events import EVENT_TYPES
from domain.capes.moves import candidates, waiting_for, with_choice
from domain.errors import ChoiceRequired, DomainError
from scripts.liveness import check_invariants

AnyEvent = Union[EVENT_TYPES]  # type: ignore[valid-type]  # noqa: UP007
ids = st.integers(min_value=0, max_value=6)
seats = st.integers(min_value=0, max_value=5)
junk = st.one_of(
    st.builds(c.Claim, seat=seats, conflict=ids, side=ids),
    st.builds(c.RollDie, seat=seats, ability=st.just("Nope"), conflict=ids, die=ids),
    st.builds(c.StakeDebt, seat=seats, conflict=ids, die=ids, amount=st.integers(1, 9)),
    st.builds(c.SplitDie, seat=seats, conflict=ids, die=ids, into=st.integers(2, 6)),
    st.builds(c.SpendInspiration, seat=seats, inspiration=ids, conflict=ids, die=ids),
    st.builds(c.Resolve, seat=seats, conflict=ids),
    st.builds(c.Gloat, seat=seats, conflict=ids, times=st.integers(1, 4)),
    st.builds(c.EndTurn, seat=seats),
    st.builds(c.PassReaction, seat=seats),
    st.builds(c.Veto, seat=seats, conflict=ids),
    st.builds(c.ChooseCharacter, seat=seats, character=ids),
    st.builds(c.AcceptRoll, seat=seats, ally=st.none() | ids),
    st.builds(c.DeclareDeadlock, seat=seats, conflict=ids),
    st.builds(c.EndPage, seat=seats),
)


def a_cast(t: Table) -> None:
    drives = {"Justice": 3, "Hope": 2, "Truth": 2, "Love": 1, "Duty": 1}
    for p in t.state.players:
        t.hero(p.seat, f"Hero {p.seat}", drives if p.seat % 2 else None)
    t.mundane(1, "Bystander")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data(), players=st.integers(2, 4), tokens=st.integers(0, 3))
def test_random_play_never_breaks_an_invariant(data: st.DataObject, players: int,
                                               tokens: int) -> None:
    """R-SRV-2, R-TABLE-2, R-ROLL-1, R-SPLIT-1: invariants hold after every command."""
    t = Table(players=players, tokens=tokens)
    a_cast(t)
    for _ in range(120):
        options = candidates(t.state)
        if options and data.draw(st.integers(0, 9)) > 0:
            command = data.draw(st.sampled_from(options))
        else:
            command = data.draw(junk)
        for _attempt in range(6):
            before, count = t.state, len(t.events)
            t.dice = [data.draw(st.integers(1, 6))]
            try:
                t.do(command)
                break
            except ChoiceRequired as asked:
                assert t.state is before and len(t.events) == count
                if not asked.field or not asked.choices:
                    break
                command = with_choice(command, asked.field, data.draw(st.sampled_from(
                    list(asked.choices))))
            except DomainError:
                # A refused command appends nothing and leaves the state as it was.
                assert t.state is before and len(t.events) == count
                break
        check_invariants(t.state)
        assert waiting_for(t.state), "the table is never stuck: someone can always move"
    assert state_of(t.events) == t.state, "replaying the events gives the live state"
    # Every event survives a msgspec round trip unchanged (the store relies on it).
    raw = msgspec.json.encode(t.events)
    assert msgspec.json.decode(raw, type=list[AnyEvent]) == t.events  # type: ignore[valid-type]
