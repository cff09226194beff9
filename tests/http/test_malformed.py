"""Every malformed request is a 400 naming what was wrong, on every store alike, and changes
nothing (issue 13, items 5 and 9): deep JSON, bodies that are not UTF-8, strings for integers,
integers the stores cannot hold, control characters in names and narration."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from helpers import Table, app_client, open_campaign
from litestar.testing import TestClient

JSON_HEADERS = {"content-type": "application/json"}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def client(request: pytest.FixtureRequest) -> Iterator[TestClient[Any]]:
    env: dict[str, str] = request.getfixturevalue(f"{request.param}_env")
    with app_client(env) as client:
        yield client


@pytest.fixture
def table(client: TestClient[Any]) -> Table:
    return open_campaign(client, players=["Ana", "Ben"])


def refused(response: Any, key: str | None = None) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    body: dict[str, Any] = response.json()
    if key is not None:
        assert body["errors"][0]["key"] == key, body
    return body


def send(table: Table, command: dict[str, Any], narration: str = "",
         expected_version: Any = None) -> Any:
    """Seat 1 sends ``command``."""
    return table.send(command, narration, seat=1, expected_version=expected_version)


def deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


@pytest.mark.parametrize("depth", [1_000, 30_000])
def test_json_nested_a_thousand_deep_or_more_is_a_400_on_every_route(
    table: Table, depth: int
) -> None:
    client: Any = table.client
    version = table.version()
    for url, body in (
        ("/campaigns", b'{"name":' + deep(depth) + b"}"),
        (table.url("/commands"), b'{"command":' + deep(depth) + b"}"),
        (table.url("/commands"), deep(depth)),
        (table.url("/forks"), b'{"name":' + deep(depth) + b"}"),
        (table.url("/options"), deep(depth)),
    ):
        refused(client.post(url, content=body, headers={**JSON_HEADERS, **table.as_seat(1)}))
    assert table.version() == version


def test_a_body_that_is_not_utf8_is_a_400(table: Table) -> None:
    client: Any = table.client
    for url, field in (("/campaigns", "name"), (table.url("/commands"), "narration"),
                       (table.url("/seats"), "name")):
        body = refused(client.post(url, content=b'{"' + field.encode() + b'": "\xff\xfe"}',
                                   headers={**JSON_HEADERS, **table.as_seat(1)}))
        assert "UTF-8" in body["detail"]


def test_a_lone_utf16_surrogate_is_a_400_that_says_so(table: Table) -> None:
    # msgspec calls it "Input data was truncated", which sends the client looking for a cut body.
    client: Any = table.client
    version = table.version()
    for escape in (b"\\ud800", b"\\uDBFFx", b"a\\ud83d\\ud83d"):
        body = refused(client.post(table.url("/commands"),
                                   content=b'{"command": {"type": "narrate", "text": "'
                                   + escape + b'"}}',
                                   headers={**JSON_HEADERS, **table.as_seat(1)}))
        assert "surrogate" in body["detail"], body
        assert "truncated" not in body["detail"]
    assert table.version() == version


def test_a_key_given_twice_in_one_object_is_a_400_naming_it(table: Table) -> None:
    """Which of the two values counts is up to the parser (msgspec kept the last one, another
    reader the first): a move said twice is refused, not played with one value in silence."""
    client: Any = table.client
    version = table.version()
    for url, body, key in (
        (table.url("/commands"),
         b'{"command": {"type": "narrate", "text": "Yes", "text": "No"}}', "text"),
        (table.url("/commands"), b'{"command": {"type": "narrate", "text": "Yes"}, '
         b'"command": {"type": "pass_framing"}}', "command"),
        (table.url("/commands"), b'{"command": {"type": "undo"}, "narration": "a", '
         b'"narration": "b"}', "narration"),
        ("/campaigns", b'{"name": "One", "name": "Two"}', "name"),
    ):
        answer = refused(client.post(url, content=body,
                                     headers={**JSON_HEADERS, **table.as_seat(1)}))
        assert f"`{key}` twice" in answer["detail"], answer
    assert table.version() == version
    # The same key in two objects is no repetition.
    accepted = send(table, {"type": "narrate", "text": "x"}, narration="text")
    assert accepted.status_code == 200, accepted.text


def test_an_empty_body_is_a_400_that_says_so(table: Table) -> None:
    """It was a 400 whose only message was ``'data'`` (a KeyError's, from inside Litestar)."""
    client: Any = table.client
    version = table.version()
    for url in (table.url("/commands"), "/campaigns", table.url("/seats")):
        body = refused(client.post(url, content=b"", headers={**JSON_HEADERS,
                                                               **table.as_seat(1)}))
        assert "empty" in body["detail"], body
        assert body["errors"][0]["message"] != "'data'", body
    assert table.version() == version


def test_a_query_parameter_at_fault_is_named_as_the_client_sent_it(table: Table) -> None:
    """``/diff?from=…&to=…``: the error named ``from_version``, the handler's own name."""
    client: Any = table.client
    for query, key in (("from=x&to=1", "from"), ("from=1&to=0", "to")):
        body = refused(client.get(table.url(f"/diff?{query}"), headers=table.as_seat(1)), key)
        assert body["errors"][0]["source"] == "query"


def test_a_string_is_not_an_integer(table: Table) -> None:
    client: Any = table.client
    refused(client.post("/campaigns", json={"name": "X", "starting_tokens": "3"}),
            "starting_tokens")
    version = table.version()
    refused(send(table, {"type": "pass_framing"}, expected_version=str(version)),
            "expected_version")
    refused(send(table, {"type": "choose_character", "character": "2"}), "command.character")
    assert table.version() == version


@pytest.mark.parametrize("big", [2**62 + 1, 2**63, 2**64])
def test_integers_the_stores_cannot_hold_are_a_400_on_both_stores(table: Table, big: int) -> None:
    client: Any = table.client
    refused(client.post(table.url("/forks"), json={"version": big}, headers=table.as_seat(1)),
            "version")
    refused(send(table, {"type": "open_dispute", "position": big, "reason": "x"}),
            "command.position")
    refused(send(table, {"type": "undo"}, expected_version=big), "expected_version")


@pytest.mark.parametrize("bad", ["a\u0000b", "tab\there", "bell\u0007", "del\u007f", "c1\u0085"])
def test_control_characters_in_names_are_a_400_naming_the_field(
    client: TestClient[Any], bad: str
) -> None:
    refused(client.post("/campaigns", json={"name": bad}), "name")
    table = open_campaign(client, players=["Ana"])
    refused(client.post(table.url("/seats"), json={"name": bad}), "name")
    refused(send(table, {"type": "create_character", "name": bad,
                        "build": {"method": "freeform", "abilities": []}}), "command.name")
    refused(client.post(table.url("/forks"), json={"name": bad}, headers=table.as_seat(1)),
            "name")
    assert table.version() == 3  # created, Ana seated and her token recorded


@pytest.mark.parametrize("bad", ["a\u0000b", "esc\u001b[2J", "del\u007f", "c1\u0085"])
def test_control_characters_in_capees_names_are_a_400_naming_the_field(
    client: TestClient[Any], bad: str
) -> None:
    """Every name of CAPEES! (a character's, an ability's, a Drive's, a Complication's) is
    refused as edition ``capes``'s are, before any rule is asked."""
    table = open_campaign(client, players=["Ana"], edition="capees")
    version = table.version()
    for command, key in (
        ({"name": bad}, "command.name"),
        ({"name": "Silverstar", "drives": {bad: 2}}, "command.drives"),
        ({"name": "Silverstar", "abilities": [{"name": bad, "type": "power", "rating": 3}]},
         "command.abilities[0].name"),
    ):
        refused(send(table, {"type": "capees.create_character", **command}), key)
    for command, key in (
        ({"type": "capees.add_complication", "name": bad}, "command.name"),
        ({"type": "capees.use_inspiration", "inspiration": 1, "name": bad}, "command.name"),
        ({"type": "capees.roll_ability", "ability": bad, "complication": 1, "die": 1},
         "command.ability"),
        ({"type": "capees.check_claim", "complication": 1, "replacement": bad},
         "command.replacement"),
    ):
        refused(send(table, command), key)
    assert table.version() == version


@pytest.mark.parametrize("bad", ["a\u0000b", "bell\u0007", "esc\u001b[2J"])
def test_control_characters_in_narration_and_prose_are_a_400(table: Table, bad: str) -> None:
    version = table.version()
    refused(send(table, {"type": "pass_framing"}, narration=bad), "narration")
    refused(send(table, {"type": "add_seed", "seed": bad}), "command.seed")
    refused(send(table, {"type": "open_dispute", "position": 2, "reason": bad}),
            "command.reason")
    assert table.version() == version


def test_narration_may_hold_line_breaks_and_tabs(table: Table) -> None:
    said = "First line,\n\tthen another.\r\n"
    response = send(table, {"type": "frame_scene", "text": "The docks"}, narration=said)
    assert response.status_code == 200, response.text
    assert response.json()["events"][0]["narration"] == said


def test_a_parameter_that_fails_validation_is_a_400_whose_detail_holds_no_query_string(
    table: Table,
) -> None:
    """The live stream takes a seat's token in the query string: an error body (which a
    client shows or logs) must not hand it on."""
    client: Any = table.client
    token = table.tokens[1]
    for response in (
        client.get(table.url("/events/stream"), params={"token": token, "after": "abc"}),
        client.get(table.url("/events"), params={"after": "abc", "token": token},
                   headers=table.as_seat(1)),
    ):
        body = refused(response, "after")
        assert token not in response.text
        assert body["detail"] == f"Validation failed for GET {response.url.path}"


def test_every_integer_of_the_api_is_bounded_to_what_the_stores_hold(
    client: TestClient[Any],
) -> None:
    """Both stores hold 64-bit signed integers: the schema says so for every integer a
    request may carry (bodies and parameters), so both stores refuse the same."""
    schema = client.get("/schema/openapi.json").json()
    unbounded: list[str] = []

    def walk(node: Any, path: str, bounds: tuple[Any, Any] = (None, None)) -> None:
        if isinstance(node, dict):
            # Litestar states the bounds of an optional integer beside its oneOf.
            bounds = (node.get("minimum", bounds[0]), node.get("maximum", bounds[1]))
            low, high = bounds
            if node.get("type") == "integer" and (
                    high is None or high >= 2**63 or (low is not None and low < -(2**63))):
                unbounded.append(path)
            for key, value in node.items():
                walk(value, f"{path}/{key}", bounds if key in ("oneOf", "anyOf") else
                     (None, None))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, f"{path}/{index}", bounds)

    for url, item in schema["paths"].items():
        for method, operation in item.items():
            for parameter in operation.get("parameters", []):
                walk(parameter.get("schema"), f"{method} {url} {parameter['name']}")
    request_types = {"NewCampaign", "NewSeat", "CommandRequest", "ForkRequest"}
    for name, component in schema["components"]["schemas"].items():
        if name in request_types or "Command" in name or name.endswith("Options"):
            walk(component, name)
    assert not unbounded, unbounded


