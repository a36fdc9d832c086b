"""What a run asks of an OpenAI-compatible endpoint: where it is, how hard to push it, how to score.

The API key is read from the environment when a request is made; it is never a setting, so it
never reaches ``run.json``, ``results.json``, the cache or an error message. The key, the
endpoint's credentials and its key-like query values are registered with ``bla_eval.redact``
when they are read, which masks them in everything written or printed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..redact import register, register_url, shown

PROVIDERS: dict[str, tuple[str, str]] = {
    "openai": ("https://api.openai.com/v1", "OPENAI_API_KEY"),
    "gemini": ("https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
    "anthropic": ("https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
}
"""``--endpoint`` shortcut -> (API base URL, environment variable of its key)."""

DEFAULT_KEY_ENV = "OPENAI_API_KEY"
"""Where the key is read from when neither ``--api-key-env`` nor a shortcut names a variable."""

DEFAULT_CONCURRENCY = 8
MAX_CONCURRENCY = 64
"""Requests in flight at once: the default, and the most a run may ask for."""

MAX_TOP_LOGPROBS = 20
"""The most alternatives per token that OpenAI, vLLM and llama.cpp return."""

MAX_RETRIES = 100
"""The most retries of one request (``--max-retries``)."""

MIN_REQUEST_TIMEOUT_S = 0.001
"""The shortest ``--request-timeout`` (a millisecond)."""
MAX_REQUEST_TIMEOUT_S = 86_400
"""The longest ``--request-timeout`` (a day)."""

MAX_PRICE_USD = 1_000_000.0
"""The highest ``--price-input`` / ``--price-output`` (US dollars per million tokens): a cost
stays finite in ``results.json``."""

MAX_ANSWER_TOKENS = 100_000
"""The most tokens of one generated answer (``--max-answer-tokens``)."""

SCORING = ("auto", "logprobs", "generation")
"""``--api-scoring``: ``auto`` reads P(yes) from top log-probabilities when the endpoint returns
them and otherwise classifies a generated answer; the other two force one path."""

CHAT_PATH = "/chat/completions"


def resolve_endpoint(endpoint: str) -> tuple[str, str]:
    """(API base URL, default key variable) of ``--endpoint``: a shortcut or an http(s) URL.

    A URL ending in ``/chat/completions`` is cut back to its base; the request path is
    ``<base>/chat/completions`` (so ``http://127.0.0.1:8000/v1`` is the usual form).
    """
    register_url(endpoint)
    if endpoint.lower() in PROVIDERS:
        return PROVIDERS[endpoint.lower()]
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            f"endpoint {public_url(endpoint)!r} is not an http(s) URL such as "
            f"http://127.0.0.1:8000/v1 nor one of {', '.join(PROVIDERS)}"
        )
    if "@" in endpoint:  # a password holding "/" or "#" ends urlsplit's netloc before its "@"
        raise ValueError(
            f"endpoint {public_url(endpoint)!r} must not carry credentials (user:password@): "
            "put the key in an environment variable (--api-key-env)"
        )
    try:
        parts.port  # noqa: B018  (a malformed port raises here)
    except ValueError as err:
        raise ValueError(f"endpoint {public_url(endpoint)!r}: {err}") from None
    path = parts.path.rstrip("/").removesuffix(CHAT_PATH)
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, "")), DEFAULT_KEY_ENV


def recorded_endpoint(endpoint: str) -> str:
    """What ``run.json`` records of ``--endpoint``: its API base URL as :func:`public_url`
    shows it (a shortcut resolved)."""
    return public_url(resolve_endpoint(endpoint)[0])


def public_url(url: str) -> str:
    """``url`` without user info, query or fragment (where keys are sometimes put): the form
    that is recorded and shown."""
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:  # credentials end at the last "@" (a password may hold "/" or "#")
        url = f"{scheme}://{rest.rsplit('@', 1)[1]}"
    try:
        parts = urlsplit(url)
    except ValueError:
        return shown(url.partition("?")[0].partition("#")[0])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


@dataclass(frozen=True)
class ApiSettings:
    """Everything the ``openai-api`` kind needs besides the model name: the ``RunConfig``
    settings of the same names (:func:`api_settings` builds it from a run's), the endpoint and
    the key's variable resolved."""

    endpoint: str
    """API base URL (requests go to ``<endpoint>/chat/completions``)."""
    api_key_env: str
    """The environment variable the key is read from."""
    concurrency: int
    request_timeout: float
    """Seconds one request may take."""
    max_retries: int
    """Retries of a request answered 408, 429 or 5xx (or cut off) before the run stops."""
    top_logprobs: int
    max_answer_tokens: int
    api_scoring: str
    text_only: bool
    """Send the question without the image."""
    price_input: float | None
    """US dollars per million prompt tokens (for the cost in results.json)."""
    price_output: float | None
    """US dollars per million completion tokens."""
    cache_dir: Path | None = None
    """Folder of the response cache (None: no cache)."""

    @property
    def public_endpoint(self) -> str:
        """The endpoint as recorded and shown (no credentials, no query)."""
        return public_url(self.endpoint)

    def api_key(self) -> str | None:
        """The key from the environment without surrounding whitespace (None when the variable
        is unset or blank); a key with whitespace or other characters a header cannot carry
        inside it is refused (the error never shows it)."""
        key = (os.environ.get(self.api_key_env) or "").strip()
        if any(not 33 <= ord(c) <= 126 for c in key):
            raise ValueError(
                f"${self.api_key_env} holds whitespace, control or non-ASCII characters inside the "
                "API key: set it to the key alone"
            )
        register(key)
        return key or None


def api_settings(config: Any, cache_dir: Path | None = None) -> ApiSettings | None:
    """The API settings of a ``RunConfig`` (None when it names no endpoint)."""
    if not config.endpoint:
        return None
    base, key_env = resolve_endpoint(config.endpoint)
    return config.settings_for(
        ApiSettings, endpoint=base, api_key_env=config.api_key_env or key_env, cache_dir=cache_dir
    )


def check_api_fields(config: Any) -> None:
    """ValueError naming a bad endpoint, ``api_scoring`` or ``api_key_env`` of a ``RunConfig``
    (its numbers are checked against their bounds, declared on the fields)."""
    if config.endpoint is not None:
        resolve_endpoint(config.endpoint)
    if config.api_scoring not in SCORING:
        raise ValueError(
            f"unknown api_scoring {config.api_scoring!r}: use one of {', '.join(SCORING)}"
        )
    if config.api_key_env is not None and not str(config.api_key_env).strip():
        raise ValueError("api_key_env must name an environment variable")
