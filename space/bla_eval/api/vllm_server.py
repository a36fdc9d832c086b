"""A vLLM server behind the endpoint: recognised from its model list (``owned_by: "vllm"``), and
the token ids of the yes/no spellings read from its ``/tokenize`` route, so that a request can
ask for exactly those tokens' log-probabilities (``logprob_token_ids``) whatever their rank.

Any other server, or a vLLM server whose routes do not answer as expected, keeps the top-k path.
"""

from __future__ import annotations

import json
import urllib.request
from http.client import HTTPException
from typing import Any

from ..protocols.templates import NO_WORDS, YES_WORDS
from .client import request_url
from .settings import ApiSettings

API_SUFFIX = "/v1"
"""The OpenAI routes' prefix; vLLM serves ``/tokenize`` beside it, at the server's root."""


def _call(settings: ApiSettings, url: str, body: dict[str, Any] | None) -> Any:
    """The JSON answer of one GET (``body`` None) or POST to ``url`` (None when it fails)."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    key = settings.api_key()
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data, headers, method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=settings.timeout) as response:
            return json.loads(response.read())
    except (OSError, HTTPException, ValueError):
        return None


def serves_with_vllm(settings: ApiSettings, model: str) -> bool:
    """True when ``GET <endpoint>/models`` lists ``model`` as owned by vLLM."""
    doc = _call(settings, request_url(settings.endpoint, "/models"), None)
    listed = doc.get("data") if isinstance(doc, dict) else None
    return any(
        isinstance(m, dict) and m.get("id") == model and m.get("owned_by") == "vllm"
        for m in listed or []
    )


def single_token_ids(settings: ApiSettings, model: str, words: tuple[str, ...]) -> list[int]:
    """The ids of the ``words`` the server's tokenizer makes one token each (duplicates
    removed), as the local kinds choose them."""
    root = settings.endpoint.rstrip("/").removesuffix(API_SUFFIX)
    ids: list[int] = []
    for word in words:
        body = {"model": model, "prompt": word, "add_special_tokens": False}
        doc = _call(settings, request_url(root, "/tokenize"), body)
        tokens = doc.get("tokens") if isinstance(doc, dict) else None
        one = isinstance(tokens, list) and len(tokens) == 1 and isinstance(tokens[0], int)
        if one and tokens[0] not in ids:
            ids.append(tokens[0])
    return ids


def yes_no_token_ids(settings: ApiSettings, model: str) -> tuple[list[int], list[int]] | None:
    """(yes ids, no ids) of ``model`` when a vLLM server serves it and tokenizes both sides
    into single tokens, else None (the top-k path)."""
    if not serves_with_vllm(settings, model):
        return None
    yes, no = (
        single_token_ids(settings, model, YES_WORDS),
        single_token_ids(settings, model, NO_WORDS),
    )
    return (yes, no) if yes and no else None
