"""Image-text matching heads (BLIP, BLIP-2): the match probability of each (image, sentence) pair.

The vision tower runs once per image; its output is reused for every sentence of that image.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from PIL import Image

from ..batching import map_batches
from ..queries import Query
from .base import Scored, regroup
from .detect import architectures
from .local import LocalScorer
from .registry import register_kind
from .resolved_model import ResolvedModel

ITM_CLASSES = ("BlipForImageTextRetrieval", "Blip2ForImageTextRetrieval")


def _model_class(config: Any):
    """The ITM class a config names (None: transformers reads the config when loading)."""
    import transformers

    names = [a for a in getattr(config, "architectures", None) or [] if a in ITM_CLASSES]
    if not names:
        model_type = getattr(config, "model_type", "")
        names = [
            "Blip2ForImageTextRetrieval" if model_type == "blip-2" else "BlipForImageTextRetrieval"
        ]
    return getattr(transformers, names[0])


@register_kind
class MatchingScorer(LocalScorer):
    """BLIP / BLIP-2 ``ForImageTextRetrieval``: softmax of the ITM logits, the match class."""

    kind = "itm"
    probabilistic = True

    @classmethod
    def matches_config(cls, config: Any) -> bool:
        return bool(architectures(config) & set(ITM_CLASSES))

    def load(self, model: ResolvedModel) -> None:
        from transformers import AutoProcessor

        super().load(model)
        model_id, trust = model.path, self.options.trust_remote_code
        cls = _model_class(model.config)
        self.model = cls.from_pretrained(
            model_id, dtype=self.dtype, trust_remote_code=trust, **model.config_kwargs
        )
        self.model.to(self.device).eval()
        self.processor = AutoProcessor.from_pretrained(model_id, trust_remote_code=trust)
        self.blip2 = cls.__name__.startswith("Blip2")
        tokenizer = getattr(self.processor, "qformer_tokenizer", None) if self.blip2 else None
        self.tokenizer = tokenizer or self.processor.tokenizer

    def prepare_image(self, image: Image.Image) -> torch.Tensor:
        return self.processor.image_processor(images=image, return_tensors="pt")["pixel_values"][0]

    @torch.inference_mode()
    def image_embeds(self, images: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Vision tower outputs, one per image."""
        pixels = torch.stack(list(images)).to(self.device, self.dtype)
        return list(self.model.vision_model(pixel_values=pixels).last_hidden_state)

    @torch.inference_mode()
    def match_logits(self, image_embeds: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        """ITM logits [batch, 2] of each text with the image embeddings in the same row."""
        tokens = self.tokenizer(list(texts), padding=True, truncation=True, return_tensors="pt")
        input_ids = tokens["input_ids"].to(self.device)
        mask = tokens["attention_mask"].to(self.device)
        image_mask = torch.ones(image_embeds.shape[:-1], dtype=torch.long, device=self.device)
        m = self.model
        if not self.blip2:
            hidden = m.text_encoder(
                input_ids=input_ids,
                attention_mask=mask,
                encoder_hidden_states=image_embeds,
                encoder_attention_mask=image_mask,
            ).last_hidden_state
            return m.itm_head(hidden[:, 0, :])
        queries = m.query_tokens.expand(image_embeds.shape[0], -1, -1)
        n_queries = queries.shape[1]
        mask = torch.cat(
            [torch.ones(queries.shape[:-1], dtype=mask.dtype, device=self.device), mask], 1
        )
        hidden = m.qformer(
            query_embeds=m.embeddings(input_ids=input_ids, query_embeds=queries),
            query_length=n_queries,
            attention_mask=mask,
            encoder_hidden_states=image_embeds,
            encoder_attention_mask=image_mask,
        ).last_hidden_state
        hidden = hidden.to(m.itm_head.weight.dtype)
        return m.itm_head(hidden[:, :n_queries, :]).mean(dim=1)

    def score(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
        sentences = [[q.sentence for q in group] for group in queries]
        embeds = map_batches(self.image_embeds, images, self.batch_size)
        pairs = [(i, s) for i, group in enumerate(sentences) for s in group]

        def run(batch: Sequence[tuple[int, str]]) -> list[float]:
            stacked = torch.stack([embeds[i] for i, _ in batch])
            logits = self.match_logits(stacked, [s for _, s in batch]).float()
            return logits.softmax(dim=-1)[:, 1].tolist()

        values = map_batches(run, pairs, self.batch_size)
        return Scored(regroup(values, sentences))

    def describe(self) -> dict[str, Any]:
        return {"score": "softmax(itm_logits)[1]", "text_padding": "longest"}
