"""Resolution, Inspirations, Victory Points, the end of a scene and of a story
(C-RES-*, C-INSP-*, C-VP-*, C-SCENE-2..4, C-SRV-3), W-8 and W-9."""

from __future__ import annotations

from capees_helpers import (
    ALICE,
    CAPS,
    EDITOR,
    JOE,
    ZIPS,
    CTable,
    drive,
    earlier_debt,
    first_scene,
    set_dice,
    the_cast,
)

from domain.capees import commands as c
from domain.capees import events as e
from domain.capees.model import Claim, Side, Stake


def _clear(t: CTable) -> None:
    for x in list(t.state.complications):
        t.given(e.ComplicationDiscarded(complication=x))


def _stake(t: CTable, cid: int, side: int, character: int, drive_name: str, n: int) -> None:
    earlier_debt(t, character, drive_name, n)
    t.given(e.DebtStaked(character=character, drive=drive_name, complication=cid, side=side,
                         amount=n))


def _to_resolution(t: CTable, *claims: tuple[int, int]) -> None:
    """The action turns of the page are over with these (character, complication) claims."""
    import msgspec

    scene = t.state.scene
    assert scene is not None
    t.state = msgspec.structs.replace(t.state, scene=msgspec.structs.replace(
        scene, claims=tuple(Claim(character=ch, complication=x) for ch, x in claims)))
    finish_actions(t)


def finish_actions(t: CTable) -> None:
    """Every remaining action of the page passed, by commands (the forced moves follow)."""
    from domain.capees.pages import acting_seat

    page = t.state.scene.page if t.state.scene else 0
    while t.state.scene is not None and t.state.scene.step == "actions" \
            and t.state.scene.page == page:
        seat = acting_seat(t.state)
        assert seat is not None
        from domain.capees.pages import actors

        mine = [ch for ch in actors(t.state) if t.state.scene.narrator[ch] == seat]
        t(c.StartAction(seat=seat, character=mine[0]), c.EndAction(seat=seat))


def _w8() -> tuple[CTable, int, int]:
    t = first_scene()
    _clear(t)
    hostages = set_dice(t, "Hostages", hero=4, opponent=2)
    robbery = set_dice(t, "Robbery", hero=4, opponent=3)
    _stake(t, hostages, 0, t["Captain Liberty"], "Duty", 1)
    _stake(t, hostages, 1, t["the arch-villain"], "Despair", 1)
    return t, hostages, robbery


def test_w8_resolving_hostages() -> None:
    """W-8: C-RES-1..4, C-INSP-1..3, C-VP-1..3, C-STAKE-5."""
    t, hostages, robbery = _w8()
    cap, villain = t["Captain Liberty"], t["the arch-villain"]
    _to_resolution(t, (t["the robbers"], robbery), (cap, hostages))
    # C-RES-1: the robbers' claim fails at once (their side does not Control Robbery).
    assert any(isinstance(x, e.ClaimFailed) for x in t.events[-3:])
    assert robbery in t.state.complications
    t.refused(c.CheckClaim(seat=CAPS, complication=hostages, gifts={cap: JOE}), "C-RES-4")
    t.refused(c.CheckClaim(seat=CAPS, complication=hostages, gifts={cap: CAPS},
                           replacement="X"), "C-RES-3")
    # C-X-RES-1: with four other players, the recipient must be named.
    asked = t.refused(c.CheckClaim(seat=CAPS, complication=hostages, replacement="X"),
                      "C-RES-3")
    assert asked.field == f"gifts.{cap}" and JOE in asked.choices  # type: ignore[attr-defined]
    tokens = t.state.player(JOE).tokens
    t(c.CheckClaim(seat=CAPS, complication=hostages, gifts={cap: JOE},
                   replacement="Public Opinion", inspiration=t.state.next_inspiration))
    assert drive(t, villain, "Despair")[1] == 2  # C-RES-2: its 1 back plus 1
    assert drive(t, cap, "Duty")[1] == 0  # C-RES-3: the winning stake is gone
    assert t.state.player(JOE).tokens == tokens + 1
    assert t.state.player(CAPS).inspirations == ()  # C-INSP-2: the card became the new one
    resolved = next(x for x in t.events if isinstance(x, e.ComplicationResolved))
    assert (resolved.faction, resolved.vp, resolved.bonus) == ("hero", 2, 2)  # C-INSP-1
    opinion = t.state.complications[t.complication("Public Opinion")]
    assert [s.total for s in opinion.sides] == [2, 1]  # C-INSP-3
    scene = t.state.scene
    assert scene is not None and scene.hero_vp == 2 and scene.page == 2  # C-VP-3: 2 < 8


