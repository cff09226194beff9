"""Request bodies decoded strictly, once, and every way a body can be malformed a 400.

Litestar decodes a JSON body into plain values and converts them to the handler's ``data``
type with msgspec's lax rules, so ``"3"`` passed for an integer; a body nested a thousand
deep raised ``RecursionError`` and one that is not UTF-8 ``UnicodeDecodeError``, both 500s.
:class:`StrictRequest` (the app's ``request_class``) decodes the body with msgspec straight
into the handler's ``data`` type, strictly, and answers any failure with a 400 naming the
field; the plain values it hands on then convert without surprises.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import msgspec
from litestar import Request
from litestar.exceptions import ValidationException
from litestar.types import Empty

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
        message = str(error)
        found = _AT.search(message)
        key = found.group(1) if found else ""
        message = _AT.sub("", message)
    return ValidationException(
        detail=f"malformed body: {message}" + (f" (at {key})" if key else ""),
        extra=[{"message": message, "key": key, "source": "body"}],
    )


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
            self._json = self._connection_state.json = value
        return self._json
