"""The stable keys of what an experiment makes, and its id.

Invariants: a key is a function of what determines the thing it names and of nothing else, so
a rerun, or another experiment sharing a condition, finds what was already made:
an answer by the index's content, the answering model, the exact request (question and seed
included) and, for the ``vector`` method, what ranked the chunks (an embedding model or BM25);
claims by the model and the answer's text; an experiment by its spec, the index and
both models. Judge calls are keyed by :func:`~graphrag_core.evaluation.judge.judge_call_key`.
"""

from __future__ import annotations

import hashlib
import json

from pydantic_core import to_json

from ..llm.base import model_identity
from ..methods import GLOBAL, LAZY, VECTOR
from ..request import GlobalSearchRequest
from .spec import ExperimentSpec

EXPERIMENT_ID_CHARS = 16


def _keyed_text(request: GlobalSearchRequest) -> str:
    """The request's JSON in the order answer keys have always read it: the settings, the
    question, then the seed (the seed became a setting after answers were stored under these
    keys, which an experiment's rerun finds again). A ``global`` request without its method field."""
    unused = {"relevance_budget"} if request.method != LAZY else set()
    exclude = {"method", *unused} if request.method == GLOBAL else unused
    data = request.model_dump(mode="json", exclude=exclude)
    seed = data.pop("seed")
    ordered: dict[str, object] = {}
    for name, value in data.items():
        ordered[name] = value
        if name == "query":
            ordered["seed"] = seed
    return to_json(ordered).decode("utf-8")


def answer_key(fingerprint: str, model: object, request: GlobalSearchRequest, *, ranker: str | None = None) -> str:
    """The key of one answer. A ``global`` request is keyed without its method field, so its key
    is the same whether the field is written or not; a ``vector`` or ``lazy`` one with ``ranker``
    too. Settings of a method that means nothing for it (the relevance budget outside ``lazy``)
    are left out, so a request's key stays what it was before they existed."""
    request_text = _keyed_text(request)
    parts = [fingerprint, model_identity(model), request_text]
    if request.method in (VECTOR, LAZY):
        parts.append(ranker or "")
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def claims_key(model: object, answer: str) -> str:
    return hashlib.sha256(f"{model_identity(model)}\x00{answer}".encode()).hexdigest()


def experiment_id(spec: ExperimentSpec, fingerprint: str, model: object, judge: object, *, ranker: str | None = None) -> str:
    """A stable id: the same spec over the same index with the same models (and, when a condition
    ranks chunks, the same ``ranker``) has the same id."""
    parts: list[object] = [spec.model_dump(mode="json"), fingerprint, model_identity(model), model_identity(judge)]
    if ranker is not None:
        parts.append(ranker)
    text = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:EXPERIMENT_ID_CHARS]


__all__ = ["answer_key", "claims_key", "experiment_id"]