#: Text of blanks alone: spaces, a tab and line breaks, no-break and ideographic spaces.
BLANKS = [" ", "   ", "\u00a0", "\u3000 \u2003", "\ufeff"]


@pytest.mark.parametrize("blank", BLANKS)
def test_a_name_of_blanks_alone_is_a_400_naming_the_field(
    client: TestClient[Any], blank: str
) -> None:
    """R-X-SRV-1: a character named "   " was taken, and shown as nothing at all."""
    said = refused(client.post("/campaigns", json={"name": blank}), "name")["detail"]
    assert "not blanks alone" in said and "regex" not in said, said  # in words
    table = open_campaign(client, players=["Ana"])
    refused(client.post(table.url("/seats"), json={"name": blank}), "name")
    refused(send(table, {"type": "create_character", "name": blank,
                        "build": {"method": "freeform", "abilities": []}}), "command.name")
    refused(send(table, {"type": "create_conflict", "text": "The docks",
                         "sides": ["For", blank]}), "command.sides[1]")
    refused(client.post(table.url("/forks"), json={"name": blank}, headers=table.as_seat(1)),
            "name")
    capees = open_campaign(client, players=["Ana"], edition="capees")
    refused(send(capees, {"type": "capees.add_complication", "name": blank}), "command.name")
    refused(send(capees, {"type": "capees.create_character", "name": "Silverstar",
                          "drives": {blank: 2}}), "command.drives")
    assert table.version() == 3 and capees.version() == 3


@pytest.mark.parametrize("blank", [*BLANKS, "\t", " \r\n\t "])
def test_narration_and_prose_of_blanks_alone_are_a_400_naming_the_field(
    table: Table, blank: str
) -> None:
    """R-X-SRV-1: narration of spaces was recorded as if something had been said; none is
    sent as none (left out, or empty)."""
    version = table.version()
    said = refused(send(table, {"type": "pass_framing"}, narration=blank), "narration")["detail"]
    assert "not blanks alone" in said and "regex" not in said, said
    refused(send(table, {"type": "frame_scene", "text": blank}), "command.text")
    refused(send(table, {"type": "open_dispute", "position": 2, "reason": blank}),
            "command.reason")
    assert table.version() == version


def test_an_empty_narration_is_none_and_is_taken(table: Table) -> None:
    """R-X-SRV-1: empty narration is the narration a command without any has."""
    response = send(table, {"type": "frame_scene", "text": ""}, narration="")
    assert response.status_code == 200, response.text
    assert response.json()["events"][0]["narration"] == ""
