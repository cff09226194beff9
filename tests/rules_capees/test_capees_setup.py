"""Setting up a scene: tokens, Complications, Prominence, balancing, the Target
(C-SCENE-1, C-PROM-*, C-COMP-1, C-COMP-2, C-EDITOR-*, C-VP-1, C-VP-4), W-2 and W-10."""

from __future__ import annotations

from capees_helpers import ALICE, CAPS, EDITOR, JOE, ZIPS, CTable, first_scene, hero, the_cast

from domain.capees import commands as c
from domain.capees import events as e
from domain.capees.model import Inspiration
from domain.errors import ChoiceRequired


def _to_prominence(t: CTable, featured: str = "Captain Liberty") -> CTable:
    the_cast(t)
    t(c.BeginStory(seat=EDITOR, editor=EDITOR),
      c.StartScene(seat=EDITOR, featured=t[featured]))
    for name in ("Robbery", "Clobbering", "Hostages", "Police"):
        t(c.AddComplication(seat=EDITOR, name=name))
    return t(c.PassSetup(seat=EDITOR))


def _balancing_at_zero(*npcs: str) -> CTable:
    """A first scene at its balancing with nothing bought (both sides at 0): the Editor (seat
    1) with the non-heroes ``npcs``, seat 2 with Zip."""
    t = CTable(players=("Editor", "P"))
    for npc in npcs:
        t.npc(npc)
    for name in ("Officer Kelly", "Mayor Grant", "Aunt Bea"):
        t.new(1, name)
    hero(t, "Zip")  # seat 2's, for the story to begin (C-X-STORY-2)
    t(c.BeginStory(seat=1, editor=1))
    t.given(e.SceneStarted(scene=1, tokens=()), e.SetupStepBegan(step="complications", seat=1))
    return t(c.AddComplication(seat=1, name="Bank"), c.PassSetup(seat=1))


def test_w2_first_scene_prominence_and_target() -> None:
    """W-2: C-PROM-1, C-PROM-2 (Captain Liberty's 2), C-PROM-3..6, C-VP-1 (Target 8),
    C-EDITOR-1 (the robbers and the driver handed to Joe)."""
    t = first_scene()
    scene = t.state.scene
    assert scene is not None
    assert (scene.total("hero"), scene.total("opponent"), scene.target) == (4, 4, 8)
    assert scene.prominence[t["Captain Liberty"]] == 2
    assert scene.faction[t["Captain Liberty"]] == "hero"  # C-X-PROM-1
    assert t.state.player(JOE).tokens == 1 and t.state.player(EDITOR).tokens == 1
    assert t["Silverstar"] not in scene.present()
    assert scene.narrator[t["the robbers"]] == JOE and scene.narrator[t["the driver"]] == JOE
    assert scene.narrator[t["Chief Mannelli"]] == EDITOR


def test_w2_refusals() -> None:
    """W-2: Joe cannot spend on Captain Liberty (C-PROM-3); no fifth Opponent point
    (C-PROM-6)."""
    t = _to_prominence(CTable())
    t(c.PassSetup(seat=EDITOR), c.BuyProminence(seat=ZIPS, character=t["Zip"], side="hero"),
      c.BuyProminence(seat=ALICE, character=t["Night Maiden"], side="hero"))
    t.refused(c.BuyProminence(seat=JOE, character=t["Captain Liberty"]), "C-PROM-3")
    t(c.PassSetup(seat=JOE), c.PassSetup(seat=EDITOR))
    assert t.state.scene is not None and t.state.scene.step == "balancing"
    t(c.Balance(seat=EDITOR, character=t["the robbers"], side="opponent", narrator=JOE),
      c.Balance(seat=EDITOR, character=t["the driver"], side="opponent", narrator=JOE))
    t.refused(c.Balance(seat=EDITOR, character=t["Chief Mannelli"], points=3,
                        side="opponent"), "C-PROM-6")
    t.refused(c.Balance(seat=EDITOR, character=t["Minions"], points=1, side="hero"),
              "C-PROM-6")
    t.refused(c.Balance(seat=EDITOR, character=t["Zip"], points=1), "C-PROM-6")


