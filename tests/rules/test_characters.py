"""Building characters: abilities, Drives, Exemplars, Overdrawn (R-CHAR-1..7, R-X-CHAR-1)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from play_helpers import (
    AURORA,
    AURORA_DRIVES,
    BRUTE,
    MIA,
    UNDIFFERENTIATED,
    earlier_debt,
    play_on,
    start_turn,
)
from rulebook import Table, given
from scenes_helpers import characters_built, created, love_overdrawn

from domain.capes import commands as c
from domain.capes.events import CharacterCreated, ExemplarLinked, PageStarted
from domain.capes.model import Ability, Category, DriveSlot, OverdrawnDrive

# -- building blocks -------------------------------------------------------------------------


def specs(category: Category, ratings: Sequence[int], *, super_: bool = False
          ) -> list[c.AbilitySpec]:
    """Abilities of one category named "<category> <n>", with these ratings."""
    return [
        c.AbilitySpec(name=f"{category} {i + 1}", category=category, rating=r, super=super_)
        for i, r in enumerate(ratings)
    ]


def freeform(*groups: tuple[Category, int]) -> c.Freeform:
    """A freeform build: for each (category, k), k abilities rated 1..k."""
    return c.Freeform(
        abilities=tuple(s for cat, k in groups for s in specs(cat, range(1, k + 1)))
    )


SUPER = freeform(("power", 5), ("style", 4), ("attitude", 3))
MUNDANE = freeform(("skill", 3), ("style", 3), ("attitude", 3))


def create(build: c.Freeform | c.ClickAndLock, drives: dict[str, int] | None = AURORA_DRIVES,
           name: str = "Nova") -> c.CreateCharacter:
    return c.CreateCharacter(seat=1, name=name, build=build, drives=drives)  # type: ignore[arg-type]


def table() -> list[object]:
    return list(Table(players=2).events)


def drives(spec: dict[str, int]) -> tuple[DriveSlot, ...]:
    return tuple(DriveSlot(name=d, strength=s) for d, s in spec.items())  # type: ignore[arg-type]


# -- R-CHAR-1, R-CHAR-2: freeform builds -----------------------------------------------------


def test_a_freeform_character_with_three_categories_is_created() -> None:
    """R-CHAR-2: powers 1..5, styles 1..4, attitudes 1..3 make a character of 12 abilities."""
    expected = tuple(
        Ability(name=f"{cat} {r}", category=cat, rating=r, super=cat == "power")
        for cat, k in (("power", 5), ("style", 4), ("attitude", 3))
        for r in range(1, k + 1)
    )
    given(table()).when(create(SUPER)).then(
        CharacterCreated(
            character=1,
            name="Nova",
            abilities=expected,  # type: ignore[arg-type]
            drives=drives(AURORA_DRIVES),
            created_by=1,
            method="freeform",
        )
    )


def test_a_mundane_character_has_skills_instead_of_powers() -> None:
    """R-CHAR-1 and R-CHAR-2: Skills, Styles and Attitudes, three of each, is the smallest
    freeform character: 9 abilities."""
    (created,) = given(table()).when(create(MUNDANE)).decide()
    assert isinstance(created, CharacterCreated)
    assert {a.category for a in created.abilities} == {"skill", "style", "attitude"}
    assert len(created.abilities) == 9


def test_a_character_may_not_have_both_powers_and_skills() -> None:
    """R-CHAR-1: never both Powers and Skills."""
    build = freeform(("power", 3), ("skill", 3), ("style", 3), ("attitude", 3))
    given(table()).when(create(build)).refused("R-CHAR-1")


def test_a_character_needs_powers_or_skills() -> None:
    """R-CHAR-1: Attitudes and Styles alone are not a character."""
    build = freeform(("style", 4), ("attitude", 4))
    given(table()).when(create(build)).refused("R-CHAR-1")


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(freeform(("power", 2), ("style", 5), ("attitude", 5)), id="two powers"),
        pytest.param(
            c.Freeform(
                abilities=(
                    *specs("power", [1, 2, 3, 4, 5, 5]),
                    *specs("style", [1, 2, 3]),
                    *specs("attitude", [1, 2, 3]),
                )
            ),
            id="six powers",
        ),
        pytest.param(freeform(("power", 5), ("style", 5), ("attitude", 3)), id="13 in all"),
        pytest.param(
            c.Freeform(
                abilities=(
                    *specs("power", [1, 2, 2]),
                    *specs("style", [1, 2, 3]),
                    *specs("attitude", [1, 2, 3]),
                )
            ),
            id="a rating twice",
        ),
        pytest.param(
            c.Freeform(
                abilities=(
                    *specs("power", [1, 2, 4]),
                    *specs("style", [1, 2, 3]),
                    *specs("attitude", [1, 2, 3]),
                )
            ),
            id="a rating skipped",
        ),
        pytest.param(
            c.Freeform(
                abilities=(
                    *specs("power", [1, 2, 3]),
                    c.AbilitySpec(name="power 1", category="style", rating=1),
                    *specs("style", [1, 2, 3])[1:],
                    *specs("attitude", [1, 2, 3]),
                )
            ),
            id="a name twice",
        ),
    ],
)
def test_a_freeform_build_that_breaks_the_shape_is_refused(build: c.Freeform) -> None:
    """R-CHAR-2: 3-5 abilities a category, at most 12, ratings exactly 1..k, distinct names."""
    given(table()).when(create(build)).refused("R-CHAR-2")


# -- R-CHAR-3: click-and-lock ----------------------------------------------------------------

POWER_SET = c.Module(name="Brick", abilities=("Might", "Toughness", "Leap", "Roar", "Grip"),
                     styles=("Smash", "Stomp", "Shrug"))
PERSONA = c.Module(name="Grump", abilities=("Surly", "Loyal", "Lazy", "Proud", "Blunt"),
                   styles=("Glare", "Sigh"))
#: One crossed out from each column; the twelve left rated 1..4 in each column.
CROSSED = ("Grip", "Shrug", "Blunt")
RATINGS = {
    "Might": 1, "Toughness": 2, "Leap": 3, "Roar": 4,
    "Smash": 1, "Stomp": 2, "Glare": 3, "Sigh": 4,
    "Surly": 1, "Loyal": 2, "Lazy": 3, "Proud": 4,
}


def click_and_lock(
    *,
    kind: str = "power",
    power_set: c.Module = POWER_SET,
    persona: c.Module = PERSONA,
    crossed: tuple[str, ...] = CROSSED,
    ratings: dict[str, int] = RATINGS,
) -> c.ClickAndLock:
    return c.ClickAndLock(set_kind=kind, set=power_set, persona=persona,  # type: ignore[arg-type]
                          crossed_out=crossed, ratings=ratings)


def test_a_click_and_lock_character_is_a_set_and_a_persona_less_three_abilities() -> None:
    """R-CHAR-3 and R-CHAR-4: a Power Set's powers and styles are super, the Persona's styles
    and attitudes mundane; twelve abilities remain."""
    events = given(table()).when(create(click_and_lock())).decide()
    (created,) = events
    assert isinstance(created, CharacterCreated) and created.method == "click-and-lock"
    kept = {a.name: (a.category, a.rating, a.super) for a in created.abilities}
    assert kept == {
        "Might": ("power", 1, True), "Toughness": ("power", 2, True),
        "Leap": ("power", 3, True), "Roar": ("power", 4, True),
        "Smash": ("style", 1, True), "Stomp": ("style", 2, True),
        "Glare": ("style", 3, False), "Sigh": ("style", 4, False),
        "Surly": ("attitude", 1, False), "Loyal": ("attitude", 2, False),
        "Lazy": ("attitude", 3, False), "Proud": ("attitude", 4, False),
    }


def test_a_skill_set_makes_a_mundane_click_and_lock_character() -> None:
    """R-CHAR-3 and R-CHAR-4: a Skill Set's skills and styles are mundane."""
    (created,) = given(table()).when(create(click_and_lock(kind="skill"))).decide()
    assert isinstance(created, CharacterCreated)
    assert {a.category for a in created.abilities} == {"skill", "style", "attitude"}
    assert not any(a.super for a in created.abilities)


