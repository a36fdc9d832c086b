"""Entry point for ``evaluate.load("bla_metric")`` (evaluate loads ``<folder>/<folder>.py``).

The metric itself is ``bla.py`` (the file the Hub Space serves); this file only re-exports it.
The ``formulas``, ``learning_references``, ``published``, ``references`` and ``tasks`` imports
are here too because evaluate copies only the direct relative imports (and reads a comment after
a relative import as a URL: keep these lines bare).
"""

from .bla import Bla
from .formulas import compute
from .learning_references import TABLE3
from .published import PUBLISHED
from .references import CITATION
from .tasks import TASKS

__all__ = ["CITATION", "PUBLISHED", "TABLE3", "TASKS", "Bla", "compute"]
