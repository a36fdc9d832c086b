"""Dual encoders: images and sentences are encoded separately, then compared by cosine."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

import torch

from ..batching import BatchedCache, map_batches
from ..queries import Query
from .base import SIMILARITIES, Scored, regroup
from .local import LocalScorer
from .resolved_model import ResolvedModel


def similarity_scores(
    image_feats: torch.Tensor, text_feats: torch.Tensor, similarity: str
) -> torch.Tensor:
    """Row-wise similarity of unit-norm features: cosine, or CLIPScore = 2.5 * max(cosine, 0)."""
    cosine = (image_feats * text_feats).sum(-1)
    if similarity == "cosine":
        return cosine
    if similarity == "clipscore":
        return 2.5 * cosine.clamp(min=0)
    raise ValueError(f"unknown similarity {similarity!r}: use one of {', '.join(SIMILARITIES)}")


def unit_features(output: Any) -> torch.Tensor:
    """L2-normalised float32 features from a tensor or a model output with ``pooler_output``."""
    feats = output if isinstance(output, torch.Tensor) else output.pooler_output
    feats = feats.float()
    return feats / feats.norm(dim=-1, keepdim=True).clamp(min=1e-12)


def stacked(images: Sequence[Any]) -> Any:
    """Prepared images as one batch: their tensors stacked (a dict of tensors per image gives a
    dict of stacked tensors)."""
    if images and isinstance(images[0], dict):
        return {k: torch.stack([image[k] for image in images]) for k in images[0]}
    return torch.stack(list(images))


def shortest_first(text: str) -> tuple[int, str]:
    """The order sentences are encoded in: by length, then text."""
    return len(text), text


class DualEncoderScorer(LocalScorer):
    """Encodes each image once and each distinct sentence once (cached across calls)."""

    takes_similarity = True

    def load(self, model: ResolvedModel) -> None:
        super().load(model)
        similarity = self.options.similarity
        if similarity not in SIMILARITIES:
            raise ValueError(
                f"unknown similarity {similarity!r}: use one of {', '.join(SIMILARITIES)}"
            )
        self.similarity = similarity
        self.forget()

    def forget(self) -> None:
        """An empty sentence cache."""
        self._text_cache = BatchedCache(self._text_batch, self.batch_size, shortest_first)
        """Sentence -> its unit features, encoded a batch of sentences at a time."""

    @abstractmethod
    def embed_images(self, pixels: torch.Tensor) -> torch.Tensor:
        """Unit-norm features of a batch of prepared images (differentiable: fine-tuning trains
        through it)."""

    @abstractmethod
    def embed_texts(self, texts: Sequence[str]) -> torch.Tensor:
        """Unit-norm features, one row per sentence (differentiable)."""

    @torch.inference_mode()
    def encode_images(self, images: Sequence[Any]) -> torch.Tensor:
        """Unit-norm features, one row per prepared image."""
        return self.embed_images(stacked(images))

    @torch.inference_mode()
    def encode_texts(self, texts: Sequence[str]) -> torch.Tensor:
        """Unit-norm features, one row per sentence."""
        return self.embed_texts(texts)

    def _text_batch(self, texts: Sequence[str]) -> list[torch.Tensor]:
        return list(self.encode_texts(texts).cpu())

    def text_features(self, texts: Sequence[str]) -> torch.Tensor:
        """Features of ``texts``, encoding only sentences not seen before (shortest first)."""
        return torch.stack(self._text_cache.get(list(texts)))

    def skip(self, queries: Sequence[Sequence[Query]], known: Any = None) -> None:
        """The batch's sentences planned into the cache as :meth:`score` batches them (encoded
        only when a later batch asks for one of their batch)."""
        self._text_cache.plan([q.sentence for group in queries for q in group])

    def score(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
        sentences = [[q.sentence for q in group] for group in queries]
        image_feats = torch.stack(
            map_batches(
                lambda batch: list(self.encode_images(batch).cpu()), images, self.batch_size
            )
        )
        flat = [s for group in sentences for s in group]
        text_feats = self.text_features(flat)
        rows = torch.repeat_interleave(
            torch.arange(len(images)), torch.tensor([len(g) for g in sentences])
        )
        values = similarity_scores(image_feats[rows], text_feats, self.similarity).tolist()
        return Scored(regroup(values, sentences))

    def text_similarities(self, sentences: Sequence[str]) -> list[list[float]]:
        """The cosine of each pair of the sentences' unit features (the features the scores
        use, from the cache: always cosine, whatever ``--similarity`` the image scores take)."""
        feats = self.text_features(list(sentences))
        return (feats @ feats.T).tolist()

    def describe(self) -> dict[str, Any]:
        return {"similarity": self.similarity}