@pytest.mark.parametrize(
    "build",
    [
        pytest.param(click_and_lock(crossed=("Grip", "Roar", "Leap")), id="all from one column"),
        pytest.param(click_and_lock(crossed=("Grip", "Shrug", "Nobody")), id="not in the build"),
        pytest.param(click_and_lock(crossed=("Grip", "Grip", "Blunt")), id="one crossed twice"),
        pytest.param(
            click_and_lock(power_set=c.Module(name="Thin", abilities=POWER_SET.abilities,
                                              styles=("Smash", "Stomp"))),
            id="a set with two styles",
        ),
        pytest.param(
            click_and_lock(persona=c.Module(name="Wordy", abilities=PERSONA.abilities,
                                            styles=("Glare", "Sigh", "Shrug2"))),
            id="a persona with three styles",
        ),
        pytest.param(
            click_and_lock(ratings={k: v for k, v in RATINGS.items() if k != "Sigh"}),
            id="a kept ability unrated",
        ),
        pytest.param(click_and_lock(ratings={**RATINGS, "Grip": 5}), id="a crossed one rated"),
        pytest.param(
            click_and_lock(persona=c.Module(name="Echo", styles=PERSONA.styles,
                                            abilities=("Might", *PERSONA.abilities[1:]))),
            id="a name twice",
        ),
    ],
)
def test_a_click_and_lock_build_that_breaks_its_shape_is_refused(build: c.ClickAndLock) -> None:
    """R-CHAR-3: 5+3 and 5+2, three crossed out (not all from one column), the rest rated."""
    given(table()).when(create(build)).refused("R-CHAR-3")


