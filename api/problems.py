"""RFC 9457 problem details for everything a client can get wrong (never a 500 for it).

The rules engine's errors map by kind: a rule refusal is 422 with ``rule`` (the rule id),
``choices`` and ``field`` when the player must choose; another seat's business is 403; a stale
``expected_version`` or a concurrent write is 409; a reference to nothing is 400 (404 for the
campaign or version in the path).
"""

from __future__ import annotations

import logging
import re
from http import HTTPStatus
from typing import Any
from uuid import UUID

import msgspec
from eventsourcing.persistence import PersistenceError
from litestar import Request, Response
from litestar.exceptions import HTTPException
from litestar.openapi.datastructures import ResponseSpec

from application.extras import MissingExtra
from application.mapper import EventDecodeError
from domain.errors import ChoiceRequired, DomainError, RuleViolation

log = logging.getLogger(__name__)
MEDIA_TYPE = "application/problem+json"

STATUS = {"rule": 422, "forbidden": 403, "malformed": 400, "conflict": 409, "not_found": 404,
          "locked": 423}
TITLES = {
    400: "Bad request",
    403: "Not allowed for this seat",
    404: "Not found",
    409: "Stale version",
    422: "Against the rules",
    423: "Damaged log",
}

#: What each problem status means, as documented in the OpenAPI schema.
MEANINGS = {
    400: "Malformed: a field or parameter fails validation (``errors`` names it), or the "
    "command names something that does not exist",
    401: "No bearer token, or not one of this campaign's",
    403: "This token may not do this (another seat, the owner at the table, a seat closing), "
    "or no longer anything: its seat was taken away by an upheld dispute (``rule`` "
    "R-X-REC-8, the detail names the dispute)",
    404: "No such campaign, or no such version of it",
    409: "Stale ``expected_version`` or a concurrent write (``current_version``)",
    413: "The body is over 64 KiB",
    422: "Against the rules: ``rule``; ``choices`` and ``field`` when a choice is missing",
    423: "The campaign's log does not verify, or an event of it cannot be read (``position``): "
    "it takes no command until the host repairs or forks it",
    429: "Too many requests from this client: retry after the Retry-After header's seconds "
    "(and see the RateLimit-* headers)",
    501: "This server was installed without the optional part this needs (the detail names "
    "the extra to install)",
    503: "A read model has not caught up with the asked ``position`` within ``timeout``, or "
    "the store cannot be reached (the detail names it): retry after the Retry-After header's "
    "seconds",
}


class Problem(msgspec.Struct, frozen=True, kw_only=True):
    """An RFC 9457 problem details body (``application/problem+json``)."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    #: 422: the id of the rule the command breaks.
    rule: str | None = None
    #: 422: the legal values, when the player must choose.
    choices: list[Any] | None = None
    #: 422: the command field the choice goes in.
    field: str | None = None
    #: 404 and 409: the campaign's current version.
    current_version: int | None = None
    #: 400: what failed validation (``key`` names the field).
    errors: list[dict[str, Any]] | dict[str, Any] | None = None
    #: 423: the first event of the log found wrong.
    position: int | None = None


def responses(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI documentation of a route's problem responses."""
    return {
        status: ResponseSpec(data_container=Problem, media_type=MEDIA_TYPE,
                             description=MEANINGS[status], generate_examples=False)
        for status in statuses
    }


def problem(
    status: int, detail: str, title: str | None = None, **extra: Any
) -> Response[dict[str, Any]]:
    body: dict[str, Any] = {"type": "about:blank", "title": title or TITLES.get(status, "Error"),
                            "status": status, "detail": detail}
    body.update({k: v for k, v in extra.items() if v is not None})
    return Response(body, status_code=status, media_type=MEDIA_TYPE)


def domain_error(_: Request[Any, Any, Any], error: DomainError) -> Response[dict[str, Any]]:
    status = STATUS.get(error.kind, 400)
    if isinstance(error, RuleViolation):
        return problem(
            status,
            error.reason,
            rule=error.rule,
            choices=list(error.choices) or None,
            field=error.field if isinstance(error, ChoiceRequired) else None,
        )
    current = getattr(error, "current", None)
    return problem(status, error.reason, current_version=current,
                   position=getattr(error, "position", None))


def undecodable(_: Request[Any, Any, Any], error: EventDecodeError) -> Response[dict[str, Any]]:
    """A stored event that does not decode (a damaged store): named, never a 500."""
    log.error("%s", error)
    return problem(423, f"event {error.originator_version} of campaign {error.originator_id} "
                   "cannot be read: the store was damaged or edited; the host must repair it "
                   "or fork the campaign before that event", position=error.originator_version)


def without_query(detail: str, request: Request[Any, Any, Any]) -> str:
    """``detail`` without the query string of ``request``.

    Litestar's validation message names the URL asked ("Validation failed for GET
    /campaigns/…/events/stream?token=…&after=abc"), and the live stream and the charts take a
    seat's token in the query string (browsers' ``EventSource`` and ``<img>`` send no header):
    the error body would hand the token on to whatever shows or logs it.
    """
    query = request.url.query
    return detail.replace(f"?{query}", "") if query else detail


