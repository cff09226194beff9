"""The board lists, for each move whose form names a character (and a Complication), the
choices the rules accept now: whom a seat may buy or balance Prominence for, which character
may claim which Complication, for which absent opponent the Editor may stake (C-PROM-3,
C-PROM-6, C-CLAIM-1, C-CLAIM-2, C-STAKE-5), and which Trope of which character may react
(C-REACT-1, C-ABIL-4), and which ability may roll which die (C-ABIL-6). The Decider works
them out, so a page that lists them offers nothing
the server refuses, and leaves nothing out."""

from __future__ import annotations

from capees_helpers import EDITOR, act, earlier_debt, first_scene
from capees_positions import (
    BALANCING,
    BALANCING_NARRATED,
    BUYING,
    CLAIMING,
    CLAIMING_AFTER_SILVERSTAR,
    MINION,
    REACTING,
    STAKING,
    STAKING_DICE,
    THE_DRIVER,
    WITH_TRAFFIC,
    Script,
    played,
    until,
)

from cli.demo_capees import (
    ALICE,
    CHIEF,
    DEMO_DICE,
    HOSTAGES,
    NIGHT_MAIDEN,
    PASS_REACTIONS,
    ROBBERS,
    ROBBERY,
)
from domain.capees import commands as c
from domain.capees.model import CampaignState
from domain.capees.moves import accepted
from domain.capees.views import LISTED, board

Choice = tuple[int, int | None]
#: A choice with its ability and die (a reaction's Trope, a roll's), for the exact check.
Named = tuple[int, int | None, str | None, int | None]


def listed(state: CampaignState, seat: int, move: str) -> list[Choice]:
    """The board's options of ``seat`` for ``move``: (character, Complication)."""
    return [(o.character, o.complication) for o in board(state).options[seat][move]]


def test_buy_prominence_lists_my_hero_and_the_non_heroes_nobody_else_narrates() -> None:
    t = played(BUYING)
    # Not Silverstar (Joe's hero), not the robbers (the Editor's this scene), not the
    # characters known by name only (C-PROM-3, C-NPC-1).
    assert listed(t.state, ALICE, "capees.buy_prominence") == [(CHIEF, None),
                                                               (NIGHT_MAIDEN, None)]


def test_balance_lists_the_non_heroes_new_to_the_scene() -> None:
    t = played(BALANCING)
    assert listed(t.state, EDITOR, "capees.balance") == [(ROBBERS, None), (CHIEF, None)]


def test_balance_lists_the_editors_additions_whoever_narrates_them_and_nobody_another_seat_brought(
        ) -> None:
    t = played(BALANCING_NARRATED)
    # The Minion, handed to Joe; not the Chief (Alice's), not the robbers (the higher side).
    assert t.state.scene is not None and t.state.scene.narrator[MINION] == 3
    assert listed(t.state, EDITOR, "capees.balance") == [(MINION, None)]


def test_claim_lists_what_the_claimers_side_controls() -> None:
    t = played(CLAIMING)
    # Traffic is a tie: nobody Controls it (C-CLAIM-1).
    assert listed(t.state, ALICE, "capees.claim") == [(NIGHT_MAIDEN, ROBBERY),
                                                      (NIGHT_MAIDEN, HOSTAGES)]


def test_claim_lists_no_complication_held_by_a_character_as_prominent() -> None:
    t = played(CLAIMING_AFTER_SILVERSTAR)
    # Silverstar (Prominence 2) holds Hostages; Night Maiden has 1 (C-CLAIM-2).
    assert listed(t.state, ALICE, "capees.claim") == [(NIGHT_MAIDEN, ROBBERY)]


def test_whose_debt_lists_the_absent_opponents_with_debt_on_each_complication() -> None:
    t = played(STAKING, STAKING_DICE)
    jailbreak = t.complication("Jailbreak")
    # Not the driver: absent, but no Drive holds Debt (C-STAKE-1).
    assert listed(t.state, EDITOR, "capees.stake") == [(ROBBERS, jailbreak)]
    assert THE_DRIVER not in {ch for ch, _ in listed(t.state, EDITOR, "capees.stake")}