def test_balancing_gives_an_undeclared_character_the_lower_side_without_asking() -> None:
    """C-PROM-6, C-PROM-5: balancing gives points to the lower side alone, so a character
    with no side yet joins it without being asked (docs/rules.md, "Refusals": a choice is
    asked for only among several; the engine asked to pick from one), and only once the
    points are right (the side comes last)."""
    t = _to_prominence(CTable())
    t(c.PassSetup(seat=EDITOR), c.BuyProminence(seat=ZIPS, character=t["Zip"], side="hero"),
      c.BuyProminence(seat=ALICE, character=t["Night Maiden"], side="hero"))
    t(c.PassSetup(seat=JOE), c.PassSetup(seat=EDITOR))
    too_many = t.refused(c.Balance(seat=EDITOR, character=t["the robbers"], points=9,
                                   narrator=JOE), "C-PROM-6")
    assert not isinstance(too_many, ChoiceRequired)
    balanced = t.do(c.Balance(seat=EDITOR, character=t["the robbers"], narrator=JOE))
    assert balanced == (e.ProminenceBalanced(character=t["the robbers"], points=1,
                                             faction="opponent", narrator=JOE),)


def test_balancing_with_both_sides_at_zero_asks_which_side() -> None:
    """C-PROM-6, C-PROM-5: with both totals 0 either side may have the point: a character with
    no side yet is asked which, among both."""
    t = _balancing_at_zero("Goon")
    asked = t.refused(c.Balance(seat=1, character=t["Goon"]), "C-PROM-6")
    assert isinstance(asked, ChoiceRequired)
    assert asked.field == "side" and sorted(asked.choices) == ["hero", "opponent"]


def test_every_player_gets_a_token_each_scene_the_editor_too() -> None:
    """C-PROM-1."""
    t = the_cast(CTable())
    t(c.BeginStory(seat=EDITOR, editor=EDITOR))
    events = t.do(c.StartScene(seat=EDITOR, featured=t["Zip"]))
    given = next(x for x in events if isinstance(x, e.SceneStarted)).tokens
    assert {g.seat: g.count for g in given} == {EDITOR: 1, ZIPS: 2, ALICE: 1, CAPS: 1, JOE: 1}


def test_the_first_scene_names_a_two_token_hero_and_later_ones_do_not() -> None:
    """C-PROM-2, C-EDITOR-2: only the Editor, and only in a story's first scene."""
    t = the_cast(CTable())
    t(c.BeginStory(seat=EDITOR, editor=EDITOR))
    t.refused(c.StartScene(seat=ZIPS, featured=t["Zip"]), "C-EDITOR-2")
    t.refused(c.StartScene(seat=EDITOR), "C-PROM-2")
    t.refused(c.StartScene(seat=EDITOR, featured=t["Minions"]), "C-PROM-2")


def test_a_character_has_one_narrator_and_one_side_for_the_scene() -> None:
    """C-PROM-4, C-PROM-5: Polly may be put with the villains, and stays there."""
    t = _to_prominence(CTable(), featured="Zip")
    t(c.BuyProminence(seat=EDITOR, character=t["Polly Trueheart"], side="opponent"))
    t.refused(c.BuyProminence(seat=ALICE, character=t["Polly Trueheart"], side="opponent"),
              "C-PROM-3")
    t(c.PassSetup(seat=ALICE), c.PassSetup(seat=CAPS), c.PassSetup(seat=JOE))
    t.refused(c.Balance(seat=EDITOR, character=t["Polly Trueheart"], side="hero"), "C-PROM-5")
    assert t.state.scene is not None
    assert t.state.scene.faction[t["Polly Trueheart"]] == "opponent"


def test_balancing_with_both_sides_at_zero_gives_one_to_each() -> None:
    """C-PROM-6 (ruling): nothing bought, the Editor gives 1 on each side, Target 2."""
    t = _balancing_at_zero("Goon", "Cop")
    t.refused(c.Balance(seat=1, character=t["Goon"], points=2, side="opponent"), "C-PROM-6")
    t(c.Balance(seat=1, character=t["Goon"], side="opponent"),
      c.Balance(seat=1, character=t["Cop"], side="hero"))
    assert t.state.scene is not None and t.state.scene.target == 2


def test_a_scene_cannot_begin_without_a_complication() -> None:
    """C-COMP-2, C-COMP-1: blank Complications start at 1 and 1; the Editor's alone."""
    t = the_cast(CTable())
    t(c.BeginStory(seat=EDITOR, editor=EDITOR), c.StartScene(seat=EDITOR, featured=t["Zip"]))
    t.refused(c.PassSetup(seat=EDITOR), "C-COMP-2")
    t.refused(c.AddComplication(seat=ZIPS, name="Mine"), "C-EDITOR-2")
    t(c.AddComplication(seat=EDITOR, name="Robbery"))
    x = t.state.complications[t.complication("Robbery")]
    assert [s.total for s in x.sides] == [1, 1] and [s.faction for s in x.sides] == [
        "hero", "opponent"]


