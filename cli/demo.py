"""``capes demo``: a scripted scene for three players, played through the real application.

It shows every part of a scene — characters built freeform and click-and-lock, two Conflicts,
claims, rolls accepted and rejected, a Reaction, "And Then", staking, a split, a resolution with
Story Tokens and Inspirations, a gloat, the scene's end — into the configured store, so the
campaign can be served, exported and verified afterwards.

The dice are scripted (``ScriptedDice``) so that the story comes out the same every time; a
real table's dice come from ``SecretsDice``. Nothing else differs from a real game.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from uuid import UUID

from application.campaigns import Campaigns
from application.dice import ScriptedDice
from domain.capes import commands as c
from domain.capes.events import PageEnded
from domain.capes.views import board, ledgers

from .render import board_text, ledgers_text

#: The dice the script needs, in the order it rolls them.
DEMO_DICE = (4, 2, 5, 6, 5, 4, 6, 2)

ANA, BEN, CLEO = 1, 2, 3
NIGHTJAR, TEMPEST, REYES = 1, 2, 3
BRIDGE, CAPTURE = 1, 2


def _freeform(specs: Iterable[tuple[str, str, int, bool]]) -> c.Freeform:
    return c.Freeform(
        abilities=tuple(
            c.AbilitySpec(name=n, category=cat, rating=r, super=s)  # type: ignore[arg-type]
            for n, cat, r, s in specs
        )
    )


NIGHTJAR_BUILD = _freeform(
    [(n, "power", i + 1, True) for i, n in enumerate(
        ["Shadow Step", "Night Vision", "Sonic Cry", "Wing Glide", "Dark Shield"])]
    + [("Acrobatic", "style", 1, True), ("Stealthy", "style", 2, False),
       ("Relentless", "style", 3, False)]
    + [(n, "attitude", i + 1, False) for i, n in enumerate(["Driven", "Wry", "Protective"])]
)

TEMPEST_BUILD = c.ClickAndLock(
    set_kind="power",
    set=c.Module(name="Stormcaller",
                 abilities=("Lightning", "Wind Wall", "Thunderclap", "Fog", "Gale Flight"),
                 styles=("Crackling", "Sweeping", "Loud")),
    persona=c.Module(name="Brooding Loner",
                     abilities=("Aloof", "Bitter", "Honest", "Proud", "Lonely"),
                     styles=("Sullen", "Precise")),
    crossed_out=("Loud", "Sullen", "Lonely"),
    ratings={"Lightning": 5, "Wind Wall": 2, "Thunderclap": 3, "Fog": 1, "Gale Flight": 4,
             "Crackling": 1, "Sweeping": 2, "Precise": 3,
             "Aloof": 1, "Bitter": 2, "Honest": 3, "Proud": 4},
)

REYES_BUILD = _freeform(
    [(n, "skill", i + 1, False) for i, n in enumerate(
        ["Police Procedure", "Marksmanship", "Streetwise"])]
    + [(n, "style", i + 1, False) for i, n in enumerate(["By the Book", "Dogged", "Calm"])]
    + [(n, "attitude", i + 1, False) for i, n in enumerate(["Loyal", "Skeptical", "Brave"])]
)

Step = tuple[str, c.Command]


def _turn_pass(*seats: int) -> list[Step]:
    return [("", c.PassTurn(seat=s)) for s in seats]


def _claiming_idle(*seats: int) -> list[Step]:
    return [("", c.PassClaiming(seat=s)) for s in seats]


SCRIPT: list[Step] = [
    ("", c.SeatPlayer(name="Ana")),
    ("", c.SeatPlayer(name="Ben")),
    ("", c.SeatPlayer(name="Cleo")),
    ("Nightjar, a freeform hero", c.CreateCharacter(
        seat=ANA, name="Nightjar", build=NIGHTJAR_BUILD,
        drives={"Justice": 3, "Hope": 2, "Truth": 2, "Love": 1, "Duty": 1})),
    ("Tempest, click-and-lock", c.CreateCharacter(
        seat=BEN, name="Tempest", build=TEMPEST_BUILD,
        drives={"Pride": 3, "Power": 2, "Justice": 2, "Fear": 1, "Hope": 1})),
    ("Officer Reyes, mundane and undifferentiated", c.CreateCharacter(
        seat=CLEO, name="Officer Reyes", build=REYES_BUILD)),
    ("Harbor City, midnight, a storm rolling in", c.FrameScene(seat=ANA, text="The harbor")),
    # Page 1: Ana starts.
    ("", c.ChooseCharacter(seat=ANA, character=NIGHTJAR)),
    ("", c.PassClaiming(seat=ANA)),
    ("", c.ChooseCharacter(seat=BEN, character=TEMPEST)),
    ("", c.PassClaiming(seat=BEN)),
    ("", c.ChooseCharacter(seat=CLEO, character=REYES)),
    *_claiming_idle(CLEO, ANA, BEN, CLEO),
    ("", c.StartTurn(seat=ANA, character=NIGHTJAR)),
    ("The bridge groans under the storm", c.CreateConflict(
        seat=ANA, kind="event", text="The harbor bridge collapses",
        sides=("Everyone gets off", "People fall"))),
    ("", c.EndTurn(seat=ANA)),
    ("", c.StartTurn(seat=BEN, character=TEMPEST)),
    ("There he is, on the ferry", c.CreateConflict(
        seat=BEN, kind="goal", text="Tempest captures the Smuggler King",
        sides=("Captured", "Escapes"), names=(TEMPEST,))),
    ("", c.EndTurn(seat=BEN)),
    ("", c.StartTurn(seat=CLEO, character=REYES)),
    ("Reyes waves the cars off the bridge", c.RollDie(
        seat=CLEO, ability="Police Procedure", conflict=BRIDGE, die=1)),
    ("", c.AcceptRoll(seat=CLEO)),
    ("", c.PassReaction(seat=ANA)),
    ("Lightning strikes the bridge's cables", c.React(
        seat=BEN, character=TEMPEST, ability="Lightning", drive="Power")),
    ("", c.AcceptRoll(seat=BEN)),
    ("", c.PassReaction(seat=CLEO)),
    ("", c.PassReaction(seat=ANA)),
    ("...and then Reyes drags a driver clear", c.Narrate(
        seat=CLEO, text="...and then Reyes drags a driver clear", and_then=True)),
    ("", c.EndTurn(seat=CLEO)),
    ("Ana buys a turn", c.StartTurn(seat=ANA, character=NIGHTJAR)),
    ("Nightjar steps into the shadows by the pylons", c.RollDie(
        seat=ANA, ability="Shadow Step", conflict=BRIDGE, die=2, drive="Justice")),
    ("Ana rejects the 5: it would have hurt the commuters", c.RejectRoll(seat=ANA)),
    ("", c.EndTurn(seat=ANA)),
    *_turn_pass(BEN, CLEO),
    # Page 2: Ben starts.
    ("", c.Claim(seat=BEN, conflict=CAPTURE, side=0)),
    ("", c.PassClaiming(seat=BEN)),
    ("", c.Claim(seat=CLEO, conflict=BRIDGE, side=0)),
    ("", c.PassClaiming(seat=CLEO)),
    ("", c.Claim(seat=ANA, conflict=CAPTURE, side=1)),
    *_claiming_idle(ANA, BEN, CLEO, ANA),
    ("Rain hammers the docks", c.Narrate(seat=CLEO, text="Rain hammers the docks")),
    ("", c.StartTurn(seat=BEN, character=TEMPEST)),
    ("Tempest's pride is on the line", c.StakeDebt(
        seat=BEN, conflict=CAPTURE, die=1, amount=1, drive="Power")),
    ("A wall of wind pins the ferry", c.RollDie(
        seat=BEN, ability="Wind Wall", conflict=CAPTURE, die=1, drive="Power")),
    ("", c.AcceptRoll(seat=BEN)),
    ("", c.SplitDie(seat=BEN, conflict=CAPTURE, die=1, into=2, drive="Power")),
    ("", c.EndTurn(seat=BEN)),
    ("", c.StartTurn(seat=CLEO, character=REYES)),
    ("Reyes shoots out the crane's winch", c.RollDie(
        seat=CLEO, ability="Marksmanship", conflict=BRIDGE, die=1)),
    ("", c.AcceptRoll(seat=CLEO)),
    ("", c.PassReaction(seat=ANA)),
    ("", c.PassReaction(seat=BEN)),
    ("", c.EndTurn(seat=CLEO)),
    ("", c.StartTurn(seat=ANA, character=NIGHTJAR)),
    ("Nightjar spots the King's escape boat", c.RollDie(
        seat=ANA, ability="Night Vision", conflict=CAPTURE, die=2, drive="Hope")),
    ("", c.AcceptRoll(seat=ANA)),
    ("", c.PassReaction(seat=ANA)),
    ("", c.PassReaction(seat=BEN)),
    # R-X-ROLL-2: the And Then completes Ana's action before she may stake.
    ("...and then the ferry's engine dies in Tempest's gale", c.Narrate(
        seat=BEN, text="...and then the ferry's engine dies", and_then=True)),
    ("Nightjar believes the King deserves a fair trial", c.StakeDebt(
        seat=ANA, conflict=CAPTURE, die=2, amount=1, drive="Justice")),
    ("", c.EndTurn(seat=ANA)),
    *_turn_pass(BEN, CLEO),
    ("Tempest hauls the King out of the water", c.Resolve(seat=BEN, conflict=CAPTURE)),
    ("Reyes won't be a hero about it; Cleo gloats instead", c.Gloat(
        seat=CLEO, conflict=BRIDGE, times=1)),
    # Page 3: Cleo starts.
    ("", c.Claim(seat=CLEO, conflict=BRIDGE, side=0)),
    ("", c.PassClaiming(seat=CLEO)),
    ("", c.PassClaiming(seat=ANA)),
    ("", c.Claim(seat=BEN, conflict=BRIDGE, side=1)),
    *_claiming_idle(BEN, CLEO, ANA, BEN),
    ("", c.StartTurn(seat=CLEO, character=REYES)),
    ("Reyes knows every back street off the bridge", c.RollDie(
        seat=CLEO, ability="Streetwise", conflict=BRIDGE, die=1)),
    ("", c.AcceptRoll(seat=CLEO)),
    ("", c.EndTurn(seat=CLEO)),
    ("", c.StartTurn(seat=ANA, character=NIGHTJAR)),
    ("Nightjar remembers the King's face", c.RaiseInspiration(
        seat=ANA, ability="Shadow Step", inspiration=1, drive="Justice")),
    ("", c.EndTurn(seat=ANA)),
    ("", c.StartTurn(seat=BEN, character=TEMPEST)),
    ("Still flushed from the capture", c.SpendInspiration(
        seat=BEN, inspiration=2, conflict=BRIDGE, die=2)),
    ("Thunder shakes the last span", c.RollDie(
        seat=BEN, ability="Thunderclap", conflict=BRIDGE, die=2, drive="Pride")),
    ("", c.RejectRoll(seat=BEN)),
    ("...and then Reyes waves the last bus across", c.Narrate(
        seat=CLEO, text="...and then the last bus makes it across", and_then=True)),
    ("", c.EndTurn(seat=BEN)),
    *_turn_pass(CLEO, ANA, BEN),
    ("Everyone gets off the bridge before it falls", c.Resolve(seat=CLEO, conflict=BRIDGE)),
]


def play_demo(app: Campaigns, out: Callable[[str], None] = print) -> UUID:
    """Play the script into ``app`` (whose dice must be DEMO_DICE); the campaign's id."""
    created = app.create(c.CreateCampaign(name="Demo: Harbor City", starting_tokens=1))
    campaign = created.campaign_id
    names: dict[int, str] = {}
    for narration, command in SCRIPT:
        outcome = app.execute(campaign, command, narration=narration)
        names = {ch.id: ch.name for ch in outcome.state.characters.values()}
        if narration:
            seat = getattr(command, "seat", 0)
            out(f"seat {seat}: {narration}" if seat else narration)
        for record in outcome.events:
            if isinstance(record.event, PageEnded):
                state = app.state(campaign, version=record.originator_version)
                out(f"\n-- end of scene {record.event.scene}, page {record.event.page}")
                out(board_text(board(state), names))
                out(ledgers_text(ledgers(state)))
                out("")
    final = app.state(campaign)
    out("-- the scene is over")
    out(board_text(board(final), names))
    out(ledgers_text(ledgers(final)))
    return campaign


def demo_dice() -> ScriptedDice:
    return ScriptedDice(DEMO_DICE)