#: Litestar's message for a body that is missing altogether: the ``KeyError`` of its ``data``.
_NO_BODY = "'data'"
EMPTY_BODY = "the body is empty: a JSON object is expected"


def as_sent(request: Request[Any, Any, Any], errors: Any) -> Any:
    """Litestar's validation ``errors``, each naming the field as the client sent it: a query
    parameter by its name in the URL (``from``), not the handler's (``from_version``); an
    empty body as such, not by the ``KeyError`` Litestar met (``'data'``)."""
    if not isinstance(errors, list):
        return errors
    try:
        parameters = request.route_handler.parsed_fn_signature.parameters
    except (KeyError, AttributeError):  # pragma: no cover - no route: no parameters
        parameters = {}
    named = []
    for error in errors:
        if not isinstance(error, dict):
            named.append(error)
            continue
        error = dict(error)
        key = error.get("key")
        if key == "data" and error.get("message") == _NO_BODY:
            error.update(message=EMPTY_BODY, key="", source="body")
        elif key in parameters and error.get("source") != "body":
            alias = getattr(parameters[key].kwarg_definition, "name", None)
            error["key"] = alias or key
        named.append(error)
    return named


def http_error(request: Request[Any, Any, Any], error: HTTPException) -> Response[dict[str, Any]]:
    """Litestar's own errors (400 validation, 401, 403, 404, 405, 413, 429) as problems."""
    status = error.status_code
    try:
        title = HTTPStatus(status).phrase
    except ValueError:  # pragma: no cover
        title = "Error"
    detail = without_query(error.detail, request) if error.detail else ""
    detail = detail if detail and detail != title else title
    errors = as_sent(request, error.extra) if status == 400 else error.extra
    if errors and any(e.get("message") == EMPTY_BODY for e in errors if isinstance(e, dict)):
        detail = f"malformed body: {EMPTY_BODY}"
    if status == 404 and detail == title:
        detail = _mistyped_campaign(request.url.path) or detail
    response = problem(status, detail, title, errors=errors or None)
    if error.headers:
        response.headers.update(error.headers)
    if status == 429:
        # RFC 9110's Retry-After, which clients and proxies know (the rate limiter sends only
        # the draft RateLimit-* headers): the seconds until the client's window resets.
        reset = (error.headers or {}).get("RateLimit-Reset", "")
        response.headers["Retry-After"] = str(max(1, int(reset))) if reset.isdigit() else "1"
    return response


#: A path about one campaign (the API's, or its table's page), the id as typed.
_CAMPAIGN_PATH = re.compile(r"^/(?:campaigns|play)/([^/]+)")


def _mistyped_campaign(path: str) -> str | None:
    """What is wrong with a path whose campaign id is not one, which no route matches (it was a
    bare "Not Found", as for a route that does not exist); None for any other path."""
    found = _CAMPAIGN_PATH.match(path)
    if found is None:
        return None
    try:
        UUID(found[1])
    except ValueError:
        return (f"not a campaign id: {found[1]!r} (a campaign's id is a UUID, as in its "
                "invitation link: 8-4-4-4-12 hexadecimal digits)")
    return None


def missing_extra(_: Request[Any, Any, Any], error: MissingExtra) -> Response[dict[str, Any]]:
    """A feature this installation left out (Parquet, charts): 501, naming the extra."""
    return problem(501, str(error), "Not installed")


def store_unreachable(store: str) -> Any:
    """The handler of a store that cannot be reached (a connection refused or lost, none to
    be had within ``POSTGRES_CONNECT_TIMEOUT``): 503 naming ``store``, with Retry-After. A
    write may have been stored before its connection was lost, so its detail says to read the
    log before sending it again. It was a 500 ("the server failed"), with a traceback."""

    def handle(request: Request[Any, Any, Any], error: PersistenceError) -> Response[Any]:
        reason = " ".join(str(error).split()) or type(error).__name__
        log.warning("%s cannot be reached: %s", store, reason)
        detail = f"{store} cannot be reached ({reason}): try again in a moment"
        if request.method not in ("GET", "HEAD"):
            detail += ("; this request's write may or may not have been stored: read the "
                       "campaign's log before sending it again")
        response = problem(503, detail, "Store unreachable")
        response.headers["Retry-After"] = "1"
        return response

    return handle


def internal_error(_: Request[Any, Any, Any], error: Exception) -> Response[dict[str, Any]]:
    """A bug of ours: logged with its traceback, answered without internals."""
    log.exception("unhandled error", exc_info=error)
    return problem(500, "the server failed to handle this request; it has been logged")


HANDLERS: dict[int | type[Exception], Any] = {
    DomainError: domain_error,
    EventDecodeError: undecodable,
    MissingExtra: missing_extra,
    HTTPException: http_error,
    Exception: internal_error,
}

