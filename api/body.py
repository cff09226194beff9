"""Request bodies decoded strictly, once, and every way a body can be malformed a 400.

Litestar decodes a JSON body into plain values and converts them to the handler's ``data``
type with msgspec's lax rules, so ``"3"`` passed for an integer; a body nested a thousand
deep raised ``RecursionError`` and one that is not UTF-8 ``UnicodeDecodeError``, both 500s.
:class:`StrictRequest` (the app's ``request_class``) decodes the body with msgspec straight
into the handler's ``data`` type, strictly, and answers any failure with a 400 naming the
field; the plain values it hands on then convert without surprises. A key given twice in one
object is a 400 too: msgspec keeps the last value and drops the other in silence.
"""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import ValidationException
from litestar.types import Empty

from domain.text import in_words

#: Where msgspec says the error is; a dict's key (a Drive's name) is "at `key` in `$.…`",
#: named by its dict.
_AT = re.compile(r" - at (?:`key` in )?`\$\.?([^`]*)`$")
#: A high surrogate escape (\uD800-\uDBFF) not followed by the low one it pairs with: msgspec
#: reports it as "Input data was truncated", which names neither the string nor the escape.
_LONE_SURROGATE = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})")


@cache
def _decoder(handler: Any) -> msgspec.json.Decoder[Any] | None:
    """A strict decoder of the ``data`` of ``handler`` (None: it takes no body)."""
    field = handler.parsed_fn_signature.parameters.get("data")
    if field is None:
        return None
    return msgspec.json.Decoder(field.annotation, strict=True)


def malformed(error: Exception, body: bytes = b"") -> ValidationException:
    """The 400 of a body that does not decode: ``errors[0].key`` names the field."""
    if isinstance(error, RecursionError):
        message, key = "the JSON body is nested too deeply", ""
    elif isinstance(error, UnicodeDecodeError):
        message, key = "the body is not valid UTF-8", ""
    elif str(error) == "Input data was truncated" and _LONE_SURROGATE.search(body):
        message, key = ("a string holds a lone UTF-16 surrogate (a \\uD800-\\uDBFF escape "
                        "without the \\uDC00-\\uDFFF escape that completes it)"), ""
    else:
        message = in_words(str(error))
        found = _AT.search(message)
        key = found.group(1) if found else ""
        message = _AT.sub("", message)
    return ValidationException(
        detail=f"malformed body: {message}" + (f" (at {key})" if key else ""),
        extra=[{"message": message, "key": key, "source": "body"}],
    )


class _RepeatedKey(ValueError):
    pass


def _distinct_keys(pairs: list[tuple[str, Any]]) -> None:
    """``object_pairs_hook`` of :data:`_KEYS`: refuses an object that names a key twice."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise _RepeatedKey(key)
        seen.add(key)


#: Reads a body only to find a key given twice (msgspec cannot tell): the values are dropped.
_KEYS = json.JSONDecoder(object_pairs_hook=_distinct_keys)


def repeated_key(body: bytes) -> ValidationException | None:
    """The 400 of a body (one msgspec decoded) with a key given twice in one object."""
    try:
        _KEYS.decode(body.decode())
    except _RepeatedKey as twice:
        key = twice.args[0]
        message = (f"the key `{key}` twice in one object: which value counts would be the "
                   "parser's guess; give it once")
        return ValidationException(detail=f"malformed body: {message}",
                                   extra=[{"message": message, "key": key, "source": "body"}])
    except (ValueError, RecursionError):
        pass  # what msgspec read, Python's parser may still refuse (a 5,000-digit number)
    return None


class StrictRequest(Request[Any, Any, Any]):
    """A request whose JSON body is decoded strictly into the handler's ``data`` type."""

    async def json(self) -> Any:
        if self._json is Empty:
            body = await self.body()
            decoder = _decoder(self.route_handler)
            try:
                if decoder is None:
                    value = msgspec.json.decode(body or b"null")
                else:
                    value = msgspec.to_builtins(decoder.decode(body or b"null"))
            except (msgspec.DecodeError, msgspec.ValidationError, RecursionError,
                    UnicodeDecodeError) as e:
                raise malformed(e, body) from None
            twice = repeated_key(body) if body else None
            if twice is not None:
                raise twice
            self._json = self._connection_state.json = value
        return self._json
