"""No game can freeze: the rules gaps random play found (issue 11).

Rules: R-STAKE-4, R-X-STAKE-2, R-X-TURN-2 (a turn can always end; stakes before the Ability
are provisional), R-SCHISM-1 (emptied sides go, every side nameable), R-X-RES-2, R-DEAD-1 and
R-X-DEAD-2 (ties nobody can or does change end), R-CHAR-6 and R-X-CHAR-2 (the Exemplar quota),
R-ABIL-2 (legality before choices), R-CHAR-8 and R-X-CHAR-3 (changing a character between
scenes).
"""

from __future__ import annotations

import msgspec
import pytest
from play_helpers import (
    AURORA,
    AURORA_DRIVES,
    BRUTE,
    MIA,
    UNDIFFERENTIATED,
    a_deadlocked_warehouse,
    a_roll,
    a_scene,
    a_scene_with_a_conflict,
    conflict,
    earlier_debt,
    end_turn,
    play_on,
    power,
    skill,
    start_turn,
    take_turn,
)
from rulebook import Table, given, state_of
from scenes_helpers import characters_built

from cli.render import capes_board_text
from domain.capes import EDITION
from domain.capes import commands as c
from domain.capes.events import (
    CharacterAllied,
    CharacterEdited,
    ConflictDeadlocked,
    DebtReturned,
    DieRolled,
    ExemplarLinked,
    ExemplarRequested,
    InspirationSpent,
    ProvisionalStakesReturned,
    SideSchismed,
    TurnEnded,
)
from domain.capes.model import Ability, Die, DriveSlot
from domain.capes.moves import waiting_for
from domain.capes.upcasts import upcast
from domain.capes.views import ExemplarRequestView, board
from domain.errors import ChoiceRequired, NotPermitted
from scripts.liveness import accepted

# -- set-ups ---------------------------------------------------------------------------------


def raised(t: Table, conflict_id: int, die: int, value: int, seat: int = AURORA) -> None:
    """Earlier play (an Inspiration of ``seat``) raised a die to ``value``."""
    x = conflict(t, conflict_id)
    found = x.die(die)
    assert found is not None
    t.events.append(InspirationSpent(seat=seat, inspiration=99, conflict=conflict_id, die=die,
                                     before=found[1].value, value=value))
    t.state = state_of(t.events)


def allied(t: Table, character: int, conflict_id: int, side: int) -> None:
    """Earlier play allied the character to a side."""
    t.events.append(CharacterAllied(character=character, conflict=conflict_id, side=side))
    t.state = state_of(t.events)


def weak_mia_at(one: int, five: int) -> Table:
    """Scene 1, page 1: Mia (skills, styles and attitudes rated 1-3; 2 undifferentiated Debt
    from earlier play) is allied to "For" of Event 1 (Aurora's), standing at [``one``] vs
    [``five``]; Brute created Event 2, whose dice earlier play raised to 4. Mia's free turn has
    started."""
    t = a_scene(framer=1, debt={MIA: {UNDIFFERENTIATED: 2}})
    take_turn(t, 1, c.CreateConflict(seat=1, kind="event", text="The warehouse burns"))
    take_turn(t, 2, c.CreateConflict(seat=2, kind="event", text="The bank is robbed"))
    if one > 1:
        raised(t, 1, 1, one)
    raised(t, 1, 2, five)
    raised(t, 2, 1, 4)
    raised(t, 2, 2, 4)
    allied(t, MIA, 1, 0)
    return start_turn(t, MIA)


# -- item 1: a turn can always end; stakes before the Ability are provisional -----------------


