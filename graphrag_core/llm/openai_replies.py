"""What an OpenAI-compatible endpoint's answers say, read without the SDK: an error body's own
message, a refusal of the ``response_format`` sent, a prompt past the context window, when to
retry (``Retry-After``), the reply's finish reason and its usage (with the prompt tokens served
from the endpoint's prompt cache). Pure functions of what came back, shared by the chat and
embedding adapters.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from .base import MAX_REPLY_CHARS, TokenUsage

ERROR_BODY_EXCERPT = 300
REDACTED = "[redacted]"

SCHEMA_FORMS = frozenset({"json_schema", "json_object_schema"})
_REFUSAL_STATUSES = frozenset({400, 422, 500, 501})
_REFUSAL_WORDS = ("response_format", "json_schema", "schema", "json_object", "grammar", "structured output")

def refuses_format(status: int, detail: str) -> bool:
    """Whether an error answer is the endpoint refusing the ``response_format`` it was sent."""
    text = detail.lower()
    return status in _REFUSAL_STATUSES and any(word in text for word in _REFUSAL_WORDS)


def parse_retry_after(headers: Mapping[str, str] | None, *, now: float | None = None) -> float | None:
    """Seconds to wait before retrying, from ``retry-after-ms`` or ``retry-after`` (seconds or an
    HTTP date); ``None`` when absent or unreadable; never negative."""
    if not headers:
        return None
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    milliseconds = lowered.get("retry-after-ms")
    if milliseconds is not None:
        try:
            value = float(milliseconds) / 1000.0
        except ValueError:
            value = math.nan
        if math.isfinite(value):
            return max(0.0, value)
    raw = lowered.get("retry-after")
    if raw is None or not raw.strip():
        return None
    try:
        value = float(raw)
    except ValueError:
        try:
            when = parsedate_to_datetime(raw.strip())
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return max(0.0, value) if math.isfinite(value) else None


CONTEXT_LENGTH_ADVICE = (
    "The prompt is longer than the model's context window: the token estimate used for the budgets "
    "counts fewer tokens than this model does (often several times fewer for non-English text). "
    "Lower the map and reduce token budgets (--map-budget/--reduce-budget, or the page's budget "
    "sliders) to fit the model's context, or count with the model's own tokenizer "
    "(tokenizer \"endpoint\", where the server offers /tokenize)."
)
_CONTEXT_WORDS = ("context length", "context_length", "context size", "context window", "n_ctx", "too many tokens", "maximum context")


def is_context_overflow(detail: str, body: object) -> bool:
    """Whether an error answer says the prompt does not fit the model's context."""
    code = body.get("code") if isinstance(body, dict) else None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = body["error"].get("code", code)
    text = detail.lower()
    return code == "context_length_exceeded" or any(word in text for word in _CONTEXT_WORDS)


MAX_REPLY_BODY_BYTES = 8 * MAX_REPLY_CHARS
"""A reply body, decoded, is read up to this many bytes (its text is bounded by ``MAX_REPLY_CHARS``;
JSON escapes take up to six bytes a character)."""
MAX_PLAUSIBLE_CALL_TOKENS = 10_000_000
"""A call reported to use more tokens than this (or a negative count) is recorded as unreported."""

def is_retryable_status(status: int) -> bool:
    return status in (408, 429) or status >= 500


NOTICE_DETAIL_CHARS = 200
"""How much of a server's message a notice quotes (cut at a word, never inside one)."""


def notice_excerpt(text: str, limit: int = NOTICE_DETAIL_CHARS) -> str:
    """``text`` whole when short, else its words up to ``limit`` characters and an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit + 1].rsplit(" ", 1)[0] if " " in text[:limit] else text[:limit]
    return cut.rstrip(" ,;:") + "…"


def finish_reason_of(choice: object) -> str | None:
    reason = getattr(choice, "finish_reason", None)
    return reason if isinstance(reason, str) else None


def served_error(completion: object) -> str:
    """The server's own message in a body that is an error (``{"error": {"message": ...}}``)."""
    extra = getattr(completion, "model_extra", None) or {}
    error = extra.get("error") if isinstance(extra, dict) else None
    if isinstance(error, dict):
        error = error.get("message") or error.get("type") or ""
    return str(error).strip()[:ERROR_BODY_EXCERPT] if error else ""


