"""Image-text matching heads: the match probability of each (image, sentence) pair.

Any transformers class with a retrieval or matching head scores: the ``*ForImageTextRetrieval``
and ``*ForImageAndTextRetrieval`` classes (BLIP, BLIP-2, ViLT's one logit, BridgeTower's two) and
any class whose output holds ``itm_score`` or ``itm_logits`` (FLAVA's pre-training model). The
head's output is read as it is: one logit gives its sigmoid, two logits the softmax of the match
class. BLIP and BLIP-2 run their vision tower once per image and reuse it for every sentence;
the others run the whole model on each pair.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import torch
from PIL import Image

from ..batching import map_batches
from ..queries import Query
from .base import Scored, regroup
from .capabilities import Capabilities, base_is_dual_encoder
from .local import LocalScorer
from .processor_inputs import forward_parameters
from .registry import register_kind
from .resolved_model import ResolvedModel
from .truncation import Truncation

ITM_CLASSES = ("BlipForImageTextRetrieval", "Blip2ForImageTextRetrieval")
"""The classes whose vision tower runs once per image (their ITM modules are read directly)."""
RETRIEVAL_SUFFIXES = ("ForImageTextRetrieval", "ForImageAndTextRetrieval")
HEAD_FIELDS = ("itm_score", "itm_logits")
"""Output fields of a matching head, where a model's output names one."""
PAIR_EMBEDS = "text_embeds"
"""The head field of a pair model's contrastive head: ``text_embeds`` beside ``image_embeds``
(BridgeTower's contrastive model), scored by their cosine."""


def head_field(cls: Any) -> str | None:
    """The output field of ``cls``'s image-text matching head: the one its forward's output
    class names (``HEAD_FIELDS``), else ``logits`` for a retrieval class, else ``text_embeds``
    for a pair model (no feature methods of its own) whose output holds text and image
    embeddings; None: no such head. A class whose base model is a dual encoder (OWL-ViT's
    and OWLv2's detectors: their output holds both embeddings) is the contrastive kind's."""
    import dataclasses
    import typing

    try:
        returned = typing.get_type_hints(cls.forward).get("return")
    except Exception:  # noqa: BLE001 - annotations that do not resolve: read the class name
        returned = None
    outputs = [
        {f.name for f in dataclasses.fields(member)}
        for member in typing.get_args(returned) or (returned,)
        if isinstance(member, type) and dataclasses.is_dataclass(member)
    ]
    for field in HEAD_FIELDS:
        if any(field in names for names in outputs):
            return field
    if cls.__name__.endswith(RETRIEVAL_SUFFIXES):
        return "logits"
    model_type = getattr(getattr(cls, "config_class", None), "model_type", "")
    dual = hasattr(cls, "get_image_features") or base_is_dual_encoder(model_type)
    if not dual and any({PAIR_EMBEDS, "image_embeds"} <= names for names in outputs):
        return PAIR_EMBEDS
    return None


def head_class(config: Any) -> Any:
    """The class with a matching head that a config names (None: none)."""
    import transformers

    for name in getattr(config, "architectures", None) or []:
        cls = getattr(transformers, name, None)
        if cls is not None and head_field(cls) is not None:
            return cls
    return None


def _model_class(config: Any):
    """The ITM class a config names (a BLIP one by its model type where it names none)."""
    import transformers

    cls = head_class(config)
    if cls is not None:
        return cls
    model_type = getattr(config, "model_type", "")
    return getattr(
        transformers,
        "Blip2ForImageTextRetrieval" if model_type == "blip-2" else "BlipForImageTextRetrieval",
    )


def match_probability(logits: torch.Tensor) -> torch.Tensor:
    """The match probability of each row of a head's logits: sigmoid of one logit, softmax of
    the last of two (the match class)."""
    logits = logits.float()
    if logits.dim() == 1 or logits.shape[-1] == 1:
        return logits.reshape(len(logits)).sigmoid()
    if logits.shape[-1] == 2:
        return logits.softmax(dim=-1)[:, 1]
    raise ValueError(f"an image-text matching head gives 1 or 2 logits, not {logits.shape[-1]}")


