"""Dual encoders through open_clip: ``hf-hub:`` ids, ``local-dir:`` folders and built-in names."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import torch
from PIL import Image

from .capabilities import OPEN_CLIP_PREFIXES, Capabilities, open_clip_name
from .dual import DualEncoderScorer, unit_features
from .registry import register_kind
from .resolved_model import ResolvedModel
from .truncation import Truncation

UNCUT = 4096
"""A context length no sentence fills: open_clip's tokenizers pad or cut every text to theirs."""

logger = logging.getLogger(__name__)


def split_pretrained(name: str) -> tuple[str, str | None]:
    """``ViT-B-32:openai`` -> (``ViT-B-32``, ``openai``); prefixed ids keep their colon."""
    if name.startswith(OPEN_CLIP_PREFIXES) or ":" not in name:
        return name, None
    model, tag = name.split(":", 1)
    return model, tag


@register_kind
class OpenClipScorer(DualEncoderScorer):
    """open_clip models; causal CLIP text towers are run on the batch's real length, not 77."""

    kind = "open_clip"

    @classmethod
    def matches_name(cls, model: Capabilities) -> bool:
        return open_clip_name(model.path) is not None

    def load(self, model: ResolvedModel) -> None:
        import open_clip

        super().load(model)
        name, pretrained = split_pretrained(open_clip_name(model.path) or model.path)
        if pretrained is None and not name.startswith(OPEN_CLIP_PREFIXES):
            logger.warning("open_clip model %s without a pretrained tag: random weights", name)
        self.name = name
        """open_clip's model name (``hf-hub:`` / ``local-dir:`` prefixed, or a built-in name)."""
        self.model, _, self.preprocess = open_clip.create_model_and_transforms(
            name, pretrained=pretrained, device=self.device
        )
        self.model.to(self.dtype).eval()
        self.tokenizer = open_clip.get_tokenizer(name)
        self.trim = self._can_trim(self.model)
        """Run the text tower on the batch's real length (see :meth:`encode_trimmed`)."""
        limit = self.tokenizer.context_length
        self.truncation = Truncation(self.tokenizer, limit, self.token_counts)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """Each text's number of tokens (start and end included), uncut: the positions before
        the padding of a context no text fills (the padding: what its last position holds)."""
        rows = self.tokenizer(list(texts), context_length=UNCUT)
        filled = rows != rows[:, -1:]
        return [int(row.nonzero().max()) + 1 if row.any() else 0 for row in filled]

    @staticmethod
    def _can_trim(model: Any) -> bool:
        """True for CLIP text towers with a causal mask pooled at the EOT token."""
        return (
            getattr(model, "attn_mask", None) is not None
            and getattr(model, "text_pool_type", None) in ("argmax", "eos")
            and hasattr(model, "token_embedding")
        )

    def prepare_image(self, image: Image.Image) -> torch.Tensor:
        return self.preprocess(image)

    def embed_images(self, pixels: torch.Tensor) -> torch.Tensor:
        return unit_features(self.model.encode_image(pixels.to(self.device, self.dtype)))

    def embed_texts(self, texts: Sequence[str], whole: bool = False) -> torch.Tensor:
        """Unit-norm features of ``texts``: on the batch's real length where :attr:`trim`
        allows, on the whole context with ``whole`` (as open_clip trains: ``bla-finetune``)."""
        self.truncation.count(texts)
        tokens = self.tokenizer(list(texts)).to(self.device)
        if whole or not self.trim:
            return unit_features(self.model.encode_text(tokens))
        return unit_features(self.encode_trimmed(tokens))

    def encode_trimmed(self, tokens: torch.Tensor) -> torch.Tensor:
        """``CLIP.encode_text`` on the columns up to the longest sentence's EOT (same result:
        the causal mask keeps padding out of every earlier position)."""
        m = self.model
        length = int((tokens != 0).sum(dim=1).max())
        tokens = tokens[:, :length]
        cast = m.transformer.get_cast_dtype()
        x = m.token_embedding(tokens).to(cast) + m.positional_embedding[:length].to(cast)
        x = m.transformer(x, attn_mask=m.attn_mask[:length, :length])
        x = m.ln_final(x)
        from open_clip.transformer import text_global_pool

        x = text_global_pool(
            x, tokens, m.text_pool_type, eos_token_id=getattr(m, "text_eos_id", None)
        )
        if isinstance(m.text_projection, torch.nn.Linear):
            return m.text_projection(x)
        return x if m.text_projection is None else x @ m.text_projection

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "text_padding": "longest" if self.trim else "context_length",
            **self.truncation.describe(),
        }