def test_a_turn_ends_even_when_its_stake_left_no_ability_able_to_act() -> None:
    """R-STAKE-4 / R-X-STAKE-2: at [1] vs [5] Mia (abilities up to 3) stakes 1 Debt under the
    1 and spends an Inspiration of 4 on it. No ability of hers can roll any die now and the
    stake forbids creating a Conflict, yet the turn ends: the stake goes back to its Drive,
    the die is uncontrolled again and keeps the 4 the Inspiration gave it."""
    t = weak_mia_at(1, 5)
    before = conflict(t)
    t(c.StakeDebt(seat=MIA, conflict=1, die=1, amount=1))
    t.events.append(InspirationSpent(seat=MIA, inspiration=98, conflict=1, die=1, before=1,
                                     value=4))
    t.state = state_of(t.events)
    for ability in (skill(1), skill(3)):
        given(t.events).when(
            c.RollDie(seat=MIA, ability=ability, conflict=1, die=1)
        ).refused("R-ABIL-2")
    given(t.events).when(
        c.CreateConflict(seat=MIA, kind="event", text="A way out")
    ).refused("R-STAKE-1")
    assert "roll_die" not in waiting_for(t.state)[MIA]
    assert "end_turn" in waiting_for(t.state)[MIA]
    restored = msgspec.structs.replace(
        before,
        sides=(msgspec.structs.replace(before.sides[0], dice=(Die(id=1, value=4),)),
               before.sides[1]),
    )
    events = given(t.events).when(c.EndTurn(seat=MIA)).then_includes(
        ProvisionalStakesReturned(
            character=MIA,
            returned=(DebtReturned(character=MIA, drive=UNDIFFERENTIATED, amount=1),),
            conflicts=(restored,),
        ),
        TurnEnded(seat=MIA),
    )
    after = state_of([*t.events, *events])
    assert after.characters[MIA].drives[0].debt == 2
    assert after.conflicts[1].sides[0].dice == (Die(id=1, value=4),)


def test_a_turn_may_end_without_its_one_thing() -> None:
    """R-X-TURN-2 / R-STAKE-4: a turn that neither acted nor staked simply ends, spent."""
    t = start_turn(a_scene_with_a_conflict(), AURORA)
    given(t.events).when(c.EndTurn(seat=AURORA)).then(TurnEnded(seat=AURORA))


def test_splits_and_schisms_paid_by_provisional_stakes_are_undone() -> None:
    """R-STAKE-4 / R-X-STAKE-2: Aurora stakes under die 1 (controlling it), splits it and
    schisms the new die away, then ends the turn without rolling: Event 1 is as it was, and
    her 2 Justice Debt is back."""
    t = a_scene_with_a_conflict(framer=2, debt={AURORA: {"Justice": 2}})
    a_roll(t, MIA, skill(3), die=1, value=3)  # Mia: "For" shows 3, Mia allied to it
    allied(t, AURORA, 1, 0)
    before = conflict(t)
    start_turn(t, AURORA)
    # Die 1 is uncontrolled on "For": stake, split 3 into 2+1, schism the 1 to a new side.
    t(c.StakeDebt(seat=AURORA, conflict=1, die=1, drive="Justice"),
      c.SplitDie(seat=AURORA, conflict=1, die=1, into=2, drive="Justice"),
      c.Schism(seat=AURORA, conflict=1, side=0, dice=(3,)))
    assert len(conflict(t).sides) == 3
    end_turn(t, AURORA)
    after = conflict(t)
    assert after.sides == before.sides and after.allies == before.allies
    assert t.state.characters[AURORA].drive("Justice") == DriveSlot(
        name="Justice", strength=3, debt=2)


def test_stakes_after_the_ability_are_not_given_back() -> None:
    """R-STAKE-4: only Debt staked before the Ability is provisional."""
    t = a_scene_with_a_conflict()
    a_roll(t, AURORA, power("Aurora", 1), die=1, value=4, drive="Justice", stake=1, end=False)
    events = given(t.events).when(c.EndTurn(seat=AURORA)).decide()
    assert events == (TurnEnded(seat=AURORA),)


# -- item 2: the guard that ignored Splits is gone ---------------------------------------------


