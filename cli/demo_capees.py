"""``capes demo --edition capees``: a scripted CAPEES! scene from 004's own example, played
through the real application.

The Editor, Alice (Night Maiden) and Joe (Silverstar): Silverstar is named for the story's
first scene, Night Maiden buys her way in, the Editor balances with the robbers and Chief
Mannelli; the Chief's Angry glare lifts the robbers' die on Robbery, Night Maiden takes
Hostages back and the Chief reacts to her, Silverstar's Naive Optimism wins Robbery; on page 2
both heroes claim, both claims resolve into Inspirations, and the heroes' Victory Points reach
the Target: the scene ends. The dice are scripted (``ScriptedDice``) so the story comes out the
same every time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from uuid import UUID

from application.campaigns import Campaigns
from application.dice import ScriptedDice
from domain.capees import commands as c
from domain.capees.actions import asked
from domain.capees.events import PageEnded, SceneEnded
from domain.capees.views import board, ledgers

from .render import board_text, ledgers_text

#: The dice the script needs, in the order it rolls them.
DEMO_DICE = (5, 4, 2, 6)

EDITOR, ALICE, JOE = 1, 2, 3
SUPREME, BLACK_JACK, BECKY, GRACE, ROBBERS, CHIEF = 1, 2, 3, 4, 5, 6
NIGHT_MAIDEN, SILVERSTAR = 7, 8
ROBBERY, HOSTAGES = 1, 2
#: A step that passes every reaction the table is asked for, until the round closes.
PASS_REACTIONS = "pass reactions"


def _ladder(names: Iterable[str], kind: str, supers: Iterable[str] = ()
            ) -> list[c.AbilitySpec]:
    marked = set(supers)
    return [c.AbilitySpec(name=n, type=kind, rating=i + 1, super=n in marked)  # type: ignore[arg-type]
            for i, n in enumerate(names)]


def _sheet(powers: Iterable[str], attitudes: Iterable[str], tropes: Iterable[str],
           supers: Iterable[str] = (), kind: str = "power") -> tuple[c.AbilitySpec, ...]:
    return tuple(_ladder(powers, kind) + _ladder(attitudes, "attitude")
                 + _ladder(tropes, "trope", supers))


SILVERSTAR_SHEET = _sheet(
    ("Built-in BIG GUNS", "High-Tech Sensors", "Super Strength"),
    ("Confused about humans", "Teenage Angst", 'Cold "Terminator" Mode', "Naive Optimism"),
    ("Feats of computer calculation", "Scan the crowd", "Reboot", "Shrug it off",
     "Massive Property Damage"))
NIGHT_MAIDEN_SHEET = _sheet(
    ("Shadow Step", "Night Sight", "Shadow Strike"),
    ("Aloof", "Vengeful", "Protective", "Fearless"),
    ("Vanish", "Glare venomously", "Dramatic entrance", "Last word", "Cold fury"),
    supers=("Glare venomously", "Cold fury"))
CHIEF_SHEET = _sheet(("Police radio", "Sharpshooting", "Command"),
                     ("Calm", "Angry", "Stubborn", "Honest"),
                     ("By the book", "Call for backup", "Grumble", "Old cop's hunch",
                      "Last stand"), kind="skill")
ROBBERS_SHEET = _sheet(("Getaway driving", "Lockpicking", "Intimidation"),
                       ("Greedy", "Nervous", "Reckless", "Loyal"),
                       ("Scatter", "Hostage bluff", "Smoke bomb", "Double-cross", "Last heist"),
                       kind="skill")
NPC_DRIVES = {"Greed": 2, "Fear": 2, "Loyalty": 2, "Rage": 2, "Need": 1}
CHIEF_DRIVES = {"Order": 2, "Pride": 2, "Duty": 2, "Anger": 2, "Doubt": 1}

SCRIPT: list[tuple[str, Any]] = [
    ("", c.SeatPlayer(name="Editor")),
    ("", c.SeatPlayer(name="Alice")),
    ("", c.SeatPlayer(name="Joe")),
    ("", c.CreateCharacter(seat=EDITOR, name="Supreme")),
    ("", c.CreateCharacter(seat=EDITOR, name="Black Jack")),
    ("", c.CreateCharacter(seat=EDITOR, name="Becky Tesla")),
    ("", c.CreateCharacter(seat=EDITOR, name="Sister Grace")),
    ("", c.CreateCharacter(seat=EDITOR, name="the robbers", drives=NPC_DRIVES,
                           abilities=ROBBERS_SHEET)),
    ("", c.CreateCharacter(seat=EDITOR, name="Chief Mannelli", drives=CHIEF_DRIVES,
                           abilities=CHIEF_SHEET)),
    ("", c.CreateCharacter(seat=ALICE, name="Night Maiden", hero=True,
                           drives={"Justice": 2, "Truth": 2, "Love": 2, "Hope": 1, "Duty": 2},
                           exemplars={"Love": SUPREME, "Truth": BLACK_JACK, "Hope": GRACE},
                           abilities=NIGHT_MAIDEN_SHEET)),
    ("", c.CreateCharacter(seat=JOE, name="Silverstar", hero=True,
                           drives={"Justice": 1, "Truth": 3, "Love": 2, "Hope": 2, "Duty": 1},
                           exemplars={"Truth": BLACK_JACK, "Love": SUPREME, "Duty": BECKY},
                           abilities=SILVERSTAR_SHEET)),
    ("A new story begins in Millennium City", c.BeginStory(seat=EDITOR, editor=EDITOR,
                                                             victory_total=12)),
    ("Silverstar is on the front page this morning", c.StartScene(seat=EDITOR,
                                                                   featured=SILVERSTAR)),
    ("Robbers hit the First National", c.AddComplication(seat=EDITOR, name="Robbery")),
    ("They have taken the tellers", c.AddComplication(seat=EDITOR, name="Hostages")),
    ("", c.PassSetup(seat=EDITOR)),
    ("", c.PassSetup(seat=EDITOR)),
    ("Night Maiden drops from the rooftops", c.BuyProminence(
        seat=ALICE, character=NIGHT_MAIDEN, side="hero")),
    ("", c.PassSetup(seat=EDITOR)),
    ("The robbers", c.Balance(seat=EDITOR, character=ROBBERS, side="opponent")),
    ("Chief Mannelli wants nobody in capes on his crime scene", c.Balance(
        seat=EDITOR, character=CHIEF, points=2, side="opponent")),
    # Page 1: nobody Controls anything yet, so nobody claims; turn 1.
    ("", c.StartAction(seat=EDITOR, character=CHIEF)),
    ("The Chief's anger fires up the robbers", c.RollAbility(
        seat=EDITOR, ability="Angry", complication=ROBBERY, die=2)),
    ("", c.KeepRoll(seat=EDITOR)),
    ("", PASS_REACTIONS),
    ("", c.EndAction(seat=EDITOR)),
    ("", c.StartAction(seat=EDITOR, character=ROBBERS)),
    ("", c.EndAction(seat=EDITOR)),
    ("", c.StartAction(seat=ALICE)),
    ("Night Maiden strikes from the shadows", c.RollAbility(
        seat=ALICE, ability="Shadow Strike", complication=HOSTAGES, die=1, drive="Justice")),
    ("", c.KeepRoll(seat=ALICE)),
    ("", c.PassReaction(seat=ALICE)),
    ("", c.PassReaction(seat=JOE)),
    ("'Stand down, lady!'", c.React(
        seat=EDITOR, character=CHIEF, ability="Old cop's hunch")),
    ("", c.KeepRoll(seat=EDITOR)),
    ("", PASS_REACTIONS),
    ("", c.EndAction(seat=ALICE)),
    ("", c.StartAction(seat=JOE)),
    ("Silverstar simply asks the robbers to give up", c.RollAbility(
        seat=JOE, ability="Naive Optimism", complication=ROBBERY, die=1)),
    ("", c.KeepRoll(seat=JOE)),
    ("", c.EndAction(seat=JOE)),
    # Turn 2: the Prominence-2 characters.
    ("", c.StartAction(seat=EDITOR)),
    ("", c.EndAction(seat=EDITOR)),
    ("", c.StartAction(seat=JOE)),
    ("", c.EndAction(seat=JOE)),
    # Page 2: both heroes claim.
    ("Night Maiden will get the tellers out", c.Claim(
        seat=ALICE, character=NIGHT_MAIDEN, complication=HOSTAGES)),
    ("Silverstar stands in the bank's doorway", c.Claim(
        seat=JOE, character=SILVERSTAR, complication=ROBBERY)),
    ("", c.StartAction(seat=EDITOR, character=CHIEF)),
    ("", c.EndAction(seat=EDITOR)),
    ("", c.StartAction(seat=EDITOR, character=ROBBERS)),
    ("", c.EndAction(seat=EDITOR)),
    ("", c.StartAction(seat=ALICE)),
    ("", c.EndAction(seat=ALICE)),
    ("", c.StartAction(seat=JOE)),
    ("", c.EndAction(seat=JOE)),
    ("", c.StartAction(seat=EDITOR)),
    ("", c.EndAction(seat=EDITOR)),
    ("", c.StartAction(seat=JOE)),
    ("", c.EndAction(seat=JOE)),
    ("The tellers walk out; the police take over", c.CheckClaim(
        seat=ALICE, complication=HOSTAGES, replacement="Police")),
    ("The robbers surrender; one of them got away", c.CheckClaim(
        seat=JOE, complication=ROBBERY, replacement="Getaway")),
]


def play_capees_demo(app: Campaigns, out: Callable[[str], None] = print) -> UUID:
    """Play the script into ``app`` (whose dice must be DEMO_DICE); the campaign's id."""
    created = app.create(c.CreateCampaign(name="Demo: Millennium City"))
    campaign = created.campaign_id
    names: dict[int, str] = {}
    for narration, command in SCRIPT:
        if command == PASS_REACTIONS:
            while (seat := asked(app.state(campaign))) is not None:
                app.execute(campaign, c.PassReaction(seat=seat))
            continue
        outcome = app.execute(campaign, command, narration=narration)
        names = {ch.id: ch.name for ch in outcome.state.characters.values()}
        if narration:
            seat = getattr(command, "seat", 0)
            out(f"seat {seat}: {narration}" if seat else narration)
        for record in outcome.events:
            if isinstance(record.event, PageEnded | SceneEnded):
                state = app.state(campaign, version=record.originator_version)
                what = (f"page {record.event.page}" if isinstance(record.event, PageEnded)
                        else f"scene {record.event.scene}")
                out(f"\n-- end of {what}")
                out(board_text(board(state), names))
                out(ledgers_text(ledgers(state)))
                out("")
    return campaign


def demo_dice() -> ScriptedDice:
    return ScriptedDice(DEMO_DICE)