def test_a_replacement_from_the_resolved_card_takes_a_new_name() -> None:
    """C-INSP-3, C-X-INSP-1, C-RES-4: given Captain Liberty's Hostages resolving, when his
    player puts the new Hostages card back as "Hostages", then he is refused; a plain new card
    may be called anything, "Hostages" too."""
    t, hostages, robbery = _w8()
    cap = t["Captain Liberty"]
    _to_resolution(t, (t["the robbers"], robbery), (cap, hostages))
    t.refused(c.CheckClaim(seat=CAPS, complication=hostages, gifts={cap: JOE},
                           replacement="Hostages", inspiration=t.state.next_inspiration),
              "C-INSP-3")
    t(c.CheckClaim(seat=CAPS, complication=hostages, gifts={cap: JOE},
                   replacement="Hostages"))
    assert [s.total for s in t.state.complications[t.complication("Hostages")].sides] == [1, 1]


def test_a_claim_is_checked_by_its_claimers_player() -> None:
    """C-RES-1, C-EDITOR-1: given Captain Liberty's claim on Hostages, when Joe checks it,
    then he is refused."""
    t, hostages, _ = _w8()
    _to_resolution(t, (t["Captain Liberty"], hostages))
    t.refused(c.CheckClaim(seat=JOE, complication=hostages, replacement="X"),
              "checks this claim")


def test_only_a_winning_staker_gives_story_tokens() -> None:
    """C-RES-3, C-SRV-2: given Hostages resolving for the heroes, when the resolution names a
    recipient for the arch-villain's losing stake too, then it is refused and nothing
    changes."""
    t, hostages, robbery = _w8()
    cap, villain = t["Captain Liberty"], t["the arch-villain"]
    _to_resolution(t, (t["the robbers"], robbery), (cap, hostages))
    error = t.refused(c.CheckClaim(seat=CAPS, complication=hostages,
                                   gifts={cap: JOE, villain: JOE}, replacement="X"), "C-RES-3")
    assert "the arch-villain" in error.reason


def test_a_failed_claim_leaves_its_stakes() -> None:
    """C-STAKE-1: a failed claim leaves the stakes in place."""
    t = first_scene()
    _clear(t)
    hostages = set_dice(t, "Hostages", hero=4, opponent=6)
    _stake(t, hostages, 0, t["Captain Liberty"], "Duty", 1)
    _to_resolution(t, (t["Captain Liberty"], hostages))
    assert hostages in t.state.complications
    assert t.state.complications[hostages].sides[0].staked == 1


def test_claims_are_checked_in_seat_order() -> None:
    """C-RES-1: the Editor's claims first, then clockwise."""
    t = first_scene()
    _clear(t)
    a = set_dice(t, "A", hero=1, opponent=3)
    b = set_dice(t, "B", hero=3, opponent=1)
    _to_resolution(t, (t["Zip"], b), (t["Chief Mannelli"], a))
    t.refused(c.CheckClaim(seat=ZIPS, complication=b, replacement="B2"), "C-RES-1")
    t(c.CheckClaim(seat=EDITOR, complication=a, replacement="A2"),
      c.CheckClaim(seat=ZIPS, complication=b, replacement="B2"))
    scene = t.state.scene
    assert scene is not None and (scene.hero_vp, scene.opponent_vp) == (1, 1)


