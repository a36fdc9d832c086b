"""Published numbers of VALSE, VL-CheckList and Winoground, as data.

Rows have the shape of :mod:`bla_metric.references`: ``{"model", "source", "benchmark", "task",
"kind", <metric>: fraction}`` (the papers print percentages). ``task`` is a config name of our
dataset repos (the VALSE instrument file, the VL-CheckList taxonomy leaf), ``"all"`` for a
paper's average, or a VL-CheckList category (``Object``...). Metric names are those of
:mod:`bla_metric.neighbours`. Sources:
- VALSE: Parcalabescu et al., ACL 2022, Table 2 (zero-shot; CLIP and GPT are ranked only).
- VL-CheckList: Zhao et al., 2022 (arXiv 2207.00221), Tables 2-5 (ITM heads; CLIP cosine).
- Winoground: Thrush et al., CVPR 2022, Table 3.
"""

from __future__ import annotations

VALSE_TABLE2 = "VALSE paper Table 2"
VL_CHECKLIST_TABLES = "VL-CheckList paper Tables 2-5"
WINOGROUND_TABLE3 = "Winoground paper Table 3"

VALSE_INSTRUMENTS: dict[str, str] = {
    "existence": "Existence (quantifiers)",
    "plurals": "Plurality (semantic number)",
    "counting_hard": "Counting (balanced)",
    "counting_small_quant": "Counting (small numbers)",
    "counting_adversarial": "Counting (adversarial)",
    "relations": "Spatial relations",
    "action_replacement": "Actions (replacement)",
    "actant_swap": "Actions (actant swap)",
    "coreference_standard": "Coreference (standard)",
    "coreference_hard": "Coreference (clean)",
    "foil_it": "FOIL it! (noun phrases)",
}
"""Config (instrument file ``<name>.json`` with ``-`` -> ``_``) -> title, in Table 2's column
order. ``counting-hard.json`` is the paper's "balanced" counting; ``coreference-hard.json`` its
"clean" coreference set (VisDial validation split)."""

VALSE_VALIDATED: dict[str, int] = {
    "existence": 505,
    "plurals": 851,
    "counting_hard": 868,
    "counting_small_quant": 900,
    "counting_adversarial": 691,
    "relations": 535,
    "action_replacement": 648,
    "actant_swap": 949,
    "coreference_standard": 708,
    "coreference_hard": 104,
    "foil_it": 943,
}
"""Instances per instrument after manual validation (paper §3-§4, App. A.7): the items with at
least two of three annotators choosing the caption but not the foil (``mturk.caption >= 2``)."""

# VALSE Table 2 (%), columns in VALSE_INSTRUMENTS order, then the average.
_VALSE = {
    "acc_r": {
        "GPT1": (61.8, 53.1, 51.2, 48.7, 69.5, 77.2, 65.4, 72.2, 45.6, 45.2, 77.5, 60.7),
        "GPT2": (58.0, 51.9, 51.6, 49.8, 45.3, 75.0, 66.8, 76.9, 54.5, 50.0, 80.7, 60.1),
        "CLIP": (66.9, 56.2, 62.1, 62.5, 57.5, 64.3, 75.6, 68.6, 52.1, 49.7, 88.8, 64.0),
        "LXMERT": (78.6, 64.4, 62.2, 69.2, 42.6, 60.2, 54.8, 45.8, 46.8, 44.2, 87.1, 59.6),
        "ViLBERT": (65.5, 61.2, 58.6, 62.9, 73.7, 57.2, 70.7, 68.3, 47.2, 48.1, 86.9, 63.7),
        "ViLBERT 12-in-1": (95.6, 72.4, 76.7, 80.2, 77.3, 67.7, 65.9, 58.9, 75.7, 69.2, 86.9, 75.1),
        "VisualBERT": (39.7, 45.7, 48.2, 48.2, 50.0, 39.7, 49.2, 44.4, 49.5, 47.6, 48.5, 46.4),
    },
    "accuracy": {
        "LXMERT": (55.8, 55.1, 52.0, 55.4, 49.9, 50.8, 51.1, 48.5, 49.8, 49.0, 70.8, 53.5),
        "ViLBERT": (2.4, 50.3, 50.7, 50.6, 51.8, 49.9, 52.6, 50.4, 50.0, 50.0, 55.9, 51.3),
        "ViLBERT 12-in-1": (89.0, 62.0, 64.9, 69.2, 66.7, 53.4, 57.3, 52.2, 54.4, 54.3, 71.5, 63.2),
        "VisualBERT": (49.3, 46.5, 48.3, 47.8, 50.0, 49.3, 48.8, 49.7, 50.0, 50.0, 46.6, 48.8),
    },
    "min_p_c_p_f": {
        "LXMERT": (41.6, 42.2, 50.9, 50.0, 37.3, 28.4, 35.8, 36.8, 18.4, 17.3, 69.3, 38.9),
        "ViLBERT": (47.9, 2.1, 24.4, 24.7, 17.5, 1.5, 11.9, 7.1, 1.3, 1.9, 12.9, 13.9),
        "ViLBERT 12-in-1": (85.0, 33.4, 64.3, 61.7, 59.5, 13.3, 47.8, 37.6, 15.8, 13.5, 48.8, 43.7),
        "VisualBERT": (1.3, 0.3, 0.0, 0.0, 0.0, 1.3, 0.0, 0.0, 0.0, 0.0, 0.2, 0.3),
    },
    "auroc": {
        "LXMERT": (60.5, 57.3, 53.8, 57.7, 50.5, 51.9, 52.1, 47.6, 49.8, 49.5, 76.9, 55.2),
        "ViLBERT": (52.5, 54.1, 50.8, 51.6, 53.5, 51.2, 57.2, 57.8, 49.9, 49.9, 75.2, 54.9),
        "ViLBERT 12-in-1": (96.3, 67.4, 72.0, 77.8, 75.1, 55.8, 61.3, 55.0, 59.8, 59.6, 81.0, 69.2),
        "VisualBERT": (28.9, 29.0, 24.5, 16.5, 20.9, 45.2, 17.7, 36.3, 45.3, 46.3, 28.5, 30.8),
    },
}