def test_the_editor_is_offered_a_stake_for_an_absent_opponent_when_the_actor_has_no_debt(
        ) -> None:
    """C-STAKE-5: the Chief holds no Debt, the arch-villain does: the stake is offered, for the
    arch-villain only (Polly Trueheart, with Debt too, is Captain Liberty's Exemplar:
    C-X-STAKE-1)."""
    t = first_scene()
    earlier_debt(t, t["the arch-villain"], "Despair", 1)
    earlier_debt(t, t["Polly Trueheart"], "Greed", 1)
    act(t, "Chief Mannelli")
    shown = board(t.state)
    assert "capees.stake" in shown.waiting_for[EDITOR]
    assert {o.character for o in shown.options[EDITOR]["capees.stake"]} == {
        t["the arch-villain"]}


def test_react_lists_the_tropes_rated_at_least_the_die_and_the_board_names_that_die() -> None:
    """C-REACT-1: given Night Maiden's Shadow Strike raised Hostages' Hero die to 4 and was
    kept, when Alice's chance to react comes, then the board says which die the round is
    about, and lists her Tropes rated 4 or more, Last word and Cold fury, not Vanish (1),
    Glare venomously (2) or Dramatic entrance (3), which the rules refuse on a 4."""
    shown = board(played(REACTING).state)
    assert shown.action is not None and shown.action.reacting == ALICE
    assert shown.action.reaction == (HOSTAGES, 1)
    assert [(o.character, o.ability) for o in shown.options[ALICE]["capees.react"]] == [
        (NIGHT_MAIDEN, "Last word"), (NIGHT_MAIDEN, "Cold fury")]


def test_roll_lists_each_ability_with_the_dice_it_is_rated_for() -> None:
    """C-ABIL-6: given Night Maiden's action, Robbery's Opponent die showing the Chief's 5
    and the three other dice 1, then her seven abilities that roll (Powers and Attitudes,
    rated 1 to 4) are listed for each die showing 1, and none for the 5."""
    shown = board(played(until("Night Maiden strikes from the shadows")).state)
    rolls = {(o.character, o.ability, o.complication, o.die)
             for o in shown.options[ALICE]["capees.roll_ability"]}
    assert {(x, d) for _, _, x, d in rolls} == {(ROBBERY, 1), (HOSTAGES, 1), (HOSTAGES, 2)}
    assert len(rolls) == 7 * 3
    assert {ch for ch, _, _, _ in rolls} == {NIGHT_MAIDEN}


def test_a_seat_is_listed_exactly_what_the_decider_accepts_at_every_step() -> None:
    """At every step of the positions above, for every character and Complication: listed
    if and only if the command naming them is accepted."""
    for script, dice in ((WITH_TRAFFIC, DEMO_DICE), (BALANCING_NARRATED, DEMO_DICE),
                         (CLAIMING_AFTER_SILVERSTAR, DEMO_DICE), (STAKING, STAKING_DICE)):
        for n in range(1, len(script) + 1):
            _check_exact(script[:n], dice)


def _check_exact(script: Script, dice: tuple[int, ...]) -> None:
    if script[-1][1] == PASS_REACTIONS:
        return
    state = played(script, dice).state
    shown = board(state)
    for seat, moves in shown.waiting_for.items():
        for kind in LISTED:
            tag = str(kind.__struct_config__.tag)
            if tag not in moves:
                continue
            options = {(o.character, o.complication, o.ability, o.die)
                       for o in shown.options[seat][tag]}
            assert options == _accepted(state, seat, kind), (script[-1], seat, tag)


def _accepted(state: CampaignState, seat: int, kind: type[c.Command]) -> set[Named]:
    """Every (character, Complication, ability, die) the Decider accepts ``kind`` for, tried
    one by one (a stake naming the acting character aside: that is the stake the form sends
    by default)."""
    found: set[Named] = set()
    action = state.scene.action if state.scene else None
    if kind is c.RollAbility:
        assert action is not None
        return {(action.character, x.id, a.name, d.id)
                for a in state.characters[action.character].abilities
                for x in state.complications.values() for s in x.sides for d in s.dice
                if accepted(state, c.RollAbility(seat=seat, ability=a.name, complication=x.id,
                                                 die=d.id))}
    for ch in state.characters:
        if kind is c.Stake and action is not None and ch == action.character:
            continue
        if kind is c.React:
            found |= {(ch, None, a.name, None) for a in state.characters[ch].abilities
                      if accepted(state, c.React(seat=seat, character=ch, ability=a.name))}
            continue
        if kind in (c.BuyProminence, c.Balance):
            if accepted(state, kind(seat=seat, character=ch)):  # type: ignore[call-arg]
                found.add((ch, None, None, None))
            continue
        for x in state.complications:
            if accepted(state, kind(seat=seat, character=ch, complication=x)):  # type: ignore[call-arg]
                found.add((ch, x, None, None))
    return found