def test_a_click_and_lock_build_must_still_rate_each_column_one_to_k() -> None:
    """R-CHAR-3 with R-CHAR-2: what is left must be rated 1..k in each column."""
    build = click_and_lock(ratings={**RATINGS, "Roar": 3})
    given(table()).when(create(build)).refused("R-CHAR-2")


# -- R-CHAR-4: super and mundane -------------------------------------------------------------


def test_powers_are_super_skills_and_attitudes_mundane_and_styles_as_chosen() -> None:
    """R-CHAR-4: a power is super (marked so or not), an attitude mundane; a style is what was
    chosen."""
    build = c.Freeform(
        abilities=(
            *specs("power", [1]),
            c.AbilitySpec(name="power 2", category="power", rating=2, super=True),
            c.AbilitySpec(name="power 3", category="power", rating=3, super=True),
            *specs("attitude", [1, 2, 3]),
            c.AbilitySpec(name="Flashy", category="style", rating=1, super=True),
            c.AbilitySpec(name="Plain", category="style", rating=2, super=False),
            c.AbilitySpec(name="Dashing", category="style", rating=3, super=True),
        )
    )
    (created,) = given(table()).when(create(build)).decide()
    assert isinstance(created, CharacterCreated)
    kinds = {a.name: a.super for a in created.abilities}
    assert kinds == {
        "power 1": True, "power 2": True, "power 3": True,
        "attitude 1": False, "attitude 2": False, "attitude 3": False,
        "Flashy": True, "Plain": False, "Dashing": True,
    }


@pytest.mark.parametrize("category", ["attitude", "skill"])
def test_a_skill_or_an_attitude_asked_to_be_super_is_refused(category: Category) -> None:
    """R-CHAR-4: Skills and Attitudes are always mundane, so one sent with ``super`` is
    refused, naming the field and the ability, never made mundane in silence."""
    main: Category = "skill" if category == "skill" else "power"
    build = c.Freeform(
        abilities=(*specs(main, [1, 2, 3]), *specs("style", [1, 2, 3]),
                   *specs("attitude", [1, 2, 3]))
    )
    marked = c.Freeform(abilities=tuple(
        c.AbilitySpec(name=a.name, category=a.category, rating=a.rating,
                      super=a.super or a.name == f"{category} 2")
        for a in build.abilities))
    error = given(table()).when(create(marked)).refused("R-CHAR-4")
    assert "super" in error.reason and f"{category} 2" in error.reason, error.reason
    given(table()).when(create(build)).decide()


# -- R-CHAR-5: Drives -------------------------------------------------------------------------


def test_five_drives_heroic_and_villainous_summing_to_nine_are_accepted() -> None:
    """R-CHAR-5: any five of the ten Drives, strengths 1-5 adding up to 9."""
    spec = {"Justice": 1, "Pride": 2, "Fear": 1, "Love": 4, "Despair": 1}
    (created,) = given(table()).when(create(SUPER, spec)).decide()
    assert isinstance(created, CharacterCreated) and created.drives == drives(spec)


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"Justice": 3, "Hope": 2, "Truth": 2, "Love": 1, "Duty": 2}, id="sum 10"),
        pytest.param({"Justice": 2, "Hope": 2, "Truth": 2, "Love": 1, "Duty": 1}, id="sum 8"),
        pytest.param({"Justice": 3, "Hope": 3, "Truth": 2, "Love": 1}, id="four Drives"),
        pytest.param(
            {"Justice": 1, "Hope": 1, "Truth": 1, "Love": 1, "Duty": 1, "Fear": 4},
            id="six Drives",
        ),
        pytest.param({"Justice": 6, "Hope": 1, "Truth": 1, "Love": 1, "Duty": 0}, id="0 and 6"),
        pytest.param(
            {UNDIFFERENTIATED: 5, "Hope": 1, "Truth": 1, "Love": 1, "Duty": 1},
            id="not a Drive",
        ),
    ],
)
def test_drives_must_be_five_of_the_ten_summing_to_exactly_nine(spec: dict[str, int]) -> None:
    """R-CHAR-5: five Drives of the ten, each 1-5, adding up to exactly 9."""
    given(table()).when(create(SUPER, spec)).refused("R-CHAR-5")


