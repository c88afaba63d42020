"""Read a model's text into validated map and reduce outputs (spec sections 6 and 7)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from .errors import MapOutputError, ModelOutputError, RatingOutputError, ReduceOutputError

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class MapOutput(BaseModel):
    """A validated map answer: ``answer`` is stripped; ``usefulness`` is finite, 0-100."""

    model_config = ConfigDict(frozen=True)

    answer: str
    usefulness: float


def parse_json_output(raw: str) -> Any:
    """The JSON value in a model's text.

    Tried in order: the inside of a ```json fence; the whole text; the slice from the first
    ``{`` or ``[`` to the last ``}`` or ``]``. Raises :class:`ModelOutputError` when none parses.
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
            return json.loads(candidate)
        except ValueError:
            continue
    raise ModelOutputError(f"LLM output is not valid JSON: {text[:200]}...")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_map_output(raw: str) -> MapOutput:
    """Validate a map answer: a JSON object with a string ``answer`` and a finite 0-100 ``usefulness``.

    ``answer`` may be blank only when usefulness is 0. Extra keys are ignored.
    """
    try:
        value = parse_json_output(raw)
    except ModelOutputError as exc:
        raise MapOutputError(str(exc)) from None
    if not isinstance(value, dict) or "answer" not in value or "usefulness" not in value:
        raise MapOutputError("Global Map output must contain answer and usefulness fields.")
    answer, usefulness = value["answer"], value["usefulness"]
    if (
        not isinstance(answer, str)
        or not _is_number(usefulness)
        or not math.isfinite(usefulness)
        or not 0 <= usefulness <= 100
        or (not answer.strip() and usefulness != 0)
    ):
        raise MapOutputError("Global Map output contains an invalid answer or usefulness score.")
    return MapOutput(answer=answer.strip(), usefulness=usefulness)


def parse_reduce_output(raw: str) -> str:
    """Validate the reduce answer: a JSON object with a non-blank string ``answer``; returns it stripped."""
    try:
        value = parse_json_output(raw)
    except ModelOutputError as exc:
        raise ReduceOutputError(str(exc)) from None
    if not isinstance(value, dict) or "answer" not in value:
        raise ReduceOutputError("Global Reduce output must contain an answer field.")
    answer = value["answer"]
    if not isinstance(answer, str) or not answer.strip():
        raise ReduceOutputError("Global Reduce output contains an invalid answer.")
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
    try:
        value = parse_json_output(raw)
    except ModelOutputError as exc:
        raise RatingOutputError(str(exc)) from None
    if not isinstance(value, dict):
        raise RatingOutputError(RATING_SHAPE_ERROR)
    rating, reason = value.get("rating"), value.get("reason")
    if (
        not _is_number(rating)
        or not math.isfinite(rating)
        or int(rating) != rating
        or not 0 <= rating <= 5
        or (reason is not None and not isinstance(reason, str))
    ):
        raise RatingOutputError(RATING_SHAPE_ERROR)
    return RatingOutput(rating=int(rating), reason=reason.strip() if isinstance(reason, str) else None)
