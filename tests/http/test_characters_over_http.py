"""Characters over HTTP: the commands issue 11 added (R-CHAR-8, R-CHAR-6) are in the command
union, run for the seat of the token, and their refusals carry the rule id."""

from __future__ import annotations

from helpers import app_client, event_types, open_campaign

from application.config import persistence_env

MEMORY = persistence_env({"CAPES_DB": ":memory:"})


def freeform(prefix: str, main: str = "power") -> dict[str, object]:
    return {"method": "freeform", "abilities": [
        {"name": f"{prefix} {category} {r}", "category": category, "rating": r}
        for category in (main, "style", "attitude") for r in (1, 2, 3)]}


DRIVES = {"Justice": 3, "Hope": 2, "Truth": 2, "Love": 1, "Duty": 1}


def test_edit_character_and_shared_exemplars_over_http() -> None:
    """R-CHAR-8: seat 1 renames Nova and changes her Drives between scenes. R-CHAR-6: her
    second Exemplar, seat 2's Brute, is linked once both players asked."""
    with app_client(MEMORY) as client:
        table = open_campaign(client, players=("Ana", "Ben"))
        for seat, name in ((1, "Nova"), (1, "Echo"), (2, "Brute")):
            table.play("", {"type": "create_character", "seat": seat, "name": name,
                            "build": freeform(name), "drives": DRIVES})
        edited = table.play("A new name", {
            "type": "edit_character", "seat": 1, "character": 1, "name": "Nova Prime",
            "drives": {"Justice": 1, "Hope": 2, "Truth": 2, "Love": 2, "Duty": 2}})
        assert event_types(edited) == ["CharacterEdited"]
        refused = table.send({"type": "edit_character", "seat": 1, "character": 1,
                              "drives": {"Justice": 9}})
        assert refused.status_code == 422 and refused.json()["rule"] == "R-CHAR-5"
        table.play("", {"type": "link_exemplar", "seat": 1, "character": 1,
                        "exemplar": 2, "drive": "Justice"})
        link = {"type": "link_exemplar", "seat": 1, "character": 1, "exemplar": 3,
                "drive": "Hope"}
        assert event_types(table.play("", link)) == ["ExemplarRequested"]
        agreed = table.play("", {**link, "seat": 2})
        assert event_types(agreed) == ["ExemplarLinked"]
