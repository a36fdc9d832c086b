"""Text-only baseline: a causal LM's mean token log-probability of each sentence (no image)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..batching import map_batches
from ..language_model import mean_log_probs
from ..queries import Query
from .base import Scored
from .local import LocalScorer
from .registry import register_kind
from .resolved_model import ResolvedModel, is_gguf


@register_kind
class TextScorer(LocalScorer):
    """``AutoModelForCausalLM`` (also from GGUF); higher mean log-probability = lower perplexity."""

    kind = "text"
    needs_images = False

    @classmethod
    def matches_name(cls, model: str) -> bool:
        return is_gguf(model)

    @classmethod
    def matches_config(cls, config: Any) -> bool:
        from transformers.models.auto import modeling_auto as auto

        return getattr(config, "model_type", "") in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

    def load(self, model: ResolvedModel) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        super().load(model)
        source, self.gguf_file = model.weights
        kwargs: dict[str, Any] = {"trust_remote_code": self.options.trust_remote_code}
        if self.gguf_file:
            kwargs["gguf_file"] = self.gguf_file
        self.tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        self.model = AutoModelForCausalLM.from_pretrained(
            source, dtype=self.dtype, **kwargs, **model.config_kwargs
        )
        self.model.to(self.device).eval()
        self.prefix = self.tokenizer.bos_token_id
        if self.prefix is None:
            self.prefix = self.tokenizer.eos_token_id
        self._cache: dict[str, float] = {}

    def mean_log_probs(self, texts: Sequence[str]) -> list[float]:
        """Mean log-probability of each text's tokens, each given a BOS (or EOS) token before it."""
        return mean_log_probs(self.model, self.tokenizer, texts, self.prefix, self.device)

    def score(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
        sentences = [[q.sentence for q in group] for group in queries]
        # by length, then text: the batches (and so the last bits of padded scores) are the same
        # in every process, whatever the hash seed that orders the set
        new = sorted(
            {s for g in sentences for s in g if s not in self._cache}, key=lambda s: (len(s), s)
        )
        scores = map_batches(self.mean_log_probs, new, self.batch_size)
        self._cache.update(zip(new, scores, strict=True))
        return Scored([[self._cache[s] for s in group] for group in sentences])

    def describe(self) -> dict[str, Any]:
        return {"score": "mean token log-probability", "gguf_file": self.gguf_file}
