"""What the builders of VALSE, VL-CheckList and Winoground share: their features (defined once,
here), image look-up with missing-image counts, and writing a dataset repo (parquet per config,
card, manifest) atomically and reproducibly through :mod:`builders.io` and
:mod:`builders.manifest`.

Every row carries its image(s) as the original file bytes. A config's items whose image the user
does not have are left out and counted; the card and the manifest say how many per config.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import yaml
from datasets.splits import SplitDict, SplitInfo

from builders import io
from builders.card import size_category
from builders.io import dump_json, staged_folder, write_text
from builders.manifest import make_manifest
from builders.validate import check_decodable

NEIGHBOURS_VERSION = "1.0.0"
"""Version of the layout of these dataset repos (bump on any change to content or layout)."""

SPLIT = "test"
"""Every config holds its whole benchmark part as split ``test``."""

_PAIR = {
    "id": datasets.Value("string"),
    "image": datasets.Image(),
    "captions": datasets.Sequence(datasets.Value("string")),
    "labels": datasets.Sequence(datasets.Value("int8")),
    "caption_types": datasets.Sequence(datasets.Value("string")),
}

FEATURES: dict[str, datasets.Features] = {
    "valse": datasets.Features(
        {
            **_PAIR,
            "image_file": datasets.Value("string"),
            "instrument": datasets.Value("string"),
            "dataset": datasets.Value("string"),
            "linguistic_phenomena": datasets.Value("string"),
            "classes": datasets.Value("string"),
            "classes_foil": datasets.Value("string"),
            "mturk_caption": datasets.Value("int8"),
            "mturk_foil": datasets.Value("int8"),
            "mturk_other": datasets.Value("int8"),
            "validated": datasets.Value("bool"),
            "metadata": datasets.Value("string"),
        }
    ),
    "vl-checklist": datasets.Features(
        {
            **_PAIR,
            "image_path": datasets.Value("string"),
            "corpus": datasets.Value("string"),
            "source": datasets.Value("string"),
        }
    ),
    "winoground": datasets.Features(
        {
            "id": datasets.Value("string"),
            "image_0": datasets.Image(),
            "image_1": datasets.Image(),
            "caption_0": datasets.Value("string"),
            "caption_1": datasets.Value("string"),
            "tag": datasets.Value("string"),
            "secondary_tag": datasets.Value("string"),
            "num_main_preds": datasets.Value("int32"),
            "collapsed_tag": datasets.Value("string"),
        }
    ),
    "sugarcrepe": datasets.Features({**_PAIR, "filename": datasets.Value("string")}),
    "sugarcrepe-pp": datasets.Features({**_PAIR, "filename": datasets.Value("string")}),
    "aro": datasets.Features(
        {
            **_PAIR,
            "image_path": datasets.Value("string"),
            "group": datasets.Value("string"),
            "bbox": datasets.Sequence(datasets.Value("float32")),
        }
    ),
    "mmvp-vlm": datasets.Features(
        {
            "id": datasets.Value("string"),
            "image_0": datasets.Image(),
            "image_1": datasets.Image(),
            "caption_0": datasets.Value("string"),
            "caption_1": datasets.Value("string"),
            "pattern": datasets.Value("string"),
            "question_ids": datasets.Sequence(datasets.Value("string")),
        }
    ),
    "naturalbench": datasets.Features(
        {
            "id": datasets.Value("string"),
            "image_0": datasets.Image(),
            "image_1": datasets.Image(),
            "question_0": datasets.Value("string"),
            "question_1": datasets.Value("string"),
            "answers": datasets.Sequence(datasets.Sequence(datasets.Value("string"))),
            "question_type": datasets.Value("string"),
            "source": datasets.Value("string"),
        }
    ),
}
"""Row features per benchmark. VALSE and VL-CheckList rows are one image with its texts in the
order true, false (``captions``/``labels``/``caption_types``: caption, foil / POS, NEG).
Winoground rows keep the Hub release's columns (two images, two captions, tags). SugarCrepe(++)
and ARO rows are one image with its texts, the true ones first (SugarCrepe++: two positives, then
the negative; ARO: the image already cropped to the relation's box, ``group`` its relation or
attribute pair). MMVP-VLM rows are a pair of images with statement ``k`` true of image ``k``;
NaturalBench rows two images, two questions and ``answers[image][question]`` ("Yes"/"No")."""


class BuildError(ValueError):
    """A bad input file or record; the message is one line naming it."""


@dataclass
class ConfigRows:
    """One config: its rows, how many items were left out, and why."""

    rows: list[dict] = field(default_factory=list)
    missing_images: int = 0
    left_out: dict[str, int] = field(default_factory=dict)
    """Other reasons items were left out (e.g. VALSE's ``not validated``): reason -> count."""
    missing_examples: list[str] = field(default_factory=list)
    """The first few missing image paths, for the report."""


class ImageStore:
    """Image bytes by path, each file read and checked to decode once."""

    def __init__(self) -> None:
        self._cache: dict[Path, bytes] = {}
        self.read: dict[str, str] = {}
        """image name -> sha256 of every image read (the manifest's ``source_files``)."""

    def get(self, path: Path, where: str, name: str | None = None) -> bytes:
        """The bytes of ``path``; ``name`` (default: the file name) keys it in :attr:`read`,
        so the manifest never holds the machine's own folders."""
        if path not in self._cache:
            data = path.read_bytes()
            check_decodable(data, f"{where}: {path}")
            self._cache[path] = data
            self.read[name or path.name] = hashlib.sha256(data).hexdigest()
        return self._cache[path]


def first_existing(candidates: Iterable[Path]) -> Path | None:
    """The first candidate path that is a file."""
    for path in candidates:
        if path.is_file():
            return path
    return None


def read_text(path: Path) -> str:
    """A neighbour's annotation file as text; an unreadable or non-UTF-8 file is named."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise BuildError(f"{path}: cannot be read ({err.strerror})") from err
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BuildError(f"{path}: not UTF-8 text (byte {err.start + 1})") from None


def read_json(path: Path) -> object:
    """A JSON file; a parse error names the file and the position."""
    try:
        return json.loads(read_text(path))
    except json.JSONDecodeError as err:
        raise BuildError(f"{path}: not valid JSON ({err})") from err


def sha256_text(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def data_file(config: str) -> str:
    """Path of a config's parquet file inside the dataset repo (split ``test``)."""
    return io.data_file(config, SPLIT)


@dataclass(frozen=True)
class RepoText:
    """The card text of one benchmark: its name, what it is, licence, citation, loading hint."""

    benchmark: str
    pretty_name: str
    intro: str
    licence: str
    licenses: tuple[str, ...]
    citation: str
    config_titles: dict[str, str] = field(default_factory=dict)


def build_repo(
    out: Path,
    text: RepoText,
    configs: dict[str, ConfigRows],
    source_hashes: dict[str, str],
    builder: str,
) -> dict:
    """Write ``configs`` as a dataset repo at ``out`` (staged, then swapped into place).

    Configs that hold no row are not written (a parquet file with no rows is of no use) but are
    listed in the card and the manifest with their counts. Returns the manifest.
    """
    features = FEATURES[text.benchmark]
    if not any(c.rows for c in configs.values()):
        missing = sum(c.missing_images for c in configs.values())
        raise BuildError(
            f"no {text.benchmark} item has its image ({missing} missing): check --images"
        )
    with staged_folder(Path(out), builder) as stage:  # replaces only a build of `builder`
        info: dict[str, dict[str, dict[str, int]]] = {}
        for config, part in configs.items():
            if not part.rows:
                continue
            path = stage / data_file(config)
            num_bytes = io.write_parquet(part.rows, path, features)
            info[config] = {
                SPLIT: {
                    "num_examples": len(part.rows),
                    "num_bytes": num_bytes,
                    "file_bytes": path.stat().st_size,
                }
            }
        write_text(stage / "README.md", render_card(text, configs, info))
        left_out = {
            config: {"missing_images": part.missing_images, **part.left_out}
            for config, part in configs.items()
        }
        manifest = make_manifest(
            stage,
            info,
            source_hashes,
            builder=builder,
            extra={"benchmark": text.benchmark, "left_out": left_out},
        )
        manifest["dataset_version"] = NEIGHBOURS_VERSION  # this layout's version, not BLA's
        write_text(stage / "manifest.json", dump_json(manifest))
    return manifest


def render_card(text: RepoText, configs: dict[str, ConfigRows], info: dict) -> str:
    """README.md: YAML header (configs, features, split sizes), then counts per config."""
    header = {
        "pretty_name": text.pretty_name,
        "language": ["en"],
        "license": list(text.licenses),
        "task_categories": ["image-text-to-text", "zero-shot-classification"],
        "tags": ["vision-language", "benchmark", "image-text-matching"],
        "size_categories": [size_category(sum(len(p.rows) for p in configs.values()))],
        "configs": [
            {
                "config_name": c,
                "data_files": [{"split": SPLIT, "path": data_file(c)}],
                **({"default": True} if i == 0 else {}),
            }
            for i, c in enumerate(info)
        ],
        "dataset_info": [_dataset_info(c, s, FEATURES[text.benchmark]) for c, s in info.items()],
    }
    reasons = sorted({r for part in configs.values() for r in part.left_out})
    head = ["config", "items held", "left out: image missing", *(f"left out: {r}" for r in reasons)]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for config, part in configs.items():
        title = text.config_titles.get(config)
        name = f"`{config}`" + (f" ({title})" if title else "")
        cells = [
            name,
            str(len(part.rows)),
            str(part.missing_images),
            *(str(part.left_out.get(r, 0)) for r in reasons),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    total = sum(len(p.rows) for p in configs.values())
    body = [
        f"# {text.pretty_name}\n",
        f"Layout version {NEIGHBOURS_VERSION}. {text.intro}\n",
        "## Configs\n",
        f"Each config holds its items as split `{SPLIT}`: {total} items in all. Items whose image "
        "was not found under the image folder(s) given to the builder are left out and counted; "
        "configs with no item left are not written.\n",
        "\n".join(lines) + "\n",
        "## Loading\n",
        "```python\nfrom datasets import load_dataset\n\n"
        f'ds = load_dataset("<this folder or Hub id>", "{next(iter(info))}", split="{SPLIT}")'
        "\n```\n",
        "`manifest.json` lists the sha256 of every file of this repo and of every source file "
        "read.\n",
        "## Licence\n\n" + text.licence + "\n",
        "## Citation\n\n```bibtex\n" + text.citation.strip() + "\n```\n",
    ]
    return (
        "---\n" + yaml.safe_dump(header, sort_keys=False, width=1000) + "---\n\n" + "\n".join(body)
    )


def _dataset_info(config: str, splits: dict, features: datasets.Features) -> dict:
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


def summary(benchmark: str, out: Path, configs: dict[str, ConfigRows]) -> str:
    """One line per config for the terminal: held and left-out counts."""
    lines = [f"wrote {benchmark} to {out}"]
    for config, part in configs.items():
        extra = "".join(f", {n} {reason}" for reason, n in part.left_out.items() if n)
        shown = ""
        if part.missing_examples:
            shown = f" (e.g. {part.missing_examples[0]})"
        lines.append(
            f"  {config}: {len(part.rows)} items, {part.missing_images} image(s) "
            f"missing{shown}{extra}"
        )
    return "\n".join(lines)


def run_cli(
    build: Callable[..., tuple[dict, dict[str, ConfigRows]]],
    benchmark: str,
    args: Sequence[object],
    out: Path,
    builder: str | None = None,
) -> int:
    """Call ``build(*args)`` and print the per-config summary (errors propagate: ``python -m
    builders`` turns them into one line and exit code 2). With ``builder``, an ``out`` that
    the build could not replace is refused before anything is read."""
    if builder is not None:
        io.check_replaceable(Path(out), builder)
    _, configs = build(*args)
    print(summary(benchmark, out, configs))
    return 0
