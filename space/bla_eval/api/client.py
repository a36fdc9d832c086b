"""One chat-completions request with retries, over ``httpx``: backoff on 408/429/5xx honouring
``Retry-After``, a deadline for the whole request, a maximum body size, every response checked
against the documented schema (``bla_eval.api.response``), and one-line errors that name the
endpoint and never show the key or a header.

What ``httpx`` does not provide stays here: its timeouts bound each read, not a request, so a
watchdog shuts the request's socket at the deadline (a server sending one byte a second cannot
hold a request longer than ``--request-timeout``); and the body is read in chunks and refused
once it exceeds :data:`MAX_RESPONSE_BYTES` (never cached).
"""

from __future__ import annotations

import contextlib
import json
import math
import random
import socket
import threading
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..redact import shown
from .response import Malformed, check_completion
from .settings import CHAT_PATH, ApiSettings

RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
"""Statuses that mean "try again later" (529: overloaded, as some providers say)."""

BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 60.0
RETRY_AFTER_CAP_S = 300.0
"""Exponential backoff: 1, 2, 4, ... seconds (with jitter) up to 60; a server's Retry-After is
honoured up to 5 minutes, and a longer one stops the run with an error that says so."""

MAX_RESPONSE_BYTES = 16 * 2**20
"""The largest response body read (16 MiB, decompressed): a chat completion of the answers this
engine asks for is a few kilobytes; a larger body is refused and never cached."""
ERROR_BODY_BYTES = 64 * 2**10
"""How much of an error response is read for its message."""

MESSAGE_CHARS = 300
"""How much of a server's error message an error line quotes."""


class EndpointError(ValueError):
    """The endpoint cannot be used as asked (one line for the user, key never included)."""


class LogprobsRefused(EndpointError):
    """The endpoint rejected a request because it asked for log-probabilities."""


class Stopped(Exception):
    """Another request of the run failed; this one gave up without sending."""


class _TooLarge(Exception):
    """The body exceeded the size limit (its size so far)."""


class _Expired(Exception):
    """The request's deadline passed."""


def request_url(base: str, path: str) -> str:
    """``base`` (an API base URL, perhaps with a query) with ``path`` appended to its path."""
    parts = urlsplit(base)
    return urlunsplit((parts.scheme, parts.netloc, parts.path + path, parts.query, ""))


def retry_after(headers: Any) -> float | None:
    """Seconds a server asks to wait (``Retry-After`` in seconds or as a date, or
    ``retry-after-ms``; not capped, infinite when it is); None when it says nothing usable."""
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    value = headers.get("Retry-After")
    try:
        if millis is not None:
            return _wait(float(millis) / 1000)
        if value is None:
            return None
        return _wait(float(value))
    except ValueError:
        pass
    try:
        from datetime import datetime, timezone

        when = parsedate_to_datetime(value)
        return max((when - datetime.now(timezone.utc)).total_seconds(), 0.0)
    except (TypeError, ValueError, OverflowError):
        return None


def _wait(value: float) -> float | None:
    """Seconds to wait: a negative value waits none, NaN says nothing."""
    return None if math.isnan(value) else max(value, 0.0)


class _Deadline:
    """A whole-request deadline: at ``seconds`` the request's socket is shut, which ends any
    read or write in progress (``httpx`` hands the socket over through its ``trace``)."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._timer.cancel()

    def trace(self, name: str, info: dict[str, Any]) -> None:
        """``httpx``'s trace extension: keep the socket of the connection just opened."""
        if name in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            stream = info.get("return_value")
            sock = stream.get_extra_info("socket") if stream is not None else None
            with self._lock:
                self._sock = sock
                if self.expired:
                    _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.expired = True
            _shut(self._sock)


def _shut(sock: socket.socket | None) -> None:
    if sock is None:
        return
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def backoff(attempt: int) -> float:
    """Seconds before retry ``attempt`` (0-based): exponential with jitter, capped."""
    return min(BACKOFF_BASE_S * 2**attempt, BACKOFF_CAP_S) * random.uniform(0.5, 1.0)