def _w9(t: CTable | None = None) -> tuple[CTable, int, int, int]:
    """W-9's position, set directly: page 4 after the action turns."""
    t = t or first_scene()
    _clear(t)
    zip_, nm = t["Zip"], t["Night Maiden"]
    getaway = set_dice(t, "Getaway", hero=4, opponent=6)
    police = set_dice(t, "Police", hero=2, opponent=5)
    opinion = set_dice(t, "Public Opinion", hero=2, opponent=1)
    import msgspec

    x = t.state.complications[getaway]
    earlier_debt(t, zip_, "Hope", 2)
    from domain.capees.model import Die

    sides = (msgspec.structs.replace(x.sides[0], dice=(Die(id=1, value=4), Die(id=3, value=3)),
                                     stakes=(Stake(character=zip_, drive="Hope", amount=2),)),
             x.sides[1])
    p = t.state.complications[police]
    earlier_debt(t, nm, "Duty", 2)
    police_sides = (p.sides[0], p.sides[1],
                    Side(faction="hero", owner=nm, dice=(Die(id=3, value=2), Die(id=4, value=2)),
                         stakes=(Stake(character=nm, drive="Duty", amount=2),)))
    chars = dict(t.state.characters)
    for who, name in ((zip_, "Hope"), (nm, "Duty")):
        ch = chars[who]
        chars[who] = msgspec.structs.replace(ch, drives=tuple(
            msgspec.structs.replace(d, debt=0) if d.name == name else d for d in ch.drives))
    t.state = msgspec.structs.replace(
        t.state, characters=chars,
        complications={**t.state.complications,
                       getaway: msgspec.structs.replace(x, sides=sides, next_die=4),
                       police: msgspec.structs.replace(p, sides=police_sides, next_die=5)},
        scene=msgspec.structs.replace(t.state.scene, hero_vp=2, page=4))  # type: ignore[type-var]
    return t, getaway, police, opinion


def test_w9_getaway_reaches_the_target_and_the_scene_ends() -> None:
    """W-9: C-RES-1..4, C-VP-2, C-VP-3, C-VP-5, C-SCENE-3, C-SCENE-4."""
    t, getaway, police, opinion = _w9()
    zip_, nm, cap = t["Zip"], t["Night Maiden"], t["Captain Liberty"]
    _to_resolution(t, (zip_, getaway), (nm, police))
    alice = t.state.player(ALICE).tokens
    t(c.CheckClaim(seat=ZIPS, complication=getaway, gifts={zip_: ALICE}, replacement="Pursuit"))
    card = t.state.player(ZIPS).inspirations[-1]
    assert (card.name, card.faction, card.vp, card.bonus) == ("Getaway", "hero", 6, -2)
    assert t.state.player(ALICE).tokens == alice + 2
    scene = t.state.scene
    assert scene is not None and scene.step == "final_claims"  # C-VP-3: 8 >= 8, no page 5
    assert police not in t.state.complications  # C-SCENE-3: discarded, stakes back
    assert drive(t, nm, "Duty")[1] == 2
    pursuit = t.complication("Pursuit")
    t(c.PassClaim(seat=ZIPS), c.PassClaim(seat=ALICE))
    t.refused(c.Claim(seat=CAPS, character=cap, complication=pursuit), "C-CLAIM-1")
    t(c.Claim(seat=CAPS, character=cap, complication=opinion))
    assert t.state.scene is None  # C-SCENE-4: what is left (Pursuit) is discarded
    story = t.state.story
    assert story is not None and (story.hero_vp, story.opponent_vp) == (9, 0)  # C-VP-5
    card = t.state.player(CAPS).inspirations[-1]
    assert (card.name, card.vp, card.bonus) == ("Public Opinion", 1, 1)
    assert t.state.complications == {}


def test_a_staked_complication_is_never_claimed_at_the_end_of_a_scene() -> None:
    """C-SCENE-3, C-SCENE-4: only unstaked Complications are claimed when a scene ends. The
    Hero side Controls the Bank, where Captain Liberty staked 1 Duty, and nobody claimed it;
    when W-9's scene ends the Bank is discarded before the first end-of-scene claim, its Debt
    back on Duty, not doubled, so claiming it is refused: it is no longer on the table."""
    t, getaway, police, opinion = _w9()
    zip_, nm, cap = t["Zip"], t["Night Maiden"], t["Captain Liberty"]
    bank = set_dice(t, "Bank", hero=5, opponent=1)
    duty = drive(t, cap, "Duty")[1]
    _stake(t, bank, 0, cap, "Duty", 1)
    _to_resolution(t, (zip_, getaway), (nm, police))
    t(c.CheckClaim(seat=ZIPS, complication=getaway, gifts={zip_: ALICE}, replacement="Pursuit"))
    scene = t.state.scene
    assert scene is not None and scene.step == "final_claims"
    assert bank not in t.state.complications and drive(t, cap, "Duty")[1] == duty + 1
    assert not any(s.stakes for x in t.state.complications.values() for s in x.sides)
    t(c.PassClaim(seat=ZIPS), c.PassClaim(seat=ALICE))
    t.refused(c.Claim(seat=CAPS, character=cap, complication=bank), "no Complication")
    t(c.Claim(seat=CAPS, character=cap, complication=opinion))
    assert t.state.scene is None


