"""The error tree of the engine.

Every error the engine raises on purpose derives from :class:`GraphRAGError`. Errors about bad
input are also ``ValueError`` subclasses, so callers that only know the standard library can
still catch them. Messages of request, budget and output errors are part of the behaviour
contract (``docs/global-search.md``) and must not be reworded.
"""

from __future__ import annotations


class GraphRAGError(Exception):
    """Base class of every error raised on purpose by ``graphrag_core``."""


class RequestValidationError(GraphRAGError, ValueError):
    """A global search request field is out of its allowed range (spec section 1)."""


class BudgetError(GraphRAGError, ValueError):
    """A token budget cannot hold what it must hold (the prompt, a summary part)."""


class ModelOutputError(GraphRAGError, ValueError):
    """A model answered, but its text is not what the prompt asked for.

    The message is the spec's exact text; ``reply_start`` (when set) quotes the start of the
    reply, and :func:`describe_error` joins the two for people to read."""

    reply_start: str | None = None


class MapOutputError(ModelOutputError):
    """A map answer is not valid JSON with a string ``answer`` and a 0-100 ``usefulness``."""


class ReduceOutputError(ModelOutputError):
    """The reduce answer is not valid JSON with a non-blank string ``answer``."""


class RatingOutputError(ModelOutputError):
    """A community rating is not valid JSON with an integer ``rating`` from 0 to 5 (dynamic selection)."""


class JudgeOutputError(ModelOutputError):
    """A judge's reply is not a JSON object with a ``winner`` of 1, 2 or 0 (evaluation spec section 2)."""


class SupportOutputError(ModelOutputError):
    """A support check reply is not a JSON object with one entry per point asked about, each with
    a verdict (``supported``, ``partial``, ``unsupported``) and a list of quotes."""


class ClaimsOutputError(ModelOutputError):
    """A claims reply is not a JSON object with a list of strings ``claims`` (evaluation spec section 4)."""


class QuestionsOutputError(ModelOutputError):
    """A question-generation reply is not a JSON object with the list of strings it asked for."""


class ExpansionOutputError(ModelOutputError):
    """A query expansion reply is not a JSON object with a non-empty list of strings
    ``subqueries`` (the lazy method, docs/lazy-search.md)."""


class RelevanceOutputError(ModelOutputError):
    """A relevance test reply does not rate each source it was given exactly once (the lazy
    method, docs/lazy-search.md)."""


class EvaluationError(GraphRAGError, ValueError):
    """An evaluation input is invalid: a criterion, a question set, a condition, a setting."""


class NoSourceChunksError(GraphRAGError, ValueError):
    """A method that reads source chunks (``text``, ``vector``) was asked of an index without any
    (evaluation spec section 7)."""

    def __init__(self, method: str) -> None:
        super().__init__(f"The index has no source chunks, so method {method} cannot run.")
        self.method = method


class NoChunkCommunitiesError(GraphRAGError, ValueError):
    """The lazy method was asked of an index that links no source chunk to a community (no
    entity and no claim names a chunk), so no candidate can be grouped by community."""

    def __init__(self) -> None:
        super().__init__(
            "The index links no source chunk to a community (no entity or claim names a chunk), so method lazy cannot run."
        )


class RelevanceBudgetSpent(GraphRAGError):
    """The next relevance-test call would pass the run's relevance budget, so it was not sent
    (the lazy method's walk ends there; a run is never failed by it)."""


class EmbeddingError(GraphRAGError):
    """An embedding model could not embed a text (its endpoint failed, or replied with no vector)."""


class ReplyTooLongError(ModelOutputError):
    """A reply far longer than the call's ``max_tokens`` allows: it is refused, never stored."""


CUT_REPLY_LEAD = "The reply was cut at "
"""How the message of a :class:`ReplyCutError` begins (what reads a recorded error's kind from
its text, in runs recorded before errors carried their type, looks for it)."""


class ReplyCutError(ModelOutputError):
    """A reply the endpoint stopped at the call's ``max_tokens`` (``finish_reason: "length"``)
    before it was usable: retried with a request for a shorter answer and, where the call's
    token budget allows, a larger output reserve. ``max_tokens`` is the reserve it was cut at."""

    def __init__(self, message: str, *, max_tokens: int | None = None) -> None:
        super().__init__(message)
        self.max_tokens = max_tokens


