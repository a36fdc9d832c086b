"""VOLTA's controlled models (``ctrl_vilbert``, ``ctrl_lxmert``) from VOLTA's released files.

A VOLTA folder holds VOLTA's JSON config as ``config.json`` (its ``*_sublayers`` fields say which
attention and feed-forward parts each sublayer has), the checkpoint as ``pytorch_model.bin`` in
VOLTA's key names and BERT's ``vocab.txt``. ``ctrl_lxmert``'s layout is LXMERT's, so it runs as
transformers' ``LxmertModel``; any other layout whose sublayers are BERT blocks (ViLBERT: text
layers, then co-attention whose two directions share no weights) is assembled from transformers'
BERT blocks. On both sits VOLTA's head: the first text and the first visual token (the global
image feature) pooled, activated (ReLU), multiplied, and a linear layer to ``itm_dim`` logits
whose index 0 is the match class. Loading is strict: every checkpoint key is used (an alias of a
shared weight is checked equal to it) or is one of the pre-training heads, :data:`DROPPED`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from ..outputs import read_json

SUBLAYER_FIELDS = (
    "tt_attn_sublayers",
    "tv_attn_sublayers",
    "vt_attn_sublayers",
    "vv_attn_sublayers",
    "t_ff_sublayers",
    "v_ff_sublayers",
)
"""The fields of a VOLTA config that a transformers config never has."""
PARTS = ("tt", "tv", "vt", "vv", "t_ff", "v_ff")
DROPPED = ("cls.predictions.", "cls.imagePredictions.")
"""The pre-training heads (masked words and regions) that scoring does not read."""
WEIGHTS = "pytorch_model.bin"
MATCH_INDEX = 0
"""VOLTA's match class in ``vil_logit``."""


def volta_config(model: str) -> dict[str, Any] | None:
    """The VOLTA config of a local folder (None: no folder, or a config without VOLTA's
    sublayer fields)."""
    path = Path(model) / "config.json"
    if not path.is_file():
        return None
    doc = read_json(path)
    return doc if is_volta(doc) else None


def is_volta(doc: Mapping[str, Any] | None) -> bool:
    """A parsed ``config.json`` is VOLTA's: it has the sublayer fields, each a list."""
    return doc is not None and all(isinstance(doc.get(name), list) for name in SUBLAYER_FIELDS)


@dataclass(frozen=True)
class Sublayer:
    """One of VOLTA's sublayers: its number, the parts it has, and whether text and vision
    share its weights."""

    index: int
    parts: frozenset[str]
    shared: bool

    @property
    def attention(self) -> bool:
        return bool(self.parts & {"tt", "tv", "vt", "vv"})


def sublayers(doc: dict[str, Any]) -> list[Sublayer]:
    """The sublayers of a VOLTA config, in order (a ValueError names a layout it cannot run)."""
    numbers = {n for name in SUBLAYER_FIELDS for n in doc[name]}
    shared = set(doc.get("shared_sublayers", []))
    out = []
    for index in range(len(numbers)):
        if index not in numbers:
            raise ValueError(f"VOLTA config: sublayer {index} is missing")
        parts = frozenset(
            part for part, name in zip(PARTS, SUBLAYER_FIELDS, strict=True) if index in doc[name]
        )
        if parts & {"tt", "tv", "vt", "vv"} and parts & {"t_ff", "v_ff"}:
            raise ValueError(f"VOLTA config: sublayer {index} mixes attention and feed-forward")
        if {"tt", "tv"} <= parts or {"vv", "vt"} <= parts:
            raise ValueError(
                f"VOLTA config: sublayer {index} attends within and across modalities at once "
                "(a gated attention this engine does not run)"
            )
        if ("tv" in parts) != ("vt" in parts):
            raise ValueError(f"VOLTA config: sublayer {index} attends across in one direction")
        out.append(Sublayer(index, parts, index in shared))
    return out


def lxmert_layers(doc: dict[str, Any]) -> tuple[int, int, int] | None:
    """(language, vision, cross) layer counts when the config's layout is LXMERT's (its text and
    vision encoders side by side, then cross layers: shared cross-attention, self-attention,
    feed-forward); else None."""
    layers = sublayers(doc)
    cross = [s.index for s in layers if "tv" in s.parts]
    if not cross:
        return None
    start = cross[0]
    text = sum("tt" in s.parts for s in layers[:start])
    vision = sum("vv" in s.parts for s in layers[:start])
    expected = _lxmert_layout(text, vision, len(cross))
    actual = {name: sorted(doc[name]) for name in SUBLAYER_FIELDS}
    actual["shared"] = sorted(doc.get("shared_sublayers", []))
    return (text, vision, len(cross)) if actual == expected else None