def test_a_character_without_drives_is_undifferentiated_with_one_stack() -> None:
    """R-CHAR-5: no Drives chosen: a single Debt stack, Overdrawn above 5."""
    (created,) = given(table()).when(create(SUPER, None)).decide()
    assert isinstance(created, CharacterCreated)
    assert created.drives == (DriveSlot(name=UNDIFFERENTIATED, strength=5),)


@pytest.mark.parametrize(("debt", "overdrawn"), [(5, ()), (6, ((BRUTE, UNDIFFERENTIATED),))])
def test_an_undifferentiated_character_is_overdrawn_above_five_debt(
    debt: int, overdrawn: tuple[tuple[int, str], ...]
) -> None:
    """R-CHAR-5: Brute (1 Debt from his roll, allied to side 1) is checked at the next page
    only once his stack holds more than 5."""
    t = love_overdrawn(stake=True)
    earlier_debt(t, BRUTE, UNDIFFERENTIATED, debt - 1)
    given(t.events).when(c.EndTurn(seat=2)).then_includes(
        PageStarted(
            scene=1,
            page=2,
            starter=1,
            overdrawn=tuple(OverdrawnDrive(character=ch, drive=d) for ch, d in overdrawn),  # type: ignore[arg-type]
        )
    )


def test_an_undifferentiated_character_stakes_at_most_three_on_one_conflict() -> None:
    """R-CHAR-5: Brute holds 5 Debt but may stake only 3 on a Conflict (refused as R-STAKE-1,
    the staking rule that applies the limit)."""
    t = love_overdrawn(stake=True)
    earlier_debt(t, BRUTE, UNDIFFERENTIATED, 4)
    given(t.events).when(
        c.StakeDebt(seat=2, conflict=1, die=2, amount=4)
    ).refused("R-STAKE-1")
    given(t.events).when(c.StakeDebt(seat=2, conflict=1, die=2, amount=3)).decide()


# -- R-CHAR-6: Exemplars ----------------------------------------------------------------------


def test_a_character_may_take_another_as_exemplar_through_one_of_its_drives() -> None:
    """R-CHAR-6: Aurora links to Brute through Justice."""
    t = characters_built()
    given(t.events).when(
        c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Justice")
    ).then(ExemplarLinked(character=AURORA, exemplar=BRUTE, drive="Justice"))


@pytest.mark.parametrize(
    "link",
    [
        pytest.param(c.LinkExemplar(seat=1, character=AURORA, exemplar=AURORA, drive="Justice"),
                     id="itself"),
        pytest.param(c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Fear"),
                     id="a Drive it lacks"),
        pytest.param(c.LinkExemplar(seat=2, character=BRUTE, exemplar=AURORA,
                                    drive=UNDIFFERENTIATED),  # type: ignore[arg-type]
                     id="undifferentiated"),
    ],
)
def test_an_exemplar_needs_another_character_and_a_drive_of_its_own(
    link: c.LinkExemplar,
) -> None:
    """R-CHAR-6: the link is to another character, through one of the character's Drives."""
    given(characters_built().events).when(link).refused("R-CHAR-6")


