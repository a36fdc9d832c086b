"""What a run's requests cost and what the server said about itself, for results.json."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from .answers import OUTCOMES

TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")


class Usage:
    """Counts over the responses a scorer used (thread-safe): requests sent and read from the
    cache, token usage of each, the server's model ids and system fingerprints, answer outcomes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests = Counter()
        self.tokens = {"sent": Counter(), "cached": Counter()}
        self.models: Counter[str] = Counter()
        self.fingerprints: Counter[str] = Counter()
        self.outcomes: Counter[str] = Counter()

    def add_response(self, doc: dict[str, Any], cached: bool) -> None:
        """Count one response (``cached``: read from the cache, not sent)."""
        source = "cached" if cached else "sent"
        usage = doc.get("usage") if isinstance(doc.get("usage"), dict) else {}
        with self._lock:
            self.requests[source] += 1
            for name in TOKEN_FIELDS:
                value = usage.get(name)
                if isinstance(value, int):
                    self.tokens[source][name] += value
            if doc.get("model"):
                self.models[str(doc["model"])] += 1
            if doc.get("system_fingerprint"):
                self.fingerprints[str(doc["system_fingerprint"])] += 1

    def add_outcome(self, outcome: str) -> None:
        with self._lock:
            self.outcomes[outcome] += 1

    def cost(self, source: str, price_input: float | None, price_output: float | None) -> float:
        """US dollars of the ``source`` responses' tokens at the given prices per million."""
        tokens = self.tokens[source]
        dollars = tokens["prompt_tokens"] * (price_input or 0) + tokens["completion_tokens"] * (
            price_output or 0
        )
        return round(dollars / 1e6, 6)

    def record(self, retries: int, prices: tuple[float | None, float | None]) -> dict[str, Any]:
        """The usage part of results.json."""
        doc: dict[str, Any] = {
            "requests_sent": self.requests["sent"],
            "requests_from_cache": self.requests["cached"],
            "retries": retries,
            "server_models": dict(self.models),
            "system_fingerprints": dict(self.fingerprints),
            "tokens_sent": {k: self.tokens["sent"][k] for k in TOKEN_FIELDS},
            "tokens_from_cache": {k: self.tokens["cached"][k] for k in TOKEN_FIELDS},
            "answers": {k: self.outcomes[k] for k in OUTCOMES if self.outcomes[k]},
        }
        if any(p is not None for p in prices):
            doc["prices_usd_per_million_tokens"] = {"input": prices[0], "output": prices[1]}
            doc["cost_usd_sent"] = self.cost("sent", *prices)
            doc["cost_usd_from_cache"] = self.cost("cached", *prices)
        return doc
