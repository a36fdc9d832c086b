"""Contrastive dual encoders through transformers: CLIP, SigLIP, other AutoModel + AutoProcessor."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import torch
from PIL import Image

from .capabilities import Capabilities
from .dual import DualEncoderScorer, unit_features
from .registry import register_kind
from .resolved_model import ResolvedModel
from .truncation import Truncation

FIXED_LENGTH_MODEL_TYPES = {"siglip", "siglip2"}
"""Text towers trained with max-length padding, pooled at the last position: fixed padding."""


def pooled(output: Any) -> Any:
    """A feature method's output as one vector per input: a tensor or a ``pooler_output``, and,
    where the method projects every token (FLAVA), the first token's, the position the model's
    own contrastive score reads."""
    feats = output if isinstance(output, torch.Tensor) else output.pooler_output
    return feats[:, 0] if feats.dim() == 3 else feats


def named_inputs(method: Any) -> frozenset[str]:
    """The parameter names ``method`` declares (its ``**kwargs`` left out)."""
    params = inspect.signature(method).parameters.values()
    return frozenset(p.name for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD)


@register_kind
class ContrastiveScorer(DualEncoderScorer):
    """``AutoModel`` with ``get_image_features`` / ``get_text_features``; cosine or CLIPScore."""

    kind = "contrastive"

    @classmethod
    def matches_config(cls, model: Capabilities) -> bool:
        return model.dual_encoder

    def load(self, model: ResolvedModel) -> None:
        from transformers import AutoModel, AutoProcessor

        super().load(model)
        model_id, trust = model.path, self.options.trust_remote_code
        self.processor = AutoProcessor.from_pretrained(model_id, trust_remote_code=trust)
        self.model = AutoModel.from_pretrained(
            model_id, dtype=self.dtype, trust_remote_code=trust, **model.config_kwargs
        )
        self.model.to(self.device).eval()
        for method in ("get_image_features", "get_text_features"):
            if not hasattr(self.model, method):
                raise ValueError(f"model {model_id!r} has no {method}: it is not a dual encoder")
        self.tokenizer = getattr(self.processor, "tokenizer", self.processor)
        self.image_processor = getattr(self.processor, "image_processor", self.processor)
        model_type = getattr(self.model.config, "model_type", "")
        self.image_inputs = named_inputs(self.model.get_image_features)
        self.text_inputs = named_inputs(self.model.get_text_features)
        """What each tower takes of the processor's outputs (the names its method declares)."""
        self.padding: dict[str, Any] = {"padding": True}
        if model_type in FIXED_LENGTH_MODEL_TYPES:
            self.padding = {"padding": "max_length", "max_length": 64}
        self.truncation = Truncation(self.tokenizer, self.padding.get("max_length"))

    def prepare_image(self, image: Image.Image) -> torch.Tensor | dict[str, torch.Tensor]:
        """The image processor's pixels of one image, with every other input of one image that
        the image tower takes (SigLIP 2's NaFlex ``spatial_shapes`` and patch mask) as a dict."""
        out = self.image_processor(images=image, return_tensors="pt")
        extra = [k for k in self.image_inputs if k != "pixel_values" and k in out]
        if not extra:
            return out["pixel_values"][0]
        return {k: out[k][0] for k in ("pixel_values", *extra)}

    def embed_images(self, pixels: torch.Tensor | dict[str, torch.Tensor]) -> torch.Tensor:
        inputs = pixels if isinstance(pixels, dict) else {"pixel_values": pixels}
        inputs = {k: self._placed(v) for k, v in inputs.items()}
        return unit_features(pooled(self.model.get_image_features(**inputs)))

    def embed_texts(self, texts: Sequence[str]) -> torch.Tensor:
        self.truncation.count(texts)
        inputs = self.tokenizer(list(texts), truncation=True, return_tensors="pt", **self.padding)
        inputs = {k: v.to(self.device) for k, v in inputs.items() if k in self.text_inputs}
        return unit_features(pooled(self.model.get_text_features(**inputs)))

    def _placed(self, value: torch.Tensor) -> torch.Tensor:
        """``value`` on the model's device; floating-point values in its dtype."""
        value = value.to(self.device)
        return value.to(self.dtype) if value.is_floating_point() else value

    def describe(self) -> dict[str, Any]:
        return {
            **super().describe(),
            "text_padding": self.padding["padding"],
            **self.truncation.describe(),
        }
