"""Image-text matching on region features: transformers' LXMERT and VOLTA's controlled models.

The models read the bottom-up-attention regions of each image (``--regions``: a TSV in the
authors' layout, a region store or the detector; ``bla_eval.regions``), not its pixels.

- transformers' ``LxmertForPreTraining`` (config ``model_type`` ``lxmert``): the 36 regions with
  boxes ``[x1/w, y1/h, x2/w, y2/h]``; score = softmax(``cross_relationship_score``)[:, 1].
- VOLTA's ``ctrl_lxmert`` and ``ctrl_vilbert`` from VOLTA's released files (a folder whose
  ``config.json`` has VOLTA's sublayer fields: ``bla_eval.scorers.volta``): the global feature
  and the 36 regions (37 visual tokens) with 5-d boxes; score = softmax(``vil_logit``)[:, 0]
  (VOLTA's match class), as the BLA authors scored them.

Sentences are cut at :data:`TEXT_TOKENS` tokens (the authors' limit), counted by
``Truncation``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from ..batching import map_batches
from ..items import ImageHandle
from ..queries import Query
from ..regions import RegionFeatures
from . import volta
from .base import Scored, regroup
from .capabilities import Capabilities
from .local import LocalScorer
from .registry import register_kind
from .resolved_model import ResolvedModel
from .truncation import Truncation

TEXT_TOKENS = 38
"""The longest sentence in tokens, [CLS] and [SEP] included (the authors' ``max_seq_length``)."""
REGIONS = 36
"""The regions of an image the models read (the first ones of a longer list)."""
LXMERT_MATCH = 1
"""transformers' LXMERT match class in ``cross_relationship_score``."""


@register_kind
class RegionMatchingScorer(LocalScorer):
    """LXMERT and VOLTA's ViLBERT / LXMERT on region features: the match probability."""

    kind = "region-itm"
    probabilistic = True
    wants_handle = True
    takes_regions = True

    @classmethod
    def matches_name(cls, model: Capabilities) -> bool:
        """A local folder with VOLTA's config (its sublayer fields)."""
        return volta.is_volta(model.config_json)

    @classmethod
    def matches_config(cls, model: Capabilities) -> bool:
        return model.model_type == "lxmert"

    def load(self, model: ResolvedModel) -> None:
        from transformers import BertTokenizer

        super().load(model)
        self.regions = self.options.regions
        if self.regions is None:
            raise ValueError(
                f"model kind {self.kind!r} reads region features: pass --regions (a .tsv file "
                "in the authors' layout, a region store or a detector)"
            )
        self.doc = volta.volta_config(model.path)
        if self.doc is not None:
            self.model = volta.load(model.path, self.doc)
            lower = bool(self.doc.get("do_lower_case", True))
            self.tokenizer = BertTokenizer.from_pretrained(model.path, do_lower_case=lower)
            self.match_index, self.volta = volta.MATCH_INDEX, True
        else:
            from transformers import AutoTokenizer, LxmertForPreTraining

            self.model = LxmertForPreTraining.from_pretrained(model.path, **model.config_kwargs)
            self.tokenizer = AutoTokenizer.from_pretrained(model.path)
            self.match_index, self.volta = LXMERT_MATCH, False
        self.model.to(self.device, self.dtype).eval()
        self.truncation = Truncation(self.tokenizer, max_length=TEXT_TOKENS)

    def prepare_image(self, image: ImageHandle) -> Any:
        return self.regions.lookup(image)

    def visual(self, regions: RegionFeatures) -> tuple[np.ndarray, np.ndarray]:
        """The visual tokens of one image: (features, boxes) as the model reads them."""
        first = RegionFeatures(
            regions.features[:REGIONS], regions.boxes[:REGIONS], regions.image_size
        )
        return first.volta_view() if self.volta else (first.features, first.normalised_boxes())

    def logits(
        self, visual: Sequence[tuple[np.ndarray, np.ndarray]], texts: Sequence[str]
    ) -> torch.Tensor:
        """The matching head's two logits of each (visual tokens, text) pair (with gradients
        where the model trains: ``bla-finetune``)."""
        tokens = self.tokenizer(
            list(texts),
            padding=True,
            truncation=True,
            max_length=TEXT_TOKENS,
            return_tensors="pt",
        )
        features, boxes, mask = _padded(visual)
        inputs = {
            "input_ids": tokens["input_ids"].to(self.device),
            "attention_mask": tokens["attention_mask"].to(self.device),
            "token_type_ids": torch.zeros_like(tokens["input_ids"]).to(self.device),
        }
        features = features.to(self.device, self.dtype)
        boxes = boxes.to(self.device, self.dtype)
        mask = mask.to(self.device)
        if self.volta:
            return self.model(**inputs, features=features, boxes=boxes, region_mask=mask)
        return self.model(
            **inputs, visual_feats=features, visual_pos=boxes, visual_attention_mask=mask
        ).cross_relationship_score

    @torch.inference_mode()
    def match(
        self, visual: Sequence[tuple[np.ndarray, np.ndarray]], texts: Sequence[str]
    ) -> list[float]:
        """The match probability of each (visual tokens, text) pair."""
        self.truncation.count(texts)
        logits = self.logits(visual, texts)
        return logits.float().softmax(dim=-1)[:, self.match_index].tolist()

    def score(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
        visual = [self.visual(regions) for regions in self.regions.complete(images)]
        sentences = [[q.sentence for q in group] for group in queries]
        pairs = [(i, s) for i, group in enumerate(sentences) for s in group]
        values = map_batches(
            lambda batch: self.match([visual[i] for i, _ in batch], [s for _, s in batch]),
            pairs,
            self.batch_size,
        )
        return Scored(regroup(values, sentences))

    def describe(self) -> dict[str, Any]:
        head = "vil_logit" if self.volta else "cross_relationship_score"
        return {
            "score": f"softmax({head})[{self.match_index}]",
            "visual_tokens": "global + regions" if self.volta else "regions",
            "regions_read": REGIONS,
            "text_padding": "longest",
            **self.regions.describe(),
            **self.truncation.describe(),
        }


def _padded(
    visual: Sequence[tuple[np.ndarray, np.ndarray]],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Features, boxes and a 0/1 mask padded to the most visual tokens in the batch."""
    longest = max(len(f) for f, _ in visual)
    features = torch.zeros(len(visual), longest, visual[0][0].shape[1])
    boxes = torch.zeros(len(visual), longest, visual[0][1].shape[1])
    mask = torch.zeros(len(visual), longest, dtype=torch.long)
    for row, (f, b) in enumerate(visual):
        features[row, : len(f)] = torch.from_numpy(f)
        boxes[row, : len(b)] = torch.from_numpy(b)
        mask[row, : len(f)] = 1
    return features, boxes, mask