def _field(value: object, name: str) -> object:
    """``value.name`` of an SDK object, or ``value[name]`` of a body the SDK left as a dict."""
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def reported_usage(usage: object, completion: object = None) -> TokenUsage | None:
    """The usage an endpoint reported, with the prompt tokens it served from its prompt cache:
    ``prompt_tokens_details.cached_tokens`` (OpenAI, Azure, vLLM), else llama.cpp's
    ``timings.cache_n`` on the ``completion`` itself."""
    prompt = _field(usage, "prompt_tokens")
    completion_tokens = _field(usage, "completion_tokens")
    if not isinstance(prompt, int) and not isinstance(completion_tokens, int):
        return None
    cached = _field(_field(usage, "prompt_tokens_details"), "cached_tokens")
    if not isinstance(cached, int) and completion is not None:
        cached = _field(_field(getattr(completion, "model_extra", None) or {}, "timings"), "cache_n")
    prompt = prompt if isinstance(prompt, int) else 0
    cached = cached if isinstance(cached, int) and not isinstance(cached, bool) and 0 <= cached else 0
    return TokenUsage(
        prompt_tokens=prompt,
        completion_tokens=completion_tokens if isinstance(completion_tokens, int) else 0,
        cached_tokens=min(cached, prompt) if prompt > 0 else 0,
    )


def error_detail(body: object) -> str:
    """The server's own error message in an error answer's ``body`` (``{"error": {"message": ...}}``),
    else a body excerpt."""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return error["message"][:ERROR_BODY_EXCERPT]
        if isinstance(error, str):
            return error[:ERROR_BODY_EXCERPT]
    if isinstance(body, str):
        return body.strip()[:ERROR_BODY_EXCERPT]
    return ""



FOLLOWING_FORM_WORDS: dict[str, str] = {
    "json_object_schema": "it takes json_object, and the reply's schema now goes in the prompt",
    "json_object": "it takes json_object, so replies are asked for as JSON objects with no schema",
    "none": "it takes no response_format, so replies are read from plain text",
}
"""What the form a refusal falls back to means for the calls that follow, in words."""

_REFUSAL_NOTICE = re.compile(
    r"^Model endpoint (?P<identity>.+?) does not accept response_format (?P<form>\w+) \((?P<detail>.*)\); using (?P<following>\w+) from now on\.$",
    re.S,
)


def refusal_notice(identity: str, form: str, following: str, detail: str) -> str:
    """The notice a run gets when its endpoint refused a ``response_format`` (once per endpoint
    and form): the endpoint, the form, an excerpt of the server's message, the form used next."""
    return f"Model endpoint {identity} does not accept response_format {form} ({notice_excerpt(detail)}); using {following} from now on."


@dataclass(frozen=True)
class FormRefusal:
    """A :func:`refusal_notice` read back: a front end says it in one sentence
    (:attr:`sentence`) and keeps the server's own words (:attr:`detail`) behind a details view."""

    identity: str
    form: str
    following: str
    detail: str

    @classmethod
    def read(cls, notice: str) -> FormRefusal | None:
        """The refusal a notice says, or None for any other notice."""
        match = _REFUSAL_NOTICE.match(notice)
        return None if match is None else cls(**match.groupdict())

    @property
    def sentence(self) -> str:
        """``This server (…) does not take json_schema output: it takes json_object, and the
        reply's schema now goes in the prompt.``"""
        then = FOLLOWING_FORM_WORDS.get(self.following, f"it is sent {self.following} from now on")
        return f"This server ({self.identity}) does not take {self.form} output: {then}."


__all__ = [
    "FOLLOWING_FORM_WORDS",
    "FormRefusal",
    "CONTEXT_LENGTH_ADVICE",
    "ERROR_BODY_EXCERPT",
    "MAX_PLAUSIBLE_CALL_TOKENS",
    "MAX_REPLY_BODY_BYTES",
    "NOTICE_DETAIL_CHARS",
    "REDACTED",
    "SCHEMA_FORMS",
    "error_detail",
    "finish_reason_of",
    "is_context_overflow",
    "is_retryable_status",
    "notice_excerpt",
    "refusal_notice",
    "parse_retry_after",
    "refuses_format",
    "reported_usage",
    "served_error",
]
