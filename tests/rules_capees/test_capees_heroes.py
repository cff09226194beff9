"""Building heroes and other characters (C-HERO-*, C-NPC-*, C-ABIL-1, C-ABIL-2) and W-1."""

from __future__ import annotations

from capees_helpers import EDITOR, HEROES, JOE, ZIPS, CTable, hero, npc_drives, sheet, the_cast

from domain.capees import commands as c


def _silverstar_world(black_jack_shared: bool = True) -> CTable:
    """W-1's campaign up to Silverstar: the other three heroes and their Exemplars."""
    t = CTable()
    for name in ("Supreme", "Becky Tesla", "Officer Kelly", "Mayor Grant", "Aunt Bea",
                 "Sister Grace", "Polly Trueheart", "Black Jack", "Someone Else"):
        t.new(EDITOR, name)
    for name in ("Zip", "Night Maiden"):
        hero(t, name)
    exemplars = dict(HEROES["Captain Liberty"]["exemplars"])  # type: ignore[call-overload]
    if not black_jack_shared:
        exemplars["Truth"] = "Someone Else"
    hero(t, "Captain Liberty", exemplars=exemplars)
    return t


def test_w1_silverstar_is_a_valid_sheet_and_the_story_begins() -> None:
    """W-1: C-HERO-1 (9 points), C-HERO-2 (3 Exemplars), C-ABIL-1 (3/4/5, 12 abilities),
    C-HERO-3 (Supreme with Night Maiden, Black Jack with Captain Liberty), C-HERO-4."""
    t = _silverstar_world()
    silverstar = hero(t, "Silverstar")
    ch = t.state.characters[silverstar]
    assert sum(d.strength for d in ch.drives) == 9
    assert len(ch.exemplars) == 3 and len(ch.abilities) == 12
    t(c.BeginStory(seat=EDITOR, editor=EDITOR))
    assert t.state.story is not None


def test_w1_truth_4_is_refused() -> None:
    """W-1 variant: C-HERO-1, the Drives would sum to 10."""
    t = _silverstar_world()
    drives = {**HEROES["Silverstar"]["drives"], "Truth": 4}  # type: ignore[dict-item]
    t.refused(c.CreateCharacter(seat=JOE, name="Silverstar", hero=True, drives=drives,
                                exemplars={"Truth": t["Black Jack"], "Love": t["Supreme"],
                                           "Duty": t["Becky Tesla"]},
                                abilities=sheet("Silverstar")), "C-HERO-1")


def test_w1_without_black_jack_shared_the_story_cannot_begin() -> None:
    """W-1 variant: C-HERO-3, C-HERO-4: Silverstar shares with one hero only."""
    t = _silverstar_world(black_jack_shared=False)
    hero(t, "Silverstar")
    t.refused(c.BeginStory(seat=EDITOR, editor=EDITOR), "C-HERO-4")


def test_two_heroes_must_share_one_exemplar() -> None:
    """C-HERO-3: with exactly two heroes, each shares at least one with the other."""
    t = CTable()
    for name in ("A", "B", "C", "D", "E", "F"):
        t.new(EDITOR, name)
    drives = {"Justice": 1, "Truth": 2, "Love": 2, "Hope": 2, "Duty": 2}
    t.new(ZIPS, "One", hero=True, drives=drives, abilities=sheet("One"),
          exemplars={"Justice": t["A"], "Truth": t["B"], "Love": t["C"]})
    t.new(JOE, "Two", hero=True, drives=drives, abilities=sheet("Two"),
          exemplars={"Justice": t["D"], "Truth": t["E"], "Love": t["F"]})
    t.refused(c.BeginStory(seat=EDITOR, editor=EDITOR), "C-HERO-4")


def test_a_hero_created_during_a_story_plays_and_is_checked_at_the_next() -> None:
    """C-HERO-4: sharing is checked only when a story begins: a second hero sharing no
    Exemplar with the first (C-HERO-3) still joins the story under way. (The story begins
    with the first hero, C-X-STORY-2.)"""
    t = CTable()
    for name in ("A", "B", "C", "D", "E", "F"):
        t.new(EDITOR, name)
    drives = {"Justice": 1, "Truth": 2, "Love": 2, "Hope": 2, "Duty": 2}
    t.new(JOE, "First", hero=True, drives=drives, abilities=sheet("First"),
          exemplars={"Justice": t["D"], "Truth": t["E"], "Love": t["F"]})
    t(c.BeginStory(seat=EDITOR, editor=EDITOR))
    t.new(ZIPS, "Lonely", hero=True, drives=drives, abilities=sheet("Lonely"),
          exemplars={"Justice": t["A"], "Truth": t["B"], "Love": t["C"]})
    assert t.state.characters[t["Lonely"]].hero