@register_kind
class MatchingScorer(LocalScorer):
    """BLIP / BLIP-2 ``ForImageTextRetrieval``: softmax of the ITM logits, the match class."""

    kind = "itm"
    probabilistic = True
    probability_name = "match probability"
    value_name = "cosine"  # a pair model's contrastive head

    @classmethod
    def probabilistic_for(cls, model: ResolvedModel, prompted: bool = False) -> bool:
        """Match probabilities, but for a pair model's contrastive head (cosines)."""
        head = head_class(model.config) if model.config is not None else None
        return head is None or head_field(head) != PAIR_EMBEDS

    @classmethod
    def matches_config(cls, model: Capabilities) -> bool:
        return bool(model.architectures & set(ITM_CLASSES)) or head_class(model.config) is not None

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
        self.field = head_field(cls) or "itm_score"
        self.cached_vision = cls.__name__ in ITM_CLASSES
        """BLIP / BLIP-2: the vision tower once per image; else the whole model per pair."""
        self.accepted = forward_parameters(self.model)
        self.declares_loss = "return_loss" in inspect.signature(self.model.forward).parameters
        self.blip2 = cls.__name__.startswith("Blip2")
        tokenizer = getattr(self.processor, "qformer_tokenizer", None) if self.blip2 else None
        self.tokenizer = tokenizer or self.processor.tokenizer
        self.truncation = Truncation(self.tokenizer)

    def prepare_image(self, image: Image.Image) -> Any:
        if not self.cached_vision:
            return image
        return self.processor.image_processor(images=image, return_tensors="pt")["pixel_values"][0]

    @torch.inference_mode()
    def image_embeds(self, images: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        """Vision tower outputs, one per image."""
        pixels = torch.stack(list(images)).to(self.device, self.dtype)
        return list(self.model.vision_model(pixel_values=pixels).last_hidden_state)

    @torch.inference_mode()
    def match_logits(self, image_embeds: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        """ITM logits [batch, 2] of each text with the image embeddings in the same row."""
        self.truncation.count(texts)
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

    @torch.inference_mode()
    def pair_scores(self, images: Sequence[Any], texts: Sequence[str]) -> list[float]:
        """The head's match probability of each (image, text) pair, through the whole model."""
        self.truncation.count(texts)
        enc = self.processor(
            images=list(images),
            text=list(texts),
            padding=True,
            truncation=True,
            return_tensors="pt",
        )
        inputs = {
            k: self._placed(v)
            for k, v in enc.items()
            if torch.is_tensor(v) and (self.accepted is None or k in self.accepted)
        }
        if self.declares_loss:
            inputs["return_loss"] = False  # FLAVA's pre-training model defaults to its losses
        output = self.model(**inputs)
        if self.field == PAIR_EMBEDS:  # the model's own unit-norm embeddings: their cosine
            return (output.text_embeds * output.image_embeds).sum(-1).float().tolist()
        return match_probability(getattr(output, self.field)).tolist()

    def _placed(self, value: torch.Tensor) -> torch.Tensor:
        value = value.to(self.device)
        return value.to(self.dtype) if value.is_floating_point() else value

    def score(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
        sentences = [[q.sentence for q in group] for group in queries]
        if not self.cached_vision:
            pairs = [(images[i], s) for i, group in enumerate(sentences) for s in group]
            values = map_batches(
                lambda batch: self.pair_scores([i for i, _ in batch], [s for _, s in batch]),
                pairs,
                self.batch_size,
            )
            return Scored(regroup(values, sentences))
        embeds = map_batches(self.image_embeds, images, self.batch_size)
        pairs = [(i, s) for i, group in enumerate(sentences) for s in group]

        def run(batch: Sequence[tuple[int, str]]) -> list[float]:
            stacked = torch.stack([embeds[i] for i, _ in batch])
            logits = self.match_logits(stacked, [s for _, s in batch]).float()
            return logits.softmax(dim=-1)[:, 1].tolist()

        values = map_batches(run, pairs, self.batch_size)
        return Scored(regroup(values, sentences))

    def describe(self) -> dict[str, Any]:
        return {**self.head_description(), **self.truncation.describe()}

    def head_description(self) -> dict[str, Any]:
        """How the score is read from the head, and the text padding."""
        if self.cached_vision:
            return {"score": "softmax(itm_logits)[1]", "text_padding": "longest"}
        head = f"{type(self.model).__name__}.{self.field}"
        if self.field == PAIR_EMBEDS:
            return {"score": f"cosine of {head} and image_embeds", "text_padding": "longest"}
        return {
            "score": f"{head}: sigmoid of one logit, softmax[1] of two",
            "text_padding": "longest",
        }
