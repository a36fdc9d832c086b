"""Random-weight models that read region features: transformers' LXMERT with its pre-training
heads, and VOLTA's controlled LXMERT and ViLBERT as VOLTA releases them (VOLTA's JSON config
fields at tiny sizes as ``config.json``, ``pytorch_model.bin`` in VOLTA's key names, the
pre-training heads included, and BERT's ``vocab.txt``); and a TSV of region features in the
authors' layout for a dataset's images, drawn from a seed."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import transformers as tf

from ..scorers import volta
from .processors import bert_tokenizer
from .sizes import TINY_LAYERS

FEATURES = 2048
"""The region feature size (the bottom-up-attention detector's)."""
REGION_CLASSES = "1601"
"""VOLTA's region-class target (``pre_vis_targets["0"]``: Visual Genome's 1600 classes + 1)."""
TINY = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64)


def volta_fields(hidden: dict[str, int], features: int, vocab: int) -> dict[str, Any]:
    """The fields every VOLTA controlled config shares (``config/ctrl_*.json``) at ``hidden``."""
    return {
        "attention_probs_dropout_prob": 0.1,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        **hidden,
        "initializer_range": 0.02,
        "max_position_embeddings": 64,
        "pooler_size": 24,
        "type_vocab_size": 2,
        "vocab_size": vocab,
        "bert_model": "bert-base-uncased",
        "do_lower_case": True,
        "num_locs": 5,
        "add_global_imgfeat": "first",
        "v_attention_probs_dropout_prob": 0.1,
        "v_hidden_act": "gelu",
        "v_hidden_dropout_prob": 0.1,
        "v_feature_size": features,
        "visual_target_weights": {"0": 1.0},
        "v_hidden_size": hidden["hidden_size"],
        "v_initializer_range": 0.02,
        "v_pooler_size": 24,
        "v_num_attention_heads": hidden["num_attention_heads"],
        "v_intermediate_size": hidden["intermediate_size"],
        "fusion_method": "mul",
        "clf_hidden_size": 48,
        "shared_sublayers": [],
        "single_ln_sublayers": [],
        "sublayer2attn_hidden_size": {},
        "sublayer2num_attention_heads": {},
        "sublayer2intermediate_size": {},
        "sublayer2v_attn_hidden_size": {},
        "sublayer2v_num_attention_heads": {},
        "sublayer2v_intermediate_size": {},
    }


def vilbert_layout() -> dict[str, Any]:
    """ctrl_vilbert's layout at two text layers and two co-attention blocks (co-attention,
    feed-forward, self-attention, feed-forward), as ``ctrl_vilbert_base.json`` at 6 + 6."""
    return {
        "model": "bert",
        "image_embeddings": "vilbert",
        "tt_attn_sublayers": [0, 2, 6, 10],
        "tv_attn_sublayers": [4, 8],
        "vt_attn_sublayers": [4, 8],
        "vv_attn_sublayers": [6, 10],
        "t_ff_sublayers": [1, 3, 5, 7, 9, 11],
        "v_ff_sublayers": [5, 7, 9, 11],
        "bert_layer2attn_sublayer": {"0": 0, "1": 2, "2": 6, "3": 10},
        "bert_layer2ff_sublayer": {"0": 1, "1": 3, "2": 7, "3": 11},
    }


def lxmert_layout() -> dict[str, Any]:
    """ctrl_lxmert's layout at 2 language, 1 vision and 1 cross layer (``ctrl_lxmert.json`` at
    9 / 5 / 5)."""
    fields = volta._lxmert_layout(2, 1, 1)
    shared = fields.pop("shared")
    return {
        "image_embeddings": "lxmert",
        **fields,
        "shared_sublayers": shared,
        "bert_layer2attn_sublayer": {"0": 0, "1": 2, "2": 5},
        "bert_layer2ff_sublayer": {"0": 1, "1": 3, "2": 6},
    }


def volta_config(
    layout: dict[str, Any],
    vocab: int,
    features: int = FEATURES,
    hidden: dict[str, int] = TINY,
) -> dict[str, Any]:
    """A tiny VOLTA config of ``layout``."""
    return {**volta_fields(hidden, features, vocab), **layout}


def randomise(model: torch.nn.Module, scale: float = 0.1) -> None:
    """Draw every weight again: normal around 0 (layer norm scales around 1)."""
    with torch.no_grad():
        for name, param in model.named_parameters():
            noise = torch.randn_like(param) * scale
            param.copy_(noise + 1 if "LayerNorm" in name or "layer_norm" in name else noise)