def test_setup_goes_inspirations_complications_prominence_balancing_then_page_1() -> None:
    """C-SCENE-1: the order of setup, and Blocks cleared when play begins."""
    t = the_cast(CTable())
    t.given(e.AbilityBlocked(character=t["Zip"], ability="Zip attitude 1"))
    t(c.BeginStory(seat=EDITOR, editor=EDITOR), c.StartScene(seat=EDITOR, featured=t["Zip"]))
    steps = [x.step for x in t.events if isinstance(x, e.SetupStepBegan)]
    assert steps == ["inspirations", "complications"]
    t(c.AddComplication(seat=EDITOR, name="Robbery"), c.PassSetup(seat=EDITOR))
    assert t.state.scene is not None and t.state.scene.step == "prominence"
    t.refused(c.AddComplication(seat=EDITOR, name="Late"), "C-PAGE-1")
    t(c.PassSetup(seat=EDITOR), c.PassSetup(seat=ALICE), c.PassSetup(seat=CAPS),
      c.PassSetup(seat=JOE))
    t(c.Balance(seat=EDITOR, character=t["Minions"], points=2, side="opponent"))
    assert t.state.scene.page == 1 and t.state.characters[t["Zip"]].blocked == ()


def test_the_story_victory_total_is_fixed_by_the_editor() -> None:
    """C-VP-4: default 24, at least 1."""
    t = the_cast(CTable())
    t(c.BeginStory(seat=EDITOR, editor=EDITOR))
    assert t.state.story is not None and t.state.story.victory_total == 24
    t2 = the_cast(CTable())
    t2(c.BeginStory(seat=EDITOR, editor=EDITOR, victory_total=10))
    assert t2.state.story is not None and t2.state.story.victory_total == 10


def test_w10_setting_up_the_second_scene() -> None:
    """W-10: C-PROM-1, C-PROM-3..6, C-COMP-2, C-INSP-3, C-VP-1, C-SCENE-1, C-PROM-7."""
    t = the_cast(CTable())
    t(c.BeginStory(seat=EDITOR, editor=EDITOR))
    # The end of W-9: one scene played; tokens and cards as 004 tells them.
    t.given(e.SceneStarted(scene=1, tokens=()), e.SceneEnded(scene=1, hero_vp=9,
                                                              opponent_vp=0))
    for seat, tokens in ((JOE, 2), (ALICE, 2), (EDITOR, 1)):
        t.given(e.SceneStarted(scene=1, tokens=(e.TokensGiven(seat=seat, count=tokens),)),
                e.SceneEnded(scene=1, hero_vp=0, opponent_vp=0))
    state = t.state
    players = list(state.players)
    players[ZIPS - 1] = players[ZIPS - 1].__class__(
        seat=ZIPS, name=players[ZIPS - 1].name, tokens=0,
        inspirations=(Inspiration(id=1, name="Getaway", faction="hero", vp=6, bonus=-2),))
    players[CAPS - 1] = players[CAPS - 1].__class__(
        seat=CAPS, name=players[CAPS - 1].name, tokens=0,
        inspirations=(Inspiration(id=2, name="Public Opinion", faction="hero", vp=1,
                                  bonus=1),))
    import msgspec

    t.state = msgspec.structs.replace(state, players=tuple(players), next_inspiration=3)
    t.given(e.AbilityBlocked(character=t["Zip"], ability="Desperate Effort"),
            e.AbilityBlocked(character=t["Chief Mannelli"], ability="Angry"),
            e.AbilityBlocked(character=t["Captain Liberty"], ability="Team-builder"))
    assert [p.tokens for p in t.state.players] == [1, 0, 2, 0, 2]
    t(c.StartScene(seat=EDITOR))
    assert [p.tokens for p in t.state.players] == [2, 1, 3, 1, 3]  # C-PROM-1
    t(c.UseInspiration(seat=ZIPS, inspiration=1, name="Villainous HQ"),
      c.PassSetup(seat=CAPS))
    t(c.AddComplication(seat=EDITOR, name="Stealth"),
      c.AddComplication(seat=EDITOR, name="Clobbering"), c.PassSetup(seat=EDITOR))
    hq = t.state.complications[t.complication("Villainous HQ")]
    assert [s.total for s in hq.sides] == [1, 1]  # C-INSP-3: Bonus -2 is 1 or less
    assert t.state.player(ZIPS).inspirations == ()  # C-INSP-2: used up
    t(c.PassSetup(seat=EDITOR),
      c.BuyProminence(seat=ZIPS, character=t["Zip"], side="hero"))
    t.refused(c.BuyProminence(seat=ALICE, character=t["Zip"]), "C-PROM-3")
    t(c.PassSetup(seat=ALICE),
      c.BuyProminence(seat=CAPS, character=t["Polly Trueheart"], side="opponent"),
      c.BuyProminence(seat=JOE, character=t["Silverstar"], points=3, side="hero"))
    t(c.PassSetup(seat=EDITOR), c.PassSetup(seat=ALICE))
    scene = t.state.scene
    assert scene is not None and scene.step == "balancing"
    assert (scene.total("hero"), scene.total("opponent")) == (4, 1)
    t(c.Balance(seat=EDITOR, character=t["Minions"], side="opponent"),
      c.Balance(seat=EDITOR, character=t["Black Jack"], points=2, side="opponent",
                narrator=ALICE))
    scene = t.state.scene
    assert scene is not None and scene.target == 8 and scene.page == 1
    assert [p.tokens for p in t.state.players] == [2, 0, 3, 0, 0]
    assert scene.narrator[t["Black Jack"]] == ALICE
    assert all(not ch.blocked for ch in t.state.characters.values())


