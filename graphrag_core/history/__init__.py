"""The run history: every run's request, events and result in SQLite, so it can be listed,
replayed, compared and exported with no model.

- :mod:`.records`: a stored run (:class:`RunRecord`) and a line of a list (:class:`RunSummary`);
- :mod:`.store`: the SQLite file (:class:`RunStore`);
- :mod:`.liveness`: whether a running run's writer process is still there;
- :mod:`.recorder`: recording a run while it streams (:class:`RunRecorder`).
"""

from .liveness import interrupted_message, process_token, writer_alive
from .records import STATUS_WORDS, RunRecord, RunStatus, RunSummary, run_label, settings_text, status_word, utc_now_iso
from .recorder import FLUSH_INTERVAL_S, RunRecorder
from .store import DEFAULT_LIST_LIMIT, SCHEMA_VERSION, RunStore, StoreError, default_store_path

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "FLUSH_INTERVAL_S",
    "SCHEMA_VERSION",
    "STATUS_WORDS",
    "RunRecord",
    "RunRecorder",
    "RunStatus",
    "RunStore",
    "RunSummary",
    "StoreError",
    "default_store_path",
    "interrupted_message",
    "process_token",
    "run_label",
    "settings_text",
    "status_word",
    "utc_now_iso",
    "writer_alive",
]
