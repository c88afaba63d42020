"""The bundled sample indexes (:mod:`.bundled`), and the builders that make them from source
text. Rebuild them with ``python -m graphrag_core.samples jargon|zh`` (see ``sample_data/README.md``).
"""

from . import bundled
from .bundled import *  # noqa: F403 - the package's public names are those of the bundled samples

__all__ = list(bundled.__all__)