class ModelError(GraphRAGError):
    """A model call failed before it produced any text.

    ``retryable`` says whether trying again can help (rate limits, server errors, timeouts,
    lost connections); ``retry_after`` is the delay the server asked for, in seconds.
    """

    def __init__(
        self,
        message: str,
        *,
        retryable: bool = True,
        retry_after: float | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.status_code = status_code


class RetryableModelError(ModelError):
    """A transient model failure: 429, 5xx, a timeout or a connection error."""

    def __init__(self, message: str, *, retry_after: float | None = None, status_code: int | None = None) -> None:
        super().__init__(message, retryable=True, retry_after=retry_after, status_code=status_code)


class CallTimedOut(RetryableModelError):
    """A model call that passed its deadline (``GRAPHRAG_LLM_TIMEOUT``): retried like any
    transient failure, and counted apart when a run says why it has no answer."""


class FatalModelError(ModelError):
    """A model failure that retrying cannot fix: a 4xx other than 429, a bad configuration."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message, retryable=False, status_code=status_code)


def describe_error(exc: BaseException) -> str:
    """An error for people: its message (else its type's name), and for an unusable model reply
    the quoted start of that reply."""
    text = str(exc) or type(exc).__name__
    reply_start = getattr(exc, "reply_start", None)
    return f"{text} {reply_start}" if reply_start else text


class ContextLengthError(FatalModelError):
    """The endpoint refused a prompt longer than the model's context window. Retrying the same
    prompt cannot help; the message tells the user what to change (budgets, tokenizer)."""


class IndexValidationError(GraphRAGError, ValueError):
    """An index is malformed. The message names the file, the row or line and the field."""

    def __init__(self, message: str, *, path: str | None = None, row: int | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.row = row
        self.field = field
        self.location: tuple[str, int, str, object] | None = None
        """``(table, record position, field, message)`` when a structure check raised it (see
        ``validation.locate``)."""


class IndexFormatError(IndexValidationError):
    """A folder is not in any supported index layout."""


class AllMapBatchesFailed(ExceptionGroup, GraphRAGError):
    """Every Global Map batch failed after its retry; holds each batch's last error, in batch order."""

    def __new__(cls, message: str = "Every Global Map batch failed.", exceptions=()):  # noqa: D102
        return super().__new__(cls, message, list(exceptions))

    def __init__(self, message: str = "Every Global Map batch failed.", exceptions=()) -> None:
        super().__init__(message, list(exceptions))

    def derive(self, excs):  # keeps the subclass when the group is split
        return AllMapBatchesFailed(self.message, excs)


INTERRUPTED_ERROR_TYPE = "RunInterrupted"
"""The ``error_type`` of the ``RunFailed`` that ends an interrupted run's replay (its process ended)."""

STOPPED_MESSAGE = "The run was stopped before it finished."
"""The error text of a run its user stopped (``RunFailed(cancelled=True)``), engine and app alike."""


class PreflightError(GraphRAGError):
    """A model cannot be called at all (no key where one is needed, an unreachable endpoint);
    found before a run, without spending tokens. ``endpoint`` names it (never a secret)."""

    def __init__(self, message: str, *, endpoint: str) -> None:
        super().__init__(message)
        self.endpoint = endpoint


class RunCancelled(GraphRAGError):
    """A run was stopped by its user before it finished."""


class SpendLimitReached(RunCancelled):
    """A run, a sweep or an experiment stopped at its spending limit: the next model call could
    have taken the tokens spent past ``limit``, so it was not sent. It ends a run the way Stop
    does (``RunFailed(cancelled=True)``), with this error's message as the reason."""

    def __init__(self, message: str, *, limit: int, spent: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.spent = spent


class NothingReadError(GraphRAGError, ValueError):
    """A stopped run cannot be answered from what it read: it finished no useful map answer
    (or it was not stopped at all)."""


class BatchAPIError(ModelError):
    """The Batch API refused or failed a step (upload, create, poll, download), or a job's line
    could not be used; ``retryable`` as for any model error."""
