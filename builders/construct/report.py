"""The per-run report: what each step kept or dropped, per unit (images, relationships, ...)."""

from __future__ import annotations

from collections import Counter, defaultdict

UNITS = ("images", "relationships", "persons", "attributes", "person pairs", "sets")


class Report:
    """Counters per unit: ``add("relationships", "dropped: not a transitive verb")``."""

    def __init__(self) -> None:
        self.counts: dict[str, Counter] = defaultdict(Counter)

    def add(self, unit: str, outcome: str, n: int = 1) -> None:
        if unit not in UNITS:
            raise ValueError(f"unknown report unit {unit!r}; known: {UNITS}")
        if n:
            self.counts[unit][outcome] += n

    def get(self, unit: str, outcome: str) -> int:
        return self.counts[unit][outcome]

    def to_json(self) -> dict[str, dict[str, int]]:
        """unit -> outcome -> count, units in pipeline order, outcomes sorted."""
        return {u: dict(sorted(self.counts[u].items())) for u in UNITS if self.counts[u]}

    def table(self) -> str:
        """A plain-text table for the terminal."""
        lines = [f"{'unit':<14} {'outcome':<58} {'count':>8}"]
        for unit, outcomes in self.to_json().items():
            for outcome, n in outcomes.items():
                lines.append(f"{unit:<14} {outcome:<58} {n:>8}")
        return "\n".join(lines)
