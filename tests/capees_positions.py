"""Positions of a CAPEES! table where a move's form, listing every character or Complication,
would offer choices the rules refuse: Buy Prominence, Balance, Claim and Stake's "Whose Debt"
(C-PROM-3, C-PROM-6, C-CLAIM-1, C-CLAIM-2, C-STAKE-5), and one where a resolution waits for
another player's Story Tokens (C-RES-3).

Each is a script of ``(narration, command)`` steps in the shape of ``cli.demo_capees.SCRIPT``
(004's example: the Editor, Alice and Joe), mostly the demo's own steps, so the same position
is reached in process (the views' tests) and over HTTP by a browser test's seats.
"""

from __future__ import annotations

from typing import Any

import msgspec

from cli.demo_capees import (
    ALICE,
    CHIEF,
    CHIEF_SHEET,
    DEMO_DICE,
    EDITOR,
    HOSTAGES,
    JOE,
    NIGHT_MAIDEN,
    NPC_DRIVES,
    PASS_REACTIONS,
    ROBBERS,
    ROBBERS_SHEET,
    ROBBERY,
    SCRIPT,
    SILVERSTAR,
)
from domain.capees import commands as c
from domain.capees.actions import asked
from scripts.capees_table import Table

Script = list[tuple[str, Any]]
#: The character made after the demo's cast (:data:`BALANCING_NARRATED`, :data:`STAKING`).
MINION = THE_DRIVER = 9


def played(script: Script, dice: tuple[int, ...] = DEMO_DICE) -> Table:
    """A table of the Editor, Alice and Joe played in process through ``script``."""
    t = Table(players=("Editor", "Alice", "Joe"), dice=dice)
    for _, command in script:
        if command == PASS_REACTIONS:
            while (seat := asked(t.state)) is not None:
                t(c.PassReaction(seat=seat))
        elif not isinstance(command, c.SeatPlayer):
            t(command)
    return t


def until(narration: str, script: Script = SCRIPT) -> Script:
    """The demo's steps before the first one narrated ``narration``."""
    return script[:next(i for i, (said, _) in enumerate(script) if said == narration)]


def _after(narration: str, script: Script, *steps: tuple[str, Any]) -> Script:
    """``script`` with ``steps`` inserted just after the step narrated ``narration``."""
    at = len(until(narration, script)) + 1
    return [*script[:at], *steps, *script[at:]]


#: Prominence, Alice's chance: the Editor did not pass but bought the robbers' Prominence
#: first. Alice may buy for Night Maiden and Chief Mannelli, and for nobody else: Silverstar
#: is Joe's hero, the robbers are the Editor's this scene, the others have no sheet (C-PROM-3,
#: C-NPC-1).
BUYING: Script = [*until("Night Maiden drops from the rooftops")[:-1],
                  ("Two men in ski masks", c.BuyProminence(seat=EDITOR, character=ROBBERS,
                                                           side="opponent"))]

#: Balancing, as in the demo: the Editor may give Prominence to the robbers or the Chief, the
#: non-heroes with a sheet, new to the scene (C-PROM-6, C-NPC-1).
BALANCING: Script = until("The robbers")

#: Balancing, where the Editor bought the robbers' Prominence on the Hero side and Alice the
#: Chief's on the Opponent side (Hero 3, Opponent 1), then the Editor made a Minion and gave
#: it 1 point, handing it to Joe: the Minion may have the last point, though Joe narrates it
#: (the Editor's own addition); not the Chief (Alice's this scene), not the robbers (on the
#: higher side) (C-PROM-6, C-EDITOR-1).
BALANCING_NARRATED: Script = [
    *BUYING[:-1],
    ("", c.BuyProminence(seat=EDITOR, character=ROBBERS, side="hero")),
    ("", c.BuyProminence(seat=ALICE, character=CHIEF, side="opponent")),
    ("", c.CreateCharacter(seat=EDITOR, name="Minion", drives=NPC_DRIVES,
                           abilities=ROBBERS_SHEET)),
    ("", c.Balance(seat=EDITOR, character=MINION, side="opponent", narrator=JOE)),
]

#: The demo with a third Complication, Traffic, which nobody ever rolls (a tie: nobody
#: Controls it).
WITH_TRAFFIC: Script = _after("They have taken the tellers", SCRIPT,
                              ("Rush hour", c.AddComplication(seat=EDITOR, name="Traffic")))
TRAFFIC = 3

#: Page 2's claims, Alice's chance: the Hero side Controls Robbery and Hostages, nobody
#: Traffic; Night Maiden may claim either of the first two (C-CLAIM-1).
CLAIMING: Script = until("Night Maiden will get the tellers out", WITH_TRAFFIC)

#: The same claims, where Alice passed and Silverstar (Prominence 2) claimed Hostages: Night
#: Maiden (Prominence 1) may claim Robbery only (C-CLAIM-2), Traffic still nobody's.
CLAIMING_AFTER_SILVERSTAR: Script = [
    *CLAIMING,
    ("", c.PassClaim(seat=ALICE)),
    ("Silverstar flies to the vault", c.Claim(seat=JOE, character=SILVERSTAR,
                                              complication=HOSTAGES)),
]


def _powers(sheet: tuple[c.AbilitySpec, ...]) -> tuple[c.AbilitySpec, ...]:
    """The sheet with its Skills made Powers (super: each use puts 1 Debt on a Drive)."""
    return tuple(msgspec.structs.replace(a, type="power") if a.type == "skill" else a
                 for a in sheet)


