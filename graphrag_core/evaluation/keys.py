"""The stable keys of what an experiment makes, and its id.

Invariants: a key is a function of what determines the thing it names and of nothing else, so
a rerun, or another experiment sharing a condition, finds what was already made:
an answer by the index's content, the answering model and the exact request (question and seed
included); claims by the model and the answer's text; an experiment by its spec, the index and
both models. Judge calls are keyed by :func:`~graphrag_core.evaluation.judge.judge_call_key`.
"""

from __future__ import annotations

import hashlib
import json

from ..llm.base import model_identity
from ..request import GlobalSearchRequest
from .spec import ExperimentSpec

EXPERIMENT_ID_CHARS = 16


def answer_key(fingerprint: str, model: object, request: GlobalSearchRequest) -> str:
    digest = hashlib.sha256()
    for part in (fingerprint, model_identity(model), request.model_dump_json()):
        digest.update(part.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()


def claims_key(model: object, answer: str) -> str:
    return hashlib.sha256(f"{model_identity(model)}\x00{answer}".encode()).hexdigest()


def experiment_id(spec: ExperimentSpec, fingerprint: str, model: object, judge: object) -> str:
    """A stable id: the same spec over the same index with the same models has the same id."""
    text = json.dumps([spec.model_dump(mode="json"), fingerprint, model_identity(model), model_identity(judge)], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:EXPERIMENT_ID_CHARS]


__all__ = ["answer_key", "claims_key", "experiment_id"]