def _card_holder() -> CTable:
    """The start of a second scene's setup, Zip's player holding "Getaway, H, 6 VP, +3"."""
    t = the_cast(CTable())
    t(c.BeginStory(seat=EDITOR, editor=EDITOR))
    t.given(e.SceneStarted(scene=1, tokens=()), e.SceneEnded(scene=1, hero_vp=0,
                                                              opponent_vp=0))
    import msgspec

    players = list(t.state.players)
    players[ZIPS - 1] = msgspec.structs.replace(players[ZIPS - 1], inspirations=(
        Inspiration(id=1, name="Getaway", faction="hero", vp=6, bonus=3),))
    t.state = msgspec.structs.replace(t.state, players=tuple(players), next_inspiration=2)
    return t(c.StartScene(seat=EDITOR))


def test_a_complication_made_from_an_inspiration_takes_a_new_name() -> None:
    """C-INSP-3, C-X-INSP-1: given Zip's player holds the Getaway card, when he puts it back on
    the table as "Getaway" (or "getaway"), then he is refused: the old name is crossed out and
    a new one written in; as "Pursuit" it starts at 3 and 1."""
    t = _card_holder()
    for name in ("Getaway", "getaway"):
        t.refused(c.UseInspiration(seat=ZIPS, inspiration=1, name=name), "C-INSP-3")
    t(c.UseInspiration(seat=ZIPS, inspiration=1, name="Pursuit"))
    x = t.state.complications[t.complication("Pursuit")]
    assert [s.total for s in x.sides] == [3, 1]


def test_an_inspiration_with_a_bonus_of_1_starts_at_1_and_1_and_of_2_at_2() -> None:
    """C-INSP-3: a Bonus of 1 or less gives both sides 1; a Bonus of 2 gives the card's
    faction 2 (an Opponent card: the Opponent side)."""
    from domain.capees.setup import inspired_dice

    assert inspired_dice(Inspiration(id=1, name="A", faction="hero", vp=1, bonus=1)) == (1, 1)
    assert inspired_dice(Inspiration(id=1, name="A", faction="hero", vp=1, bonus=2)) == (2, 1)
    assert inspired_dice(Inspiration(id=1, name="A", faction="opponent", vp=1,
                                     bonus=2)) == (1, 2)


def test_nobody_buys_prominence_for_another_players_hero_even_one_not_yet_present() -> None:
    """C-PROM-3: given Silverstar not in the scene, when Alice spends a token on him, then she
    is refused: a hero is narrated by its own player."""
    t = _to_prominence(CTable())
    t(c.PassSetup(seat=EDITOR), c.PassSetup(seat=ZIPS))
    t.refused(c.BuyProminence(seat=ALICE, character=t["Silverstar"], side="hero"), "C-PROM-3")


def test_a_later_scene_names_no_two_token_hero() -> None:
    """C-PROM-2: given the story's first scene is over, when the Editor names a hero for the
    second, then he is refused, and every player gets 1 token."""
    t = the_cast(CTable())
    t(c.BeginStory(seat=EDITOR, editor=EDITOR))
    t.given(e.SceneStarted(scene=1, tokens=()), e.SceneEnded(scene=1, hero_vp=0,
                                                              opponent_vp=0))
    t.refused(c.StartScene(seat=EDITOR, featured=t["Zip"]), "C-PROM-2")
    t(c.StartScene(seat=EDITOR))
    assert [p.tokens for p in t.state.players] == [1, 1, 1, 1, 1]
