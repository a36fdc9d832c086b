"""Entry point for ``evaluate.load("bla_metric")`` (evaluate loads ``<folder>/<folder>.py``).

The metric itself is ``bla.py`` (the file the Hub Space serves); this file only re-exports it.
The ``citation``, ``formulas``, ``registry`` and ``tasks`` imports are here too because evaluate
copies only the direct relative imports (and reads a comment after a relative import as a URL:
keep these lines bare), and no data file: the published numbers (``bla_metric/data``) are not
imported here.
"""

from .bla import Bla
from .citation import CITATION
from .formulas import compute
from .registry import Registry
from .tasks import TASKS

__all__ = ["CITATION", "TASKS", "Bla", "Registry", "compute"]