def test_the_editor_may_end_a_scene_after_a_victory_check() -> None:
    """C-SCENE-2: after page 1's check, before page 2's first move; not in page 1."""
    t = first_scene()
    t.refused(c.EndScene(seat=EDITOR), "C-SCENE-2")
    _to_resolution(t)
    scene = t.state.scene
    assert scene is not None and scene.page == 2 and scene.fresh
    t.refused(c.EndScene(seat=ZIPS), "C-EDITOR-2")
    moved = CTable.__new__(CTable)
    moved.__dict__.update(t.__dict__)
    moved.events = list(t.events)
    # C-X-SCENE-1: once a move is made in the page, it is too late.
    from domain.capees.pages import acting_seat

    seat = acting_seat(t.state)
    if seat is not None:
        moved(c.StartAction(seat=seat))
        moved.refused(c.EndScene(seat=EDITOR), "C-SCENE-2")
    t(c.EndScene(seat=EDITOR))
    assert t.state.scene is None and t.state.story is not None
    assert t.state.story.hero_vp == 0


def test_the_story_ends_on_its_victory_total() -> None:
    """C-VP-5: a story total at the Victory Total ends the story."""
    t = the_story(victory_total=1)
    t, getaway, police, _ = _w9(t)
    _to_resolution(t, (t["Zip"], getaway), (t["Night Maiden"], police))
    t(c.CheckClaim(seat=ZIPS, complication=getaway, gifts={t["Zip"]: ALICE},
                   replacement="Pursuit"))
    while t.state.scene is not None:
        t(c.PassClaim(seat=t.state.scene.cursor))
    assert t.state.story is None and t.state.stories_played == 1


def the_story(victory_total: int) -> CTable:
    t = the_cast(CTable())
    t(c.BeginStory(seat=EDITOR, editor=EDITOR, victory_total=victory_total))
    return first_scene_of(t)


def first_scene_of(t: CTable) -> CTable:
    t(c.StartScene(seat=EDITOR, featured=t["Captain Liberty"]))
    for name in ("Robbery", "Clobbering", "Hostages", "Police"):
        t(c.AddComplication(seat=EDITOR, name=name))
    t(c.PassSetup(seat=EDITOR), c.PassSetup(seat=EDITOR),
      c.BuyProminence(seat=ZIPS, character=t["Zip"], side="hero"),
      c.BuyProminence(seat=ALICE, character=t["Night Maiden"], side="hero"),
      c.PassSetup(seat=JOE), c.PassSetup(seat=EDITOR),
      c.Balance(seat=EDITOR, character=t["the robbers"], side="opponent", narrator=JOE),
      c.Balance(seat=EDITOR, character=t["the driver"], side="opponent", narrator=JOE),
      c.Balance(seat=EDITOR, character=t["Chief Mannelli"], points=2, side="opponent"))
    return t


def test_a_story_total_equal_to_the_victory_total_ends_the_story() -> None:
    """C-VP-5: given a story Victory Total of 9, when the scene of W-9 ends with the heroes on
    9, then the story ends."""
    t = the_story(victory_total=9)
    t, getaway, police, opinion = _w9(t)
    _to_resolution(t, (t["Zip"], getaway), (t["Night Maiden"], police))
    t(c.CheckClaim(seat=ZIPS, complication=getaway, gifts={t["Zip"]: ALICE},
                   replacement="Pursuit"),
      c.PassClaim(seat=ZIPS), c.PassClaim(seat=ALICE),
      c.Claim(seat=CAPS, character=t["Captain Liberty"], complication=opinion))
    assert t.state.story is None and t.state.stories_played == 1


