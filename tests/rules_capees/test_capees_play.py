"""Pages, claims, Overdrawn, actions, rolls, reactions, stakes and splits
(C-PAGE-1, C-CLAIM-*, C-DEBT-*, C-TURN-*, C-ROLL-*, C-ABIL-3..6, C-REACT-*, C-STAKE-*,
C-SPLIT-*, C-COMP-3, C-COMP-4), W-3 to W-7."""

from __future__ import annotations

from capees_helpers import (
    ALICE,
    CAPS,
    EDITOR,
    JOE,
    ZIPS,
    CTable,
    act,
    all_pass,
    asked_seat,
    drive,
    earlier_debt,
    first_scene,
    set_dice,
)

from domain.capees import commands as c
from domain.capees import events as e
from domain.capees.actions import usable
from domain.capees.moves import with_choice
from domain.capees.table import control, side_of
from domain.errors import ChoiceRequired


def _dice(t: CTable, cid: int) -> list[list[int]]:
    return [[d.value for d in s.dice] for s in t.state.complications[cid].sides]


def test_w3_control_and_keeping_a_roll() -> None:
    """W-3: C-COMP-3, C-ABIL-6, C-ROLL-2, C-REACT-1."""
    t = first_scene()
    police = set_dice(t, "Police 2", hero=1, opponent=5)
    hostages = set_dice(t, "Hostages 2", hero=4, opponent=2)
    state = t.state
    assert control(state.complications[police]) == 1
    assert control(state.complications[hostages]) == 0
    act(t, "Chief Mannelli")
    t.refused(c.RollAbility(seat=EDITOR, ability="Chief Mannelli skill 3", complication=police,
                            die=2), "C-ABIL-6")
    t.roll(5)(c.RollAbility(seat=EDITOR, ability="Chief Mannelli attitude 4",
                            complication=hostages, die=1), c.TurnBack(seat=EDITOR))
    assert _dice(t, hostages) == [[4], [2]] and control(t.state.complications[hostages]) == 0
    assert asked_seat(t) is None  # nobody reacts to a roll turned back
    t(c.EndAction(seat=EDITOR), c.StartAction(seat=ZIPS))
    t.roll(6)(c.RollAbility(seat=ZIPS, ability="Zip power 1", complication=police, die=1,
                            drive="Hope"), c.KeepRoll(seat=ZIPS))
    assert _dice(t, police) == [[6], [5]] and control(t.state.complications[police]) == 0
    # C-REACT-1: no Trope is rated 6, so nobody can react and the round closes at once.
    assert asked_seat(t) is None
    assert any(isinstance(x, e.ReactionsClosed) for x in t.events[-8:])
    t.refused(c.RollAbility(seat=ZIPS, ability="Super-speed", complication=police, die=1,
                            drive="Hope"), "C-TURN-2")


def test_w4_claims_and_an_overdrawn_driver() -> None:
    """W-4: C-CLAIM-1..3, C-DEBT-1, C-DEBT-2, C-REACT-1, C-PAGE-1."""
    t = first_scene()
    # Page 1 played out with nothing done; page 2 opens on the position W-4 gives.
    for x in list(t.state.complications):
        t.given(e.ComplicationDiscarded(complication=x))
    hostages = set_dice(t, "Hostages", hero=4, opponent=2)
    police = set_dice(t, "Police", hero=6, opponent=5)
    robbery = set_dice(t, "Robbery", hero=4, opponent=6)
    earlier_debt(t, t["the driver"], "Need", 2)
    t.given(e.PageEnded(page=1), e.PageStarted(page=2, seat=EDITOR))
    t.refused(c.Claim(seat=EDITOR, character=t["Chief Mannelli"], complication=police),
              "C-CLAIM-1")
    t(c.PassClaim(seat=EDITOR), c.Claim(seat=ZIPS, character=t["Zip"], complication=hostages),
      c.PassClaim(seat=ALICE),
      c.Claim(seat=CAPS, character=t["Captain Liberty"], complication=hostages),
      c.Claim(seat=JOE, character=t["the robbers"], complication=robbery))
    scene = t.state.scene
    assert scene is not None
    assert scene.claim_on(hostages).character == t["Captain Liberty"]  # type: ignore[union-attr]
    assert scene.claim_of(t["Zip"]) is None
    t(c.PassClaim(seat=EDITOR))
    t.refused(c.Claim(seat=ZIPS, character=t["Zip"], complication=hostages), "C-CLAIM-2")
    t(c.PassClaim(seat=ZIPS), c.PassClaim(seat=ALICE))
    # Captain Liberty and the robbers hold claims: their seats have nothing left to claim.
    scene = t.state.scene
    assert scene is not None and scene.step == "overdrawn"
    assert scene.overdrawn == ((t["the driver"], "Need"),)  # C-DEBT-1
    t.roll(3)(c.RollOverdrawn(seat=JOE, character=t["the driver"]))
    assert _dice(t, robbery) == [[4], [3]] and control(t.state.complications[robbery]) == 0
    assert t.state.scene is not None and t.state.scene.step == "actions"
    assert asked_seat(t) is None  # C-REACT-1: nobody reacts to an Overdrawn roll


