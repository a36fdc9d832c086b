"""A vLLM server behind the endpoint: recognised from its model list (``owned_by: "vllm"``), and
the token ids of the yes/no spellings read from its ``/tokenize`` route, so that a request can
ask for exactly those tokens' log-probabilities (``logprob_token_ids``) whatever their rank.

Any other server, or a vLLM server whose routes do not answer as expected, keeps the top-k path.
"""

from __future__ import annotations

from ..protocols.templates import NO_WORDS, YES_WORDS
from .client import ChatClient, request_url

API_SUFFIX = "/v1"
"""The OpenAI routes' prefix; vLLM serves ``/tokenize`` beside it, at the server's root."""


def serves_with_vllm(client: ChatClient) -> bool:
    """True when ``GET <endpoint>/models`` lists the client's model as owned by vLLM."""
    listed = client.served_models() or []
    return any(m.get("id") == client.model and m.get("owned_by") == "vllm" for m in listed)


def server_token_ids(client: ChatClient, words: tuple[str, ...]) -> list[int]:
    """The ids of the ``words`` the server's tokenizer makes one token each (duplicates
    removed), as the local kinds choose them."""
    root = client.settings.endpoint.rstrip("/").removesuffix(API_SUFFIX)
    ids: list[int] = []
    for word in words:
        body = {"model": client.model, "prompt": word, "add_special_tokens": False}
        doc = client.read_json("POST", request_url(root, "/tokenize"), body)
        tokens = doc.get("tokens") if isinstance(doc, dict) else None
        one = isinstance(tokens, list) and len(tokens) == 1 and type(tokens[0]) is int
        if one and tokens[0] not in ids:
            ids.append(tokens[0])
    return ids


def yes_no_token_ids(client: ChatClient) -> tuple[list[int], list[int]] | None:
    """(yes ids, no ids) of the client's model when a vLLM server serves it and tokenizes both
    sides into single tokens, else None (the top-k path). Requests go through the client, within
    its deadline and body limit."""
    if not serves_with_vllm(client):
        return None
    yes, no = server_token_ids(client, YES_WORDS), server_token_ids(client, NO_WORDS)
    return (yes, no) if yes and no else None