# -- C-RES-3: each winning staker's player gives its Story Tokens ----------------------------


def _hostages_with_allies(*allies: str) -> tuple[CTable, int]:
    """W-8, with ``allies`` (heroes of other players) staking 1 Debt of Hope beside Captain
    Liberty on Hostages, and his claim on it about to be checked."""
    t, hostages, _ = _w8()
    for name in allies:
        _stake(t, hostages, 0, t[name], "Hope", 1)
    _to_resolution(t, (t["Captain Liberty"], hostages))
    return t, hostages


def _tokens(t: CTable) -> list[int]:
    return [p.tokens for p in t.state.players]


def test_another_players_staker_chooses_who_gets_its_tokens() -> None:
    """C-RES-3: given Night Maiden staked beside Captain Liberty on Hostages, when his player
    resolves the claim naming Joe for his own stake, then the resolution waits for Alice; when
    she gives Night Maiden's token to Zip's player, then it completes: both winning stakes
    gone, Joe and Zip's player a token richer, the replacement made."""
    t, hostages = _hostages_with_allies("Night Maiden")
    cap, maiden = t["Captain Liberty"], t["Night Maiden"]
    before = _tokens(t)
    t(c.CheckClaim(seat=CAPS, complication=hostages, gifts={cap: JOE}, replacement="Fallout"))
    assert hostages in t.state.complications and _tokens(t) == before
    assert not any(isinstance(x, e.ComplicationResolved) for x in t.events)
    t(c.GiveTokens(seat=ALICE, complication=hostages, character=maiden, to=ZIPS))
    assert hostages not in t.state.complications
    assert drive(t, cap, "Duty")[1] == 0 and drive(t, maiden, "Hope")[1] == 0
    after = _tokens(t)
    assert after[JOE - 1] == before[JOE - 1] + 1 and after[ZIPS - 1] == before[ZIPS - 1] + 1
    resolved = next(x for x in t.events if isinstance(x, e.ComplicationResolved))
    assert {(g.giver, g.recipient) for g in resolved.gifts} == {(CAPS, JOE), (ALICE, ZIPS)}
    assert t.complication("Fallout") in t.state.complications  # C-RES-4
    scene = t.state.scene
    assert scene is not None and scene.page == 2 and scene.resolving is None


def test_the_claimer_may_not_choose_for_another_players_staker() -> None:
    """C-RES-3: given Night Maiden staked beside Captain Liberty on Hostages, when his player
    names her token's recipient, or gives it once the resolution waits, then he is refused and
    nothing changes; Alice may not give it to herself, nor give twice."""
    t, hostages = _hostages_with_allies("Night Maiden")
    cap, maiden = t["Captain Liberty"], t["Night Maiden"]
    error = t.refused(c.CheckClaim(seat=CAPS, complication=hostages,
                                   gifts={cap: JOE, maiden: JOE}, replacement="X"), "C-RES-3")
    assert "Night Maiden" in error.reason
    t(c.CheckClaim(seat=CAPS, complication=hostages, gifts={cap: JOE}, replacement="X"))
    t.refused(c.GiveTokens(seat=CAPS, complication=hostages, character=maiden, to=JOE),
              "C-RES-3")
    t.refused(c.GiveTokens(seat=ALICE, complication=hostages, character=cap, to=JOE),
              "C-RES-3")
    t.refused(c.GiveTokens(seat=ALICE, complication=hostages, character=maiden, to=ALICE),
              "C-RES-3")
    asked = t.refused(c.GiveTokens(seat=ALICE, complication=hostages, character=maiden),
                      "C-RES-3")
    assert asked.field == "to" and ALICE not in asked.choices  # type: ignore[attr-defined]
    # Nobody moves the game on meanwhile: the claim is not checked again.
    t.refused(c.CheckClaim(seat=CAPS, complication=hostages, gifts={cap: JOE},
                           replacement="Y"), "C-RES-3")