class ChatClient:
    """Posts chat-completion bodies to one endpoint for one model (thread-safe)."""

    def __init__(self, settings: ApiSettings, model: str) -> None:
        import httpx

        self.settings = settings
        self.model = model
        self.url = request_url(settings.endpoint, CHAT_PATH)
        self.where = settings.public_endpoint
        self._key = settings.api_key()
        # a new connection per request: the deadline's watchdog gets each request's socket
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
        self.http = httpx.Client(limits=limits, follow_redirects=False)
        self.stop = threading.Event()
        """Set when the run fails: requests not yet sent are not sent, retries stop."""
        self.answered = threading.Event()
        """Set once the endpoint has answered: later connection failures of any kind are
        retried (a dropped connection is retried before, too)."""
        self._lock = threading.Lock()
        self.retries = 0
        """Requests sent again after a retryable failure (all threads)."""

    def close(self) -> None:
        """Release the HTTP client."""
        self.http.close()

    def headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    def scrub(self, text: str) -> str:
        """``text`` on one line, shortened, with the key, the endpoint's credentials and
        credential-shaped values masked (``bla_eval.redact.shown``)."""
        text = " ".join(shown(text).split())
        return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 3] + "..."

    def post(self, body: bytes) -> dict[str, Any]:
        """The checked chat completion answering ``body``, retried on 408/429/5xx, cut-off
        connections and timeouts."""
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

    def exchange(
        self, method: str, url: str, body: bytes | None, seconds: float | None = None
    ) -> tuple[int, Any, bytes]:
        """(status, headers, body) of one request within the deadline (``seconds``, else
        ``--request-timeout``): the body of a success up to :data:`MAX_RESPONSE_BYTES` (more is
        :class:`_TooLarge`), of an error its first :data:`ERROR_BODY_BYTES`. A passed deadline
        is :class:`_Expired`; ``httpx`` errors pass."""
        import httpx

        seconds = self.settings.request_timeout if seconds is None else seconds
        with _Deadline(seconds) as deadline:
            try:
                with self.http.stream(
                    method,
                    url,
                    content=body,
                    headers=self.headers(),
                    timeout=seconds,
                    extensions={"trace": deadline.trace},
                ) as response:
                    limit = MAX_RESPONSE_BYTES if response.status_code < 400 else ERROR_BODY_BYTES
                    declared = response.headers.get("content-length", "")
                    if response.status_code < 400 and declared.isdigit() and int(declared) > limit:
                        raise _TooLarge(int(declared))
                    data = bytearray()
                    for chunk in response.iter_bytes():
                        data += chunk
                        if len(data) > limit:
                            if response.status_code >= 400:
                                break
                            raise _TooLarge(len(data))
                    if deadline.expired:
                        raise _Expired
                    return response.status_code, response.headers, bytes(data[:limit])
            except httpx.HTTPError:
                if deadline.expired:
                    raise _Expired from None
                raise

    def _attempt(self, body: bytes, last: bool, attempts: int) -> dict[str, Any] | float | None:
        """One send: the answer, or the seconds to wait before the next try (None: backoff)."""
        import httpx

        try:
            status, headers, raw = self.exchange("POST", self.url, body)
        except (_Expired, httpx.TimeoutException):
            if last:
                seconds = self.settings.request_timeout
                raise EndpointError(
                    f"endpoint {self.where} did not answer within {seconds:g} "
                    f"s ({attempts} attempt(s)); raise --request-timeout or lower "
                    "--concurrency"
                ) from None
            return None
        except _TooLarge as err:
            raise EndpointError(
                f"endpoint {self.where} answered model {self.model!r} with a body of more than "
                f"{MAX_RESPONSE_BYTES // 2**20} MiB ({err.args[0]} bytes read), the most a chat "
                "completion may be; nothing of it was used or cached"
            ) from None
        except (httpx.LocalProtocolError, httpx.InvalidURL, httpx.UnsupportedProtocol) as err:
            raise EndpointError(  # such messages may quote a header: only the kind is shown
                f"cannot send a request to endpoint {self.where} ({type(err).__name__})"
            ) from None
        except httpx.HTTPError as err:
            if last or not (self.answered.is_set() or _dropped(err)):
                raise EndpointError(
                    f"cannot reach endpoint {self.where}: {self.scrub(_reason(err))}"
                ) from None
            return None
        if status >= 300:
            self.answered.set()
            message = self.scrub(_error_text(raw, status))
            if status in RETRY_STATUS:
                if last:
                    raise EndpointError(
                        f"endpoint {self.where}: HTTP {status} after {attempts} attempt(s) "
                        f"for model {self.model!r}: {message}"
                    )
                return self.wait_asked(headers)
            raise self.refusal(status, message)
        return self._decode(raw)

    def wait_asked(self, headers: Any) -> float | None:
        """The server's ``Retry-After`` (None: none usable); more than
        :data:`RETRY_AFTER_CAP_S` is an error that says so (the run does not sit silent)."""
        wait = retry_after(headers)
        if wait is not None and wait > RETRY_AFTER_CAP_S:
            shown = "forever" if math.isinf(wait) else f"{wait:g} s"
            raise EndpointError(
                f"endpoint {self.where} asks to wait {shown} before retrying (Retry-After), "
                f"more than the {RETRY_AFTER_CAP_S:g} s a run waits: try again later"
            )
        return wait

    def _decode(self, raw: bytes) -> dict[str, Any]:
        try:
            doc = json.loads(raw)
        except (ValueError, RecursionError):  # UnicodeDecodeError, JSONDecodeError, huge ints
            text = self.scrub(raw.decode("utf-8", "replace")) or "an empty body"
            raise EndpointError(
                f"endpoint {self.where} answered with something that is not a chat completion: "
                f"{text}"
            ) from None
        try:
            check_completion(doc)
        except Malformed as err:
            raise EndpointError(
                f"endpoint {self.where} answered model {self.model!r} with a malformed chat "
                f"completion: {self.scrub(str(err))}"
            ) from None
        self.answered.set()
        return doc

    def refusal(self, status: int, message: str) -> EndpointError:
        """The error of a non-retryable HTTP status."""
        if status in (401, 403):
            state = "set" if self._key else "not set"
            return EndpointError(
                f"endpoint {self.where} refused the API key (HTTP {status}: {message}); the key "
                f"is read from ${self.settings.api_key_env} ({state})"
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
        listed_models = self.served_models()
        served = None if listed_models is None else [str(m["id"]) for m in listed_models]
        if served is not None and self.model not in served:
            listed = ", ".join(served[:10]) + (", ..." if len(served) > 10 else "")
            return (
                f"endpoint {self.where} does not serve model {self.model!r} "
                f"(it serves: {self.scrub(listed) or 'no model'})"
            )
        return (
            f"endpoint {self.where} answered HTTP 404 for model {self.model!r}: {message} (an "
            "unknown model, or not an API base URL such as http://127.0.0.1:8000/v1)"
        )

    def read_json(
        self,
        method: str,
        url: str,
        body: dict[str, Any] | None = None,
        seconds: float | None = None,
    ) -> Any:
        """The JSON answer of one request outside the chat route (a model list, vLLM's
        ``/tokenize``), within the same deadline (or ``seconds``) and body limit; None when it
        fails."""
        import httpx

        data = None if body is None else json.dumps(body).encode()
        try:
            status, _, raw = self.exchange(method, url, data, seconds)
            return json.loads(raw) if status == 200 else None
        except (httpx.HTTPError, _Expired, _TooLarge, ValueError, RecursionError):
            return None  # RecursionError: a JSON document nested too deep

    def served_models(self) -> list[dict[str, Any]] | None:
        """The entries ``GET <endpoint>/models`` lists (None when it lists nothing usable)."""
        doc = self.read_json("GET", request_url(self.settings.endpoint, "/models"))
        listed = doc.get("data") if isinstance(doc, dict) else None
        if not isinstance(listed, list) or not all(
            isinstance(m, dict) and "id" in m for m in listed
        ):
            return None
        return listed


def _dropped(err: Exception) -> bool:
    """Whether ``err`` is a connection the server accepted and then dropped (closed before or
    while answering, or a failed read or write): transient, retried like a 5xx even before the
    first answer. A refused connection, an unknown host or a TLS failure (``ConnectError``) is
    not: it fails at once until the endpoint has answered."""
    import httpx

    return isinstance(
        err, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError, httpx.CloseError)
    )


def _reason(err: Exception) -> str:
    """What a transport error says (its cause's text when it wraps an OS error)."""
    cause = err.__cause__ or err.__context__
    return str(err) or str(cause or "") or type(err).__name__


def _error_text(raw: bytes, status: int) -> str:
    """The message of an HTTP error body (OpenAI's ``error.message``, FastAPI's ``detail``, ...)."""
    text = raw.decode("utf-8", "replace")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        return text or f"HTTP {status}"
    if isinstance(doc, list) and doc:
        doc = doc[0]
    if isinstance(doc, dict):
        for key in ("error", "detail", "message"):
            value = doc.get(key)
            if isinstance(value, dict):
                value = value.get("message", value)
            if value:
                return value if isinstance(value, str) else json.dumps(value)
    return text