def test_the_same_exemplar_is_linked_only_once() -> None:
    """R-CHAR-6: one link per pair."""
    t = characters_built()
    t(c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Justice"))
    given(t.events).when(
        c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Hope")
    ).refused("R-CHAR-6")


def exemplars_on_seat_2s_go() -> Table:
    """Aurora has Brute as Exemplar; seat 1 chose Aurora and seat 2 Brute, on seat 2's go."""
    t = characters_built(tokens=1)
    t(c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Justice"))
    t(c.FrameScene(seat=1))
    t(c.ChooseCharacter(seat=1, character=AURORA), c.PassClaiming(seat=1))
    t(c.ChooseCharacter(seat=2, character=BRUTE))
    return t


FREE = c.CreateConflict(seat=2, text="Old friends, old grudges", free_for=(AURORA, BRUTE))


def test_an_exemplar_pair_adds_its_free_conflict_at_no_cost() -> None:
    """R-CHAR-6: both in the scene; the player of either adds their Free Conflict for free."""
    given(exemplars_on_seat_2s_go().events).when(FREE).then(
        created(FREE, free_for=(AURORA, BRUTE))
    )


def test_the_free_conflict_is_added_once_a_scene() -> None:
    """R-CHAR-6: a second Free Conflict of the same pair in the scene is refused."""
    t = exemplars_on_seat_2s_go()
    t(FREE)
    given(t.events).when(FREE).refused("R-CHAR-6")


def test_the_free_conflict_needs_both_characters_in_the_scene() -> None:
    """R-CHAR-6: before Brute is chosen, Aurora's player cannot add it."""
    t = characters_built()
    t(c.LinkExemplar(seat=1, character=AURORA, exemplar=BRUTE, drive="Justice"))
    t(c.FrameScene(seat=1), c.ChooseCharacter(seat=1, character=AURORA))
    free = c.CreateConflict(seat=1, text="Where is Brute?", free_for=(AURORA, BRUTE))
    given(t.events).when(free).refused("R-CHAR-6")


def test_only_a_player_of_the_pair_adds_their_free_conflict() -> None:
    """R-CHAR-6: Mia's player cannot add Aurora and Brute's Free Conflict."""
    t = exemplars_on_seat_2s_go()
    t(c.PassClaiming(seat=2), c.ChooseCharacter(seat=3, character=MIA))
    free = c.CreateConflict(seat=3, text="Not mine", free_for=(AURORA, BRUTE))
    given(t.events).when(free).refused("R-CHAR-6")


def test_characters_that_are_not_exemplars_have_no_free_conflict() -> None:
    """R-CHAR-6: Brute and Mia are not linked."""
    t = exemplars_on_seat_2s_go()
    t(c.PassClaiming(seat=2), c.ChooseCharacter(seat=3, character=MIA))
    free = c.CreateConflict(seat=3, text="Strangers", free_for=(MIA, BRUTE))
    given(t.events).when(free).refused("R-CHAR-6")


def test_a_conflict_created_in_a_turn_is_no_exemplar_pairs_free_conflict() -> None:
    """R-CHAR-6: a Free Conflict is put on the table during claiming (R-PAGE-3); a Conflict
    made as a turn's one thing naming ``free_for`` is refused, naming the field, not made
    without it in silence (the pair keeps its Free Conflict for the claiming)."""
    t = exemplars_on_seat_2s_go()
    t(c.PassClaiming(seat=2), c.ChooseCharacter(seat=3, character=MIA))
    play_on(t, until=lambda s: s.page is not None and s.page.phase == "free_play")
    start_turn(t, AURORA)
    in_turn = c.CreateConflict(seat=1, text="Old friends, old grudges", free_for=(AURORA, BRUTE))
    error = given(t.events).when(in_turn).refused("R-CHAR-6")
    assert "free_for" in error.reason, error.reason
    given(t.events).when(c.CreateConflict(seat=1, text="Old friends, old grudges")).decide()


# -- R-CHAR-7: Overdrawn ---------------------------------------------------------------------


def test_a_drive_is_overdrawn_when_its_unstaked_debt_exceeds_its_strength() -> None:
    """R-CHAR-7: Aurora's Love (strength 1) holds 2 Debt: the next page checks it."""
    t = love_overdrawn(stake=False)
    given(t.events).when(c.EndTurn(seat=2)).then_includes(
        PageStarted(
            scene=1, page=2, starter=1,
            overdrawn=(OverdrawnDrive(character=AURORA, drive="Love"),),
        )
    )


def test_staked_debt_does_not_count_towards_overdrawn() -> None:
    """R-CHAR-7: of Aurora's 2 Love Debt, 1 is staked; the 1 left does not exceed strength 1."""
    t = love_overdrawn(stake=True)
    given(t.events).when(c.EndTurn(seat=2)).then_includes(
        PageStarted(scene=1, page=2, starter=1, overdrawn=())
    )


def test_debt_equal_to_the_strength_is_not_overdrawn() -> None:
    """R-CHAR-7: "exceeds": Aurora's Justice (strength 3) with 3 Debt is not Overdrawn."""
    t = love_overdrawn(stake=True)
    earlier_debt(t, AURORA, "Justice", 3)
    given(t.events).when(c.EndTurn(seat=2)).then_includes(
        PageStarted(scene=1, page=2, starter=1, overdrawn=())
    )


# -- R-X-CHAR-1: unique names -----------------------------------------------------------------


def test_two_characters_cannot_share_a_name() -> None:
    """R-X-CHAR-1: character names are unique within a campaign."""
    t = Table(players=2)
    t(create(SUPER, name="Nova"))
    given(t.events).when(create(MUNDANE, None, name="Nova")).refused("R-X-CHAR-1")
