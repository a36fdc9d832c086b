"""The documented shape of a chat completion, checked before any of it is used or cached.

A response must be a JSON object with a non-empty list ``choices`` of objects; in each choice,
``message`` (when present) an object whose ``content`` is a string, a list of parts (their
``text`` strings) or null;
``logprobs`` (when present) an object whose ``content`` is a list of token objects, each with a
string ``token``, a ``logprob`` that is a finite number <= 0 (not a boolean) and, when present, a
list ``top_logprobs`` of such objects; ``usage`` (when present) an object whose token counts are
whole numbers >= 0 (or null); ``model`` and ``system_fingerprint`` strings or null; vLLM's
``prompt_token_ids`` (when present) a list of whole numbers >= 0 and ``prompt_logprobs`` (when
present) a list of null or objects mapping a token id to an object with such a ``logprob``. The
first thing that is otherwise is named in :class:`Malformed`'s one line.
"""

from __future__ import annotations

import math
from typing import Any

from .usage import TOKEN_FIELDS


class Malformed(ValueError):
    """What in a response does not follow the schema (a path such as
    ``choices[0].logprobs.content[0].logprob`` and why)."""


def check_completion(doc: Any) -> dict[str, Any]:
    """``doc`` when it is a chat completion as documented above; else :class:`Malformed`."""
    if not isinstance(doc, dict):
        raise Malformed(f"the body is {_kind(doc)}, not a JSON object")
    choices = doc.get("choices")
    if not isinstance(choices, list) or not choices:
        raise Malformed(f"choices is {_kind(choices)}, not a non-empty list")
    for n, choice in enumerate(choices):
        _check_choice(choice, f"choices[{n}]")
    usage = doc.get("usage")
    if usage is not None:
        if not isinstance(usage, dict):
            raise Malformed(f"usage is {_kind(usage)}, not an object")
        for name in TOKEN_FIELDS:
            count = usage.get(name)
            if count is not None and not (_is_int(count) and count >= 0):
                raise Malformed(f"usage.{name} is {_shown(count)}, not a whole number >= 0")
    for name in ("model", "system_fingerprint"):
        if doc.get(name) is not None and not isinstance(doc[name], str):
            raise Malformed(f"{name} is {_kind(doc[name])}, not a string")
    _check_prompt(doc)
    return doc


def _check_prompt(doc: dict[str, Any]) -> None:
    ids = doc.get("prompt_token_ids")
    if ids is not None and not (isinstance(ids, list) and all(_is_int(i) and i >= 0 for i in ids)):
        raise Malformed(f"prompt_token_ids is {_shown(ids)}, not a list of token ids")
    logprobs = doc.get("prompt_logprobs")
    if logprobs is None:
        return
    if not isinstance(logprobs, list):
        raise Malformed(f"prompt_logprobs is {_kind(logprobs)}, not a list")
    for n, entry in enumerate(logprobs):
        if entry is not None and not isinstance(entry, dict):
            raise Malformed(f"prompt_logprobs[{n}] is {_kind(entry)}, not an object")
        for token, value in (entry or {}).items():
            where = f"prompt_logprobs[{n}][{token!r}]"
            if not isinstance(value, dict):
                raise Malformed(f"{where} is {_kind(value)}, not an object")
            _check_logprob(value.get("logprob"), f"{where}.logprob")


def _check_choice(choice: Any, where: str) -> None:
    if not isinstance(choice, dict):
        raise Malformed(f"{where} is {_kind(choice)}, not an object")
    message = choice.get("message")
    if message is not None:
        if not isinstance(message, dict):
            raise Malformed(f"{where}.message is {_kind(message)}, not an object")
        content = message.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise Malformed(f"{where}.message.content is {_kind(content)}, not text")
        for n, part in enumerate(content if isinstance(content, list) else []):
            text = part.get("text") if isinstance(part, dict) else ""
            if text is not None and not isinstance(text, str):
                raise Malformed(f"{where}.message.content[{n}].text is {_kind(text)}, not text")
    logprobs = choice.get("logprobs")
    if logprobs is None:
        return
    if not isinstance(logprobs, dict):
        raise Malformed(f"{where}.logprobs is {_kind(logprobs)}, not an object")
    tokens = logprobs.get("content")
    if tokens is None:
        return
    if not isinstance(tokens, list):
        raise Malformed(f"{where}.logprobs.content is {_kind(tokens)}, not a list")
    for n, token in enumerate(tokens):
        here = f"{where}.logprobs.content[{n}]"
        _check_token(token, here)
        top = token.get("top_logprobs")
        if top is None:
            continue
        if not isinstance(top, list):
            raise Malformed(f"{here}.top_logprobs is {_kind(top)}, not a list")
        for k, alternative in enumerate(top):
            _check_token(alternative, f"{here}.top_logprobs[{k}]")


def _check_token(token: Any, where: str) -> None:
    if not isinstance(token, dict):
        raise Malformed(f"{where} is {_kind(token)}, not an object")
    if not isinstance(token.get("token"), str):
        raise Malformed(f"{where}.token is {_kind(token.get('token'))}, not a string")
    _check_logprob(token.get("logprob"), f"{where}.logprob")


def _check_logprob(logprob: Any, where: str) -> None:
    number = isinstance(logprob, (int, float)) and not isinstance(logprob, bool)
    if not (number and math.isfinite(logprob) and logprob <= 0):
        raise Malformed(
            f"{where} is {_shown(logprob)}, not a log-probability (a finite number <= 0)"
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: Any) -> str:
    if value is None:
        return "missing or null"
    names = {bool: "a boolean", str: "a string", list: "a list", dict: "an object"}
    return names.get(type(value), "a number" if isinstance(value, (int, float)) else "something")


def _shown(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
