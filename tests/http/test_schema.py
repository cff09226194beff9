"""The OpenAPI schema documents the whole API, the docs page works offline, and the server keeps
to its schema under property-based testing (schemathesis, in-process over ASGI).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec
import pytest
import schemathesis
from helpers import JSON, app_client, open_campaign
from hypothesis import HealthCheck, settings
from litestar import Litestar
from litestar.testing import TestClient
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.python import asgi

from api.app import create_app
from api.routes.record import OptionsChange
from api.schemas import SEAT_COMMANDS, CommandRequest, NewCampaign, NewSeat
from application.campaigns import Campaigns
from application.config import persistence_env
from application.dice import SeededDice
from domain.capes import commands as c
from domain.record import TableOptions
from domain.text import LINE_PATTERN, PROSE_PATTERN, REFERENCE_PATTERN

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient[Litestar]]:
    with app_client(persistence_env({"CAPES_DB": ":memory:"})) as client:
        yield client


@pytest.fixture(scope="module")
def openapi(client: TestClient[Litestar]) -> JSON:
    response = client.get("/schema/openapi.json")
    assert response.status_code == 200
    schema: JSON = response.json()
    return schema


def resolve(openapi: JSON, schema: JSON) -> JSON:
    """``schema``, or the component its ``$ref`` names."""
    ref = schema.get("$ref")
    if ref is None:
        return schema
    found: JSON = openapi["components"]["schemas"][ref.rsplit("/", 1)[-1]]
    return found


def component(openapi: JSON, cls: type) -> JSON:
    """The schema of ``cls``: under its name, or, where two editions share the name, under
    Litestar's longer one (``capes_commands_Claim``, ``capees_commands_Claim``)."""
    schemas = openapi["components"]["schemas"]
    if cls.__name__ in schemas:
        return schemas[cls.__name__]  # type: ignore[no-any-return]
    # Litestar keeps as much of the module path as makes the name unique.
    path = cls.__module__.replace(".", "_")
    found = [k for k in schemas if k.endswith(f"_{cls.__name__}")
             and path.endswith(k.removesuffix(f"_{cls.__name__}"))]
    assert len(found) == 1, (cls, found)
    return schemas[found[0]]  # type: ignore[no-any-return]


def test_every_route_of_the_app_is_documented(client: TestClient[Litestar],
                                              openapi: JSON) -> None:
    app = client.app
    # The browser's pages and their static files are not API routes: left out on purpose.
    routes = {
        (re.sub(r"\{(\w+):\w+\}", r"{\1}", route.path), method.lower())
        for route in app.routes
        for handler in getattr(route, "route_handlers", ())
        if handler.resolve_include_in_schema()
        for method in handler.http_methods
        if method not in ("HEAD", "OPTIONS") and not route.path.startswith("/schema")
    }
    documented = {(path, method) for path, item in openapi["paths"].items() for method in item}
    assert routes == documented
    assert len(documented) >= 11


def test_every_command_type_is_in_the_command_request_schema(openapi: JSON) -> None:
    post = openapi["paths"]["/campaigns/{campaign_id}/commands"]["post"]
    body = resolve(openapi, post["requestBody"]["content"]["application/json"]["schema"])
    assert body["required"] == ["command"]
    variants = [resolve(openapi, s) for s in body["properties"]["command"]["oneOf"]]
    tags = {v["properties"]["type"]["const"] for v in variants}
    assert tags == {msgspec.inspect.type_info(t).tag for t in SEAT_COMMANDS}


def test_the_command_request_schema_shows_the_constraints(openapi: JSON) -> None:
    schemas = openapi["components"]["schemas"]
    request = schemas["CommandRequest"]["properties"]
    assert request["narration"]["maxLength"] == 2000
    assert request["expected_version"]["minimum"] == 1
    roll = schemas["RollDie"]["properties"]
    assert roll["die"]["minimum"] == 1 and roll["die"]["maximum"] == 2**31
    assert roll["ability"]["minLength"] == 1 and roll["ability"]["maxLength"] == 80
    assert schemas["NewCampaign"]["properties"]["starting_tokens"]["maximum"] == 99