def test_the_board_waits_for_exactly_the_givers() -> None:
    """C-RES-3, C-SRV-4: given Night Maiden and Zip staked beside Captain Liberty on Hostages
    and his claim checked, then the board waits for Alice and Zip's player to give, each
    offered their own hero's stake; once Alice has given, for Zip's player alone."""
    from domain.capees.views import OptionView, board

    t, hostages = _hostages_with_allies("Night Maiden", "Zip")
    cap, maiden, zip_ = t["Captain Liberty"], t["Night Maiden"], t["Zip"]
    t(c.CheckClaim(seat=CAPS, complication=hostages, gifts={cap: JOE}, replacement="X"))
    shown = board(t.state)
    assert shown.waiting_for == {ALICE: ("capees.give_tokens",), ZIPS: ("capees.give_tokens",)}
    assert shown.options[ALICE]["capees.give_tokens"] == (
        OptionView(character=maiden, complication=hostages),)
    assert shown.options[ZIPS]["capees.give_tokens"] == (
        OptionView(character=zip_, complication=hostages),)
    t(c.GiveTokens(seat=ALICE, complication=hostages, character=maiden, to=CAPS))
    assert board(t.state).waiting_for == {ZIPS: ("capees.give_tokens",)}
    assert hostages in t.state.complications
    t(c.GiveTokens(seat=ZIPS, complication=hostages, character=zip_, to=CAPS))
    assert hostages not in t.state.complications


def test_the_editor_chooses_for_an_absent_opponents_stake() -> None:
    """C-RES-3: given the arch-villain (absent) staked on the Opponent side of a Getaway the
    robbers claim, when Joe resolves it, then the resolution waits for the Editor, not Joe,
    to give the arch-villain's token."""
    from domain.capees.moves import waiting_for

    t, _, _ = _w8()
    villain, robbers = t["the arch-villain"], t["the robbers"]
    getaway = set_dice(t, "Getaway", hero=1, opponent=5)
    _stake(t, getaway, 1, villain, "Despair", 1)
    _to_resolution(t, (robbers, getaway))
    t.refused(c.CheckClaim(seat=JOE, complication=getaway, gifts={villain: ZIPS},
                           replacement="X"), "C-RES-3")
    t(c.CheckClaim(seat=JOE, complication=getaway, replacement="X"))
    assert waiting_for(t.state) == {EDITOR: ("capees.give_tokens",)}
    t.refused(c.GiveTokens(seat=JOE, complication=getaway, character=villain, to=ZIPS),
              "C-RES-3")
    tokens = t.state.player(ZIPS).tokens
    t(c.GiveTokens(seat=EDITOR, complication=getaway, character=villain, to=ZIPS))
    assert getaway not in t.state.complications
    assert t.state.player(ZIPS).tokens == tokens + 1


def test_with_one_other_player_the_server_gives_the_tokens() -> None:
    """C-RES-3, C-X-RES-1: given a table of two where both players' characters staked on the
    winning side, when the claimer's player resolves the claim, then it completes at once,
    each stake's token going to the other player; naming the other player's recipient is
    still refused (it is theirs to give)."""
    import msgspec

    from domain.capees.model import Scene

    t = CTable(players=("Editor", "Ann"))
    ace, bea = t.npc("Ace", seat=1), t.npc("Bea", seat=2)
    t.given(e.StoryBegun(story=1, editor=1, victory_total=24))
    heist = set_dice(t, "Heist", hero=4, opponent=1)
    for who in (ace, bea):
        _stake(t, heist, 0, who, "Greed", 1)
    t.state = msgspec.structs.replace(t.state, scene=Scene(
        number=1, step="resolution", prominence={ace: 1, bea: 1},
        faction={ace: "hero", bea: "hero"}, narrator={ace: 1, bea: 2},
        claims=(Claim(character=ace, complication=heist),), target=99, page=1))
    t.refused(c.CheckClaim(seat=1, complication=heist, gifts={bea: 1}, replacement="X"),
              "C-RES-3")
    t(c.CheckClaim(seat=1, complication=heist, replacement="X"))
    resolved = next(x for x in t.events if isinstance(x, e.ComplicationResolved))
    assert {(g.giver, g.recipient) for g in resolved.gifts} == {(1, 2), (2, 1)}
    assert [p.tokens for p in t.state.players] == [1, 1]
