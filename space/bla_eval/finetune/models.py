"""Trainable wrappers of the model kinds bla-finetune supports: one loss, one save.

- ``itm`` (BLIP / BLIP-2 ``ForImageTextRetrieval``): cross-entropy on the two ITM logits of each
  (image, sentence) pair, match = class 1 (as BLIP's ITM head is trained).
- ``contrastive`` (transformers CLIP, SigLIP, other dual encoders) and ``open_clip``: each image
  is contrasted with every sentence of the batch, its own false sentence included as a hard
  negative (NegCLIP-style): softmax cross-entropy image -> text over the batch's true and false
  sentences plus text -> image over the true sentences (CLIP); SigLIP models use their sigmoid
  loss over the same pairs.
- ``region-itm`` (transformers' LXMERT, VOLTA's controlled ViLBERT and LXMERT on region
  features, ``--regions``): the paper's ITM objective, cross-entropy on the matching head's two
  logits, match = the model's own class. A VOLTA model is saved as VOLTA's release folder again.

Models are loaded by the scorer class of their kind (``bla_eval.scorers``, float32), so training
starts from exactly the model, processor and text padding (SigLIP's fixed length) that bla-eval
scores; that scorer also gives the scores before and after training (``train.score_rows``).
Checkpoints are written so ``bla-eval --model DIR`` loads them through the same code path as a
Hub id: ``save_pretrained`` of model and processor, or open_clip's ``open_clip_config.json`` +
``open_clip_model.safetensors``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import torch
import torch.nn.functional as F

from ..items import ImageRef, Item
from ..outputs import read_json
from ..scorers import LoadOptions, ResolvedModel, resolve, scorer_class
from ..scorers.dual import DualEncoderScorer, stacked
from ..scoring import prepared_image


class Trainable:
    """A model being fine-tuned, loaded by the scorer of its kind. ``probabilistic``: scores are
    probabilities (binary view at 0.5), else the two highest-scored sentences of a datapoint are
    its predicted true ones (the scorer's own rule)."""

    kind: ClassVar[str]

    def __init__(self, model: ResolvedModel, device: torch.device, regions: Any = None) -> None:
        options = LoadOptions(device=str(device), dtype="float32", regions=regions)
        self.scorer = scorer_class(self.kind)(model, options=options)
        self.model_id = model.name
        self.model: torch.nn.Module = self.scorer.model
        self.device = self.scorer.device
        self.probabilistic = self.scorer.probabilistic

    def prepare(self, item: Item, ref: ImageRef) -> Any:
        """An image of a row as the model trains on it and is scored on it: as ``bla-eval``'s
        scorer prepares it."""
        return prepared_image(self.scorer, item, ref)

    def loss(
        self, images: Sequence[Any], true: Sequence[str], false: Sequence[str]
    ) -> torch.Tensor:
        """Loss of a batch of prepared images: image i with its true sentence ``true[i]`` and
        false ``false[i]``."""
        raise NotImplementedError

    def save(self, out: Path) -> None:
        """The checkpoint in the format the scorer of its kind loads: model and processor."""
        self.model.save_pretrained(out)
        self.scorer.processor.save_pretrained(out)

    def describe(self) -> dict[str, Any]:
        return {}


class ItmModel(Trainable):
    """BLIP / BLIP-2 image-text matching head."""

    kind = "itm"

    def logits(self, pixels: torch.Tensor, texts: Sequence[str]) -> torch.Tensor:
        """ITM logits [n, 2] of ``texts[k]`` with ``pixels[k]``."""
        tokens = self.scorer.tokenizer(
            list(texts), padding=True, truncation=True, return_tensors="pt"
        )
        args = {
            "input_ids": tokens["input_ids"].to(self.device),
            "attention_mask": tokens["attention_mask"].to(self.device),
            "pixel_values": pixels.to(self.device),
        }
        if self.scorer.blip2:
            return self.model(**args, use_image_text_matching_head=True).logits_per_image
        return self.model(**args, use_itm_head=True).itm_score

    def loss(self, images, true, false):
        n = len(true)
        pixels = torch.stack(list(images))
        labels = torch.tensor([1] * n + [0] * n, device=self.device)  # match = class 1
        logits = self.logits(torch.cat([pixels, pixels]), [*true, *false])
        return F.cross_entropy(logits.float(), labels)

    def describe(self) -> dict[str, Any]:
        return {"loss": "cross-entropy on the ITM logits, match = class 1", "score": "P(match)"}


class DualModel(Trainable):
    """Dual encoders: NegCLIP-style contrastive loss with the false sentence as hard negative;
    SigLIP-style models (a ``logit_bias``) use their sigmoid loss."""

    scorer: DualEncoderScorer

    def __init__(self, model: ResolvedModel, device: torch.device) -> None:
        super().__init__(model, device)
        self.sigmoid = getattr(self.model, "logit_bias", None) is not None

    def text_features(self, texts: Sequence[str]) -> torch.Tensor:
        """Unit-norm features of ``texts``, with gradients."""
        return self.scorer.embed_texts(texts)

    def scale_bias(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        return self.model.logit_scale.exp(), getattr(self.model, "logit_bias", None)

    def loss(self, images, true, false):
        n = len(true)
        image = self.scorer.embed_images(stacked(images))
        text = self.text_features([*true, *false])
        scale, bias = self.scale_bias()
        logits = scale * image @ text.T  # [n, 2n]: own true sentence at column i
        if self.sigmoid:
            signs = -torch.ones_like(logits)
            signs[torch.arange(n), torch.arange(n)] = 1.0
            return -F.logsigmoid(signs * (logits + (bias if bias is not None else 0))).sum() / n
        target = torch.arange(n, device=self.device)
        return (F.cross_entropy(logits, target) + F.cross_entropy(logits[:, :n].T, target)) / 2

    def describe(self) -> dict[str, Any]:
        loss = (
            "sigmoid loss over image x (true + false sentences of the batch)"
            if self.sigmoid
            else "NegCLIP: cross-entropy image -> (true + false sentences of the batch) and "
            "true sentence -> images"
        )
        return {
            "loss": loss,
            "hard_negative": "the false sentence of the same image",
            "score": "cosine",
        }


class HFDualModel(DualModel):
    """transformers ``AutoModel`` with ``get_image_features`` / ``get_text_features``."""

    kind = "contrastive"


class OpenClipModel(DualModel):
    """open_clip models (built-in names with a pretrained tag, ``hf-hub:``, ``local-dir:``)."""

    kind = "open_clip"

    def text_features(self, texts: Sequence[str]) -> torch.Tensor:
        """On the whole context, as open_clip trains (the scorer's trimming to the batch's
        longest sentence is an inference speed-up whose float sums differ in the last bits)."""
        return self.scorer.embed_texts(texts, whole=True)

    def config(self) -> dict[str, Any]:
        """The ``open_clip_config.json`` of the model being trained."""
        import open_clip

        name = self.scorer.name
        if name.startswith("local-dir:"):
            path = Path(name.removeprefix("local-dir:")) / "open_clip_config.json"
            return read_json(path)
        if name.startswith("hf-hub:"):
            from huggingface_hub import hf_hub_download

            path = hf_hub_download(name.removeprefix("hf-hub:"), "open_clip_config.json")
            return read_json(Path(path))
        return {"model_cfg": open_clip.get_model_config(name), "preprocess_cfg": {}}

    def save(self, out: Path) -> None:
        from safetensors.torch import save_file

        out.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.config(), indent=2)
        (out / "open_clip_config.json").write_text(text, encoding="utf-8")
        state = {k: v.detach().cpu().contiguous() for k, v in self.model.state_dict().items()}
        save_file(state, out / "open_clip_model.safetensors")


class RegionModel(Trainable):
    """LXMERT and VOLTA's controlled models on region features (kind ``region-itm``): the
    paper's ITM objective (Appendix D), cross-entropy on the matching head's two logits, match
    = the model's own class (VOLTA 0, transformers' LXMERT 1). A row's image is its regions,
    found (a detector's: detected) once."""

    kind = "region-itm"

    def prepare(self, item: Item, ref: ImageRef) -> Any:
        return self.scorer.regions.complete([prepared_image(self.scorer, item, ref)])[0]

    def loss(self, images, true, false):
        n = len(true)
        visual = [self.scorer.visual(regions) for regions in images]
        match = self.scorer.match_index
        labels = torch.tensor([match] * n + [1 - match] * n, device=self.device)
        logits = self.scorer.logits(visual + visual, [*true, *false])
        return F.cross_entropy(logits.float(), labels)

    def save(self, out: Path) -> None:
        """transformers' LXMERT: ``save_pretrained``; a VOLTA model: VOLTA's release folder
        again (its config, the weights in VOLTA's key names with the original's pre-training
        heads, its vocabulary)."""
        import shutil

        from ..scorers import volta

        if not self.scorer.volta:
            self.model.save_pretrained(out)
            self.scorer.tokenizer.save_pretrained(out)
            return
        source = Path(self.scorer.model_id)
        out.mkdir(parents=True, exist_ok=True)
        original = torch.load(source / volta.WEIGHTS, map_location="cpu", weights_only=True)
        heads = {k: v for k, v in original.items() if k.startswith(volta.DROPPED)}
        torch.save({**volta.checkpoint(self.scorer.doc, self.model), **heads}, out / volta.WEIGHTS)
        for name in ("config.json", "vocab.txt"):
            shutil.copyfile(source / name, out / name)

    def describe(self) -> dict[str, Any]:
        index = self.scorer.match_index
        return {
            "loss": f"cross-entropy on the ITM logits, match = class {index}",
            "score": "P(match)",
        }


TRAINABLE: dict[str, type[Trainable]] = {
    cls.kind: cls for cls in (ItmModel, HFDualModel, OpenClipModel, RegionModel)
}
"""Kind -> trainable wrapper: the kinds bla-finetune trains."""


def load_trainable(
    model_id: str, device: torch.device, kind: str | None = None, regions: Any = None
) -> Trainable:
    """The trainable wrapper of ``model_id`` (resolved and its kind detected as bla-eval does;
    ``regions``: the region source of a kind that reads region features)."""
    model = resolve(model_id, kind)
    if model.kind not in TRAINABLE:
        raise ValueError(
            f"model {model_id!r} is of kind {model.kind!r}: bla-finetune trains "
            f"{', '.join(TRAINABLE)} models (use bla-eval --protocol icl-sd|icl-dd for "
            "generative ones)"
        )
    try:
        if model.kind == RegionModel.kind:
            return RegionModel(model, device, regions)
        if regions is not None:
            raise ValueError(f"--regions: model kind {model.kind!r} reads images, not regions")
        return TRAINABLE[model.kind](model, device)
    except OSError as err:
        raise ValueError(f"cannot load model {model_id!r}: {err}") from err
