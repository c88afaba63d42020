"""The bundled sample indexes, and the builders that make them from source text.

``SAMPLES`` maps a sample's name to its folder under ``sample_data/`` at the repository root
(next to ``graphrag_core/``); each folder is a native index that
:func:`graphrag_core.index.load_index` reads. ``DEFAULT_SAMPLE`` is the one the app opens on.
Rebuild them with ``python -m graphrag_core.samples jargon|zh`` (see ``sample_data/README.md``).
"""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The repository root: the folder holding ``graphrag_core/`` and ``sample_data/``."""
SAMPLE_DATA = REPO_ROOT / "sample_data"

SAMPLES: dict[str, Path] = {
    "jargon": SAMPLE_DATA / "jargon",
    "zh-tea": SAMPLE_DATA / "zh-tea",
}
"""Every bundled sample, by name, in the order the app should offer them."""

DEFAULT_SAMPLE = "jargon"


def sample_path(name: str) -> Path:
    """The folder of the sample called ``name``; ``KeyError`` listing the known names otherwise."""
    try:
        return SAMPLES[name]
    except KeyError:
        known = ", ".join(SAMPLES)
        raise KeyError(f"No sample called {name!r}; the samples are: {known}.") from None


__all__ = ["DEFAULT_SAMPLE", "REPO_ROOT", "SAMPLES", "SAMPLE_DATA", "sample_path"]
