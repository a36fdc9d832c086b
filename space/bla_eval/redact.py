"""The secrets this process knows (the API key, an endpoint URL's credentials and key-like query
values) and their removal from everything that leaves the process.

A secret is registered where it is read (:func:`register`, :func:`register_url`) and masked in any
case and in its common encodings (URL-encoded, base64); so is any piece of it of
:data:`PIECE_CHARS` characters, looked for after :func:`normalise` (``\\u`` escapes and
percent-encoding decoded, whitespace, newlines and zero-width characters removed): a key a
server echoes cut, split across lines or partly escaped is masked too. What is written to a file
(``bla_eval.outputs``, the score store, the response cache) loses the registered secrets
(:func:`scrub_data`); what is shown (an error line, a server's message, anything printed by a
command: :func:`shown`, :class:`ScrubbedStream`) loses them too, and also anything shaped like a
credential (an ``Authorization`` header, a ``?key=`` query value, URL credentials) and terminal
control sequences.

Standard library only: ``bla_eval.outputs`` and the command lines import it.
"""

from __future__ import annotations

import base64
import bisect
import re
import sys
import threading
from typing import Any, TextIO
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

MASK = "***"
MIN_SECRET_CHARS = 6
"""Shorter values are not registered: masking them would mask ordinary text (and words of the
files written, such as a split named ``test``)."""

KEY_PARAM_RE = re.compile(
    r"(?i)^(?:[\w.-]*[-_.])?(?:key|apikey|token|secret|password|passwd|pwd|sig|signature|auth|"
    r"credentials?|code)$"
)
"""Query parameter names whose values are secrets (``key``, ``api_key``, ``access_token``, ...)."""

HEADER_RE = re.compile(
    r"(?i)\b(bearer|authorization|api[-_]?key|x-api-key)([\s:=\"']+(?:(?:bearer|basic)\s+)?)"
    r"[^\s\"',;&]+"
)
"""Header-like ``name: value`` text (also ``api_key=value``) whose value is masked when shown."""
QUERY_RE = re.compile(
    r"(?i)([?&;](?:[\w.-]*[-_.])?(?:key|apikey|token|secret|password|passwd|pwd|sig|signature|"
    r"auth|credentials?)=)[^&#\s\"']+"
)
"""A key-like query parameter in shown text (``?key=...``, ``&access_token=...``)."""
USERINFO_RE = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s@]+@")
"""URL credentials in shown text (``https://user:pass@host``, a password holding ``/`` or ``#``
included: everything up to the last ``@`` before a space)."""
CONTROL_RE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI (colours, cursor moves, clear screen)
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC (window title, hyperlinks)
    r"|\x1b[@-_]?"  # other escapes
    r"|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"  # other C0/C1 controls (tab, newline, CR kept)
)
"""Terminal control sequences and control characters removed from what is printed."""

PIECE_CHARS = 8
"""Any piece this long of a registered secret is masked wherever it appears (a shorter secret:
the whole of it), after :func:`normalise`, in every string of every record written: a key
echoed cut, split, partly escaped, or a few characters per response (pieces of 12 in the
answers and model names of successive responses are each masked)."""
IGNORED = r"[\s\u00ad\u034f\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]|\\[nrt]"
"""Whitespace and newlines (also as ``\\n`` escapes) and zero-width and direction characters:
removed before secrets are looked for."""
ESCAPED = r"\\u(?P<u>[0-9a-fA-F]{4})|%(?P<pct>[0-9a-fA-F]{2})|\\(?P<char>[/\\\"'])"
"""``\\uXXXX`` escapes, percent-encoded bytes and escaped characters: decoded first."""
SPECIAL_RE = re.compile(f"(?P<ignored>{IGNORED})|{ESCAPED}")

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None
_pieces: dict[int, frozenset[str]] = {}
"""Piece length -> the normalised, lower-case pieces of the registered secrets of that length."""


def encodings(secret: str) -> set[str]:
    """``secret`` and its URL-encoded and base64 forms."""
    forms = {secret, quote(secret, safe=""), quote_plus(secret), unquote(secret)}
    raw = secret.encode()
    for encoded in (base64.b64encode(raw), base64.urlsafe_b64encode(raw)):
        text = encoded.decode()
        forms |= {text, text.rstrip("=")}
    return {form for form in forms if len(form) >= MIN_SECRET_CHARS}


def register(*values: str | None) -> None:
    """Mask ``values`` (in any case and encoding) from now on."""
    global _pattern
    new = {v for v in values if v and len(v) >= MIN_SECRET_CHARS}
    with _lock:
        if new <= _secrets:
            return
        _secrets.update(new)
        forms = set().union(*(encodings(s) for s in _secrets))
        ordered = sorted(forms, key=len, reverse=True)  # the longest form masked first
        _pattern = re.compile("|".join(re.escape(f) for f in ordered), re.IGNORECASE)
        _pieces.clear()
        for secret in _secrets:
            text = _lower(normalise(secret)[0])
            size = min(PIECE_CHARS, len(text))
            if size >= MIN_SECRET_CHARS:
                found = {text[i : i + size] for i in range(len(text) - size + 1)}
                _pieces[size] = frozenset(_pieces.get(size, frozenset()) | found)


