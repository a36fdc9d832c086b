"""How an image-text-to-text processor takes an image and a prompt, read from the processor.

Processors differ in two ways that matter to a generic scorer: some want one list of images per
prompt (Idefics, SmolVLM, Gemma 3, LFM2-VL, ...), others a flat list; and a prompt built without
a chat template needs the model's image token in its text for some (Chameleon) while others place
the image themselves (BLIP-2, PaliGemma). :func:`find_convention` asks the processor once, with a
probe image, which of these forms it takes, and checks that the model's image token comes out of
it. :func:`model_inputs` then builds every batch the same way, and keeps only what the model's
forward takes (a processor's ``labels`` would make the model compute a loss).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from PIL import Image

PROBE_SIZE = (64, 64)
"""The probe image's size: large enough for every image processor's minimum."""
TRAINING_INPUTS = frozenset({"labels"})
"""Processor outputs that make a forward compute a loss: never passed when scoring."""


@dataclass(frozen=True)
class InputConvention:
    """``nested``: one list of images per prompt; ``image_text``: the text put before a prompt
    that has no chat template ('' when the processor places the image itself)."""

    nested: bool
    image_text: str = ""

    def images(self, images: Sequence[Any]) -> list[Any]:
        """``images`` (one per prompt) in the form the processor takes."""
        return [[image] for image in images] if self.nested else list(images)

    def record(self) -> dict[str, Any]:
        """What ``results.json`` records of the convention."""
        images = "nested" if self.nested else "flat"
        return {"images_per_prompt": images, "image_text": self.image_text}


def image_token_id(model_config: Any) -> int | None:
    """The id of the model's image placeholder token, where its config names one."""
    for holder in (model_config, getattr(model_config, "text_config", None)):
        for name in ("image_token_id", "image_token_index"):
            value = getattr(holder, name, None)
            if isinstance(value, int):
                return value
    return None


def processor_image_token(processor: Any) -> str:
    """The processor's image placeholder text ('' when it names none)."""
    token = getattr(processor, "image_token", None)
    return token if isinstance(token, str) else str(getattr(token, "content", "") or "")


def find_convention(processor: Any, model_config: Any, prompt: str, chat: bool) -> InputConvention:
    """The first form in which ``processor`` takes one image with ``prompt`` (a prompt of the
    run) and puts the model's image token into the ids: nested or flat images, and, for a prompt
    without a chat template, with or without the processor's image token before it. A processor
    that takes none of them raises its own error for the first form, as a ValueError."""
    probe = Image.new("RGB", PROBE_SIZE, (128, 128, 128))
    token = processor_image_token(processor)
    prefixes = [""] if chat or not token else ["", token]
    candidates = [InputConvention(n, p) for p in prefixes for n in (True, False)]
    wanted = image_token_id(model_config)
    first_error: Exception | None = None
    for convention in candidates:
        try:
            out = processor(
                images=convention.images([probe]),
                text=[convention.image_text + prompt],
                return_tensors="pt",
            )
        except Exception as err:  # noqa: BLE001 - processors raise many kinds; the first is reported
            first_error = first_error or err
            continue
        ids = out.get("input_ids")
        if wanted is None or ids is None or bool((ids == wanted).any()):
            return convention
    if first_error is None:
        raise ValueError(
            f"the processor ({type(processor).__name__}) puts no image token (id {wanted}) into "
            "the prompt in any form tried (nested or flat images, with or without "
            f"{token or 'an image token'})"
        )
    raise ValueError(
        f"the processor ({type(processor).__name__}) does not take an image with a prompt: "
        f"{type(first_error).__name__}: {first_error}"
    ) from first_error


def forward_parameters(model: Any) -> frozenset[str] | None:
    """The input names the model's forward declares (None: it takes any keyword)."""
    params = inspect.signature(model.forward).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return None
    return frozenset(params)


def model_inputs(
    processor: Any,
    convention: InputConvention,
    images: Sequence[Any],
    prompts: Sequence[str],
    *,
    accepted: frozenset[str] | None,
    device: torch.device,
    dtype: torch.dtype,
    padding: bool = True,
) -> dict[str, Any]:
    """The processor's inputs for (image, prompt) pairs, on ``device``: floating-point pixels in
    ``dtype``; only the names the forward ``accepted`` (None: any), never training targets."""
    texts = [convention.image_text + p for p in prompts]
    enc = processor(
        images=convention.images(images), text=texts, padding=padding, return_tensors="pt"
    )
    return forward_inputs(enc, accepted=accepted, device=device, dtype=dtype)


def forward_inputs(
    enc: Any, *, accepted: frozenset[str] | None, device: torch.device, dtype: torch.dtype
) -> dict[str, Any]:
    """A processor's or tokenizer's outputs ``enc`` as a forward's inputs, on ``device``:
    floating-point values in ``dtype``; only the names the forward ``accepted`` (None: any),
    never training targets."""
    out: dict[str, Any] = {}
    for name, value in enc.items():
        if name in TRAINING_INPUTS or (accepted is not None and name not in accepted):
            continue
        if torch.is_tensor(value):
            value = value.to(device)
            if value.is_floating_point():
                value = value.to(dtype)
        out[name] = value
    return out
