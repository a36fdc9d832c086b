"""A sentence's log-probability from a chat endpoint that returns the prompt's own
log-probabilities (vLLM's chat completions: ``prompt_logprobs``, ``return_token_ids``).

The sentence is the assistant's message, continued rather than closed
(``continue_final_message``), after a user turn holding the image (or no image, for the prior)
and ``CAPTION_REQUEST``: the prompt then ends with the sentence's tokens, as the local generative
kind's prompt does. How many tokens are the sentence's is read from the text-only prompt: its
tokens after the longest common prefix with the same request whose assistant's message is empty
(the prompt up to where the template puts the answer, as the local kind counts). vLLM
reads no cached prefix for a request that asks for prompt log-probabilities, so the numbers do not
depend on the order of the requests.
"""

from __future__ import annotations

import os
from typing import Any

from ..protocols.templates import CAPTION_REQUEST
from .response import Malformed


def _user(image_url: str | None) -> dict[str, Any]:
    if image_url is None:
        return {"role": "user", "content": CAPTION_REQUEST}
    parts = [
        {"type": "image_url", "image_url": {"url": image_url}},
        {"type": "text", "text": CAPTION_REQUEST},
    ]
    return {"role": "user", "content": parts}


def sentence_body(model: str, sentence: str, image_url: str | None) -> dict[str, Any]:
    """The request whose prompt ends with ``sentence`` after the image (None: without it)."""
    return {
        "model": model,
        "messages": [_user(image_url), {"role": "assistant", "content": sentence}],
        "add_generation_prompt": False,
        "continue_final_message": True,
        "max_tokens": 1,
        "temperature": 0,
        "prompt_logprobs": 0,
        "return_token_ids": True,
    }


def head_body(model: str) -> dict[str, Any]:
    """The text-only request with an empty assistant's message, continued: the prompt up to
    where the template puts the assistant's text (the local generative kind's head)."""
    return {
        "model": model,
        "messages": [_user(None), {"role": "assistant", "content": ""}],
        "add_generation_prompt": False,
        "continue_final_message": True,
        "max_tokens": 1,
        "temperature": 0,
        "return_token_ids": True,
    }


def prompt_ids(doc: dict[str, Any]) -> list[int]:
    """The prompt's token ids of a response asked with ``return_token_ids``."""
    ids = doc.get("prompt_token_ids")
    if not isinstance(ids, list) or not ids:
        raise Malformed("the response has no prompt_token_ids")
    return ids


def sentence_tokens(text_ids: list[int], head_ids: list[int]) -> int:
    """How many of ``text_ids`` (a text-only sentence prompt) follow its common prefix with the
    request alone (``head_ids``)."""
    return len(text_ids) - len(os.path.commonprefix([text_ids, head_ids]))


def tail_log_prob(doc: dict[str, Any], count: int) -> tuple[float, list[int]]:
    """The sum of the log-probabilities of the prompt's last ``count`` tokens, and those tokens."""
    ids = prompt_ids(doc)
    logprobs = doc.get("prompt_logprobs")
    if not isinstance(logprobs, list) or len(logprobs) != len(ids):
        raise Malformed("the response has no prompt_logprobs, one per prompt token")
    if not 0 < count < len(ids):
        raise Malformed(f"the prompt has {len(ids)} tokens, not more than the sentence's {count}")
    total = 0.0
    for position in range(len(ids) - count, len(ids)):
        entry = logprobs[position]
        token = entry.get(str(ids[position])) if isinstance(entry, dict) else None
        if not isinstance(token, dict):
            raise Malformed(f"prompt_logprobs[{position}] has no entry for its token")
        total += token["logprob"]
    return total, ids[-count:]
