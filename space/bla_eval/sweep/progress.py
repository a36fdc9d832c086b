"""One progress display over a sweep's cells (done, running, failed; tqdm's time left), each
failure's error line as it comes, and the outcomes for the report."""

from __future__ import annotations

import sys

from .job import Outcome


class Events:
    """What the executors report: a cell started, a cell ended (its outcome)."""

    def __init__(self, total: int, skipped: int = 0, show: bool = True) -> None:
        from tqdm.auto import tqdm

        self.outcomes: dict[str, Outcome] = {}
        self.running: set[str] = set()
        self.skipped = skipped
        self.bar = tqdm(
            total=total, desc="cells", unit="cell", disable=not show, file=sys.stderr, leave=True
        )
        self._show()

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes.values() if not o.ok]

    def started(self, cell: str) -> None:
        self.running.add(cell)
        self._show()

    def finished(self, outcome: Outcome) -> None:
        self.running.discard(outcome.id)
        self.outcomes[outcome.id] = outcome
        if not outcome.ok:
            self.bar.write(f"bla-eval sweep: cell {outcome.id} failed: {outcome.error}", sys.stderr)
        self.bar.update(1)
        self._show()

    def _show(self) -> None:
        done = sum(o.ok for o in self.outcomes.values())
        self.bar.set_postfix(
            done=done, running=len(self.running), failed=len(self.failed), skipped=self.skipped
        )

    def close(self) -> None:
        self.bar.close()