def test_a_displaced_claimant_may_claim_again() -> None:
    """C-CLAIM-3: Zip, displaced from Hostages, claims Police in the next round; the round
    goes on until all pass in a row."""
    t = first_scene()
    for x in list(t.state.complications):
        t.given(e.ComplicationDiscarded(complication=x))
    hostages = set_dice(t, "Hostages", hero=4, opponent=2)
    police = set_dice(t, "Police", hero=6, opponent=5)
    t.given(e.PageEnded(page=1), e.PageStarted(page=2, seat=EDITOR))
    t(c.PassClaim(seat=EDITOR), c.Claim(seat=ZIPS, character=t["Zip"], complication=hostages),
      c.PassClaim(seat=ALICE),
      c.Claim(seat=CAPS, character=t["Captain Liberty"], complication=hostages))
    # Joe's robbers (Opponent) have nothing to claim; the Editor's Chief neither.
    t(c.Claim(seat=ZIPS, character=t["Zip"], complication=police))
    scene = t.state.scene
    assert scene is not None and scene.claim_on(police).character == t["Zip"]  # type: ignore[union-attr]
    # Nobody has a legal claim left: the server passes for all (C-SRV-3) and the page goes on.
    assert scene.step == "actions"


def test_an_overdrawn_roll_never_raises_its_die() -> None:
    """C-DEBT-2: a higher roll changes nothing."""
    t = first_scene()
    for x in list(t.state.complications):
        t.given(e.ComplicationDiscarded(complication=x))
    robbery = set_dice(t, "Robbery", hero=4, opponent=6)
    earlier_debt(t, t["the driver"], "Need", 2)
    t.given(e.PageEnded(page=1), e.PageStarted(page=2, seat=EDITOR))
    t(c.PassClaim(seat=EDITOR))
    while t.state.scene is not None and t.state.scene.step == "claims":
        t(c.PassClaim(seat=t.state.scene.cursor))
    t.roll(6)(c.RollOverdrawn(seat=JOE, character=t["the driver"]))
    assert _dice(t, robbery) == [[4], [6]]


def _overdrawn_step(t: CTable) -> None:
    """Page 2 begun and every claim passed: the table is at the Overdrawn rolls."""
    t.given(e.PageEnded(page=1), e.PageStarted(page=2, seat=EDITOR))
    while t.state.scene is not None and t.state.scene.step == "claims":
        t(c.PassClaim(seat=t.state.scene.cursor))


def _two_overdrawn_of_joes() -> tuple[CTable, int, int]:
    """Joe narrates the robbers and the driver, both Overdrawn in Need (strength 1, Debt 2);
    the Opponent's dice are Robbery's red 6 and Police's red 3."""
    t = first_scene()
    for x in list(t.state.complications):
        t.given(e.ComplicationDiscarded(complication=x))
    robbery = set_dice(t, "Robbery", hero=4, opponent=6)
    police = set_dice(t, "Police", hero=2, opponent=3)
    earlier_debt(t, t["the driver"], "Need", 2)
    earlier_debt(t, t["the robbers"], "Need", 2)
    return t, robbery, police


def test_a_player_with_several_overdrawn_characters_rolls_for_them_in_the_order_they_choose(
) -> None:
    """C-DEBT-2, C-X-DEBT-1: given Joe's robbers and driver both Overdrawn, when Joe rolls for
    the driver first, then the roll is his to make: the driver takes the red 6 down to 2, and
    the robbers then roll the highest die left, Police's red 3."""
    t, robbery, police = _two_overdrawn_of_joes()
    _overdrawn_step(t)
    t.roll(2)(c.RollOverdrawn(seat=JOE, character=t["the driver"]))
    assert _dice(t, robbery) == [[4], [2]]
    t.roll(1)(c.RollOverdrawn(seat=JOE, character=t["the robbers"]))
    assert _dice(t, police) == [[2], [1]]
    scene = t.state.scene
    assert scene is not None and scene.step == "actions"


def test_a_characters_overdrawn_rolls_come_one_after_another() -> None:
    """C-X-DEBT-1, C-TABLE-2: given the robbers Overdrawn in Need and Greed and the driver in
    Need, when Joe has rolled the robbers' Greed, then the driver must wait for the robbers'
    Need."""
    t, robbery, _ = _two_overdrawn_of_joes()
    earlier_debt(t, t["the robbers"], "Greed", 3)
    _overdrawn_step(t)
    t.roll(5)(c.RollOverdrawn(seat=JOE, character=t["the robbers"], drive="Greed"))
    t.refused(c.RollOverdrawn(seat=JOE, character=t["the driver"]), "C-TABLE-2")
    t.roll(5, 6)(c.RollOverdrawn(seat=JOE, character=t["the robbers"]),
                 c.RollOverdrawn(seat=JOE, character=t["the driver"]))
    assert _dice(t, robbery) == [[4], [5]]


