"""Read a model's text into validated map and reduce outputs (spec sections 6 and 7).

JSON is read leniently about control characters inside strings (a raw newline in an answer, as
local servers' grammars allow), never about shape: the spec's shape checks apply unchanged. A
reply that copies one of the prompt's own placeholders (``<why>``) instead of filling it in is
refused with its own message (:data:`PLACEHOLDER_MESSAGE`), as the call's own output error.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from .errors import MapOutputError, ModelOutputError, RatingOutputError, ReduceOutputError
from .prompts import PROMPT_PLACEHOLDERS

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class MapOutput(BaseModel):
    """A validated map answer: ``answer`` is stripped; ``usefulness`` is finite, 0-100."""

    model_config = ConfigDict(frozen=True)

    answer: str
    usefulness: float


PLACEHOLDER_MESSAGE = "The reply copies the prompt's placeholder {placeholder} instead of filling it in."
"""The error of a reply that echoes a placeholder of the prompt's response format."""
PLACEHOLDER_CONTAINED_MIN_CHARS = 20
"""A placeholder at least this long is refused also inside a longer string; a shorter one
(``<title>``, ``<item>``) only when it is the whole string (an answer may name an HTML tag)."""


def echoed_placeholder(value: Any) -> str | None:
    """The first prompt placeholder that a string of ``value`` (at any depth) copies, else ``None``."""
    if isinstance(value, str):
        text = value.strip()
        for placeholder in PROMPT_PLACEHOLDERS:
            if text == placeholder or (len(placeholder) >= PLACEHOLDER_CONTAINED_MIN_CHARS and placeholder in text):
                return placeholder
        return None
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for item in items:
        found = echoed_placeholder(item)
        if found is not None:
            return found
    return None