def test_a_weak_character_stakes_splits_and_rolls_the_lowered_die() -> None:
    """R-STAKE-1 / R-SPLIT-1 / R-ABIL-2 (002): at [4] vs [5] Mia (abilities up to 3, 2 Debt)
    stakes under the 4, splits it 2+2 and rolls a 2 with a skill rated 2."""
    t = weak_mia_at(4, 5)
    t(c.StakeDebt(seat=MIA, conflict=1, die=1, amount=1))
    t(c.SplitDie(seat=MIA, conflict=1, die=1, into=2))
    t.roll(3)
    given(t.events).when(
        c.RollDie(seat=MIA, ability=skill(2), conflict=1, die=3, value=3)
    ).then_includes(
        DieRolled(conflict=1, die=3, before=2, rolled=3, character=MIA, seat=MIA)
    )


# -- item 3: Schisms remove emptied sides; every side can be named -----------------------------


def a_schismed_die() -> Table:
    """Aurora controls die 1 of Event 1 and schismed it from "For" (which kept a split die)
    to side 2; her turn goes on."""
    t = a_scene_with_a_conflict(debt={AURORA: {"Justice": 2}})
    a_roll(t, AURORA, power("Aurora", 4), die=1, value=4, drive="Justice", stake=1, end=False)
    t(c.SplitDie(seat=AURORA, conflict=1, die=1, into=2, drive="Justice"))
    t(c.Schism(seat=AURORA, conflict=1, side=0, dice=(3,)))
    return t


def test_a_side_left_empty_by_a_schism_disappears() -> None:
    """R-SCHISM-1: moving side 2's only die on makes a new side in its place: still 3 sides."""
    t = a_schismed_die()
    assert len(conflict(t).sides) == 3
    after = given(t.events).when(c.Schism(seat=AURORA, conflict=1, side=2, dice=(3,))).then(
        SideSchismed(conflict=1, side=2, new_side=2, label="New side", dice=(3,),
                     character=AURORA, removed=2),
        CharacterAllied(character=AURORA, conflict=1, side=2),
    )
    assert len(after.conflicts[1].sides) == 3
    assert after.conflicts[1].allies[AURORA] == 2


def test_a_schism_that_would_make_a_side_no_command_can_name_is_refused() -> None:
    """R-SCHISM-1: a Conflict has at most 32 sides, numbered 0-31, each nameable by `claim`,
    `accept_roll`, `reject_roll` and `schism`."""
    t = a_schismed_die()
    t(c.SplitDie(seat=AURORA, conflict=1, die=3, into=2, drive="Justice"))  # side 2: 1 + 1
    # Earlier schisms (recorded before emptied sides were removed) left 29 more empty sides.
    for n in range(29):
        t.events.append(SideSchismed(conflict=1, side=1, new_side=3 + n, label="Old",
                                     dice=(), character=AURORA))
    t.state = state_of(t.events)
    assert len(conflict(t).sides) == c.MAX_SIDES
    given(t.events).when(c.Schism(seat=AURORA, conflict=1, side=2, dice=(3, 4))).decide()
    given(t.events).when(c.Schism(seat=AURORA, conflict=1, side=2, dice=(4,))).refused(
        "R-SCHISM-1")
    last = c.MAX_SIDES - 1
    for command in (c.Claim(seat=1, conflict=1, side=last), c.AcceptRoll(seat=1, ally=last),
                    c.Schism(seat=1, conflict=1, side=last)):
        assert msgspec.convert(msgspec.to_builtins(command), type(command)) == command


def test_a_stored_schism_of_the_first_shape_removes_no_side() -> None:
    """R-SCHISM-1: a Schism stored before emptied sides were removed is read as removing none,
    so the side numbers of the events after it keep their meaning."""
    payload = {"conflict": 1, "side": 2, "new_side": 3, "label": "x", "dice": [3],
               "character": 1}
    assert upcast("SideSchismed", 1, payload)["removed"] is None


def test_an_alliance_to_a_side_that_disappeared_still_counts_as_a_losing_one() -> None:
    """R-X-RES-2: Aurora was allied to side 2, which disappeared: she still counts as once
    allied to a losing side (never the winner)."""
    t = a_schismed_die()
    t(c.Schism(seat=AURORA, conflict=1, side=2, dice=(3,)))
    assert conflict(t).once_allied[AURORA] == frozenset({0, -1, 2})


# -- item 4: Deadlocks -------------------------------------------------------------------------


