"""Stories, and setting up a scene: tokens, Complications, Prominence, balancing
(C-HERO-4, C-SCENE-1, C-PROM-*, C-COMP-1, C-COMP-2, C-INSP-2, C-INSP-3, C-VP-1, C-VP-4)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

from ..errors import ChoiceRequired, InvalidReference, RuleViolation
from .commands import (
    AddComplication,
    Balance,
    BeginStory,
    BuyProminence,
    PassSetup,
    StartScene,
    UseInspiration,
)
from .decider import apply, handle, progression
from .events import (
    ComplicationCreated,
    Event,
    PageStarted,
    PlayBegan,
    ProminenceBalanced,
    ProminenceBought,
    SceneStarted,
    SetupPassed,
    SetupStepBegan,
    StoryBegun,
    TokensGiven,
)
from .heroes import sharing_fails
from .model import FACTIONS, CampaignState, Complication, Die, Faction, Inspiration, Scene, Side
from .table import (
    add_tokens,
    character,
    require_cursor,
    require_editor,
    require_scene,
    require_seat,
    with_complication,
    with_player,
    with_scene,
)

replace = msgspec.structs.replace

MIN_PLAYERS = 2


def inspired_dice(card: Inspiration) -> tuple[int, int]:
    """C-INSP-3: (Hero die, Opponent die) of a Complication made from ``card``."""
    if card.bonus <= 1:
        return 1, 1
    return (card.bonus, 1) if card.faction == "hero" else (1, card.bonus)


def renamed(card: Inspiration, name: str) -> str:
    """C-INSP-3, C-X-INSP-1: a Complication made from ``card`` takes a new name, any but the
    card's own whatever its capitals (004: "He crosses out the old name and writes in a new
    one")."""
    if name.strip().casefold() == card.name.strip().casefold():
        raise RuleViolation("C-INSP-3", f"a Complication made from the {card.name} card takes "
                            "a new name (C-X-INSP-1)")
    return name


def new_complication(complication_id: int, name: str, hero: int, opponent: int) -> Complication:
    """C-COMP-1: a Hero side and an Opponent side, one die each."""
    return Complication(id=complication_id, name=name, sides=(
        Side(faction="hero", dice=(Die(id=1, value=hero),)),
        Side(faction="opponent", dice=(Die(id=2, value=opponent),)),
    ))


def balanced(scene: Scene) -> bool:
    """C-PROM-6: the two sides' Prominence totals are equal (and not both 0)."""
    hero, opponent = scene.total("hero"), scene.total("opponent")
    return hero == opponent and hero > 0


# -- stories ---------------------------------------------------------------------------------