def test_every_bound_the_server_enforces_on_a_command_field_is_in_the_schema(
    openapi: JSON,
) -> None:
    """Numbers and strings (not optional ones): what msgspec checks, the schema shows."""
    keywords = {"ge": "minimum", "le": "maximum", "min_length": "minLength",
                "max_length": "maxLength"}
    checked = 0
    for command_type in SEAT_COMMANDS:
        properties = component(openapi, command_type)["properties"]
        for field in msgspec.inspect.type_info(command_type).fields:
            if not isinstance(field.type, msgspec.inspect.IntType | msgspec.inspect.StrType):
                continue
            for bound, keyword in keywords.items():
                value = getattr(field.type, bound, None)
                if value is not None:
                    assert properties[field.encode_name][keyword] == value, (
                        command_type.__name__, field.name, keyword)
                    checked += 1
    assert checked > 50


#: Names and prose to read with the patterns: taken, blanks alone, control characters.
TEXTS = ["Ana", " Ana ", "", " ", "   ", "\u00a0", "\u3000\u2003", "\ufeff", "\u200b", "\t",
         " \r\n\t ", "a\tb", "First,\n\tthen.", "bell\u0007", "c1\u0085", "\u2028"]


def test_the_schema_states_the_text_patterns_and_javascript_reads_them_as_python_does(
    openapi: JSON,
) -> None:
    """R-X-SRV-1: a client that checks a name or a narration by the schema's pattern (a
    browser, a JSON Schema validator: ECMA-262 regular expressions) refuses exactly what the
    server (Python's ``re``, through msgspec) refuses."""
    import json
    import shutil
    import subprocess

    schemas = openapi["components"]["schemas"]
    assert schemas["NewCampaign"]["properties"]["name"]["pattern"] == LINE_PATTERN
    assert schemas["CommandRequest"]["properties"]["narration"]["pattern"] == PROSE_PATTERN
    assert component(openapi, c.RollDie)["properties"]["ability"]["pattern"] == REFERENCE_PATTERN
    patterns = [LINE_PATTERN, REFERENCE_PATTERN, PROSE_PATTERN]
    python = [[bool(re.search(p, text)) for text in TEXTS] for p in patterns]
    assert python[0][:2] == [True, True] and not any(python[0][2:8]), "blanks alone"
    assert python[2][2] and not any(python[2][3:8]), "prose: empty is none, blanks are not"
    if shutil.which("node") is None:
        pytest.skip("no node to read the patterns as JavaScript does")
    script = ("const [patterns, texts] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "console.log(JSON.stringify(['', 'u'].map(flags => patterns.map(p => "
              "texts.map(t => new RegExp(p, flags).test(t))))));")
    ran = subprocess.run(["node", "-e", script], input=json.dumps([patterns, TEXTS]),
                         capture_output=True, text=True, timeout=60, check=True)
    assert json.loads(ran.stdout) == [python, python]


def test_request_bodies_that_refuse_unknown_fields_say_so(openapi: JSON) -> None:
    """The server answers an unknown field with 400: the schema must not allow one."""
    bodies = [NewCampaign, NewSeat, CommandRequest, *SEAT_COMMANDS, c.Freeform, c.ClickAndLock,
              c.Module, c.AbilitySpec, TableOptions, OptionsChange]
    for body in bodies:
        assert body.__struct_config__.forbid_unknown_fields, body
        assert component(openapi, body)["additionalProperties"] is False, body.__name__


@pytest.mark.parametrize("path, method, statuses", [
    ("/campaigns", "post", {400, 401, 403, 413, 429}),
    ("/campaigns/{campaign_id}/commands", "post",
     {400, 401, 403, 404, 409, 413, 422, 423, 429}),
    ("/campaigns/{campaign_id}/close", "post", {401, 403, 404, 409, 422, 423, 429}),
    # 403: a seat an upheld dispute took away (R-X-REC-8).
    ("/campaigns/{campaign_id}/board", "get", {400, 401, 403, 404, 423, 429}),
    ("/campaigns/{campaign_id}/events/stream", "get", {400, 401, 403, 404, 423, 429}),
])
def test_refusals_are_documented_as_problem_details(
    openapi: JSON, path: str, method: str, statuses: set[int]
) -> None:
    responses = openapi["paths"][path][method]["responses"]
    problems = {int(s) for s, r in responses.items() if PROBLEM in r.get("content", {})}
    assert problems == statuses
    for status in statuses:
        problem = resolve(openapi, responses[str(status)]["content"][PROBLEM]["schema"])
        assert {"type", "title", "status", "detail", "rule", "choices", "field", "errors",
                "current_version", "position"} <= set(problem["properties"])


@pytest.mark.parametrize("edition", ["capes", "capees"])
def test_each_editions_answers_match_exactly_one_of_the_shapes_the_schema_names(
    client: TestClient[Litestar], openapi: JSON, edition: str
) -> None:
    """A query answers in its campaign's edition's shape, documented as ``oneOf`` the two
    editions'. A CAPEES! ledger with no characters yet was valid as a Capes ledger too (it only
    adds ``editor``), so it matched both shapes: a client checking the schema refused it."""
    table = open_campaign(client, edition=edition, players=["Ana", "Ben"])
    checked = schemathesis.openapi.from_dict(openapi)
    for query in ("board", "ledgers", "characters", "state"):
        response = client.get(table.url(f"/{query}"), headers=table.as_seat(1))
        assert response.status_code == 200, response.text
        checked[f"/campaigns/{{campaign_id}}/{query}"]["GET"].validate_response(response)


def test_the_live_stream_is_documented_as_server_sent_events(openapi: JSON) -> None:
    ok = openapi["paths"]["/campaigns/{campaign_id}/events/stream"]["get"]["responses"]["200"]
    assert list(ok["content"]) == ["text/event-stream"]


def test_the_docs_page_loads_its_scripts_and_styles_from_this_server(
    client: TestClient[Litestar],
) -> None:
    page = client.get("/schema")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert not re.search(r"https?://", page.text), "nothing may come from a CDN"
    assets = re.findall(r"""(?:src|href)=['"]([^'"]+)['"]""", page.text)
    assert {a.split("?")[0].rsplit(".", 1)[-1] for a in assets} >= {"js", "css"}
    for asset in assets:
        assert asset.startswith("/schema-assets/"), asset
        response = client.get(asset)
        assert response.status_code == 200, asset
        assert len(response.content) > 100, asset


# -- property-based: schemathesis ------------------------------------------------------------


@dataclass(frozen=True)
class Fuzzed:
    """The app under test, a campaign with a seat to play in and one for the owner to close."""

    app: Litestar
    campaign_id: str
    seat_token: str
    closing_id: str
    owner_token: str


@pytest.fixture(scope="module",
                params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def fuzzed(request: pytest.FixtureRequest) -> Fuzzed:
    """On each store (issue 13: SQLite answered 500 where PostgreSQL did not)."""
    env = (persistence_env({"CAPES_DB": ":memory:"}) if request.param == "sqlite"
           else request.getfixturevalue("module_postgres_env"))
    campaigns = Campaigns(env, dice=SeededDice(11))
    app = create_app(campaigns, rate_limit=0)
    # Schemathesis' own ASGI client: the app starts once, as the fuzzing will find it.
    with asgi.get_client(app) as client:
        played = open_campaign(client, "Fuzzed", players=["Ana", "Ben"])
        closing = open_campaign(client, "Closed by its owner", players=["Cleo"])
    return Fuzzed(app, played.campaign_id, played.tokens[1], closing.campaign_id,
                  closing.owner_token)


@pytest.fixture(scope="module")
def api_schema(fuzzed: Fuzzed) -> Any:
    # The coverage phase enumerates boundary values of all 29 command types: ~30 s here. The
    # fuzzing phase (max_examples per operation, below) keeps the run to a few seconds.
    config = schemathesis.Config.from_dict({"phases": {"coverage": {"enabled": False}}})
    return schemathesis.openapi.from_asgi("/schema/openapi.json", fuzzed.app, config=config)


# The live stream never ends by itself: it is tested against a real server
# (test_live_events.py), not here.
schema = schemathesis.pytest.from_fixture("api_schema").exclude(path_regex=".*/stream$")


@schema.parametrize()
@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_api_never_fails_and_keeps_to_its_schema(case: Any, fuzzed: Fuzzed) -> None:
    """No 5xx, and every response's status, content type, headers and body are documented.

    The campaign id is pinned to a real campaign and a real token is sent, so requests get
    past authentication into the handlers. Schema-valid commands are often refused by the
    rules (422) or name things that do not exist (400): that is the game, so schemathesis'
    positive/negative data checks are left out.
    """
    token = fuzzed.seat_token
    if case.path_parameters and "campaign_id" in case.path_parameters:
        if case.path.endswith("/close"):
            case.path_parameters["campaign_id"], token = fuzzed.closing_id, fuzzed.owner_token
        else:
            case.path_parameters["campaign_id"] = fuzzed.campaign_id
    case.call_and_validate(
        headers={"Authorization": f"Bearer {token}"},
        checks=[not_a_server_error, status_code_conformance, content_type_conformance,
                response_headers_conformance, response_schema_conformance],
    )
