"""The bundled sample indexes (:mod:`.bundled`), and the builders that make them from source
text. Rebuild them with ``python -m graphrag_core.samples jargon|zh`` (see ``sample_data/README.md``).
"""

from .bundled import (
    DEFAULT_SAMPLE,
    GENERIC_QUESTION,
    REPO_ROOT,
    SAMPLE_DATA,
    SAMPLE_QUESTIONS,
    SAMPLES,
    is_starting_question,
    sample_path,
    sample_question,
    starting_question,
)

__all__ = [
    "DEFAULT_SAMPLE",
    "GENERIC_QUESTION",
    "REPO_ROOT",
    "SAMPLES",
    "SAMPLE_DATA",
    "SAMPLE_QUESTIONS",
    "is_starting_question",
    "sample_path",
    "sample_question",
    "starting_question",
]
