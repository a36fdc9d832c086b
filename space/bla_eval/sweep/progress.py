"""One progress display over a sweep's cells (queued, running, done, failed apart; tqdm's time
left), each failure's error line as it comes, and the outcomes for the report."""

from __future__ import annotations

import sys

from .job import Outcome


class Events:
    """What the executors report: a cell queued (submitted, not started), started, ended (its
    outcome)."""

    def __init__(self, total: int, skipped: int = 0, show: bool = True) -> None:
        from tqdm.auto import tqdm

        self.outcomes: dict[str, Outcome] = {}
        self.queued: set[str] = set()
        self.running: set[str] = set()
        self.skipped = skipped
        self.bar = tqdm(
            total=total, desc="cells", unit="cell", disable=not show, file=sys.stderr, leave=True
        )
        self._show()

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes.values() if not o.ok]

    def queue(self, cell: str) -> None:
        self.queued.add(cell)
        self._show()

    def started(self, cell: str) -> None:
        if cell in self.running or cell in self.outcomes:
            return
        self.queued.discard(cell)
        self.running.add(cell)
        self._show()

    def finished(self, outcome: Outcome) -> None:
        self.queued.discard(outcome.id)
        self.running.discard(outcome.id)
        self.outcomes[outcome.id] = outcome
        if not outcome.ok:
            self.bar.write(f"bla-eval sweep: cell {outcome.id} failed: {outcome.error}", sys.stderr)
        self.bar.update(1)
        self._show()

    def _show(self) -> None:
        done = sum(o.ok for o in self.outcomes.values())
        self.bar.set_postfix(
            queued=len(self.queued),
            running=len(self.running),
            done=done,
            failed=len(self.failed),
            skipped=self.skipped,
        )

    def close(self) -> None:
        self.bar.close()


SHOWN = 300
"""The most characters of an engine's error shown in a cell's line."""


def clipped(text: str, most: int = SHOWN) -> str:
    """``text`` on one line, its beginning and its end kept when it is longer than ``most``
    (where an engine names the job's state, and where its error says why)."""
    line = " ".join(str(text).split())
    if len(line) <= most:
        return line
    head = most // 3
    return f"{line[:head]} ... {line[-(most - head - 5) :]}"