def test_overdrawn_rolls_go_in_seat_order_from_the_editor() -> None:
    """C-DEBT-2: given the Editor's Chief and Joe's driver both Overdrawn, when Joe rolls
    first, then he is refused: the Editor's seat rolls first."""
    t, robbery, _ = _two_overdrawn_of_joes()
    earlier_debt(t, t["Chief Mannelli"], "Need", 2)
    _overdrawn_step(t)
    t.refused(c.RollOverdrawn(seat=JOE, character=t["the driver"]), "C-DEBT-2")
    t.refused(c.RollOverdrawn(seat=EDITOR, character=t["Chief Mannelli"], drive="Greed"),
              "C-DEBT-2")  # Greed is not Overdrawn
    t.roll(6)(c.RollOverdrawn(seat=EDITOR, character=t["Chief Mannelli"]))
    assert _dice(t, robbery) == [[4], [6]]


def _w5() -> tuple[CTable, int]:
    t = first_scene()
    getaway = set_dice(t, "Getaway", hero=2, opponent=4)
    earlier_debt(t, t["Zip"], "Hope", 1)
    act(t, "Zip")
    return t, getaway


def test_w5_zips_action_with_two_reactions() -> None:
    """W-5: C-STAKE-1, C-STAKE-2, C-STAKE-3, C-STAKE-4, C-ROLL-1, C-ABIL-3, C-ABIL-4,
    C-ABIL-5, C-ABIL-6, C-REACT-1, C-REACT-2, C-REACT-3 (Zip stakes his new Hope Debt just
    before rolling Desperate Effort), C-TURN-2."""
    t, getaway = _w5()
    zip_ = t["Zip"]
    t(c.Stake(seat=ZIPS, complication=getaway, drive="Hope"))
    t.refused(c.RollAbility(seat=ZIPS, ability="Super-speed", complication=getaway, die=2,
                            drive="Duty"), "C-ABIL-6")  # the red 4 is above 3
    t.roll(1)(c.RollAbility(seat=ZIPS, ability="Super-speed", complication=getaway, die=1,
                            drive="Duty"), c.KeepRoll(seat=ZIPS))
    assert asked_seat(t) == ZIPS
    t.roll(3)(c.React(seat=ZIPS, character=zip_, ability="Mundane Tasks done Super-fast",
                      drive="Hope"), c.KeepRoll(seat=ZIPS))
    assert asked_seat(t) == ZIPS  # C-REACT-2: a new round at the reactor
    t.roll(5)(c.React(seat=ZIPS, character=zip_, ability="Desperate Effort", stake=1,
                      stake_drive="Hope"), c.KeepRoll(seat=ZIPS))
    all_pass(t)
    assert _dice(t, getaway) == [[5], [4]] and control(t.state.complications[getaway]) == 0
    assert drive(t, zip_, "Duty") == (2, 1) and drive(t, zip_, "Hope") == (2, 0)
    sides = t.state.complications[getaway].sides
    assert [(s.character, s.drive, s.amount) for s in sides[0].stakes] == [(zip_, "Hope", 2)]
    assert "Desperate Effort" in t.state.characters[zip_].blocked
    earlier_debt(t, zip_, "Hope", 1)
    t.refused(c.Stake(seat=ZIPS, complication=getaway, drive="Hope"), "C-STAKE-2")  # a third
    t.refused(c.Stake(seat=ZIPS, complication=getaway, drive="Duty"), "C-STAKE-2")
    t.refused(c.RollAbility(seat=ZIPS, ability="Super-speed", complication=getaway, die=1,
                            drive="Duty"), "C-TURN-2")
    who = t.state.characters[zip_]
    for name in ("Super-speed", "Mundane Tasks done Super-fast", "Desperate Effort"):
        ability = who.ability(name)
        assert ability is not None and not usable(who, ability), name  # C-ABIL-4


def test_stakes_never_exceed_the_drive_and_come_from_one_drive() -> None:
    """C-STAKE-2: a third Hope stake is refused (strength 2); a second Drive too."""
    t, getaway = _w5()
    zip_ = t["Zip"]
    earlier_debt(t, zip_, "Hope", 2)
    earlier_debt(t, zip_, "Duty", 1)
    t(c.Stake(seat=ZIPS, complication=getaway, amount=2, drive="Hope"))
    t.refused(c.Stake(seat=ZIPS, complication=getaway, drive="Hope"), "C-STAKE-2")
    t.refused(c.Stake(seat=ZIPS, complication=getaway, drive="Duty"), "C-STAKE-2")


