"""Talking to OpenAI-compatible chat-completions endpoints (the ``openai-api`` model kind).

``settings`` (what a run asks of an endpoint, the key from the environment), ``client`` (one HTTP
request over ``httpx`` with retries, backoff, a whole-request deadline, a body limit and one-line
errors), ``response`` (the documented shape of a chat completion, checked), ``cache`` (responses
on disk, keyed by the exact request), ``messages`` (the engine's prompt as chat messages with
data-URL images) and ``answers`` (P(yes) from top log-probabilities, or a generated answer
classified). No ``openai`` package is needed to score.
"""