def _lxmert_layout(text: int, vision: int, cross: int) -> dict[str, list[int]]:
    """The sublayer fields of LXMERT's layout (VOLTA's ``ctrl_lxmert.json`` at 9/5/5)."""
    single = max(text, vision)
    start = 2 * single
    xs = [start + 3 * j for j in range(cross)]
    return {
        "tt_attn_sublayers": [2 * i for i in range(text)] + [x + 1 for x in xs],
        "tv_attn_sublayers": xs,
        "vt_attn_sublayers": xs,
        "vv_attn_sublayers": [2 * i for i in range(vision)] + [x + 1 for x in xs],
        "t_ff_sublayers": [2 * i + 1 for i in range(text)] + [x + 2 for x in xs],
        "v_ff_sublayers": [2 * i + 1 for i in range(vision)] + [x + 2 for x in xs],
        "shared": xs,
    }


def bert_config(doc: dict[str, Any], vision: bool = False) -> Any:
    """transformers' ``BertConfig`` of VOLTA's text (or, ``vision``, its visual) stream."""
    from transformers import BertConfig

    v = "v_" if vision else ""
    return BertConfig(
        vocab_size=doc.get("vocab_size", 30522),
        hidden_size=doc[f"{v}hidden_size"],
        num_attention_heads=doc[f"{v}num_attention_heads"],
        intermediate_size=doc[f"{v}intermediate_size"],
        hidden_act=doc.get(f"{v}hidden_act", "gelu"),
        max_position_embeddings=doc.get("max_position_embeddings", 512),
        type_vocab_size=doc.get("type_vocab_size", 2),
        layer_norm_eps=doc.get("layer_norm_eps", 1e-12),
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        attn_implementation="eager",
    )


class VoltaHead(nn.Module):
    """VOLTA's matching head: pooled text and image (first tokens, dense, ReLU or tanh),
    fused (multiplied or summed), a linear layer to the ``itm_dim`` logits (``vil_logit``)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        super().__init__()
        if doc.get("fusion_method", "mul") not in ("mul", "sum"):
            raise ValueError(
                f"VOLTA config: fusion_method {doc['fusion_method']!r} has no matching head "
                "this engine runs (mul or sum)"
            )
        self.fusion = doc.get("fusion_method", "mul")
        pooled = doc.get("pooler_size", 768)
        self.t_pooler = nn.Linear(doc["hidden_size"], pooled)
        self.v_pooler = nn.Linear(doc["v_hidden_size"], doc.get("v_pooler_size", 1024))
        self.classifier = nn.Linear(pooled, doc.get("itm_dim", 2))
        self.act: Callable[[torch.Tensor], torch.Tensor] = (
            torch.relu if doc.get("fusion_act", "relu") == "relu" else torch.tanh
        )

    def forward(self, text: torch.Tensor, vision: torch.Tensor) -> torch.Tensor:
        t = self.act(self.t_pooler(text[:, 0]))
        v = self.act(self.v_pooler(vision[:, 0]))
        return self.classifier(t * v if self.fusion == "mul" else t + v)


class RegionEmbeddings(nn.Module):
    """ViLBERT's visual embeddings: features and 5-d boxes projected, summed, normalised."""

    def __init__(self, doc: dict[str, Any]) -> None:
        super().__init__()
        hidden = doc["v_hidden_size"]
        self.image_embeddings = nn.Linear(doc["v_feature_size"], hidden)
        self.image_location_embeddings = nn.Linear(doc.get("num_locs", 5), hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=doc.get("layer_norm_eps", 1e-12))

    def forward(self, features: torch.Tensor, boxes: torch.Tensor) -> torch.Tensor:
        return self.LayerNorm(
            self.image_embeddings(features) + self.image_location_embeddings(boxes)
        )


class FeedForward(nn.Module):
    """A BERT feed-forward block (transformers' ``BertIntermediate`` and ``BertOutput``)."""

    def __init__(self, config: Any) -> None:
        from transformers.models.bert.modeling_bert import BertIntermediate, BertOutput

        super().__init__()
        self.intermediate = BertIntermediate(config)
        self.output = BertOutput(config)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return self.output(self.intermediate(hidden), hidden)