def test_a_stake_moves_only_debt_the_drive_holds() -> None:
    """C-STAKE-1."""
    t, getaway = _w5()
    t.refused(c.Stake(seat=ZIPS, complication=getaway, amount=2, drive="Hope"), "C-STAKE-1")


def _desperate_effort_ready() -> tuple[CTable, int]:
    """W-5 up to Zip's second reaction: Zip holds 1 Hope and 1 Duty Debt, none staked on
    Robbery, and it is his chance to react."""
    t, getaway = _w5()
    t(c.Stake(seat=ZIPS, complication=getaway, drive="Hope"))
    t.roll(1)(c.RollAbility(seat=ZIPS, ability="Super-speed", complication=getaway, die=1,
                            drive="Duty"), c.KeepRoll(seat=ZIPS))
    t.roll(3)(c.React(seat=ZIPS, character=t["Zip"], ability="Mundane Tasks done Super-fast",
                      drive="Hope"), c.KeepRoll(seat=ZIPS))
    return t, t.complication("Robbery")


def test_a_reacting_stake_asks_for_its_own_drive_and_following_the_answer_is_accepted() -> None:
    """C-REACT-3, C-STAKE-1: a stake before a reaction roll that leaves its Drive out is asked
    for the stake's Drive (``stake_drive``), not for the Drive of the super ability's Debt
    (``drive``); filling in what was asked is accepted."""
    t, robbery = _desperate_effort_ready()
    react = c.React(seat=ZIPS, character=t["Zip"], ability="Desperate Effort", stake=1,
                    stake_on=robbery)
    asked = t.refused(react, "C-STAKE-1")
    assert isinstance(asked, ChoiceRequired)
    assert asked.field == "stake_drive" and set(asked.choices) == {"Hope", "Duty"}
    t.roll(5)(with_choice(react, asked.field, "Duty"), c.KeepRoll(seat=ZIPS))
    stakes = t.state.complications[robbery].sides[0].stakes
    assert [(s.character, s.drive, s.amount) for s in stakes] == [(t["Zip"], "Duty", 1)]


def test_a_reaction_the_rules_refuse_is_refused_before_its_stakes_drive_is_asked() -> None:
    """C-ABIL-5, C-ABIL-4 before C-STAKE-1's question: choices come last (docs/rules.md), so a
    reaction with an ability that cannot serve it is refused for that, not asked which Drive
    stakes first and refused after the answer."""
    t, robbery = _desperate_effort_ready()
    for ability, rule in (("Super-speed", "C-ABIL-5"),
                          ("Mundane Tasks done Super-fast", "C-ABIL-4")):
        error = t.refused(c.React(seat=ZIPS, character=t["Zip"], ability=ability, stake=1,
                                  stake_on=robbery), rule)
        assert not isinstance(error, ChoiceRequired)


def test_a_stake_no_drive_can_make_is_refused_not_asked_about() -> None:
    """C-STAKE-1, C-STAKE-2, C-STAKE-3: with no Drive holding the Debt, or none strong enough,
    or a side that Controls, the stake is refused for that rule; the player is asked to choose
    a Drive only for a stake the rules allow."""
    t, robbery = _desperate_effort_ready()
    for amount in (2, 45):  # Zip holds 1 Hope and 1 Duty Debt
        error = t.refused(c.React(seat=ZIPS, character=t["Zip"], ability="Desperate Effort",
                                  stake=amount, stake_on=robbery), "C-STAKE-1")
        assert not isinstance(error, ChoiceRequired)
    zip_ = t["Zip"]
    earlier_debt(t, zip_, "Hope", 2)
    earlier_debt(t, zip_, "Duty", 2)  # Hope 3 and Duty 3 held, both of strength 2
    error = t.refused(c.React(seat=ZIPS, character=zip_, ability="Desperate Effort", stake=3,
                              stake_on=robbery), "C-STAKE-2")
    assert not isinstance(error, ChoiceRequired)
    police = set_dice(t, "Police 2", hero=6, opponent=5)  # the Hero side Controls
    error = t.refused(c.React(seat=ZIPS, character=zip_, ability="Desperate Effort", stake=1,
                              stake_on=police), "C-STAKE-3")
    assert not isinstance(error, ChoiceRequired)


def test_stakes_only_in_your_own_action() -> None:
    """C-STAKE-4: not in another's action."""
    t, getaway = _w5()
    earlier_debt(t, t["Night Maiden"], "Duty", 1)
    t.refused(c.Stake(seat=ALICE, complication=getaway, drive="Duty"), "C-STAKE-4")