def test_a_hero_has_the_five_heroic_drives() -> None:
    """C-HERO-1: exactly Justice, Truth, Love, Hope and Duty, each at least 1."""
    t = the_cast(CTable(players=("Editor", "P", "Q", "R", "S", "New")))
    exemplars = {"Justice": t["Supreme"], "Truth": t["Becky Tesla"], "Love": t["Aunt Bea"]}
    t.refused(c.CreateCharacter(seat=6, name="X", hero=True, abilities=sheet("X"),
                                exemplars=exemplars,
                                drives={"Justice": 5, "Truth": 1, "Love": 1, "Hope": 2,
                                        "Power": 0}), "C-HERO-1")
    t.refused(c.CreateCharacter(seat=6, name="X", hero=True, abilities=sheet("X"),
                                exemplars=exemplars,
                                drives={"Justice": 5, "Truth": 1, "Love": 1, "Hope": 2,
                                        "Duty": 0}), "C-HERO-1")


def test_a_hero_names_three_different_non_hero_exemplars() -> None:
    """C-HERO-2."""
    t = the_cast(CTable(players=("Editor", "P", "Q", "R", "S", "New")))
    drives = {"Justice": 1, "Truth": 2, "Love": 2, "Hope": 2, "Duty": 2}
    t.refused(c.CreateCharacter(seat=6, name="X", hero=True, drives=drives,
                                abilities=sheet("X"),
                                exemplars={"Justice": t["Supreme"], "Truth": t["Aunt Bea"]}),
              "C-HERO-2")
    t.refused(c.CreateCharacter(seat=6, name="X", hero=True, drives=drives,
                                abilities=sheet("X"),
                                exemplars={"Justice": t["Supreme"], "Truth": t["Supreme"],
                                           "Love": t["Aunt Bea"]}), "C-HERO-2")
    t.refused(c.CreateCharacter(seat=6, name="X", hero=True, drives=drives,
                                abilities=sheet("X"),
                                exemplars={"Justice": t["Zip"], "Truth": t["Supreme"],
                                           "Love": t["Aunt Bea"]}), "C-HERO-2")


def test_a_name_is_enough_for_an_exemplar_but_prominence_needs_a_full_sheet() -> None:
    """C-NPC-1, C-NPC-2: Supreme is a name only; completing its sheet lets it be played."""
    t = the_cast(CTable())
    t(c.BeginStory(seat=EDITOR, editor=EDITOR),
      c.StartScene(seat=EDITOR, featured=t["Zip"]),
      c.AddComplication(seat=EDITOR, name="Robbery"), c.PassSetup(seat=EDITOR))
    t.refused(c.BuyProminence(seat=EDITOR, character=t["Supreme"], side="hero"), "C-NPC-1")
    t(c.CompleteSheet(seat=EDITOR, character=t["Supreme"],
                      drives={"Need": 2, "Pride": 2, "Wrath": 2, "Faith": 2, "Doubt": 1},
                      abilities=sheet("Supreme", kind="skill")))
    t(c.BuyProminence(seat=EDITOR, character=t["Supreme"], side="hero"))


def test_a_character_takes_a_name_no_other_character_has() -> None:
    """C-X-CHAR-1: a second "Supreme" was made, and every picker and the board showed two
    characters of one name, told apart by nothing the players see."""
    t = the_cast(CTable())
    t.refused(c.CreateCharacter(seat=ZIPS, name="Supreme"), "C-X-CHAR-1")
    t.refused(c.CreateCharacter(seat=EDITOR, name="Silverstar", drives=npc_drives(),
                                abilities=sheet("Silverstar", kind="skill")), "C-X-CHAR-1")
    t.new(ZIPS, "Supreme's twin")


def test_only_its_creator_completes_a_non_heros_sheet() -> None:
    """C-X-NPC-1."""
    t = the_cast(CTable())
    t.refused(c.CompleteSheet(seat=ZIPS, character=t["Supreme"],
                              drives={"Need": 2, "Pride": 2, "Wrath": 2, "Faith": 2,
                                      "Doubt": 1},
                              abilities=sheet("Supreme", kind="skill")), "Supreme is seat 1's")