def volta_checkpoint(doc: dict[str, Any], model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """``model``'s weights in VOLTA's key names (shared weights under each of their names),
    with VOLTA's pre-training heads (masked words, tied to the word embeddings; region
    classes) drawn at random."""
    out = volta.checkpoint(doc, model)
    hidden, v_hidden = doc["hidden_size"], doc["v_hidden_size"]
    heads = {
        "cls.predictions.bias": (doc["vocab_size"],),
        "cls.predictions.transform.dense.weight": (hidden, hidden),
        "cls.predictions.transform.dense.bias": (hidden,),
        "cls.predictions.transform.LayerNorm.weight": (hidden,),
        "cls.predictions.transform.LayerNorm.bias": (hidden,),
        "cls.imagePredictions.transform.dense.weight": (v_hidden, v_hidden),
        "cls.imagePredictions.transform.dense.bias": (v_hidden,),
        "cls.imagePredictions.transform.LayerNorm.weight": (v_hidden,),
        "cls.imagePredictions.transform.LayerNorm.bias": (v_hidden,),
        "cls.imagePredictions.decoder_dict.0.weight": (int(REGION_CLASSES), v_hidden),
        "cls.imagePredictions.decoder_dict.0.bias": (int(REGION_CLASSES),),
    }
    out |= {key: torch.randn(shape) * 0.1 for key, shape in heads.items()}
    out["cls.predictions.decoder.weight"] = out["bert.embeddings.word_embeddings.weight"]
    return out


def save_volta(out: Path, doc: dict[str, Any], tokenizer: Any) -> None:
    """A VOLTA release folder: ``config.json``, ``pytorch_model.bin`` and ``vocab.txt``."""
    model = volta.build(doc)
    randomise(model)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    torch.save(volta_checkpoint(doc, model), out / volta.WEIGHTS)
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda pair: pair[1])
    if [i for _, i in vocab] != list(range(len(vocab))):
        raise ValueError("a vocab.txt needs token ids 0 ... N-1")
    (out / "vocab.txt").write_text("".join(f"{t}\n" for t, _ in vocab), encoding="utf-8")


def build_volta_vilbert(out: Path, texts: list[str]) -> None:
    """VOLTA's ctrl_vilbert at tiny sizes, as VOLTA releases it."""
    tok = bert_tokenizer(texts)
    save_volta(out, volta_config(vilbert_layout(), len(tok)), tok)


def build_volta_lxmert(out: Path, texts: list[str]) -> None:
    """VOLTA's ctrl_lxmert at tiny sizes, as VOLTA releases it."""
    tok = bert_tokenizer(texts)
    save_volta(out, volta_config(lxmert_layout(), len(tok)), tok)


def build_lxmert_itm(out: Path, texts: list[str]) -> None:
    """transformers' ``LxmertForPreTraining`` (its cross-modality matching head) at tiny sizes,
    reading 2048-d regions with 4-d boxes, and its BERT tokenizer."""
    tok = bert_tokenizer(texts)
    config = tf.LxmertConfig(
        vocab_size=len(tok),
        hidden_size=TINY_LAYERS["hidden_size"],
        num_attention_heads=TINY_LAYERS["num_attention_heads"],
        intermediate_size=TINY_LAYERS["intermediate_size"],
        l_layers=2,
        r_layers=1,
        x_layers=1,
        visual_feat_dim=FEATURES,
        visual_pos_dim=4,
        num_qa_labels=4,
        num_object_labels=8,
        num_attr_labels=8,
        max_position_embeddings=64,
    )
    model = tf.LxmertForPreTraining(config)
    randomise(model)
    model.save_pretrained(out)
    tok.save_pretrained(out)


def region_rows(
    image_ids: Iterable[tuple[str, tuple[int, int]]],
    seed: int = 0,
    boxes: int = 36,
    features: int = FEATURES,
) -> list[str]:
    """TSV lines in the authors' layout for each ``(image_id, (height, width))``: boxes inside
    the image and non-negative features (as after a ReLU), drawn from ``seed``."""
    from ..regions import RegionFeatures
    from ..regions.tsv import encode_row

    rng = np.random.default_rng(seed)
    lines = []
    for image_id, (height, width) in image_ids:
        corners = rng.uniform(0, 1, size=(boxes, 2, 2)) * np.array([width, height])
        x1y1, x2y2 = corners.min(axis=1), corners.max(axis=1) + 1
        xyxy = np.concatenate([x1y1, np.minimum(x2y2, [width, height])], axis=1)
        values = np.maximum(rng.normal(0, 1, size=(boxes, features)), 0)
        regions = RegionFeatures(
            values.astype(np.float32), xyxy.astype(np.float32), (height, width)
        )
        lines.append(encode_row(image_id, regions))
    return lines


def write_region_tsv(
    path: Path,
    image_ids: Iterable[tuple[str, tuple[int, int]]],
    seed: int = 0,
    features: int = FEATURES,
) -> Path:
    """A TSV of region features for ``image_ids`` (:func:`region_rows`) at ``path``."""
    rows = region_rows(image_ids, seed, features=features)
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def dataset_images(
    data: str, tasks: Iterable[str] | None = None, limit: int | None = None, split: str = "test"
) -> list[tuple[str, tuple[int, int]]]:
    """``(image_id, (height, width))`` of every image the first ``limit`` items of each BLA
    task show (default: every task), once each, in order."""
    from ..benchmarks import get_benchmark, load_items
    from ..items import ImageHandle

    bench = get_benchmark("bla")
    names = [bench.resolve_task(t) for t in (tasks or bench.task_names())]
    found: dict[str, tuple[int, int]] = {}
    for item in load_items(bench, data, names, split, limit):
        for ref in item.images:
            handle = ImageHandle(item, ref)
            if handle.image_id is not None and handle.image_id not in found:
                width, height = handle.decoded().size
                found[handle.image_id] = (height, width)
    return list(found.items())
