"""The dataset card (README.md): YAML header for the Hub, body with statistics from the data."""

from __future__ import annotations

from statistics import mean

import yaml
from bla_eval.tables import Table, markdown
from datasets import Features
from datasets.splits import SplitDict, SplitInfo

from bla_metric import hub_ids
from bla_metric.citation import CITATION
from bla_metric.schema import (
    BLA_ROWS,
    DATASET_VERSION,
    LEARNING_SUFFIX,
    SENTENCE_ROWS,
    SENTENCES_SUFFIX,
)
from bla_metric.tasks import TASKS
from builders.io import data_file
from builders.records import Datapoint

PAPER_TABLE1: dict[str, dict[str, float]] = {
    "active_passive": {"datapoints": 613, "vocab": 165},
    "coordination": {"datapoints": 654, "vocab": 827},
    "relative_clause": {"datapoints": 672, "vocab": 807},
}
"""Paper (EMNLP 2023) Table 1: datapoints and vocabulary size per task."""

THESIS_TABLE46: dict[str, dict[str, float]] = {
    "active_passive": {"sentence_length": 6.33, "grammar": 0.86},
    "coordination": {"sentence_length": 10.46, "grammar": 0.84},
    "relative_clause": {"sentence_length": 10.46, "grammar": 0.85},
}
"""Thesis Table 4.6 (on the thesis' larger CO/RC sets): mean sentence length and GRUEN score."""


Tables = dict[str, dict[str, list[Datapoint]]]
Info = dict[str, dict[str, dict[str, int]]]


def statistics(rows: list[Datapoint]) -> dict[str, float | int | None]:
    """Rows, vocabulary (lower-cased whitespace tokens), mean words per sentence, grammar score."""
    sentences = [c for dp in rows for c in dp.captions]
    scores = [s for dp in rows if dp.grammar_scores for s in dp.grammar_scores]
    return {
        "rows": len(rows),
        "vocab": len({w for s in sentences for w in s.lower().split()}),
        "sentence_length": mean(len(s.split()) for s in sentences),
        "grammar": mean(scores) if scores else None,
    }