def test_abilities_once_a_page_and_tropes_only_in_reactions() -> None:
    """C-ABIL-4, C-ABIL-5."""
    t, getaway = _w5()
    t.refused(c.RollAbility(seat=ZIPS, ability="Desperate Effort", complication=getaway,
                            die=1), "C-ABIL-5")
    t.roll(3)(c.RollAbility(seat=ZIPS, ability="Zip attitude 4", complication=getaway, die=1),
              c.KeepRoll(seat=ZIPS))
    assert "Zip attitude 4" in t.state.characters[t["Zip"]].blocked  # C-ABIL-3
    t.refused(c.React(seat=ZIPS, character=t["Zip"], ability="Zip attitude 3"), "C-ABIL-5")
    t.roll(2)(c.React(seat=ZIPS, character=t["Zip"], ability="Zip trope 3"),
              c.KeepRoll(seat=ZIPS))
    t.refused(c.React(seat=ZIPS, character=t["Zip"], ability="Zip trope 3"), "C-ABIL-4")


def test_a_super_ability_puts_debt_on_a_chosen_drive() -> None:
    """C-ABIL-3: the player picks the Drive."""
    t, getaway = _w5()
    error = t.refused(c.RollAbility(seat=ZIPS, ability="Super-speed", complication=getaway,
                                    die=1), "C-ABIL-3")
    assert "Hope" in error.choices  # type: ignore[attr-defined]


def test_a_blocking_ability_takes_no_drive() -> None:
    """C-ABIL-3: a blocking ability is Blocked and puts no Debt on any Drive, so a ``drive``
    sent with it is refused, naming the field and the ability, not dropped in silence: an
    Attitude in an action, a blocking Trope in a reaction."""
    t, getaway = _w5()
    zip_ = t["Zip"]
    error = t.refused(c.RollAbility(seat=ZIPS, ability="Zip attitude 4", complication=getaway,
                                    die=1, drive="Hope"), "C-ABIL-3")
    assert "drive" in error.reason and "Zip attitude 4" in error.reason, error.reason
    t.roll(3)(c.RollAbility(seat=ZIPS, ability="Zip attitude 4", complication=getaway, die=1),
              c.KeepRoll(seat=ZIPS))
    error = t.refused(c.React(seat=ZIPS, character=zip_, ability="Zip trope 3", drive="Hope"),
                      "C-ABIL-3")
    assert "drive" in error.reason and "Zip trope 3" in error.reason, error.reason
    t.roll(2)(c.React(seat=ZIPS, character=zip_, ability="Zip trope 3"))
    assert drive(t, zip_, "Hope") == (2, 1)


def test_a_reaction_says_where_and_from_which_drive_it_stakes_only_with_a_stake() -> None:
    """C-REACT-3: ``stake_on`` and ``stake_drive`` say where the Debt staked just before a
    reaction roll goes and which Drive it comes from; with ``stake`` 0 nothing is staked, so
    they are refused, each named, not ignored."""
    t, robbery = _desperate_effort_ready()
    zip_ = t["Zip"]
    for fields in ({"stake_on": robbery}, {"stake_drive": "Hope"},
                   {"stake_on": robbery, "stake_drive": "Hope"}):
        error = t.refused(c.React(seat=ZIPS, character=zip_, ability="Desperate Effort",
                                  **fields), "C-REACT-3")  # type: ignore[arg-type]
        assert all(name in error.reason for name in fields), error.reason
    t.roll(5)(c.React(seat=ZIPS, character=zip_, ability="Desperate Effort"))


def test_a_splits_drive_comes_only_with_new_stakes() -> None:
    """C-SPLIT-4: ``drive`` names the Drive of the Debt staked just before a split; a split
    that stakes nothing (``stake`` 0) and names one is refused, naming it."""
    t, getaway = _w5()
    earlier_debt(t, t["Zip"], "Hope", 1)
    t(c.Stake(seat=ZIPS, complication=getaway, amount=2, drive="Hope"))
    t.given(e.DieRolled(complication=getaway, die=1, before=2, rolled=5, character=t["Zip"],
                        seat=ZIPS), e.RollTurnedBack(complication=getaway, die=1, value=5))
    error = t.refused(c.Split(seat=ZIPS, complication=getaway, die=1, into=2, drive="Hope"),
                      "C-SPLIT-4")
    assert "drive" in error.reason and "stake" in error.reason, error.reason
    t(c.Split(seat=ZIPS, complication=getaway, die=1, into=2))
    assert _dice(t, getaway) == [[3, 2], [4]]


