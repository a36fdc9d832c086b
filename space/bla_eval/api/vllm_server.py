"""A vLLM server behind the endpoint: recognised from its model list (``owned_by: "vllm"``), and
the token ids of the yes/no spellings read from its ``/tokenize`` route, so that a request can
ask for exactly those tokens' log-probabilities (``logprob_token_ids``) whatever their rank.

Any other server keeps the top-k path; so does a vLLM server whose ``/tokenize`` does not answer
within one ``--request-timeout`` (all its requests together), which a warning line says.
"""

from __future__ import annotations

import logging
import time

from ..protocols.templates import NO_WORDS, YES_WORDS
from .client import ChatClient, EndpointError, request_url

logger = logging.getLogger(__name__)

API_SUFFIX = "/v1"
"""The OpenAI routes' prefix; vLLM serves ``/tokenize`` beside it, at the server's root."""


def serves_with_vllm(client: ChatClient) -> bool:
    """True when ``GET <endpoint>/models`` lists the client's model as owned by vLLM."""
    listed = client.served_models() or []
    return any(m.get("id") == client.model and m.get("owned_by") == "vllm" for m in listed)


def server_token_ids(
    client: ChatClient, words: tuple[str, ...], deadline: float
) -> list[int] | None:
    """The ids of the ``words`` the server's tokenizer makes one token each (duplicates
    removed), as the local kinds choose them; None when ``/tokenize`` does not answer before
    ``deadline`` (``time.monotonic()``)."""
    root = client.settings.endpoint.rstrip("/").removesuffix(API_SUFFIX)
    ids: list[int] = []
    for word in words:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        body = {"model": client.model, "prompt": word, "add_special_tokens": False}
        doc = client.read_json("POST", request_url(root, "/tokenize"), body, seconds=left)
        if doc is None:
            return None
        tokens = doc.get("tokens") if isinstance(doc, dict) else None
        one = isinstance(tokens, list) and len(tokens) == 1 and type(tokens[0]) is int
        if one and tokens[0] not in ids:
            ids.append(tokens[0])
    return ids


def yes_no_token_ids(client: ChatClient) -> tuple[list[int], list[int]] | None:
    """(yes ids, no ids) of the client's model when a vLLM server serves it and tokenizes both
    sides into single tokens, else None (the top-k path, said in one warning line when the
    server is vLLM). Every ``/tokenize`` request together takes at most one
    ``--request-timeout``; a server that gives one id for a yes and a no spelling is refused
    (EndpointError): every score would be 0.5."""
    if not serves_with_vllm(client):
        return None
    deadline = time.monotonic() + client.settings.request_timeout
    yes = server_token_ids(client, YES_WORDS, deadline)
    no = server_token_ids(client, NO_WORDS, deadline) if yes is not None else None
    where = f"endpoint {client.where} serves {client.model!r} with vLLM"
    if yes is None or no is None:
        logger.warning(
            "%s, but its /tokenize gave no usable answer (all its requests within one "
            "--request-timeout, %g s): scoring from the top log-probabilities instead of the "
            "yes/no token ids",
            where,
            client.settings.request_timeout,
        )
        return None
    shared = [i for i in yes if i in no]
    if shared:
        raise EndpointError(
            f"{where}, but its /tokenize gives token id {shared[0]} for both a yes and a no "
            "spelling: every score would be 0.5; check the server's tokenizer, or use "
            "--api-scoring generation"
        )
    if not (yes and no):
        logger.warning(
            "%s, but its tokenizer makes no %s spelling one token: scoring from the top "
            "log-probabilities instead of the yes/no token ids",
            where,
            "yes" if not yes else "no",
        )
        return None
    return yes, no