def render_card(tables: Tables, info: Info, provenance: str | None = None) -> str:
    """The full README.md: YAML header, then the Markdown body.

    The one card writer of the builders: ``release`` passes no ``provenance`` (the card of the
    published benchmark); ``construct`` passes a Markdown paragraph saying how its caption sets
    were built, which becomes a section of its own.
    """
    header = yaml.safe_dump(card_metadata(info), sort_keys=False, width=1000)
    return "---\n" + header + "---\n\n" + card_body(tables, info, provenance)


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` value for ``rows`` rows."""
    for bound, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if rows < bound:
            return name
    return "100K<n<1M"


def card_metadata(info: Info) -> dict:
    """The YAML header: licence, task categories, configs and dataset_info with split sizes."""
    rows = sum(v["num_examples"] for splits in info.values() for v in splits.values())
    first = next(iter(info), None)
    return {
        "pretty_name": "BLA: Basic Language Abilities of vision-and-language models",
        "language": ["en"],
        "license": ["mit", "cc-by-4.0"],  # annotations MIT; Visual Genome images CC BY 4.0
        "task_categories": ["image-text-to-text", "zero-shot-classification"],
        "tags": ["vision-language", "benchmark", "linguistics", "image-text-matching"],
        "size_categories": [size_category(rows)],
        "configs": [
            {
                "config_name": config,
                "data_files": [{"split": s, "path": data_file(config, s)} for s in splits],
                **({"default": True} if config == first else {}),
            }
            for config, splits in info.items()
        ],
        "dataset_info": [
            dataset_info(config, splits, features_of(config)) for config, splits in info.items()
        ],
    }


def features_of(config: str) -> Features:
    """The features of a config: the per-sentence schema or the datapoint one."""
    return (SENTENCE_ROWS if config.endswith(SENTENCES_SUFFIX) else BLA_ROWS).features()


def dataset_info(config: str, splits: dict[str, dict[str, int]], features: Features) -> dict:
    """The card header's ``dataset_info`` entry of one config: its ``features``, splits and sizes
    (``num_bytes``, ``num_examples``, ``file_bytes`` of each split)."""
    split_dict = SplitDict()
    for name, v in splits.items():
        split_dict.add(
            SplitInfo(name=name, num_bytes=v["num_bytes"], num_examples=v["num_examples"])
        )
    return {
        "config_name": config,
        "features": features._to_yaml_list(),
        "splits": split_dict._to_yaml_list(),
        "download_size": sum(v["file_bytes"] for v in splits.values()),
        "dataset_size": sum(v["num_bytes"] for v in splits.values()),
    }


INTRO = (
    "BLA (Chen, Fernández and Pezzelle, EMNLP 2023) tests whether vision-and-language models "
    "understand three basic linguistic constructions. Each datapoint is a Visual Genome image with "
    "four template sentences: two true and two false. The false sentences use exactly the same "
    "words as the true ones; only who does what, or who has what, changes. A model scores every "
    "(image, sentence) pair; it should rank both true sentences above both false ones."
)

LICENCE = (
    "The annotations are MIT-licensed (BLA release, https://github.com/shin-ee-chen/BLA). The "
    "images are from Visual Genome, licensed CC BY 4.0; their original JPEG bytes are embedded "
    "unchanged."
)

FIELDS: list[tuple[str, str, str]] = [
    (
        "id",
        "string",
        "stable id: task + position in the release file (`ap-0000`); "
        "learning rows keep the id of their benchmark row",
    ),
    ("image", "Image", "the Visual Genome JPEG (original bytes)"),
    ("image_id", "string", "the Visual Genome image id"),
    (
        "captions",
        "list of string",
        "release order True1, True2, False1, False2 "
        "(train rows of `*_learning`: one true, one false)",
    ),
    ("labels", "list of int8", "1 = true, 0 = false, one per caption"),
    (
        "caption_types",
        "list of string",
        "AP: TA, TP, FA, FP (true/false, active/passive); "
        "CO, RC: TP1, TP2, FP1, FP2 (true/false, person 1/2)",
    ),
    ("predicate", "string", "the verb (AP only; empty otherwise)"),
    (
        "grammar_scores",
        "list of float64 or null",
        "GRUEN acceptability score per caption, as released (CO and RC; null for AP)",
    ),
]


def card_body(tables: Tables, info: Info, provenance: str | None = None) -> str:
    """Markdown body: tasks, provenance, fields, splits, statistics, loading, licence, citation."""
    parts = [
        f"# BLA: a benchmark of Basic Language Abilities\n\nDataset version {DATASET_VERSION}. "
        + INTRO
        + "\n",
        _tasks_section(tables),
        *([f"## Provenance\n\n{provenance.strip()}\n"] if provenance else []),
        _fields_section(),
        _splits_section(info),
        _statistics_section(tables, released=provenance is None),
        _loading_section(),
        "## Licence\n\n" + LICENCE + "\n",
        "## Citation\n\n```bibtex\n" + CITATION + "```\n",
    ]
    return "\n".join(parts)


def _tasks_section(tables: Tables) -> str:
    lines = ["## Tasks\n"]
    for task in TASKS.values():
        config = task.config
        if not tables.get(config, {}).get("test"):
            continue
        dp = tables[config]["test"][0]
        lines.append(f"### {task.label}: config `{config}`\n")
        lines.append(f"Example `{dp.id}` (Visual Genome image {dp.image_id}):\n")
        for caption, label, kind in zip(dp.captions, dp.labels, dp.caption_types, strict=True):
            lines.append(f"- {'true ' if label else 'false'} ({kind}): {caption}")
        lines.append("")
    return "\n".join(lines)


def _fields_section() -> str:
    rows = [[f"`{name}`", kind, text] for name, kind, text in FIELDS]
    return f"## Fields\n\n{markdown(Table('', ('field', 'type', 'content'), rows))}\n"


def _splits_section(info: Info) -> str:
    lines = [
        "## Configs and splits\n",
        "`<task>` configs hold the whole benchmark as split `test`. `<task>_learning` configs are "
        "the release's `finetune_random` splits (paper §6) for fine-tuning and in-context "
        "learning. `<task>_sentences` configs hold the `test` split again with one row per "
        "(image, sentence): the yes/no `question`, its `target` and the image as a `data:` URI "
        "(the tasks of `eval.yaml`, run by `inspect eval hf/<dataset>`).\n",
    ]
    rows = [
        [f"`{config}`", split, str(v["num_examples"]), f"{v['file_bytes']:,}"]
        for config, splits in info.items()
        for split, v in splits.items()
    ]
    columns = ("config", "split", "rows", "parquet bytes")
    lines.append(markdown(Table("", columns, rows), right=(2, 3)))
    learning_validation = {
        c: s["validation"]["num_examples"] for c, s in info.items() if c.endswith(LEARNING_SUFFIX)
    }
    if any(n != 100 for n in learning_validation.values()):
        lines.append(
            "\nThe paper describes 100 validation datapoints per task; the release's `valid.json` "
            "files hold "
            + ", ".join(f"{n} ({c})" for c, n in learning_validation.items())
            + ". This repo keeps the release as it is."
        )
    return "\n".join(lines) + "\n"


def _fmt(value: float | None, digits: int = 2) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


STATISTICS_COLUMNS = (
    "task", "rows", "paper", "vocabulary", "paper", "mean sentence length", "thesis",
    "mean grammar score", "thesis",
)  # fmt: skip
"""The columns of the card's statistics table (ours beside the paper's and the thesis')."""


def _statistics_section(tables: Tables, released: bool = True) -> str:
    lines = [
        "## Statistics\n",
        "Computed from the data of the `test` split of each task config (vocabulary: distinct "
        "lower-cased whitespace tokens; sentence length in words). The paper's Table 1 gives "
        "datapoints and vocabulary; the sentence length and GRUEN columns are from the thesis "
        "(Table 4.6), which describes earlier, larger CO and RC sets. The paper does not say how "
        "it tokenised, so vocabulary sizes differ.\n",
    ]
    rows = []
    for config in (t.config for t in TASKS.values()):
        if not tables.get(config, {}).get("test"):
            continue
        st = statistics(tables[config]["test"])
        paper, thesis = PAPER_TABLE1.get(config, {}), THESIS_TABLE46.get(config, {})
        rows.append(
            [config, str(st["rows"]), _fmt(paper.get("datapoints"), 0), str(st["vocab"])]
            + [_fmt(paper.get("vocab"), 0), _fmt(st["sentence_length"])]
            + [_fmt(thesis.get("sentence_length")), _fmt(st["grammar"], 3)]
            + [_fmt(thesis.get("grammar"))]
        )
    lines.append(markdown(Table("", STATISTICS_COLUMNS, rows), right=range(1, 9)))
    if released:
        lines.append("\nThe release carries no grammar scores for AP (n/a).")
    return "\n".join(lines) + "\n"


def _loading_section() -> str:
    return f"""## Loading

```python
from datasets import load_dataset

bla = load_dataset("{hub_ids.DATASET}", "coordination", split="test")  # from the Hub
bla = load_dataset("bla_dataset", "coordination", split="test")        # from a local build
row = bla[0]   # row["image"] is a PIL image; row["captions"], row["labels"]
```

A local build: `python -m builders release --source BLA_Benchmark.zip --out bla_dataset`.
`manifest.json` lists the dataset version and the sha256 of every file of this repo and of the
release files it was built from.
"""