# VL-CheckList (%): Table 3 (Object: Large, Medium, Small, Center, Mid, Margin), Table 5
# (Attribute, text level: Color, Material, Size, State, Action), Table 4 (Relation: Action,
# Spatial), Table 2 (Object, Attribute, Relation, overall average).
_VLC_LEAVES = (
    "object_size_large",
    "object_size_medium",
    "object_size_small",
    "object_location_center",
    "object_location_mid",
    "object_location_margin",
    "attribute_color",
    "attribute_material",
    "attribute_size",
    "attribute_state",
    "attribute_action",
    "relation_action",
    "relation_spatial",
)
_VLC = {
    "LXMERT": (
        (84.94, 82.05, 79.01, 84.56, 83.84, 79.77),
        (81.85, 82.15, 70.00, 68.63, 76.35),
        (61.47, 57.4),
        (82.36, 77.12, 57.57, 72.35),
    ),
    "UNITER": (
        (85.27, 81.12, 78.06, 85.69, 83.64, 77.84),
        (76.20, 75.75, 63.45, 68.10, 72.55),
        (69.17, 61.5),
        (81.94, 71.31, 64.65, 72.63),
    ),
    "OSCAR": (
        (81.43, 78.53, 74.93, 80.91, 78.59, 74.24),
        (68.80, 58.25, 52.65, 62.31, 67.60),
        (69.6, 72.6),
        (78.10, 61.28, 68.54, 69.31),
    ),
    "ViLT": (
        (88.58, 85.29, 82.18, 88.61, 86.65, 86.59),
        (86.45, 86.35, 71.40, 70.26, 80.00),
        (64.57, 66.6),
        (86.32, 80.36, 63.79, 76.82),
    ),
    "ALBEF": (
        (84.33, 80.25, 76.92, 82.87, 80.91, 81.19),
        (84.20, 87.30, 69.45, 72.08, 81.65),
        (70.47, 64.6),
        (81.08, 79.33, 66.45, 75.62),
    ),
    "TCL": (
        (86.15, 79.96, 74.91, 85.01, 83.21, 80.26),
        (83.00, 85.20, 63.45, 73.10, 82.85),
        (69.17, 59.4),
        (81.58, 78.27, 63.85, 74.57),
    ),
    "CLIP": (
        (88.77, 81.82, 75.65, 88.48, 85.80, 76.47),
        (72.90, 73.60, 65.20, 63.74, 74.25),
        (74.07, 49.1),
        (82.83, 67.93, 64.19, 71.65),
    ),
}
"""The paper's Attribute and Relation averages (Table 2) also average image-level views that
the release does not ship, so they are not the mean of the leaves printed here; Object's is."""

