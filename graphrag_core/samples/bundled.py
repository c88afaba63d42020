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
REPO_ROOT = SAMPLE_DATA.parents[1]
"""The folder holding ``graphrag_core/``: the repository root in a checkout."""

SAMPLES: dict[str, Path] = {
    "jargon": SAMPLE_DATA / "jargon",
    "zh-tea": SAMPLE_DATA / "zh-tea",
}
"""Every bundled sample, by name, in the order the app should offer them."""

DEFAULT_SAMPLE = "jargon"

SAMPLE_QUESTIONS: dict[str, str] = {
    "jargon": "What does hacker culture value, and how does its slang show it?",
    "zh-tea": "茶是怎样从中国传到世界各地的？",
}
"""A question each sample answers well, to start the question boxes with."""


def sample_question(name: str) -> str:
    """The sample question of the sample ``name``; ``""`` for anything else."""
    return SAMPLE_QUESTIONS.get(name, "")


def sample_path(name: str) -> Path:
    """The folder of the sample called ``name``; ``KeyError`` listing the known names otherwise."""
    try:
        return SAMPLES[name]
    except KeyError:
        known = ", ".join(SAMPLES)
        raise KeyError(f"No sample called {name!r}; the samples are: {known}.") from None


__all__ = ["DEFAULT_SAMPLE", "REPO_ROOT", "SAMPLES", "SAMPLE_DATA", "SAMPLE_QUESTIONS", "sample_path", "sample_question"]
