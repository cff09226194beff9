"""Plain-text rendering of the board and the ledgers, for the console."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from domain.capees import views as cv
from domain.capes.views import Board, ConflictView, Ledger


def _conflict(c: ConflictView, names: dict[int, str]) -> list[str]:
    control = "tied: nobody controls" if c.controlling_side is None else (
        f"side {c.controlling_side} controls"
    )
    lines = [f"  [{c.id}] {c.kind.upper()} {c.text!r} (by seat {c.creator}; {control})"]
    for s in c.sides:
        dice = " ".join(
            f"{d.value}" + (f"*{names.get(d.controller, '?')}/{d.staked}" if d.controller else "")
            for d in s.dice
        )
        allies = ", ".join(names.get(a, "?") for a in s.allies) or "-"
        claim = f"claimed by seat {s.claimed_by}" if s.claimed_by else "unclaimed"
        lines.append(f"      side {s.index} {s.label!r}: total {s.total} = [{dice}]  "
                     f"allies: {allies}; {claim}")
    return lines


def board_text(b: Any, names: dict[int, str]) -> str:
    """The board of either edition."""
    if isinstance(b, cv.Board):
        return capees_board_text(b, names)
    return capes_board_text(b, names)


def ledgers_text(ledgers: Iterable[Any]) -> str:
    """The ledgers of either edition."""
    ledgers = list(ledgers)
    if ledgers and isinstance(ledgers[0], cv.Ledger):
        return capees_ledgers_text(ledgers)
    return capes_ledgers_text(ledgers)


def capes_board_text(b: Board, names: dict[int, str]) -> str:
    """The board: scene, page, phase, whose move, conflicts with sides and dice."""
    out = [f"== {b.name} ({b.edition} {b.rules_version})"]
    if b.scene is None:
        out.append(f"  between scenes; {b.scenes_played} played; next framer: "
                   f"{b.next_framer or 'any volunteer'}")
    else:
        cast = ", ".join(f"{names.get(ch, ch)} (seat {s})" for ch, s in b.cast.items())
        out.append(f"  scene {b.scene} {b.scene_text!r}, framed by seat {b.framer}; cast: {cast}")
        if b.page is None:
            out.append("  between pages")
        else:
            out.append(f"  page {b.page}, Starter seat {b.starter}, phase {b.phase}"
                       + (f" ({b.round} round)" if b.round else ""))
    for conflict in b.conflicts:
        out.extend(_conflict(conflict, names))
    for r in b.exemplar_requests:  # R-X-CHAR-2: a shared Exemplar waiting for its second player
        awaiting = (f"seat {r.awaiting} to agree" if r.awaiting is not None
                    else "nobody (no longer possible)")
        out.append(f"  Exemplar asked by seat {r.asked_by}: {r.exemplar_name} for "
                   f"{r.character_name} ({r.drive}), waiting for {awaiting}")
    if b.waiting_for:
        waiting = "; ".join(f"seat {s}: {', '.join(m)}" for s, m in b.waiting_for.items())
        out.append(f"  waiting for: {waiting}")
    return "\n".join(out)


def capes_ledgers_text(ledgers: Iterable[Ledger]) -> str:
    """Each player's tokens, inspirations and characters' Debt."""
    out = []
    for led in ledgers:
        insp = ", ".join(f"{i.value} (from conflict {i.source})" for i in led.inspirations)
        out.append(f"  seat {led.seat} {led.name}: {led.tokens} Story Token(s); "
                   f"Inspirations: {insp or 'none'}")
        for ch in led.characters:
            debt = ", ".join(
                f"{d.name} {d.debt}/{d.strength}" + (" OVERDRAWN" if d.overdrawn else "")
                for d in ch.drives
            )
            staked = sum(s.amount for s in ch.staked)
            blocked = f"; blocked: {', '.join(ch.blocked)}" if ch.blocked else ""
            out.append(f"      {ch.name}: Debt {debt}; staked {staked}{blocked}")
    return "\n".join(out)


def capees_board_text(b: cv.Board, names: dict[int, str]) -> str:
    """A CAPEES! board: story, scene step, Prominence, Victory Points, Complications."""
    out = [f"== {b.name} ({b.edition} {b.rules_version})"]
    if b.story is None:
        out.append(f"  between stories; {b.stories_played} played")
    else:
        out.append(f"  story {b.story}, Editor seat {b.editor}; story Victory Points: Hero "
                   f"{b.story_hero_vp}, Opponent {b.story_opponent_vp} of {b.victory_total}")
    if b.scene is not None:
        out.append(f"  scene {b.scene}, step {b.step}" + (f", page {b.page}" if b.page else "")
                   + (f", turn {b.turn}" if b.turn else "")
                   + (f"; Target {b.target}: Hero {b.hero_vp}, Opponent {b.opponent_vp}"
                      if b.target else ""))
        out.append(f"  Prominence: Hero {b.hero_prominence}, Opponent {b.opponent_prominence}: "
                   + ", ".join(f"{p.name} {p.prominence} ({p.faction}, seat {p.narrator})"
                               for p in b.present))
    for x in b.complications:
        control = x.controlled_by or "nobody"
        claim = f", claimed by {names.get(x.claimed_by, x.claimed_by)}" if x.claimed_by else ""
        out.append(f"  [{x.id}] {x.name!r}: {control} Controls{claim}")
        for s in x.sides:
            owner = f" of {names.get(s.owner, s.owner)}" if s.owner else ""
            stakes = ", ".join(f"{names.get(st.character, st.character)} {st.amount} "
                               f"{st.drive}" for st in s.stakes) or "no stakes"
            dice = " ".join(str(v) for _, v in s.dice)
            out.append(f"      {s.faction}{owner}: total {s.total} = [{dice}]; {stakes}")
    if b.waiting_for:
        waiting = "; ".join(f"seat {s}: {', '.join(m)}" for s, m in b.waiting_for.items())
        out.append(f"  waiting for: {waiting}")
    return "\n".join(out)


def capees_ledgers_text(ledgers: Iterable[cv.Ledger]) -> str:
    """Each player's tokens and Inspiration cards, and their characters' Debt."""
    out = []
    for led in ledgers:
        cards = ", ".join(f"{i.name} ({'H' if i.faction == 'hero' else 'O'} {i.vp} VP, "
                          f"{i.bonus:+d})" for i in led.inspirations)
        role = " (Editor)" if led.editor else ""
        out.append(f"  seat {led.seat} {led.name}{role}: {led.tokens} Story Token(s); "
                   f"Inspirations: {cards or 'none'}")
        for ch in led.characters:
            debt = ", ".join(f"{d.name} {d.debt}/{d.strength}"
                             + (" OVERDRAWN" if d.overdrawn else "") for d in ch.drives)
            blocked = [a.name for a in ch.abilities if a.blocked]
            out.append(f"      {ch.name}: Debt {debt or '-'}; staked "
                       f"{sum(x[2] for x in ch.staked)}"
                       + (f"; blocked: {', '.join(blocked)}" if blocked else ""))
    return "\n".join(out)