def normalise(text: str) -> tuple[str, list[tuple[int, int, int]]]:
    """(``text`` with escapes decoded and whitespace and zero-width characters removed, its
    segments ``(start in the result, start in text, end in text or -1 for a run of text kept
    as it is)``): where each character of the result comes from."""
    out: list[str] = []
    segments: list[tuple[int, int, int]] = []
    size = pos = 0
    for match in SPECIAL_RE.finditer(text):
        if match.start() > pos:
            out.append(text[pos : match.start()])
            segments.append((size, pos, -1))
            size += match.start() - pos
        pos = match.end()
        if match["ignored"] is not None:
            continue
        code = match["u"] or match["pct"]
        out.append(chr(int(code, 16)) if code else match["char"])
        segments.append((size, match.start(), match.end()))
        size += 1
    if pos < len(text):
        out.append(text[pos:])
        segments.append((size, pos, -1))
    return "".join(out), segments


def _lower(text: str) -> str:
    """``text`` in lower case, character for character (the positions kept)."""
    lowered = text.lower()
    if len(lowered) == len(text):
        return lowered
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def _span(segments: list[tuple[int, int, int]], index: int) -> tuple[int, int]:
    """Where in the original text the character ``index`` of the normalised text comes from."""
    at = bisect.bisect_right(segments, (index, sys.maxsize, sys.maxsize)) - 1
    start, orig, end = segments[at]
    return (orig + index - start, orig + index - start + 1) if end < 0 else (orig, end)


def _mask_pieces(text: str) -> str:
    """``text`` with every stretch holding a piece of a registered secret (after
    :func:`normalise`) replaced by the mask."""
    pieces = _pieces
    if not pieces or len(text) < min(pieces):
        return text
    normal, segments = normalise(text)
    lowered = _lower(normal)
    covered: list[tuple[int, int]] = []
    for size, found in pieces.items():
        for i in range(len(lowered) - size + 1):
            if lowered[i : i + size] in found:
                covered.append((_span(segments, i)[0], _span(segments, i + size - 1)[1]))
    if not covered:
        return text
    merged: list[list[int]] = []
    for start, end in sorted(covered):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, pos = [], 0
    for start, end in merged:
        out += [text[pos:start], MASK]
        pos = end
    return "".join(out) + text[pos:]


def forget_all() -> None:
    """Mask nothing from now on (every registered secret forgotten)."""
    global _pattern
    with _lock:
        _secrets.clear()
        _pieces.clear()
        _pattern = None


def any_registered() -> bool:
    """Whether any secret is registered (else nothing is ever masked)."""
    return _pattern is not None


def url_secrets(url: str) -> list[str]:
    """The secrets in ``url``: its credentials (read up to the last ``@`` of the authority, so
    a password holding ``/``, ``?`` or ``#`` is whole; the user name alone is no secret) and
    key-like query values."""
    found: list[str] = []
    _, sep, rest = url.partition("://")
    if sep and "@" in rest:
        userinfo = rest.rsplit("@", 1)[0]
        found += [userinfo, userinfo.partition(":")[2]]
    try:
        query = urlsplit(url).query
    except ValueError:
        query = url.partition("?")[2]
    found += [v for k, v in parse_qsl(query, keep_blank_values=True) if KEY_PARAM_RE.match(k)]
    return [s for s in found if s]


def register_url(url: str) -> None:
    """Mask the credentials and key-like query values of ``url`` from now on."""
    register(*url_secrets(url))


def scrub(text: str) -> str:
    """``text`` with every registered secret masked."""
    pattern = _pattern
    return text if pattern is None else _mask_pieces(pattern.sub(MASK, text))


def shown(text: str) -> str:
    """``text`` as it may be shown: registered secrets, credential-shaped values and control
    sequences masked or removed."""
    text = scrub(text)
    text = HEADER_RE.sub(rf"\1\2{MASK}", text)
    text = QUERY_RE.sub(rf"\1{MASK}", text)
    text = USERINFO_RE.sub(rf"\1{MASK}@", text)
    return CONTROL_RE.sub("", text)


def scrub_data(value: Any, show: bool = False) -> Any:
    """``value`` (JSON-like: dicts, lists, strings) with every string scrubbed (``show``: as
    :func:`shown`, for strings a server sent)."""
    if _pattern is None and not show:
        return value
    clean = shown if show else scrub
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {
            clean(k) if isinstance(k, str) else k: scrub_data(v, show) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [scrub_data(v, show) for v in value]
    return value


class ScrubbedStream:
    """A text stream that writes to ``stream`` what :func:`shown` leaves of each write (the
    place a command's printed output leaves the process); anything else is ``stream``'s."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(shown(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)