def test_w6a_splitting_on_ones_own_side() -> None:
    """W-6 (a): C-SPLIT-1, C-SPLIT-2: 5 into 2 is 3+2; into 3 is refused; one split."""
    t, getaway = _w5()
    earlier_debt(t, t["Zip"], "Hope", 1)
    t(c.Stake(seat=ZIPS, complication=getaway, amount=2, drive="Hope"))
    t.given(e.DieRolled(complication=getaway, die=1, before=2, rolled=5, character=t["Zip"],
                        seat=ZIPS), e.RollTurnedBack(complication=getaway, die=1, value=5))
    t.refused(c.Split(seat=ZIPS, complication=getaway, die=1, into=3), "C-SPLIT-2")
    t(c.Split(seat=ZIPS, complication=getaway, die=1, into=2))
    assert _dice(t, getaway) == [[3, 2], [4]] and control(t.state.complications[getaway]) == 0
    t.refused(c.Split(seat=ZIPS, complication=getaway, die=1, into=2), "C-SPLIT-1")


def _w6b() -> tuple[CTable, int]:
    t = first_scene()
    police = set_dice(t, "Police", hero=6, opponent=5)
    earlier_debt(t, t["Night Maiden"], "Duty", 2)
    act(t, "Night Maiden")
    return t, police


def test_w6b_splitting_off_a_new_side() -> None:
    """W-6 (b): C-STAKE-3, C-SPLIT-3, C-SPLIT-4, C-COMP-3, C-COMP-4."""
    t, police = _w6b()
    nm = t["Night Maiden"]
    t.refused(c.Stake(seat=ALICE, complication=police, drive="Duty"), "C-STAKE-3")
    t.refused(c.Split(seat=ALICE, complication=police, die=1, into=3, move=3, stake=2,
                      drive="Duty"), "C-SPLIT-3")
    t(c.Split(seat=ALICE, complication=police, die=1, into=3, move=2, stake=2, drive="Duty"))
    x = t.state.complications[police]
    assert [s.total for s in x.sides] == [2, 5, 4]
    assert [s.faction for s in x.sides] == ["hero", "opponent", "hero"]
    assert x.sides[2].owner == nm and x.sides[2].staked == 2 and x.sides[0].staked == 0
    assert control(x) == 1
    assert side_of(t.state, x, nm) == 2 and side_of(t.state, x, t["Captain Liberty"]) == 0


def test_a_split_needs_stakes_for_its_dice() -> None:
    """C-SPLIT-2: a new side of 2 dice needs 2 stakes."""
    t, police = _w6b()
    t.refused(c.Split(seat=ALICE, complication=police, die=1, into=3, move=2, stake=1,
                      drive="Duty"), "C-SPLIT-2")


def test_w7_the_second_turn_and_a_reaction_turned_back() -> None:
    """W-7: C-TURN-1, C-REACT-1, C-REACT-2, C-ABIL-3."""
    t, police = _w6b()
    t(c.Split(seat=ALICE, complication=police, die=1, into=3, move=2, stake=2, drive="Duty"),
      c.EndAction(seat=ALICE))
    t(c.StartAction(seat=CAPS), c.EndAction(seat=CAPS))
    t(c.StartAction(seat=JOE, character=t["the robbers"]), c.EndAction(seat=JOE),
      c.StartAction(seat=JOE), c.EndAction(seat=JOE))
    scene = t.state.scene
    assert scene is not None and scene.turn == 2
    t.refused(c.StartAction(seat=ZIPS), "C-TURN-1")
    t(c.StartAction(seat=EDITOR))
    t.roll(2)(c.RollAbility(seat=EDITOR, ability="Angry", complication=police, die=1),
              c.KeepRoll(seat=EDITOR))
    # The round starts at the Editor; Alice reacts when her chance comes.
    while asked_seat(t) != ALICE:
        t(c.PassReaction(seat=asked_seat(t)))  # type: ignore[arg-type]
    t.roll(5)(c.React(seat=ALICE, character=t["Night Maiden"], ability="Glare venomously",
                      drive="Love"), c.TurnBack(seat=ALICE))
    assert "Glare venomously" in t.state.characters[t["Night Maiden"]].used  # C-ABIL-4
    all_pass(t)
    t(c.EndAction(seat=EDITOR), c.StartAction(seat=CAPS))
    t.roll(3)(c.RollAbility(seat=CAPS, ability="Team-builder", complication=police, die=1),
              c.KeepRoll(seat=CAPS))
    all_pass(t)
    t(c.EndAction(seat=CAPS))
    assert [s.total for s in t.state.complications[police].sides] == [3, 5, 4]
    assert control(t.state.complications[police]) == 1
    assert "Angry" in t.state.characters[t["Chief Mannelli"]].blocked
    assert "Team-builder" in t.state.characters[t["Captain Liberty"]].blocked
    scene = t.state.scene
    assert scene is not None and scene.step in ("resolution", "claims")  # no turn 3
    assert not any(isinstance(x, e.TurnBegan) and x.turn == 3 for x in t.events)