# Winoground Table 3 (%): text, image, group score.
_WINOGROUND = {
    "MTurk Human": (89.50, 88.50, 85.50),
    "Random Chance": (25.00, 25.00, 16.67),
    "VinVL": (37.75, 17.75, 14.50),
    "UNITER large": (38.00, 14.00, 10.50),
    "UNITER base": (32.25, 13.25, 10.00),
    "ViLLA large": (37.00, 13.25, 11.00),
    "ViLLA base": (30.00, 12.00, 8.00),
    "VisualBERT base": (15.50, 2.50, 1.50),
    "ViLT (ViT-B/32)": (34.75, 14.00, 9.25),
    "LXMERT": (19.25, 7.00, 4.00),
    "ViLBERT base": (23.75, 7.25, 4.75),
    "UniT ITM finetuned": (19.50, 6.25, 4.00),
    "FLAVA ITM": (32.25, 20.50, 14.25),
    "FLAVA Contrastive": (25.25, 13.50, 9.00),
    "CLIP (ViT-B/32)": (30.75, 10.50, 8.00),
    "VSE++ COCO (ResNet)": (22.75, 8.00, 4.00),
    "VSE++ COCO (VGG)": (18.75, 5.50, 3.50),
    "VSE++ Flickr30k (ResNet)": (20.00, 5.00, 2.75),
    "VSE++ Flickr30k (VGG)": (19.75, 6.25, 4.50),
    "VSRN COCO": (17.50, 7.00, 3.75),
    "VSRN Flickr30k": (20.00, 5.00, 3.50),
}

WINOGROUND_CONFIG = "winoground"
"""The one config of the Winoground dataset repo (400 examples, split ``test``)."""

WINOGROUND_CHANCE = {"text_score": 0.25, "image_score": 0.25, "group_score": 1 / 6}
"""Random chance (paper Table 3): 1/4, 1/4 and 1/6 (4 of the 24 orders of four scores)."""


def _valse_rows() -> list[dict]:
    rows: dict[tuple[str, str], dict] = {}
    tasks = [*VALSE_INSTRUMENTS, "all"]
    for metric, models in _VALSE.items():
        for model, values in models.items():
            for task, value in zip(tasks, values, strict=True):
                row = rows.setdefault(
                    (model, task),
                    {
                        "model": model,
                        "source": VALSE_TABLE2,
                        "benchmark": "valse",
                        "task": task,
                    },
                )
                row[metric] = round(value / 100, 6)
    return list(rows.values())


def _vl_checklist_rows() -> list[dict]:
    rows = []
    for model, (obj, attr, rel, overall) in _VLC.items():
        for task, value in zip(_VLC_LEAVES, (*obj, *attr, *rel), strict=True):
            rows.append(
                {
                    "model": model,
                    "source": VL_CHECKLIST_TABLES,
                    "benchmark": "vl-checklist",
                    "task": task,
                    "accuracy": round(value / 100, 6),
                }
            )
        for task, value in zip(("Object", "Attribute", "Relation", "all"), overall, strict=True):
            rows.append(
                {
                    "model": model,
                    "source": VL_CHECKLIST_TABLES,
                    "benchmark": "vl-checklist",
                    "task": task,
                    "accuracy": round(value / 100, 6),
                }
            )
    return rows


def _winoground_rows() -> list[dict]:
    return [
        {
            "model": model,
            "source": WINOGROUND_TABLE3,
            "benchmark": "winoground",
            "task": WINOGROUND_CONFIG,
            "text_score": round(t / 100, 6),
            "image_score": round(i / 100, 6),
            "group_score": round(g / 100, 6),
        }
        for model, (t, i, g) in _WINOGROUND.items()
    ]


KINDS: dict[str, str] = {
    "CLIP": "contrastive",
    "CLIP (ViT-B/32)": "contrastive",
    "FLAVA Contrastive": "contrastive",
    "VSE++ COCO (ResNet)": "contrastive",
    "VSE++ COCO (VGG)": "contrastive",
    "VSE++ Flickr30k (ResNet)": "contrastive",
    "VSE++ Flickr30k (VGG)": "contrastive",
    "VSRN COCO": "contrastive",
    "VSRN Flickr30k": "contrastive",
    "GPT1": "text",
    "GPT2": "text",
    "MTurk Human": "human",
}
"""Model kind of the published models, in the engine's names; every other one is an ITM head."""


def _with_kind(row: dict) -> dict:
    return {**row, "kind": KINDS.get(row["model"], "itm")}


REFERENCE_ROWS: list[dict] = [
    _with_kind(r)
    for r in (*_valse_rows(), *_vl_checklist_rows(), *_winoground_rows())
    if r["model"] != "Random Chance"
]
"""Every published row; Winoground's "Random Chance" row is :data:`WINOGROUND_CHANCE`."""


def neighbour_reference_rows(benchmark: str, task: str | None = None) -> list[dict]:
    """Published rows of ``benchmark`` (``valse``, ``vl-checklist``, ``winoground``), of one
    ``task`` when given (a config name, or ``"all"`` for the papers' averages)."""
    return [
        dict(r)
        for r in REFERENCE_ROWS
        if r["benchmark"] == benchmark and (task is None or r["task"] == task)
    ]