def a_tie_of_sixes(aurora_debt: int) -> Table:
    """:func:`a_deadlocked_warehouse`, Aurora having ``aurora_debt`` Justice Debt from earlier
    play: [6] vs [6], each side's die controlled by 1 Debt of its roller."""
    t = a_scene_with_a_conflict(debt={AURORA: {"Justice": aurora_debt}} if aurora_debt else {})
    a_roll(t, AURORA, power("Aurora", 1), die=2, value=6, drive="Justice", stake=1)
    return a_roll(t, BRUTE, power("Brute", 5), die=1, value=6, stake=1)


def test_a_tie_of_sixes_is_not_deadlocked_while_an_ally_could_still_stake() -> None:
    """R-DEAD-1: Aurora still holds Justice Debt below her limit on Event 1: she could stake,
    split a six and roll, so the tie is no Deadlock yet."""
    t = a_tie_of_sixes(aurora_debt=1)
    # Nothing waited at page 1's resolution: the page ended by itself (R-X-DEAD-1).
    assert t.state.page is not None and t.state.page.number == 2
    given(t.events).when(c.DeclareDeadlock(seat=MIA, conflict=1)).refused("R-DEAD-1")
    assert "declare_deadlock" not in waiting_for(t.state).get(MIA, ())


def test_a_tie_of_sixes_no_ally_can_stake_on_is_deadlocked() -> None:
    """R-DEAD-1: neither ally holds Debt it may stake."""
    t = a_tie_of_sixes(aurora_debt=0)
    assert "declare_deadlock" in waiting_for(t.state)[MIA]
    (deadlocked, *_) = given(t.events).when(c.DeclareDeadlock(seat=MIA, conflict=1)).decide()
    assert isinstance(deadlocked, ConflictDeadlocked)
    assert sorted(r.amount for r in deadlocked.debt_returned) == [2, 2]


def test_a_tie_of_sixes_whose_allies_staked_their_limit_is_deadlocked() -> None:
    """R-DEAD-1 / R-STAKE-1: Aurora staked 1 Love (strength 1) on Event 1, her limit there;
    the Love and Justice Debt she still holds cannot go on it (one Drive per Conflict), and
    Brute holds none: nobody can untie it."""
    t = a_scene_with_a_conflict(debt={AURORA: {"Love": 1, "Justice": 2}})
    a_roll(t, AURORA, power("Aurora", 1), die=2, value=6, drive="Love", stake=1)
    a_roll(t, BRUTE, power("Brute", 5), die=1, value=6, stake=1)
    aurora = t.state.characters[AURORA]
    assert (aurora.drive("Love"), aurora.drive("Justice")) == (
        DriveSlot(name="Love", strength=1, debt=1), DriveSlot(name="Justice", strength=3, debt=2))
    assert t.state.page is not None and t.state.page.phase == "resolution"
    assert "declare_deadlock" in waiting_for(t.state)[MIA]
    (deadlocked, *_) = given(t.events).when(c.DeclareDeadlock(seat=MIA, conflict=1)).decide()
    assert isinstance(deadlocked, ConflictDeadlocked)


def test_a_tie_left_unchanged_through_a_whole_page_may_be_declared_deadlocked() -> None:
    """R-X-DEAD-2: Event 1 stands at [1] vs [1]; nobody touches it through page 2, so in page
    3's claiming phase any player may declare it Deadlocked, and the scene can end."""
    t = a_scene_with_a_conflict()
    play_on(t, until=lambda s: s.page is not None and s.page.number == 2)
    given(t.events).when(c.DeclareDeadlock(seat=MIA, conflict=1)).refused("R-DEAD-1")
    play_on(t, until=lambda s: s.page is not None and s.page.number == 3)
    assert "declare_deadlock" in waiting_for(t.state)[MIA]
    given(t.events).when(c.DeclareDeadlock(seat=MIA, conflict=1)).then(
        ConflictDeadlocked(conflict=1, seat=MIA, debt_returned=(), inspirations=())
    )


