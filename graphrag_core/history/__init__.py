"""The run history: every run's request, events and result in SQLite, so it can be listed,
replayed, compared and exported with no model. It holds no display text: how a run is named in
a list is each front end's (``graphrag_app.labels``, the command line's ``runs list``).

- :mod:`.records`: a stored run (:class:`RunRecord`) and a line of a list (:class:`RunSummary`);
- :mod:`.store`: the SQLite file (:class:`RunStore`): runs and their events, appended as they come;
- :mod:`.migrations`: the file's schema, as numbered migrations applied in order;
- :mod:`.liveness`: whether a running run's writer process is still there;
- :mod:`.recorder`: recording a run while it streams (:class:`RunRecorder`).
"""

from .liveness import interrupted_message, process_token, writer_alive
from .migrations import SCHEMA_VERSION
from .records import EVALUATION_LABEL_PREFIX, SWEEP_LABEL_PREFIX, RunRecord, RunSummary, is_evaluation_label, utc_now_iso
from .recorder import FLUSH_INTERVAL_S, RunRecorder
from .store import DEFAULT_LIST_LIMIT, RunStore, StoreError, default_store_path

__all__ = [
    "DEFAULT_LIST_LIMIT",
    "EVALUATION_LABEL_PREFIX",
    "SWEEP_LABEL_PREFIX",
    "FLUSH_INTERVAL_S",
    "SCHEMA_VERSION",
    "RunRecord",
    "RunRecorder",
    "RunStore",
    "RunSummary",
    "StoreError",
    "default_store_path",
    "interrupted_message",
    "is_evaluation_label",
    "process_token",
    "utc_now_iso",
    "writer_alive",
]