def parse_json_output(raw: str, *, error: type[ModelOutputError] = ModelOutputError) -> Any:
    """The JSON value in a model's text.

    Tried in order: the inside of a ```json fence; the whole text; the slice from the first
    ``{`` or ``[`` to the last ``}`` or ``]``; control characters inside strings are accepted
    (``strict=False``). Raises ``error`` (a :class:`ModelOutputError` class: each kind of call
    has its own) with the spec's not-valid-JSON message when none parses, and with
    :data:`PLACEHOLDER_MESSAGE` when the value copies one of the prompt's placeholders.
    """
    text = raw if isinstance(raw, str) else str(raw)
    candidates: list[str] = []
    fenced = _FENCE.search(text)
    if fenced:
        candidates.append(fenced.group(1))
    candidates.append(text)
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    ends = [i for i in (text.rfind("}"), text.rfind("]")) if i >= 0]
    if starts and ends and max(ends) > min(starts):
        candidates.append(text[min(starts) : max(ends) + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate, strict=False)
        except ValueError:
            continue
        placeholder = echoed_placeholder(value)
        if placeholder is not None:
            raise invalid_output(error, PLACEHOLDER_MESSAGE.format(placeholder=placeholder), text)
        return value
    raise error(f"LLM output is not valid JSON: {text[:200]}...")


REPLY_EXCERPT = 200
"""How many characters of an unusable reply an error message quotes."""


def quote_reply(raw: str) -> str:
    """The start of a reply for an error message: ``The reply began: '...'``."""
    text = raw if isinstance(raw, str) else str(raw)
    excerpt = text[:REPLY_EXCERPT] + ("..." if len(text) > REPLY_EXCERPT else "")
    return f"The reply began: {excerpt!r}"


def invalid_output(error: type[ModelOutputError], message: str, raw: str) -> ModelOutputError:
    """An error whose message is the spec's exact text and which keeps the reply's start
    (``reply_start``) for the engine's description of the failure."""
    exc = error(message)
    exc.reply_start = quote_reply(raw)
    return exc


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def number_between(value: Any, low: float, high: float) -> bool:
    """True when ``value`` is a JSON number (``true`` is not) with ``low <= value <= high``.

    NaN and the infinities fail the comparison, and an integer too large for a float (JSON
    allows ``1e400`` written out in digits) is compared exactly instead of overflowing."""
    return _is_number(value) and low <= value <= high


def parse_map_output(raw: str) -> MapOutput:
    """Validate a map answer: a JSON object with a string ``answer`` and a finite 0-100 ``usefulness``.

    ``answer`` may be blank only when usefulness is 0. Extra keys are ignored. Every error's
    message is the spec's exact text; its ``reply_start`` quotes the start of the reply.
    """
    value = parse_json_output(raw, error=MapOutputError)
    if not isinstance(value, dict) or "answer" not in value or "usefulness" not in value:
        raise invalid_output(MapOutputError, "Global Map output must contain answer and usefulness fields.", raw)
    answer, usefulness = value["answer"], value["usefulness"]
    if (
        not isinstance(answer, str)
        or not number_between(usefulness, 0, 100)
        or (not answer.strip() and usefulness != 0)
    ):
        raise invalid_output(MapOutputError, "Global Map output contains an invalid answer or usefulness score.", raw)
    return MapOutput(answer=answer.strip(), usefulness=usefulness)


def parse_reduce_output(raw: str) -> str:
    """Validate the reduce answer: a JSON object with a non-blank string ``answer``; returns it stripped."""
    value = parse_json_output(raw, error=ReduceOutputError)
    if not isinstance(value, dict) or "answer" not in value:
        raise invalid_output(ReduceOutputError, "Global Reduce output must contain an answer field.", raw)
    answer = value["answer"]
    if not isinstance(answer, str) or not answer.strip():
        raise invalid_output(ReduceOutputError, "Global Reduce output contains an invalid answer.", raw)
    return answer.strip()


RATING_SHAPE_ERROR = "Community rating output must contain an integer rating from 0 to 5."


class RatingOutput(BaseModel):
    """A validated community rating: an integer 0-5 and the model's reason, when it gave one."""

    model_config = ConfigDict(frozen=True)

    rating: int
    reason: str | None = None


def parse_rating_output(raw: str) -> RatingOutput:
    """Validate a rating: a JSON object with an integer ``rating`` 0-5 and an optional string ``reason``.

    A number with no fractional part counts as an integer (``3.0`` is 3); ``true`` is not a number.
    Text that is not JSON raises the not-valid-JSON error; any other shape the rating error.
    """
    value = parse_json_output(raw, error=RatingOutputError)
    if not isinstance(value, dict):
        raise invalid_output(RatingOutputError, RATING_SHAPE_ERROR, raw)
    rating, reason = value.get("rating"), value.get("reason")
    if (
        not number_between(rating, 0, 5)
        or int(rating) != rating
        or (reason is not None and not isinstance(reason, str))
    ):
        raise invalid_output(RatingOutputError, RATING_SHAPE_ERROR, raw)
    return RatingOutput(rating=int(rating), reason=reason.strip() if isinstance(reason, str) else None)


class AnswerStream:
    """Reads the ``answer`` string out of a JSON reply as it arrives, piece by piece.

    ``feed(piece)`` returns the newly decoded answer text (escapes resolved; ``""`` while the
    reply is still before or after the answer's value). Text before the object (a ```json
    fence) is skipped. What it shows is a preview: the answer of record is the parsed reply.
    """

    _ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

    def __init__(self, key: str = "answer") -> None:
        self._marker = f'"{key}"'
        self._buffer = ""
        self._state = "key"  # key -> colon -> quote -> value -> done
        self.text = ""

    def feed(self, piece: str) -> str:
        self._buffer += piece
        out: list[str] = []
        while self._buffer and self._state != "done":
            if self._state == "key":
                found = self._buffer.find(self._marker)
                if found < 0:
                    self._buffer = self._buffer[-len(self._marker) + 1 :]  # keep a possible partial marker
                    break
                self._buffer, self._state = self._buffer[found + len(self._marker) :], "colon"
            elif self._state in ("colon", "quote"):
                stripped = self._buffer.lstrip()
                if not stripped:
                    self._buffer = ""
                    break
                expected = ":" if self._state == "colon" else '"'
                if stripped[0] != expected:
                    self._state = "done"  # not a string value: nothing to preview
                    break
                self._buffer, self._state = stripped[1:], "quote" if self._state == "colon" else "value"
            else:
                char = self._buffer[0]
                if char == '"':
                    self._state = "done"
                elif char == "\\":
                    if len(self._buffer) < 2:
                        break
                    code = self._buffer[1]
                    if code == "u":
                        if len(self._buffer) < 6:
                            break
                        try:
                            point = int(self._buffer[2:6], 16)
                        except ValueError:
                            point, used = 0xFFFD, 6
                        else:
                            used = 6
                            if 0xD800 <= point < 0xDC00:  # a surrogate pair: wait for its second half
                                if len(self._buffer) < 12:
                                    break
                                try:
                                    low = int(self._buffer[8:12], 16) if self._buffer[6:8] == "\\u" else -1
                                except ValueError:
                                    low = -1
                                if 0xDC00 <= low < 0xE000:
                                    point, used = 0x10000 + ((point - 0xD800) << 10) + (low - 0xDC00), 12
                                else:
                                    point = 0xFFFD
                        out.append(chr(point))
                        self._buffer = self._buffer[used:]
                        continue
                    out.append(self._ESCAPES.get(code, code))
                    self._buffer = self._buffer[2:]
                    continue
                else:
                    end = min((i for i in (self._buffer.find('"'), self._buffer.find("\\")) if i >= 0), default=len(self._buffer))
                    out.append(self._buffer[:end])
                    self._buffer = self._buffer[end:]
                    continue
                self._buffer = self._buffer[1:]
        new = "".join(out)
        self.text += new
        return new
