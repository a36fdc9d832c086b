"""A ``bla-eval`` run folder: :class:`RunFolder` (``folder.py``) owns its files, lock, marker,
``run.json`` and the resume check, the score store, the parts of a multi-process run and
``results.json``; ``check.py`` holds the consistency rule of its records, ``settings.py`` the
settings a resume must match, ``scores.py`` the score records, ``files.py`` the file names."""

from .check import FinishedRun, protocol_name
from .files import RESULTS_FILE, RUN_FILE, SCORES_FILE
from .folder import RunFolder

__all__ = ["RESULTS_FILE", "RUN_FILE", "SCORES_FILE", "FinishedRun", "RunFolder", "protocol_name"]
