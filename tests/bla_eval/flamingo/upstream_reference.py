"""Run in the OpenFlamingo reference environment (``bash .ci/build-env openflamingo``): build a
tiny OpenFlamingo with open_flamingo 2.0.1's own ``create_model_and_transforms`` and record its
forward. Usage: ``python upstream_reference.py WORK`` where ``WORK`` holds ``lm/`` (a tiny
causal LM and its tokenizer), ``vision.json`` (an open_clip model config) and ``job.json``
(``prompts``: [image index, text] pairs; ``colours``: one RGB triple per image). Writes into
``WORK``: ``checkpoint.pt`` (the model's whole state dict, upstream's duplicate lists and the
vision tower included), ``released.pt`` (what upstream's training keeps:
``filter_state_dict_to_trainable``), ``model/config.json`` and ``reference.json`` (the special
tokens' ids and, per prompt, its token ids and the logits at every position)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import open_clip
import torch
from PIL import Image

LEGACY = {"lang_encoder.lm_head.weight": "lang_encoder.embed_out.weight"}
"""GPT-NeoX's head as transformers 4 named it when the checkpoints were released (5 renamed
it ``lm_head``)."""


def released(model: torch.nn.Module) -> dict:
    """Upstream's ``filter_state_dict_to_trainable`` (open_flamingo/train/train_utils.py) under
    the released checkpoints' names (:data:`LEGACY`)."""
    state = model.state_dict()
    for name, param in model.named_parameters():
        if "embed" in LEGACY.get(name, name) or isinstance(param, torch.nn.Embedding):
            continue
        if not param.requires_grad and name in state:
            del state[name]
    drop = ("lang_encoder.old_decoder_blocks", "lang_encoder.gated_cross_attn_layers")
    return {
        LEGACY.get(k, k): v
        for k, v in state.items()
        if not k.startswith(drop) and "vision_encoder" not in k
    }


def main(work: Path) -> None:
    from open_flamingo import create_model_and_transforms

    job = json.loads((work / "job.json").read_text())
    configs = work / "open_clip_configs"
    configs.mkdir(exist_ok=True)
    shutil.copy(work / "vision.json", configs / "bla-tiny-vit.json")
    open_clip.add_model_config(configs)
    torch.manual_seed(0)
    model, image_processor, tokenizer = create_model_and_transforms(
        clip_vision_encoder_path="bla-tiny-vit",
        clip_vision_encoder_pretrained=None,
        lang_encoder_path=str(work / "lm"),
        tokenizer_path=str(work / "lm"),
        cross_attn_every_n_layers=2,
    )
    with torch.no_grad():  # gates open, so the image changes the text's logits
        for name, param in model.named_parameters():
            if name.endswith(("attn_gate", "ff_gate")):
                param.uniform_(0.5, 1.0)
    model.eval()
    torch.save(model.state_dict(), work / "checkpoint.pt")
    torch.save(released(model), work / "released.pt")
    images = [Image.new("RGB", (40, 30), tuple(c)) for c in job["colours"]]
    rows = []
    with torch.no_grad():
        for index, text in job["prompts"]:
            turns = max(1, text.count("<image>"))  # the same image for each <image>
            pixels = image_processor(images[index])
            vision_x = pixels[None, None, None].expand(1, turns, 1, *pixels.shape)
            enc = tokenizer([text], return_tensors="pt")
            out = model(
                vision_x=vision_x, lang_x=enc["input_ids"], attention_mask=enc["attention_mask"]
            )
            rows.append({"ids": enc["input_ids"][0].tolist(), "logits": out.logits[0].tolist()})
    ids = {t: tokenizer.encode(t)[-1] for t in ("<|endofchunk|>", "<image>")}
    ids["pad"] = tokenizer.pad_token_id
    (work / "reference.json").write_text(json.dumps({"token_ids": ids, "rows": rows}))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
