"""The deterministic no-LLM model: :class:`OfflineChatModel` (and its identity), and
:class:`PacedOfflineChatModel`, which also streams.

``model`` holds the two classes and the table of answerers by purpose; ``retrieval`` the
text-retrieval kit they read prompts with; ``answers`` the map, reduce and summary answers;
``rating`` dynamic selection's ratings; ``judging`` the evaluation heuristics.
"""

from .answers import answer_map, answer_reduce, answer_summary
from .model import OFFLINE_IDENTITY, OFFLINE_VERSION, OfflineChatModel, PacedOfflineChatModel

__all__ = [
    "OFFLINE_IDENTITY",
    "OFFLINE_VERSION",
    "OfflineChatModel",
    "PacedOfflineChatModel",
    "answer_map",
    "answer_reduce",
    "answer_summary",
]