def _scene_one() -> Script:
    """The demo's scene where the robbers and the Chief roll Powers, so both end it with 1
    Debt (C-ABIL-3): the Chief's Sharpshooting where the demo's Chief is Angry (the same die,
    the same 5), the robbers' Getaway driving in their empty action (a 1 rolled to 1). The
    Editor also makes the driver, who never enters it."""
    script: Script = []
    for narration, command in SCRIPT:
        if isinstance(command, c.BeginStory):
            script.append(("", THE_DRIVER_MADE))
        if isinstance(command, c.CreateCharacter) and command.name == "the robbers":
            command = msgspec.structs.replace(command, abilities=_powers(ROBBERS_SHEET))
        elif isinstance(command, c.CreateCharacter) and command.name == "Chief Mannelli":
            command = msgspec.structs.replace(command, abilities=_powers(CHIEF_SHEET))
        elif narration == "The Chief's anger fires up the robbers":
            command = msgspec.structs.replace(command, ability="Sharpshooting", drive="Anger")
        script.append((narration, command))
    robbers_act = len(until("Night Maiden strikes from the shadows", script)) - 2
    assert script[robbers_act][1] == c.EndAction(seat=EDITOR)
    script[robbers_act:robbers_act] = [
        ("The getaway car screeches", c.RollAbility(
            seat=EDITOR, ability="Getaway driving", complication=HOSTAGES, die=2,
            drive="Greed")),
        ("", c.KeepRoll(seat=EDITOR)),
        ("", PASS_REACTIONS)]
    return script


#: A non-hero with a full sheet who was never in a scene, so has no Debt: absent, but with
#: nothing to stake (C-STAKE-1).
THE_DRIVER_MADE = c.CreateCharacter(seat=EDITOR, name="the driver", drives=NPC_DRIVES,
                                    abilities=ROBBERS_SHEET)
#: The dice of :data:`STAKING`: the demo's, with the robbers' 1 after the Chief's roll.
STAKING_DICE = (DEMO_DICE[0], 1, *DEMO_DICE[1:])
#: The next scene, Chief Mannelli's action (turn 1 of page 1): the robbers, absent with 1
#: Debt on Greed, may stake through the Editor (C-STAKE-5, C-X-STAKE-1); the present
#: characters, the heroes, those known by name only, and the driver (absent, no Debt) may not.
STAKING: Script = [
    *_scene_one(),
    ("A week later", c.StartScene(seat=EDITOR)),
    ("", c.PassSetup(seat=ALICE)),
    ("", c.PassSetup(seat=JOE)),
    ("The robbers' friends plan a jailbreak", c.AddComplication(seat=EDITOR, name="Jailbreak")),
    ("", c.PassSetup(seat=EDITOR)),
    ("", c.BuyProminence(seat=EDITOR, character=CHIEF, side="opponent")),
    ("", c.BuyProminence(seat=ALICE, character=NIGHT_MAIDEN, side="hero")),
    ("", c.PassSetup(seat=JOE)),
    ("", c.PassSetup(seat=EDITOR)),
    ("The Chief walks the cell block", c.StartAction(seat=EDITOR, character=CHIEF)),
]


#: The next scene's balancing where nobody bought Prominence (everyone passed): both sides at 0,
#: so the Editor gives 1 point to a character on each side and chooses which goes where
#: (C-PROM-6); after the first, the other side is the lower one.
_PROMINENCE = len(_scene_one()) + 5
assert isinstance(STAKING[_PROMINENCE][1], c.BuyProminence)
BALANCING_AT_ZERO: Script = [*STAKING[:_PROMINENCE],
                             *(("", c.PassSetup(seat=seat)) for seat in (EDITOR, ALICE, JOE))]


#: C-RES-3's wait: the demo, where Night Maiden, after her strike on Hostages, staked its 1
#: Justice Debt on Robbery (Hero side, which the Opponents then Controlled: C-STAKE-3), and
#: Silverstar won it; on page 2 Alice's Hostages resolved, then Joe checked Silverstar's claim
#: on Robbery. Night Maiden's stake is on the winning side and Alice's to give: the resolution
#: waits for her ``capees.give_tokens`` (C-X-RES-1).
_MAIDEN_ENDS = len(until("Silverstar simply asks the robbers to give up")) - 2
assert SCRIPT[_MAIDEN_ENDS][1] == c.EndAction(seat=ALICE)
GIVING: Script = [
    *SCRIPT[:_MAIDEN_ENDS],
    ("Night Maiden shadows the getaway van", c.Stake(seat=ALICE, complication=ROBBERY,
                                                     drive="Justice")),
    *SCRIPT[_MAIDEN_ENDS:],
]


#: Alice's chance to react to her own kept roll: Night Maiden's Shadow Strike raised
#: Hostages' Hero die to 4 (its Debt on Justice); the Tropes rated 4 or more may react
#: (C-REACT-1), and a reaction may stake just before it, on any Complication (C-REACT-3).
REACTING: Script = until("'Stand down, lady!'")[:-2]
assert REACTING[-1][1] == c.KeepRoll(seat=ALICE)

#: Night Maiden's action goes on (nobody reacted): she splits Hostages' Hero 4 into 2 + 2,
#: staking her Justice Debt just before, and one die opens her own side (C-SPLIT-3, C-SPLIT-4).
SPLITTING: Script = [
    *REACTING, ("", PASS_REACTIONS),
    ("Night Maiden goes her own way", c.Split(seat=ALICE, complication=HOSTAGES, die=1, into=2,
                                              move=1, stake=1, drive="Justice")),
]

#: Page 2's resolution, as in the demo: Alice checks Night Maiden's claim on Hostages, which
#: resolves, so she must name its replacement (C-RES-4).
RESOLVING: Script = until("The tellers walk out; the police take over")

#: Night Maiden's action, before her roll: Robbery's Opponent die shows the Chief's 5, which
#: none of her abilities (rated 1 to 4) may roll, the other dice 1 (C-ABIL-6).
ROLLING: Script = until("Night Maiden strikes from the shadows")