def test_the_editor_stakes_for_an_absent_opponent() -> None:
    """C-STAKE-5, C-X-STAKE-1: in the Chief's action, the arch-villain's Despair goes under
    the Opponent side; an absent Exemplar (Supreme) never stakes."""
    t = first_scene()
    hostages = set_dice(t, "Hostages", hero=4, opponent=2)
    earlier_debt(t, t["the arch-villain"], "Despair", 1)
    act(t, "Chief Mannelli")
    t.refused(c.Stake(seat=EDITOR, complication=hostages, character=t["Supreme"]),
              "C-STAKE-5")
    t(c.Stake(seat=EDITOR, complication=hostages, character=t["the arch-villain"],
              drive="Despair"))
    sides = t.state.complications[hostages].sides
    assert sides[1].stakes[0].character == t["the arch-villain"]
    assert isinstance(t.events[-1], e.DebtStaked)


def _next_page(t: CTable) -> None:
    """The page ends and the next begins; every claim passed, to the action turns."""
    scene = t.state.scene
    assert scene is not None
    t.given(e.PageEnded(page=scene.page), e.PageStarted(page=scene.page + 1, seat=EDITOR))
    while t.state.scene is not None and t.state.scene.step == "claims":
        t(c.PassClaim(seat=t.state.scene.cursor))


def test_a_drive_at_its_strength_is_not_overdrawn() -> None:
    """C-DEBT-1: given the driver's Need of strength 1 holds exactly 1 Debt, when the claims
    are over, then nobody rolls and the action turns begin."""
    t = first_scene()
    earlier_debt(t, t["the driver"], "Need", 1)
    _next_page(t)
    scene = t.state.scene
    assert scene is not None and scene.step == "actions" and scene.overdrawn == ()


def test_an_overdrawn_roll_only_lowers_and_only_rolls_a_highest_die() -> None:
    """C-DEBT-2: given the driver Overdrawn and the Opponent's dice a red 6 on Robbery and a
    red 3 on Police, when Joe picks Police's 3, then he is refused; and given the red 6 down
    to 3, when the driver rolls a 5, then the die stays at 3."""
    t, robbery, police = _two_overdrawn_of_joes()
    _overdrawn_step(t)
    t.refused(c.RollOverdrawn(seat=JOE, character=t["the driver"], die=(police, 2)),
              "C-DEBT-2")
    t.roll(3, 5)(c.RollOverdrawn(seat=JOE, character=t["the driver"]),
                 c.RollOverdrawn(seat=JOE, character=t["the robbers"], die=(robbery, 2)))
    assert _dice(t, robbery) == [[4], [3]] and _dice(t, police) == [[2], [3]]


def test_a_blocked_ability_stays_blocked_in_the_next_page() -> None:
    """C-ABIL-3, C-ABIL-4: given Zip used his Attitude rated 4 (blocking) in page 1, when he
    tries it again in page 2, then he is refused, while his Attitude rated 3, unused, rolls."""
    t, getaway = _w5()
    t.roll(3)(c.RollAbility(seat=ZIPS, ability="Zip attitude 4", complication=getaway, die=1),
              c.KeepRoll(seat=ZIPS))
    all_pass(t)
    t(c.EndAction(seat=ZIPS))
    _next_page(t)
    act(t, "Zip")
    t.refused(c.RollAbility(seat=ZIPS, ability="Zip attitude 4", complication=getaway, die=1),
              "C-ABIL-4")
    t.roll(1)(c.RollAbility(seat=ZIPS, ability="Zip attitude 3", complication=getaway, die=1))


def test_reactions_go_round_and_a_reaction_turned_back_passes_the_chance_on() -> None:
    """C-REACT-2: given Zip's kept roll of 1, when Alice reacts before Zip has had his chance,
    then she is refused; when Zip reacts and turns his roll back, then the chance goes on to
    Alice, not back to Zip."""
    t, getaway = _w5()
    t.roll(1)(c.RollAbility(seat=ZIPS, ability="Super-speed", complication=getaway, die=1,
                            drive="Duty"), c.KeepRoll(seat=ZIPS))
    t.refused(c.React(seat=ALICE, character=t["Night Maiden"], ability="Night Maiden trope 1"),
              "C-REACT-2")
    t.roll(3)(c.React(seat=ZIPS, character=t["Zip"], ability="Mundane Tasks done Super-fast",
                      drive="Hope"), c.TurnBack(seat=ZIPS))
    assert _dice(t, getaway) == [[1], [4]] and asked_seat(t) == ALICE


def test_a_character_acts_once_a_turn() -> None:
    """C-TURN-1: given Joe's robbers have had their action in turn 1, when Joe starts an action
    for them again, then he is refused; the driver's is still his."""
    t = first_scene()
    act(t, "the robbers")
    t(c.EndAction(seat=JOE))
    t.refused(c.StartAction(seat=JOE, character=t["the robbers"]), "C-TURN-1")
    t(c.StartAction(seat=JOE, character=t["the driver"]))


