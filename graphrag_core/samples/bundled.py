"""The bundled sample indexes: their names, folders and sample questions.

``SAMPLES`` maps a sample's name to its folder under ``graphrag_core/sample_data/``, package
data that a wheel installs with the code (``sample_data/`` at the repository root is a link to
it); each folder is a native index that :func:`graphrag_core.index.load_index` reads.
``DEFAULT_SAMPLE`` is the one the app opens on.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

SAMPLE_DATA = Path(str(files("graphrag_core") / "sample_data"))
"""The bundled samples' folder: package data of ``graphrag_core``, found wherever it is installed."""

SAMPLES: dict[str, Path] = {
    "jargon": SAMPLE_DATA / "jargon",
    "zh-tea": SAMPLE_DATA / "zh-tea",
    "zh-tang": SAMPLE_DATA / "zh-tang",
}
"""Every bundled sample, by name, in the order the app should offer them."""

DEFAULT_SAMPLE = "jargon"

SAMPLE_QUESTIONS: dict[str, str] = {
    "jargon": "What does hacker culture value, and how does its slang show it?",
    "zh-tea": "茶是怎样从中国传到世界各地的？",
    "zh-tang": "李白與杜甫等唐代詩人之間有哪些交往？",
}
"""A question each sample answers well, to start the question boxes with."""


GENERIC_QUESTION = "What are the main themes of this corpus?"
"""The question a question box starts with on an index that is not a sample (any corpus answers it)."""


def sample_question(name: str) -> str:
    """The sample question of the sample ``name``; ``""`` for anything else."""
    return SAMPLE_QUESTIONS.get(name, "")


def starting_question(name: str) -> str:
    """The question a question box starts with on the index ``name``: the sample's own question,
    else :data:`GENERIC_QUESTION` (a folder index is not asked about the Jargon File)."""
    return sample_question(name) or GENERIC_QUESTION


def is_starting_question(text: str) -> bool:
    """Whether ``text`` is one of the questions a box starts with (so nobody typed it, and it may
    follow the index)."""
    return text in SAMPLE_QUESTIONS.values() or text == GENERIC_QUESTION


def sample_path(name: str) -> Path:
    """The folder of the sample called ``name``; ``KeyError`` listing the known names otherwise."""
    try:
        return SAMPLES[name]
    except KeyError:
        known = ", ".join(SAMPLES)
        raise KeyError(f"No sample called {name!r}; the samples are: {known}.") from None


__all__ = [
    "DEFAULT_SAMPLE",
    "GENERIC_QUESTION",
    "SAMPLES",
    "SAMPLE_DATA",
    "SAMPLE_QUESTIONS",
    "is_starting_question",
    "sample_path",
    "sample_question",
    "starting_question",
]