def test_a_deadlock_asking_who_gets_each_dies_inspiration_is_an_offer_random_play_accepts(
) -> None:
    """R-DEAD-1: a Deadlock asks, die by die, which allied player gets each die's Inspiration,
    so a Conflict of many dice asks many times (seed 7300056 of ``scripts/playtest --scenes 4
    --max-commands 1000`` asked six). Those choices fill one key each and end with the dice:
    the random play's checker never runs out of them, else it calls the board's offer false."""
    t = a_deadlocked_warehouse()
    # Mia allied to Brute's side: its die's Inspiration goes to seat 2 or seat 3.
    t.events.append(CharacterAllied(character=MIA, conflict=1, side=0))
    state = state_of(t.events)
    deadlock = c.DeclareDeadlock(seat=MIA, conflict=1)
    assert "declare_deadlock" in waiting_for(state)[MIA]
    with pytest.raises(ChoiceRequired) as asked:
        EDITION.decide(state, deadlock)
    assert asked.value.field == "inspirations.1"
    assert accepted(state, deadlock, depth=0)


# -- item 5: Exemplars -------------------------------------------------------------------------


def test_a_character_has_one_exemplar_free_and_shares_any_further_one() -> None:
    """R-CHAR-6: Aurora's second Exemplar cannot be another character of her own player's."""
    t = characters_built()
    t.hero(1, "Beacon", AURORA_DRIVES)
    t(c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Justice"))
    given(t.events).when(
        c.LinkExemplar(seat=1, character=AURORA, exemplar=4, drive="Hope")
    ).refused("R-CHAR-6")


def test_a_shared_exemplar_is_linked_once_both_players_asked() -> None:
    """R-CHAR-6 / R-X-CHAR-2: Aurora's second Exemplar, Mia, is created by seat 3: seat 1
    asks, then seat 3 agrees by asking for the same link, and the link exists."""
    t = characters_built()
    t(c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Justice"))
    second = c.LinkExemplar(seat=1, character=AURORA, exemplar=MIA, drive="Hope")
    given(t.events).when(second).then(
        ExemplarRequested(character=AURORA, exemplar=MIA, drive="Hope", seat=1)
    )
    t(second)
    given(t.events).when(second).refused("R-CHAR-6")
    agree = c.LinkExemplar(seat=3, character=AURORA, exemplar=MIA, drive="Hope")
    after = given(t.events).when(agree).then(
        ExemplarLinked(character=AURORA, exemplar=MIA, drive="Hope")
    )
    assert len(after.characters[AURORA].exemplars) == 2 and after.exemplar_requests == ()


def test_a_pending_shared_exemplar_is_on_the_board_and_offered_to_the_other_player() -> None:
    """R-CHAR-6 / R-X-CHAR-2: when seat 1 asks for Mia (seat 3's) as Aurora's second
    Exemplar, the board shows who asked, for which character, Exemplar and Drive, and whose
    agreement it waits for; seat 3 is offered ``link_exemplar``; once seat 3 agrees the request
    is gone and nobody is offered it any more."""
    t = characters_built()
    t(c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Justice"))
    asked = given(t.events).when(
        c.LinkExemplar(seat=1, character=AURORA, exemplar=MIA, drive="Hope")
    ).then(ExemplarRequested(character=AURORA, exemplar=MIA, drive="Hope", seat=1))
    shown = board(asked)
    assert shown.exemplar_requests == (ExemplarRequestView(
        asked_by=1, awaiting=3, character=AURORA, character_name="Aurora", exemplar=MIA,
        exemplar_name="Mia", drive="Hope"),)
    assert "link_exemplar" in shown.waiting_for[3]
    assert "link_exemplar" not in shown.waiting_for.get(1, ())
    assert ("Exemplar asked by seat 1: Mia for Aurora (Hope), waiting for seat 3 to agree"
            in capes_board_text(shown, {}))
    t(c.LinkExemplar(seat=1, character=AURORA, exemplar=MIA, drive="Hope"))
    agreed = given(t.events).when(
        c.LinkExemplar(seat=3, character=AURORA, exemplar=MIA, drive="Hope")
    ).then(ExemplarLinked(character=AURORA, exemplar=MIA, drive="Hope"))
    assert board(agreed).exemplar_requests == ()
    assert all("link_exemplar" not in names for names in waiting_for(agreed).values())


def test_a_request_the_character_no_longer_allows_is_shown_but_not_offered() -> None:
    """R-X-CHAR-2 with R-CHAR-8: Aurora's player asked for Mia through Hope, then changed
    Aurora's Hope to Pride; seat 3's agreement would be refused (R-CHAR-6: no Drive Hope), so
    the board shows the request awaiting nobody and offers seat 3 nothing for it."""
    t = characters_built()
    t(c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Justice"),
      c.LinkExemplar(seat=1, character=AURORA, exemplar=MIA, drive="Hope"))
    drives = {**{k: v for k, v in AURORA_DRIVES.items() if k != "Hope"}, "Pride": 2}
    t(c.EditCharacter(seat=1, character=AURORA, drives=drives))
    after = state_of(t.events)
    (request,) = board(after).exemplar_requests
    assert request.awaiting is None
    assert "link_exemplar" not in waiting_for(after).get(3, ())
    given(t.events).when(
        c.LinkExemplar(seat=3, character=AURORA, exemplar=MIA, drive="Hope")
    ).refused("R-CHAR-6")


def test_only_the_two_players_link_an_exemplar() -> None:
    """R-CHAR-6: the free Exemplar is linked by the character's player; Brute's player
    cannot give Aurora one."""
    t = characters_built()
    with pytest.raises(NotPermitted):
        given(t.events).when(
            c.LinkExemplar(seat=2, character=AURORA, exemplar=BRUTE, drive="Justice")
        ).decide()


# -- item 6: legality before choices -----------------------------------------------------------


def test_a_roll_the_ability_cannot_make_is_refused_before_the_drive_is_asked() -> None:
    """R-ABIL-2: Aurora's power rated 1 cannot roll a die showing 5; she is not first asked
    which of her five Drives takes the Debt (R-ABIL-1)."""
    t = a_scene_with_a_conflict()
    raised(t, 1, 2, 5)
    start_turn(t, AURORA)
    error = given(t.events).when(
        c.RollDie(seat=AURORA, ability=power("Aurora", 1), conflict=1, die=2)
    ).refused("R-ABIL-2")
    assert not isinstance(error, ChoiceRequired)


def test_a_stake_on_a_side_not_allied_is_refused_before_the_drive_is_asked() -> None:
    """R-STAKE-2: after her roll allied Aurora to "For", a stake on "Against" is refused, not
    answered with "which Drive?" though two of her Drives hold Debt."""
    t = a_scene_with_a_conflict(debt={AURORA: {"Hope": 1}})
    a_roll(t, AURORA, power("Aurora", 1), die=1, value=4, drive="Justice", end=False)
    error = given(t.events).when(
        c.StakeDebt(seat=AURORA, conflict=1, die=2)
    ).refused("R-STAKE-2")
    assert not isinstance(error, ChoiceRequired)


def test_an_inspiration_the_ability_cannot_raise_is_refused_before_the_drive_is_asked() -> None:
    """R-ABIL-2: a power rated 1 cannot raise an Inspiration of 4."""
    from play_helpers import a_turn_with_an_inspiration, inspiration_of

    t = a_turn_with_an_inspiration(4)
    error = given(t.events).when(
        c.RaiseInspiration(seat=BRUTE, ability=power("Brute", 1),
                           inspiration=inspiration_of(t, BRUTE))
    ).refused("R-ABIL-2")
    assert not isinstance(error, ChoiceRequired)


# -- item 7: changing a character between scenes -----------------------------------------------

NEW_POWERS = c.Freeform(abilities=tuple(
    [c.AbilitySpec(name=f"Nova power {i}", category="power", rating=i) for i in range(1, 4)]
    + [c.AbilitySpec(name=f"Nova style {i}", category="style", rating=i) for i in range(1, 4)]
    + [c.AbilitySpec(name=f"Nova attitude {i}", category="attitude", rating=i)
       for i in range(1, 4)]
))


def test_a_player_changes_their_character_between_scenes() -> None:
    """R-CHAR-8: seat 1 renames Aurora, rebuilds her abilities and moves Drive strengths; her
    Debt stays where it was."""
    t = characters_built()
    earlier_debt(t, AURORA, "Justice", 2)
    drives = {"Justice": 2, "Hope": 2, "Truth": 2, "Love": 2, "Duty": 1}
    edit = c.EditCharacter(seat=1, character=AURORA, name="Nova", build=NEW_POWERS,
                           drives=drives)  # type: ignore[arg-type]
    after = given(t.events).when(edit).then(
        CharacterEdited(
            character=AURORA, name="Nova",
            abilities=tuple(Ability(name=a.name, category=a.category, rating=a.rating,
                                    super=a.category == "power")
                            for a in NEW_POWERS.abilities),
            drives=(DriveSlot(name="Justice", strength=2, debt=2),
                    *(DriveSlot(name=d, strength=s)  # type: ignore[arg-type]
                      for d, s in list(drives.items())[1:])),
        )
    )
    assert after.characters[AURORA].name == "Nova"


def test_a_character_is_changed_only_as_creation_allows_and_keeps_its_debt() -> None:
    """R-CHAR-8 / R-CHAR-2 / R-CHAR-5: the result must be a legal character; a Drive holding
    Debt cannot be removed (nor a Debt stack, by becoming differentiated)."""
    t = characters_built()
    earlier_debt(t, AURORA, "Justice", 1)
    earlier_debt(t, BRUTE, UNDIFFERENTIATED, 1)
    bad = c.Freeform(abilities=NEW_POWERS.abilities[:-1])
    given(t.events).when(c.EditCharacter(seat=1, character=AURORA, build=bad)).refused(
        "R-CHAR-2")
    given(t.events).when(
        c.EditCharacter(seat=1, character=AURORA, drives={"Justice": 9})  # type: ignore[dict-item]
    ).refused("R-CHAR-5")
    without_justice = {"Fear": 3, "Hope": 2, "Truth": 2, "Love": 1, "Duty": 1}
    given(t.events).when(
        c.EditCharacter(seat=1, character=AURORA, drives=without_justice)  # type: ignore[arg-type]
    ).refused("R-CHAR-8")
    given(t.events).when(
        c.EditCharacter(seat=2, character=BRUTE, drives=AURORA_DRIVES)  # type: ignore[arg-type]
    ).refused("R-CHAR-8")


def test_a_character_in_the_current_scene_is_not_changed() -> None:
    """R-CHAR-8 / R-X-CHAR-3: never while the character is in the current scene; only by its
    creator."""
    t = a_scene()
    given(t.events).when(c.EditCharacter(seat=1, character=AURORA, name="Nova")).refused(
        "R-CHAR-8")
    with pytest.raises(NotPermitted):
        given(t.events).when(c.EditCharacter(seat=2, character=AURORA, name="Nova")).decide()


def test_a_characters_exemplar_drives_stay() -> None:
    """R-CHAR-8 / R-X-CHAR-3 / R-CHAR-6: an edit keeps the Drives its Exemplars are linked
    through."""
    t = characters_built()
    t(c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Justice"))
    given(t.events).when(
        c.EditCharacter(seat=1, character=AURORA, drives="undifferentiated")
    ).refused("R-CHAR-6")


def test_a_character_left_out_of_the_current_scene_may_be_changed() -> None:
    """R-CHAR-8 / R-X-CHAR-3: during a scene, a character not in it may be changed by its
    creator; it may then be chosen on a later page as it now is."""
    t = a_scene()
    t.hero(1, "Beacon", AURORA_DRIVES)
    (edited,) = given(t.events).when(
        c.EditCharacter(seat=1, character=4, name="Beacon II")
    ).decide()
    assert isinstance(edited, CharacterEdited) and edited.name == "Beacon II"
    given(t.events).when(c.EditCharacter(seat=1, character=4, name="Brute")).refused(
        "R-X-CHAR-1")
