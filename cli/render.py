"""Plain-text rendering of the board and the ledgers, for the console."""

from __future__ import annotations

from collections.abc import Iterable

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


def board_text(b: Board, names: dict[int, str]) -> str:
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
    if b.waiting_for:
        waiting = "; ".join(f"seat {s}: {', '.join(m)}" for s, m in b.waiting_for.items())
        out.append(f"  waiting for: {waiting}")
    return "\n".join(out)


def ledgers_text(ledgers: Iterable[Ledger]) -> str:
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
