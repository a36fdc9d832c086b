"""One chat-completions request with retries: backoff on 408/429/5xx honouring ``Retry-After``,
a timeout per request, and one-line errors that name the endpoint and never show the key.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import urllib.error
import urllib.request
from email.utils import parsedate_to_datetime
from http.client import HTTPException
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .settings import CHAT_PATH, ApiSettings

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""Statuses that mean "try again later" (529: overloaded, as some providers say)."""

BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 60.0
RETRY_AFTER_CAP_S = 300.0
"""Exponential backoff: 1, 2, 4, ... seconds (with jitter) up to 60; a server's Retry-After is
honoured up to 5 minutes."""

MESSAGE_CHARS = 300
"""How much of a server's error message an error line quotes."""


class EndpointError(ValueError):
    """The endpoint cannot be used as asked (one line for the user, key never included)."""


class LogprobsRefused(EndpointError):
    """The endpoint rejected a request because it asked for log-probabilities."""


class Stopped(Exception):
    """Another request of the run failed; this one gave up without sending."""


def request_url(base: str, path: str) -> str:
    """``base`` (an API base URL, perhaps with a query) with ``path`` appended to its path."""
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, parts.path + path, parts.query, ""))


def retry_after(headers: Any) -> float | None:
    """Seconds a server asks to wait (``Retry-After`` in seconds or as a date, or
    ``retry-after-ms``), capped; None when it says nothing usable."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    value = headers.get("Retry-After")
    try:
        if millis is not None:
            return min(max(float(millis) / 1000, 0.0), RETRY_AFTER_CAP_S)
        if value is None:
            return None
        return min(max(float(value), 0.0), RETRY_AFTER_CAP_S)
    except ValueError:
        pass
    try:
        from datetime import datetime, timezone

        when = parsedate_to_datetime(value)
        return min(max((when - datetime.now(timezone.utc)).total_seconds(), 0.0), RETRY_AFTER_CAP_S)
    except (TypeError, ValueError):
        return None


def backoff(attempt: int) -> float:
    """Seconds before retry ``attempt`` (0-based): exponential with jitter, capped."""
    return min(BACKOFF_BASE_S * 2**attempt, BACKOFF_CAP_S) * random.uniform(0.5, 1.0)


class ChatClient:
    """Posts chat-completion bodies to one endpoint for one model (thread-safe)."""

    def __init__(self, settings: ApiSettings, model: str) -> None:
        self.settings = settings
        self.model = model
        self.url = request_url(settings.endpoint, CHAT_PATH)
        self.where = settings.public_endpoint
        self._key = settings.api_key()
        self.stop = threading.Event()
        """Set when the run fails: requests not yet sent are not sent, retries stop."""
        self.answered = threading.Event()
        """Set once the endpoint has answered: later connection failures are retried."""
        self._lock = threading.Lock()
        self.retries = 0
        """Requests sent again after a retryable failure (all threads)."""

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    def scrub(self, text: str) -> str:
        """``text`` on one line, shortened, with the key (if it occurs) masked."""
        if self._key:
            text = text.replace(self._key, "***")
        text = " ".join(text.split())
        return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 3] + "..."

    def post(self, body: bytes) -> dict[str, Any]:
        """The JSON answer to ``body``, retried on 408/429/5xx, cut-off connections and timeouts."""
        attempts = self.settings.max_retries + 1
        for attempt in range(attempts):
            if self.stop.is_set():
                raise Stopped
            last = attempt == attempts - 1
            wait = self._attempt(body, last, attempts)
            if isinstance(wait, dict):
                return wait
            with self._lock:
                self.retries += 1
            if self.stop.wait(wait if wait is not None else backoff(attempt)):
                raise Stopped
        raise AssertionError("unreachable")

    def _attempt(self, body: bytes, last: bool, attempts: int) -> dict[str, Any] | float | None:
        """One send: the answer, or the seconds to wait before the next try (None: backoff)."""
        request = urllib.request.Request(self.url, body, self.headers(), method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.settings.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as err:
            self.answered.set()
            message = self.scrub(_error_text(err))
            if err.code in RETRY_STATUS:
                if last:
                    raise EndpointError(
                        f"endpoint {self.where}: HTTP {err.code} after {attempts} attempt(s) "
                        f"for model {self.model!r}: {message}"
                    ) from None
                return retry_after(err.headers)
            raise self.refusal(err.code, message) from None
        except (urllib.error.URLError, HTTPException, OSError) as err:
            reason = getattr(err, "reason", err)
            if isinstance(reason, (TimeoutError, socket.timeout)):
                if last:
                    raise EndpointError(
                        f"endpoint {self.where} did not answer within {self.settings.timeout:g} "
                        f"s ({attempts} attempt(s)); raise --request-timeout or lower "
                        "--concurrency"
                    ) from None
                return None
            if last or not self.answered.is_set():
                raise EndpointError(
                    f"cannot reach endpoint {self.where}: {self.scrub(str(reason))}"
                ) from None
            return None
        return self._decode(raw)

    def _decode(self, raw: bytes) -> dict[str, Any]:
        try:
            doc = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            doc = None
        if not isinstance(doc, dict) or not isinstance(doc.get("choices"), list):
            text = self.scrub(raw.decode("utf-8", "replace")) or "an empty body"
            raise EndpointError(
                f"endpoint {self.where} answered with something that is not a chat completion: "
                f"{text}"
            )
        self.answered.set()
        return doc

    def refusal(self, status: int, message: str) -> EndpointError:
        """The error of a non-retryable HTTP status."""
        if status in (401, 403):
            state = "set" if self._key else "not set"
            return EndpointError(
                f"endpoint {self.where} refused the API key (HTTP {status}: {message}); the key "
                f"is read from ${self.settings.key_env} ({state})"
            )
        if status == 404:
            return EndpointError(self.not_found(message))
        if status in (400, 422) and "logprob" in message.lower():
            return LogprobsRefused(
                f"endpoint {self.where} refused log-probabilities for model {self.model!r} "
                f"(HTTP {status}: {message})"
            )
        return EndpointError(
            f"endpoint {self.where} refused the request for model {self.model!r} "
            f"(HTTP {status}: {message})"
        )

    def not_found(self, message: str) -> str:
        """Why a request was answered 404: the model is not among the endpoint's models, or
        the URL is not an API base."""
        served = self.served_models()
        if served is not None and self.model not in served:
            listed = ", ".join(served[:10]) + (", ..." if len(served) > 10 else "")
            return (
                f"endpoint {self.where} does not serve model {self.model!r} "
                f"(it serves: {listed or 'no model'})"
            )
        return (
            f"endpoint {self.where} answered HTTP 404 for model {self.model!r}: {message} (an "
            "unknown model, or not an API base URL such as http://127.0.0.1:8000/v1)"
        )

    def served_models(self) -> list[str] | None:
        """The model ids ``GET <endpoint>/models`` lists (None when it lists nothing usable)."""
        url = request_url(self.settings.endpoint, "/models")
        request = urllib.request.Request(url, headers=self.headers())
        try:
            with urllib.request.urlopen(request, timeout=self.settings.timeout) as response:
                doc = json.loads(response.read())
            return [str(m["id"]) for m in doc["data"]]
        except (OSError, HTTPException, ValueError, KeyError, TypeError):
            return None


def _error_text(err: urllib.error.HTTPError) -> str:
    """The message of an HTTP error body (OpenAI's ``error.message``, FastAPI's ``detail``, ...)."""
    try:
        raw = err.read().decode("utf-8", "replace")
    except OSError:
        raw = ""
    try:
        doc = json.loads(raw)
    except json.JSONDecodeError:
        return raw or str(err.reason)
    if isinstance(doc, list) and doc:
        doc = doc[0]
    if isinstance(doc, dict):
        for key in ("error", "detail", "message"):
            value = doc.get(key)
            if isinstance(value, dict):
                value = value.get("message", value)
            if value:
                return value if isinstance(value, str) else json.dumps(value)
    return raw