def attention_block(config: Any, cross: bool) -> nn.Module:
    """transformers' ``BertAttention`` (self- or cross-attention)."""
    from transformers.models.bert.modeling_bert import BertAttention

    return BertAttention(config, is_cross_attention=cross)


def extended_mask(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A [batch, length] 0/1 mask as the additive [batch, 1, 1, length] one attention adds."""
    return (1.0 - mask[:, None, None, :].to(dtype)) * torch.finfo(dtype).min


def attend(
    block: nn.Module, hidden: torch.Tensor, mask: torch.Tensor, context=None, context_mask=None
):
    """A BERT attention block's output (cross-attention when ``context`` is given)."""
    if context is None:
        return block(hidden, attention_mask=mask)[0]
    return block(hidden, encoder_hidden_states=context, encoder_attention_mask=context_mask)[0]


class VoltaBert(nn.Module):
    """A VOLTA two-stream encoder assembled from BERT blocks, one module per part of each
    sublayer (``layers.<n>.<part>``: ``tt``/``vv`` self-attention, ``tv``/``vt`` the two
    directions of co-attention, ``t_ff``/``v_ff`` feed-forward), and VOLTA's head."""

    def __init__(self, doc: dict[str, Any]) -> None:
        from transformers.models.bert.modeling_bert import BertEmbeddings

        super().__init__()
        self.plan = sublayers(doc)
        if any(s.shared for s in self.plan):
            raise ValueError("VOLTA config: shared sublayers outside LXMERT's layout")
        text, vision = bert_config(doc), bert_config(doc, vision=True)
        self.embeddings = BertEmbeddings(text)
        self.v_embeddings = RegionEmbeddings(doc)
        self.layers = nn.ModuleList(nn.ModuleDict(self._parts(s, text, vision)) for s in self.plan)
        self.head = VoltaHead(doc)

    @staticmethod
    def _parts(sublayer: Sublayer, text: Any, vision: Any) -> dict[str, nn.Module]:
        made: dict[str, nn.Module] = {}
        for part in sublayer.parts:
            config = text if part in ("tt", "tv", "t_ff") else vision
            if part.endswith("_ff"):
                made[part] = FeedForward(config)
            else:
                made[part] = attention_block(config, cross=part in ("tv", "vt"))
        return made

    def forward(self, input_ids, attention_mask, token_type_ids, features, boxes, region_mask):
        t = self.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
        v = self.v_embeddings(features, boxes)
        t_mask, v_mask = extended_mask(attention_mask, t.dtype), extended_mask(region_mask, v.dtype)
        for sublayer, parts in zip(self.plan, self.layers, strict=True):
            if sublayer.attention:
                t_new, v_new = t, v
                if "tt" in parts:
                    t_new = attend(parts["tt"], t, t_mask)
                elif "tv" in parts:
                    t_new = attend(parts["tv"], t, None, v, v_mask)
                if "vv" in parts:
                    v_new = attend(parts["vv"], v, v_mask)
                elif "vt" in parts:
                    v_new = attend(parts["vt"], v, None, t, t_mask)
                t, v = t_new, v_new
            else:
                t = parts["t_ff"](t) if "t_ff" in parts else t
                v = parts["v_ff"](v) if "v_ff" in parts else v
        return self.head(t, v)


class VoltaLxmert(nn.Module):
    """VOLTA's ``ctrl_lxmert``: transformers' ``LxmertModel`` (its own pooler unused) and
    VOLTA's head."""

    def __init__(self, doc: dict[str, Any], layers: tuple[int, int, int]) -> None:
        from transformers import LxmertConfig, LxmertModel

        super().__init__()
        text, vision, cross = layers
        config = LxmertConfig(
            vocab_size=doc.get("vocab_size", 30522),
            hidden_size=doc["hidden_size"],
            num_attention_heads=doc["num_attention_heads"],
            intermediate_size=doc["intermediate_size"],
            hidden_act=doc.get("hidden_act", "gelu"),
            max_position_embeddings=doc.get("max_position_embeddings", 512),
            type_vocab_size=doc.get("type_vocab_size", 2),
            layer_norm_eps=doc.get("layer_norm_eps", 1e-12),
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
            l_layers=text,
            r_layers=vision,
            x_layers=cross,
            visual_feat_dim=doc["v_feature_size"],
            visual_pos_dim=doc.get("num_locs", 5),
        )
        if doc["v_hidden_size"] != doc["hidden_size"]:
            raise ValueError("VOLTA config: LXMERT's layout needs v_hidden_size == hidden_size")
        self.lxmert = LxmertModel(config)
        self.lxmert.pooler = nn.Identity()
        self.head = VoltaHead(doc)

    def forward(self, input_ids, attention_mask, token_type_ids, features, boxes, region_mask):
        out = self.lxmert(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            visual_feats=features,
            visual_pos=boxes,
            visual_attention_mask=region_mask,
        )
        return self.head(out.language_output, out.vision_output)


# ----------------------------------------------------------------------------- key maps
def key_map(doc: dict[str, Any]) -> dict[str, str]:
    """VOLTA's checkpoint key (without ``.weight``/``.bias``) -> the module path of the model
    :func:`build` makes of ``doc`` (several VOLTA keys may name one shared module)."""
    layers = lxmert_layers(doc)
    if layers is not None:
        return _lxmert_map(doc, layers)
    return _bert_map(doc)


def _common(prefix: str) -> dict[str, str]:
    return {
        "bert.t_pooler.dense": "head.t_pooler",
        "bert.v_pooler.dense": "head.v_pooler",
        "cls.bi_seq_relationship": "head.classifier",
        **{
            f"bert.embeddings.{name}": f"{prefix}embeddings.{name}"
            for name in (
                "word_embeddings",
                "position_embeddings",
                "token_type_embeddings",
                "LayerNorm",
            )
        },
    }


ATTENTION_SIDES = {
    # part -> (VOLTA's query name, key/value names it reads, output names)
    "tt": ("", "", ""),
    "vv": ("v_", "v_", "v_"),
    "tv": ("", "v_", ""),
    "vt": ("v_", "", "v_"),
}


def _bert_map(doc: dict[str, Any]) -> dict[str, str]:
    out = _common("")
    for name in ("image_embeddings", "image_location_embeddings", "LayerNorm"):
        out[f"bert.v_embeddings.{name}"] = f"v_embeddings.{name}"
    for s in sublayers(doc):
        src = f"bert.encoder.layer.{s.index}"
        dst = f"layers.{s.index}"
        for part in s.parts:
            if part.endswith("_ff"):
                v = "v_" if part == "v_ff" else ""
                out[f"{src}.intermediate.{v}dense"] = f"{dst}.{part}.intermediate.dense"
                out[f"{src}.output.{v}dense"] = f"{dst}.{part}.output.dense"
                out[f"{src}.output.{v}LayerNorm"] = f"{dst}.{part}.output.LayerNorm"
                continue
            query, keys, output = ATTENTION_SIDES[part]
            out[f"{src}.attention_self.{query}query"] = f"{dst}.{part}.self.query"
            out[f"{src}.attention_self.{keys}key"] = f"{dst}.{part}.self.key"
            out[f"{src}.attention_self.{keys}value"] = f"{dst}.{part}.self.value"
            out[f"{src}.attention_output.{output}dense"] = f"{dst}.{part}.output.dense"
            out[f"{src}.attention_output.{output}LayerNorm"] = f"{dst}.{part}.output.LayerNorm"
    return out


def _lxmert_map(doc: dict[str, Any], layers: tuple[int, int, int]) -> dict[str, str]:
    text, vision, cross = layers
    out = _common("lxmert.")
    visn = "lxmert.encoder.visn_fc"
    out["bert.v_embeddings.image_embeddings"] = f"{visn}.visn_fc"
    out["bert.v_embeddings.ImgLayerNorm"] = f"{visn}.visn_layer_norm"
    out["bert.v_embeddings.image_location_embeddings"] = f"{visn}.box_fc"
    out["bert.v_embeddings.LocLayerNorm"] = f"{visn}.box_layer_norm"
    enc = "lxmert.encoder"
    for i in range(max(text, vision)):
        for v, stack, count in (("", "layer", text), ("v_", "r_layers", vision)):
            if i >= count:
                continue
            out |= _attention(f"bert.encoder.layer.{2 * i}", v, f"{enc}.{stack}.{i}.attention")
            ff = f"bert.encoder.layer.{2 * i + 1}"
            out[f"{ff}.intermediate.{v}dense"] = f"{enc}.{stack}.{i}.intermediate.dense"
            out[f"{ff}.output.{v}dense"] = f"{enc}.{stack}.{i}.output.dense"
            out[f"{ff}.output.{v}LayerNorm"] = f"{enc}.{stack}.{i}.output.LayerNorm"
    start = 2 * max(text, vision)
    for j in range(cross):
        x, src = f"{enc}.x_layers.{j}", start + 3 * j
        for v in ("", "v_"):  # one shared cross-attention: both names map to it
            out |= _attention(f"bert.encoder.layer.{src}", v, f"{x}.visual_attention", "att")
        for v, side in (("", "lang"), ("v_", "visn")):
            out |= _attention(f"bert.encoder.layer.{src + 1}", v, f"{x}.{side}_self_att")
            ff = f"bert.encoder.layer.{src + 2}"
            out[f"{ff}.intermediate.{v}dense"] = f"{x}.{side}_inter.dense"
            out[f"{ff}.output.{v}dense"] = f"{x}.{side}_output.dense"
            out[f"{ff}.output.{v}LayerNorm"] = f"{x}.{side}_output.LayerNorm"
    return out


def _attention(src: str, v: str, dst: str, inner: str = "self") -> dict[str, str]:
    """VOLTA's attention block ``src`` (its ``v``-prefixed weights) -> transformers'
    ``dst``, whose query, key and value sit in ``dst.<inner>`` (``self``; ``att`` for LXMERT's
    cross-attention)."""
    return {
        f"{src}.attention_self.{v}query": f"{dst}.{inner}.query",
        f"{src}.attention_self.{v}key": f"{dst}.{inner}.key",
        f"{src}.attention_self.{v}value": f"{dst}.{inner}.value",
        f"{src}.attention_output.{v}dense": f"{dst}.output.dense",
        f"{src}.attention_output.{v}LayerNorm": f"{dst}.output.LayerNorm",
    }


def build(doc: dict[str, Any]) -> nn.Module:
    """The model of a VOLTA config: ``VoltaLxmert`` for LXMERT's layout, else ``VoltaBert``."""
    if doc.get("add_global_imgfeat") != "first":
        raise ValueError(
            "VOLTA config: add_global_imgfeat must be 'first' (the global image feature pooled)"
        )
    layers = lxmert_layers(doc)
    return VoltaLxmert(doc, layers) if layers is not None else VoltaBert(doc)


def convert(doc: dict[str, Any], checkpoint: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The state dict of :func:`build`'s model from a VOLTA checkpoint, strictly: every key is
    mapped or dropped (:data:`DROPPED`), aliases of one shared weight are equal, and every
    weight of the model is given (a ValueError names the first key that is not)."""
    mapping = key_map(doc)
    state: dict[str, torch.Tensor] = {}
    for key, value in checkpoint.items():
        if key.startswith(DROPPED):
            continue
        stem, _, leaf = key.rpartition(".")
        if stem not in mapping or leaf not in ("weight", "bias"):
            raise ValueError(f"VOLTA checkpoint: key {key!r} is neither used nor a known head")
        target = f"{mapping[stem]}.{leaf}"
        if target in state and not _same(state[target], value):
            raise ValueError(f"VOLTA checkpoint: {key!r} differs from the weight it shares")
        state[target] = value
    return state


def checkpoint(doc: dict[str, Any], model: nn.Module) -> dict[str, torch.Tensor]:
    """``model``'s weights in VOLTA's key names (:func:`convert` reversed; a shared weight
    under each of its names), without the pre-training heads."""
    state = model.state_dict()
    out = {}
    for stem, target in key_map(doc).items():
        for leaf in ("weight", "bias"):
            if f"{target}.{leaf}" in state:
                out[f"{stem}.{leaf}"] = state[f"{target}.{leaf}"].detach().cpu().clone()
    return out


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether two aliases hold one weight (tensors without data, on the meta device: by shape)."""
    if a.is_meta or b.is_meta:
        return a.shape == b.shape
    return torch.equal(a, b)


def load(folder: str, doc: dict[str, Any]) -> nn.Module:
    """The VOLTA model of ``folder`` in eval mode, its weights loaded strictly."""
    model = build(doc)
    path = Path(folder) / WEIGHTS
    if not path.is_file():
        raise ValueError(f"VOLTA model {folder}: no {WEIGHTS}")
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    state = convert(doc, checkpoint)
    wanted = set(model.state_dict())
    missing = sorted(wanted - set(state))
    extra = sorted(set(state) - wanted)
    if missing or extra:
        first = (missing or extra)[0]
        what = "is not in the checkpoint" if missing else "is not a weight of the model"
        raise ValueError(f"VOLTA model {folder}: {first!r} {what}")
    model.load_state_dict(state, strict=True)
    return model.eval()
