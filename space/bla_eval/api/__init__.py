"""Talking to OpenAI-compatible chat-completions endpoints (the ``openai-api`` model kind).

``settings`` (what a run asks of an endpoint, the key from the environment), ``client`` (one HTTP
request with retries, backoff and one-line errors), ``cache`` (responses on disk, keyed by the
exact request), ``messages`` (the engine's prompt as chat messages with data-URL images) and
``answers`` (P(yes) from top log-probabilities, or a generated answer classified). The standard
library is enough: no ``openai`` package is needed to score.
"""