def test_only_the_editor_in_an_opponents_action_stakes_for_an_absent_opponent() -> None:
    """C-STAKE-5, C-X-STAKE-1: given the arch-villain absent with Debt, when Joe stakes it in
    the robbers' action, or the Editor in the action of Black Jack whom he put on the Hero
    side, then each is refused; and an absent hero (Silverstar) never stakes."""
    t = first_scene()
    hostages = set_dice(t, "Hostages", hero=4, opponent=2)
    villain = t["the arch-villain"]
    earlier_debt(t, villain, "Despair", 1)
    earlier_debt(t, t["Silverstar"], "Truth", 1)
    t.given(e.ProminenceBought(seat=EDITOR, character=t["Black Jack"], points=1,
                               faction="hero", cost=0))
    act(t, "Black Jack")
    t.refused(c.Stake(seat=EDITOR, complication=hostages, character=villain, drive="Despair"),
              "C-STAKE-5")
    t(c.EndAction(seat=EDITOR))
    act(t, "Chief Mannelli")
    t.refused(c.Stake(seat=EDITOR, complication=hostages, character=t["Silverstar"],
                      drive="Truth"), "C-STAKE-5")
    t(c.EndAction(seat=EDITOR))
    act(t, "the robbers")
    t.refused(c.Stake(seat=JOE, complication=hostages, character=villain, drive="Despair"),
              "C-STAKE-5")


def test_stakes_on_a_complication_come_from_one_drive_even_below_its_strength() -> None:
    """C-STAKE-2: given Zip staked 1 of his Hope (strength 2) on Getaway, when he stakes 1 Duty
    there, then he is refused."""
    t, getaway = _w5()
    earlier_debt(t, t["Zip"], "Duty", 1)
    t(c.Stake(seat=ZIPS, complication=getaway, drive="Hope"))
    t.refused(c.Stake(seat=ZIPS, complication=getaway, drive="Duty"), "C-STAKE-2")


def test_a_die_splits_into_two_up_to_its_value() -> None:
    """C-SPLIT-1: given Night Maiden's blue 6 on Police, when she splits it into 1 or 7 dice,
    then she is refused."""
    t, police = _w6b()
    for into in (1, 7):
        t.refused(c.Split(seat=ALICE, complication=police, die=1, into=into, move=1, stake=2,
                          drive="Duty"), "C-SPLIT-1")


def test_new_stakes_where_the_side_controls_come_only_with_a_new_side() -> None:
    """C-SPLIT-4, C-STAKE-3: given the Hero side Controls Police 6 to 5, when Night Maiden
    splits with 2 new stakes but moves no die to a new side, then she is refused."""
    t, police = _w6b()
    t.refused(c.Split(seat=ALICE, complication=police, die=1, into=3, stake=2, drive="Duty"),
              "C-STAKE-3")


def test_a_character_opens_one_new_side_per_complication() -> None:
    """C-SPLIT-3: given Night Maiden split off her own side on Police in page 1, when she splits
    a die of it to open another in page 2, then she is refused (and splitting within it
    still needs a stake for every die, C-SPLIT-2)."""
    t, police = _w6b()
    t(c.Split(seat=ALICE, complication=police, die=1, into=3, move=2, stake=2, drive="Duty"),
      c.EndAction(seat=ALICE))
    _next_page(t)
    act(t, "Night Maiden")
    t.refused(c.Split(seat=ALICE, complication=police, die=3, into=2, move=1), "C-SPLIT-3")
    t.refused(c.Split(seat=ALICE, complication=police, die=3, into=2), "C-SPLIT-2")


def test_claims_go_round_and_only_present_characters_claim() -> None:
    """C-TABLE-2, C-PROM-4: given page 2's claims at the Editor's chance, when Joe claims, then
    he is refused (not his chance); at his chance, a claim for the absent Silverstar is
    refused."""
    t = first_scene()
    for x in list(t.state.complications):
        t.given(e.ComplicationDiscarded(complication=x))
    hostages = set_dice(t, "Hostages", hero=4, opponent=2)
    robbery = set_dice(t, "Robbery", hero=4, opponent=6)
    t.given(e.PageEnded(page=1), e.PageStarted(page=2, seat=EDITOR))
    t.refused(c.Claim(seat=JOE, character=t["the robbers"], complication=robbery),
              "C-TABLE-2")
    t(c.PassClaim(seat=EDITOR), c.PassClaim(seat=ZIPS), c.PassClaim(seat=ALICE),
      c.PassClaim(seat=CAPS))
    t.refused(c.Claim(seat=JOE, character=t["Silverstar"], complication=hostages), "C-PROM-4")
    t(c.Claim(seat=JOE, character=t["the robbers"], complication=robbery))