@handle.register
def _begin_story(command: BeginStory, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    if state.story is not None:
        raise RuleViolation("C-VP-5", "a story is being played: it ends on its Victory Total")
    if len(state.players) < MIN_PLAYERS:
        raise RuleViolation("C-TABLE-1", f"a story needs at least {MIN_PLAYERS} players")
    editor = command.seat if command.editor is None else command.editor
    if editor != command.seat:
        # C-X-STORY-1: the Editor begins the story himself, fixing its Victory Total.
        raise RuleViolation("C-EDITOR-2", "the Editor begins the story and fixes its Victory "
                            f"Total: seat {editor} sends it")
    if any(ch.hero and ch.created_by == editor for ch in state.characters.values()):
        raise RuleViolation("C-TABLE-1", "the Editor has no hero")
    if not any(ch.hero for ch in state.characters.values()):
        # C-X-STORY-2: a story is told once there are heroes; its first scene names one
        # (C-PROM-2), so without one it could never start.
        raise RuleViolation("C-X-STORY-2", "a story needs a hero: a player other than the "
                            "Editor creates one first")
    failing = sharing_fails(state)
    if failing:
        # C-HERO-4: checked when a story begins, over every hero the campaign has.
        raise RuleViolation("C-HERO-4", "C-HERO-3: not sharing Exemplars as they must: "
                            + ", ".join(failing))
    return (StoryBegun(story=state.stories_played + 1, editor=editor,
                       victory_total=command.victory_total),)


@apply.register
def _story(event: StoryBegun, state: CampaignState) -> CampaignState:
    from .model import Story

    return replace(state, story=Story(number=event.story, editor=event.editor,
                                      victory_total=event.victory_total))


# -- starting a scene ------------------------------------------------------------------------


@handle.register
def _start_scene(command: StartScene, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    if state.story is None:
        raise RuleViolation("C-SCENE-1", "begin a story first")
    if state.scene is not None:
        raise RuleViolation("C-SCENE-1", "a scene is being played")
    require_editor(state, command.seat, "sets up a scene")
    events: list[Event] = []
    tokens = {p.seat: 1 for p in state.players}  # C-PROM-1, the Editor included
    featured = command.featured
    if state.story.scenes == 0:
        heroes = sorted(ch.id for ch in state.characters.values() if ch.hero)
        if featured is None:
            if not heroes:
                raise RuleViolation("C-PROM-2", "the first scene needs a hero to name")
            raise ChoiceRequired("C-PROM-2", "name the hero who gets two tokens", heroes,
                                 "featured")
        hero = character(state, featured)
        if not hero.hero:
            raise RuleViolation("C-PROM-2", f"{hero.name} is not a hero")
        tokens[hero.created_by] = 2
    elif featured is not None:
        raise RuleViolation("C-PROM-2", "only a story's first scene names a two-token hero")
    events.append(SceneStarted(
        scene=state.scenes_played + 1, featured=featured,
        tokens=tuple(TokensGiven(seat=s, count=n) for s, n in sorted(tokens.items()))))
    if featured is not None:
        # C-PROM-2: both tokens go into the named hero's Prominence at once (C-X-PROM-1: on
        # the Hero side).
        hero = state.characters[featured]
        events.append(ProminenceBought(seat=hero.created_by, character=featured, points=2,
                                       faction="hero", cost=2))
    events.append(SetupStepBegan(step="inspirations", seat=command.seat))
    return events


@apply.register
def _scene_started(event: SceneStarted, state: CampaignState) -> CampaignState:
    for given in event.tokens:
        state = add_tokens(state, given.seat, given.count)
    assert state.story is not None
    return replace(state, scene=Scene(number=event.scene, step="inspirations"),
                   story=replace(state.story, scenes=state.story.scenes + 1))


@apply.register
def _step(event: SetupStepBegan, state: CampaignState) -> CampaignState:
    return with_scene(state, step=event.step, cursor=event.seat, passes=0)


# -- Complications ---------------------------------------------------------------------------


@handle.register
def _use(command: UseInspiration, state: CampaignState) -> Iterable[Event]:
    player = require_seat(state, command)
    scene = require_scene(state, "inspirations")
    require_cursor(scene, command.seat)
    card = player.inspiration(command.inspiration)
    if card is None:
        raise InvalidReference(f"seat {command.seat} holds no Inspiration {command.inspiration}")
    hero, opponent = inspired_dice(card)
    return (ComplicationCreated(complication=state.next_complication,
                                name=renamed(card, command.name),
                                seat=command.seat, hero_die=hero, opponent_die=opponent,
                                inspiration=card.id),)


@handle.register
def _add(command: AddComplication, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    require_scene(state, "complications")
    require_editor(state, command.seat, "adds blank Complications at setup (C-COMP-2)")
    return (ComplicationCreated(complication=state.next_complication, name=command.name,
                                seat=command.seat),)


@apply.register
def _complication(event: ComplicationCreated, state: CampaignState) -> CampaignState:
    if event.inspiration is not None:
        # C-INSP-2: using an Inspiration uses it up.
        player = state.player(event.seat)
        state = with_player(state, event.seat, inspirations=tuple(
            i for i in player.inspirations if i.id != event.inspiration))
    c = new_complication(event.complication, event.name, event.hero_die, event.opponent_die)
    return replace(with_complication(state, c), next_complication=event.complication + 1)


@handle.register
def _pass(command: PassSetup, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state, "inspirations", "complications", "prominence")
    require_cursor(scene, command.seat)
    if scene.step == "complications" and not state.complications:
        raise RuleViolation("C-COMP-2", "a scene cannot begin with no Complication")
    return (SetupPassed(seat=command.seat, to=state.next_seat(command.seat)),)


@apply.register
def _passed(event: SetupPassed, state: CampaignState) -> CampaignState:
    assert state.scene is not None
    return with_scene(state, cursor=event.to, passes=state.scene.passes + 1)


# -- Prominence ------------------------------------------------------------------------------


def _side(state: CampaignState, scene: Scene, character_id: int, side: Faction | None,
          rule: str, sides: Sequence[Faction] = FACTIONS) -> Faction:
    """C-PROM-5: the side is declared once for the scene; asked for among ``sides``, those
    the move allows (a picker never offers a side the move then refuses), and taken without
    asking when the move allows one alone (docs/rules.md, "Refusals": a choice is asked for
    only among several; a picker of one choice asked the Editor to click it)."""
    declared = scene.faction.get(character_id)
    if declared is not None:
        if side is not None and side != declared:
            raise RuleViolation("C-PROM-5", f"declared on the {declared} side for the scene")
        return declared
    if side is None and len(sides) == 1:
        return sides[0]
    if side is None:
        raise ChoiceRequired(rule, "declare the character's side: "
                             + " or ".join(sides), list(sides), "side")
    return side


@handle.register
def _buy(command: BuyProminence, state: CampaignState) -> Iterable[Event]:
    player = require_seat(state, command)
    scene = require_scene(state, "prominence")
    require_cursor(scene, command.seat)
    who = character(state, command.character)
    if who.hero and who.created_by != command.seat:
        raise RuleViolation("C-PROM-3", f"{who.name} is another player's hero")
    if not who.full_sheet:
        raise RuleViolation("C-NPC-1", f"{who.name} needs a full sheet to receive Prominence")
    narrator = scene.narrator.get(who.id)
    if narrator is not None and narrator != command.seat:
        raise RuleViolation("C-PROM-3", f"seat {narrator} narrates {who.name} this scene")
    if player.tokens < command.points:
        raise RuleViolation("C-TABLE-3", f"{command.points} Prominence costs {command.points} "
                            f"Story Token(s); seat {command.seat} has {player.tokens}")
    faction = _side(state, scene, who.id, command.side, "C-PROM-5")
    return (ProminenceBought(seat=command.seat, character=who.id, points=command.points,
                             faction=faction, cost=command.points),)


@apply.register
def _bought(event: ProminenceBought, state: CampaignState) -> CampaignState:
    state = add_tokens(state, event.seat, -event.cost)
    scene = state.scene
    assert scene is not None
    moves = {"cursor": state.next_seat(event.seat), "passes": 0} if scene.step == "prominence" \
        else {}
    return with_scene(
        state, **moves,
        prominence={**scene.prominence, event.character:
                    scene.prominence.get(event.character, 0) + event.points},
        faction={**scene.faction, event.character: event.faction},
        narrator={**scene.narrator, event.character: event.seat})


@handle.register
def _balance(command: Balance, state: CampaignState) -> Iterable[Event]:
    require_seat(state, command)
    scene = require_scene(state, "balancing")
    require_editor(state, command.seat, "balances Prominence (C-PROM-6)")
    who = character(state, command.character)
    if who.hero:
        raise RuleViolation("C-PROM-6", "balancing adds Prominence to non-heroes only")
    if not who.full_sheet:
        raise RuleViolation("C-NPC-1", f"{who.name} needs a full sheet to receive Prominence")
    narrator = scene.narrator.get(who.id)
    if narrator is not None and narrator != command.seat \
            and who.id not in scene.added_by_editor:
        raise RuleViolation("C-PROM-6", f"seat {narrator} narrates {who.name}: balancing uses "
                            "characters new to the scene or the Editor's own")
    hero, opponent = scene.total("hero"), scene.total("opponent")
    # The points first, the side after: choices come last (docs/rules.md, "Refusals").
    sides: tuple[Faction, ...] = FACTIONS
    if hero == opponent == 0:
        # C-PROM-6: with both totals 0, one point to a character on each side.
        if command.points != 1:
            raise RuleViolation("C-PROM-6", "with both sides at 0, the Editor gives 1 point")
    else:
        sides = ("hero" if hero < opponent else "opponent",)
        if command.points > abs(hero - opponent):
            raise RuleViolation("C-PROM-6", f"balancing adds exactly the difference, "
                                f"{abs(hero - opponent)}, and no more")
    faction = _side(state, scene, who.id, command.side, "C-PROM-6", sides)
    if faction not in sides:
        raise RuleViolation("C-PROM-6", f"only the lower side ({sides[0]}) is balanced")
    hand_to = command.narrator if command.narrator is not None else (narrator or command.seat)
    if not 1 <= hand_to <= len(state.players):
        raise InvalidReference(f"no seat {hand_to} at this table")
    return (ProminenceBalanced(character=who.id, points=command.points, faction=faction,
                               narrator=hand_to),)


@apply.register
def _balanced(event: ProminenceBalanced, state: CampaignState) -> CampaignState:
    scene = state.scene
    assert scene is not None
    added = scene.added_by_editor
    return with_scene(
        state,
        prominence={**scene.prominence, event.character:
                    scene.prominence.get(event.character, 0) + event.points},
        faction={**scene.faction, event.character: event.faction},
        narrator={**scene.narrator, event.character: event.narrator},
        added_by_editor=added if event.character in added else (*added, event.character))


@apply.register
def _play(event: PlayBegan, state: CampaignState) -> CampaignState:
    # C-SCENE-1: every Block is cleared; C-PROM-7: Prominence is fixed from now on.
    characters = {i: replace(ch, blocked=(), used=()) for i, ch in state.characters.items()}
    state = replace(state, characters=characters)
    return with_scene(state, target=event.target, step="play")


@apply.register
def _page(event: PageStarted, state: CampaignState) -> CampaignState:
    characters = {i: replace(ch, used=()) if ch.used else ch
                  for i, ch in state.characters.items()}
    state = replace(state, characters=characters)
    return with_scene(state, page=event.page, step="claims", cursor=event.seat, passes=0,
                      claims=(), overdrawn=(), turn=0, acted=(), action=None, fresh=True)


# -- forced moves of setup -------------------------------------------------------------------


def _can_buy(state: CampaignState, seat: int) -> bool:
    scene = state.scene
    assert scene is not None
    if state.player(seat).tokens < 1:
        return False
    return any(
        ch.full_sheet and (ch.created_by == seat if ch.hero else True)
        and scene.narrator.get(ch.id, seat) == seat
        for ch in state.characters.values())


@progression
def _setup(state: CampaignState) -> Iterable[Event]:
    scene, editor = state.scene, state.editor
    if scene is None or editor is None:
        return ()
    n = len(state.players)
    if scene.step == "inspirations":
        # One go each, from the Editor; a seat with no card has nothing to do (C-SRV-3).
        if scene.passes >= n:
            return (SetupStepBegan(step="complications", seat=editor),)
        if not state.player(scene.cursor).inspirations:
            return (SetupPassed(seat=scene.cursor, to=state.next_seat(scene.cursor)),)
    elif scene.step == "complications":
        if scene.passes:
            return (SetupStepBegan(step="prominence", seat=editor),)
    elif scene.step == "prominence":
        # C-TABLE-2: round until every player passes in a row.
        if scene.passes >= n:
            if balanced(scene):
                return (PlayBegan(target=sum(scene.prominence.values())),)
            return (SetupStepBegan(step="balancing", seat=editor),)
        if not _can_buy(state, scene.cursor):
            return (SetupPassed(seat=scene.cursor, to=state.next_seat(scene.cursor)),)
    elif scene.step == "balancing":
        if balanced(scene):
            # C-VP-1: the Target is the total Prominence, balancing included.
            return (PlayBegan(target=sum(scene.prominence.values())),)
    elif scene.step == "play":
        return (PageStarted(page=scene.page + 1, seat=editor),)
    return ()
