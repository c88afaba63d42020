"""GraphRAG global search: map-reduce over community summaries, with provenance.

The names below are the public API; everything else is importable from its module.
"""

from .batch_plan import plan_batches
from .batching import MapText, SummaryBatch, build_summary_batches
from .errors import (
    AllMapBatchesFailed,
    BudgetError,
    FatalModelError,
    GraphRAGError,
    IndexFormatError,
    IndexValidationError,
    MapOutputError,
    ModelError,
    ModelOutputError,
    RatingOutputError,
    ReduceOutputError,
    RequestValidationError,
    RetryableModelError,
    RunCancelled,
)
from .errors import ContextLengthError, EmbeddingError, NoSourceChunksError, NothingReadError, PreflightError, ReplyTooLongError
from .events import Event, event_from_json, events_from_json, events_to_json
from .figures import RunFigures, run_figures
from .llm.base import ChatMessage, ChatModel, ChatRequest, ChatResponse, OutputSchema, StreamingChatModel, TokenUsage
from .llm.embeddings import EmbeddingModel, Embeddings, EmbeddingSettings
from .methods import METHODS, Method
from .llm.scripted import ScriptedChatModel
from .map import MapPhaseResult, run_global_map
from .retry import RetryPolicy, complete_with_retry
from .preflight import preflight
from .models import Claim, Community, Document, Entity, Index, Relationship, SourceChunk
from .parsing import MapOutput, RatingOutput, parse_map_output, parse_rating_output, parse_reduce_output
from .reduce import ReducePlan, format_reduce_candidate, plan_reduce, select_reduce_answers
from .request import GlobalSearchRequest, SearchDefaults
from .results import (
    NO_RELEVANT_CHUNKS_ANSWER,
    NO_RESULTS_ANSWER,
    BatchFailure,
    CommunityRating,
    GlobalSearchDiagnostics,
    GlobalSearchResult,
    MapAnswer,
    ReduceCandidate,
)
from .search import answer_from_read, retrieve_global, stream_global
from .selection import SelectionOutcome, select_dynamic
from .state import RunState
from .tokens import ExactTokenizer, HeuristicTokenizer, Tokenizer, estimate_tokens, get_tokenizer

_LAZY = {
    "load_index": "index",
    "save_index": "index",
    "OpenAIChatModel": "llm.openai_model",
    "OfflineChatModel": "llm.offline",
    "ModelSettings": "llm.settings",
    "build_chat_model": "llm.factory",
    "build_embedding_model": "llm.factory",
    "SqliteMapCache": "cache",
    "check_support": "support",
    "offline_support": "support",
    "SupportCheck": "support",
}
"""Public names whose module is imported on first use: pyarrow, the openai SDK
and the offline model's tables cost time that a run with a scripted model does not need (and
the support check reads the answer's points, which read the evaluation's ROUGE-L)."""


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "METHODS",
    "SupportCheck",
    "check_support",
    "offline_support",
    "NO_RELEVANT_CHUNKS_ANSWER",
    "EmbeddingError",
    "EmbeddingModel",
    "EmbeddingSettings",
    "Embeddings",
    "Method",
    "NoSourceChunksError",
    "build_embedding_model",
    "answer_from_read",
    "NothingReadError",
    "load_index",
    "save_index",
    "OpenAIChatModel",
    "OfflineChatModel",
    "ModelSettings",
    "build_chat_model",
    "SqliteMapCache",
    "RunFigures",
    "run_figures",
    "ContextLengthError",
    "OutputSchema",
    "PreflightError",
    "ReplyTooLongError",
    "RetryPolicy",
    "StreamingChatModel",
    "complete_with_retry",
    "preflight",
    "AllMapBatchesFailed",
    "BatchFailure",
    "BudgetError",
    "ChatMessage",
    "ChatModel",
    "ChatRequest",
    "ChatResponse",
    "Claim",
    "Community",
    "CommunityRating",
    "Document",
    "Entity",
    "Event",
    "ExactTokenizer",
    "FatalModelError",
    "GlobalSearchDiagnostics",
    "GlobalSearchRequest",
    "GlobalSearchResult",
    "GraphRAGError",
    "HeuristicTokenizer",
    "Index",
    "IndexFormatError",
    "IndexValidationError",
    "MapAnswer",
    "MapOutput",
    "MapOutputError",
    "MapPhaseResult",
    "MapText",
    "ModelError",
    "ModelOutputError",
    "NO_RESULTS_ANSWER",
    "RatingOutput",
    "RatingOutputError",
    "ReduceCandidate",
    "ReduceOutputError",
    "ReducePlan",
    "Relationship",
    "RequestValidationError",
    "RetryableModelError",
    "RunCancelled",
    "RunState",
    "ScriptedChatModel",
    "SearchDefaults",
    "SelectionOutcome",
    "SourceChunk",
    "SummaryBatch",
    "TokenUsage",
    "Tokenizer",
    "build_summary_batches",
    "estimate_tokens",
    "event_from_json",
    "events_from_json",
    "events_to_json",
    "format_reduce_candidate",
    "get_tokenizer",
    "parse_map_output",
    "parse_rating_output",
    "parse_reduce_output",
    "plan_batches",
    "plan_reduce",
    "retrieve_global",
    "run_global_map",
    "select_dynamic",
    "select_reduce_answers",
    "stream_global",
]