def test_a_non_hero_names_its_own_drives_and_takes_powers_or_skills_never_both() -> None:
    """C-NPC-2, C-ABIL-1."""
    t = CTable()
    t.new(EDITOR, "Getaway driver", drives={"Need": 1, "Greed": 2, "Fear": 2, "Rage": 2,
                                            "Loyalty": 2}, abilities=sheet("D", kind="skill"))
    t.refused(c.CreateCharacter(seat=EDITOR, name="Bad", drives={"Need": 1, "Greed": 2,
                                                                 "Fear": 2, "Rage": 2,
                                                                 "Loyalty": 3},
                                abilities=sheet("B", kind="skill")), "C-NPC-2")
    mixed = tuple(s for s in sheet("M", kind="skill") if s.type != "attitude") + tuple(
        c.AbilitySpec(name=f"M power {i}", type="power", rating=i) for i in range(1, 5))
    t.refused(c.CreateCharacter(seat=EDITOR, name="Mixed", drives={"Need": 1, "Greed": 2,
                                                                   "Fear": 2, "Rage": 2,
                                                                   "Loyalty": 2},
                                abilities=mixed), "C-ABIL-1")


def test_three_types_on_the_3_4_5_ladders() -> None:
    """C-ABIL-1: one type 1-3, one 1-4, one 1-5; a rating twice is refused."""
    t = CTable()
    drives = {"Need": 1, "Greed": 2, "Fear": 2, "Rage": 2, "Loyalty": 2}
    bad = tuple(s if s.name != "X trope 5" else c.AbilitySpec(name="X trope 5", type="trope",
                                                               rating=4)
                for s in sheet("X", kind="skill"))
    t.refused(c.CreateCharacter(seat=EDITOR, name="X", drives=drives, abilities=bad),
              "C-ABIL-1")
    short = tuple(s for s in sheet("Y", kind="skill") if s.name != "Y trope 5")
    t.refused(c.CreateCharacter(seat=EDITOR, name="Y", drives=drives, abilities=short),
              "C-ABIL-1")


def test_powers_are_super_attitudes_blocking_tropes_as_marked() -> None:
    """C-ABIL-2."""
    t = the_cast(CTable())
    zip_ = t.state.characters[t["Zip"]]
    kinds = {a.name: a.super for a in zip_.abilities}
    assert kinds["Super-speed"] is True
    assert kinds["Zip attitude 1"] is False
    assert kinds["Mundane Tasks done Super-fast"] is True
    assert kinds["Desperate Effort"] is False


def test_only_a_trope_is_marked_super() -> None:
    """C-ABIL-2: Attitudes and Skills are blocking by their type, so one sent with ``super``
    is refused, naming the field and the ability, never read as blocking in silence (a
    Power marked super agrees with its type and is accepted)."""
    t = CTable()
    for name in ("X attitude 2", "X skill 1"):
        marked = tuple(c.AbilitySpec(name=s.name, type=s.type, rating=s.rating,
                                     super=s.name == name or s.super)
                       for s in sheet("X", kind="skill"))
        error = t.refused(c.CreateCharacter(seat=EDITOR, name="X", drives=npc_drives(),
                                            abilities=marked), "C-ABIL-2")
        assert "super" in error.reason and name in error.reason, error.reason
    t.new(EDITOR, "Y", drives=npc_drives(), abilities=tuple(
        c.AbilitySpec(name=s.name, type=s.type, rating=s.rating, super=s.type == "power")
        for s in sheet("Y")))
    assert all(a.super for a in t.state.characters[t["Y"]].abilities if a.type == "power")


def test_a_sheet_completed_later_marks_only_its_tropes_super() -> None:
    """C-ABIL-2, C-NPC-2: completing a non-hero's sheet checks the marks as creating it does."""
    t = the_cast(CTable())
    marked = tuple(c.AbilitySpec(name=s.name, type=s.type, rating=s.rating,
                                 super=s.type == "attitude")
                   for s in sheet("Supreme", kind="skill"))
    error = t.refused(c.CompleteSheet(seat=EDITOR, character=t["Supreme"],
                                      drives=npc_drives(), abilities=marked), "C-ABIL-2")
    assert "super" in error.reason and "Supreme attitude 1" in error.reason, error.reason
