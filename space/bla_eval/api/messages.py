"""The engine's prompt as OpenAI chat messages: the same turns as the local generative kind's chat
path (``PromptTemplate.chat`` of ``bla_eval.protocols.templates``), with the image as a data URL of
its encoded bytes.
"""

from __future__ import annotations

import base64
from typing import Any

from ..protocols.templates import PromptTemplate, get_template

IMAGE_TYPES = (
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
"""Leading bytes -> media type of the encodings datasets hold (WebP is checked apart)."""


def media_type(encoded: bytes) -> str:
    """The media type of encoded image bytes (ValueError for an unknown encoding)."""
    for magic, kind in IMAGE_TYPES:
        if encoded.startswith(magic):
            return kind
    if encoded[:4] == b"RIFF" and encoded[8:12] == b"WEBP":
        return "image/webp"
    raise ValueError(f"image bytes of an unknown encoding (starting {encoded[:8]!r})")


def data_url(encoded: bytes) -> str:
    """``data:<type>;base64,<bytes>``: the image exactly as stored, not re-encoded."""
    return f"data:{media_type(encoded)};base64,{base64.b64encode(encoded).decode('ascii')}"


def api_messages(
    sentence: str,
    demonstrations: tuple[tuple[str, str], ...] = (),
    image_url: str | None = None,
    template: PromptTemplate | None = None,
) -> list[dict[str, Any]]:
    """Chat messages for one query: the image (when given) in the first user turn, each
    demonstration as a user question and the assistant's answer, then the target question.

    A turn without an image has a plain string as content (what every server accepts and what
    text-only chat templates expect); the turn with the image has an image part and a text part.
    ``template``: the prompt template (default: the default one).
    """
    messages = []
    for message in (template or get_template()).chat(sentence, demonstrations):
        parts = []
        for part in message["content"]:
            if part["type"] == "image":
                if image_url is not None:
                    parts.append({"type": "image_url", "image_url": {"url": image_url}})
            else:
                parts.append({"type": "text", "text": part["text"]})
        if all(p["type"] == "text" for p in parts):
            parts = "".join(p["text"] for p in parts)
        messages.append({"role": message["role"], "content": parts})
    return messages
