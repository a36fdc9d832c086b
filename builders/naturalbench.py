"""NaturalBench -> dataset repo: ``python -m builders naturalbench --source DIR --out DIR``.

Reads a download of the authors' Hub release BaiqiL/NaturalBench (Apache-2.0): parquet files
``data/train-*.parquet`` with the columns ``Index``, ``Image_0``, ``Image_1`` (embedded images),
``Question_0``, ``Question_1``, the answers ``Image_<i>_Question_<q>``, ``Question Type``
(``Question_Type`` in some revisions; ``yes_no`` or ``multiple_choice``) and ``Source``. One
config per question type (``yes_no``, ``multiple_choice``), split ``test``; ``answers[i][q]`` is
the answer to question ``q`` on image ``i``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from bla_eval.cli_common import add_field_options

from bla_metric.neighbours.naturalbench import naturalbench_gold
from builders.manifest import sha256_file
from builders.neighbours import (
    BuildError,
    ConfigRows,
    RepoText,
    UniqueIds,
    build_repo,
    embedded_image,
    input_path,
    item_id,
    out_folder,
    parquet_rows,
    run_cli,
    text_field,
)

BUILDER = "python -m builders naturalbench"
QUESTION_TYPES = {"yes_no": "yes/no questions", "multiple_choice": "multiple-choice questions"}
"""The configs: NaturalBench's question types."""
TYPE_COLUMNS = ("Question Type", "Question_Type")
REQUIRED = (
    "Index",
    "Image_0",
    "Image_1",
    "Question_0",
    "Question_1",
    "Image_0_Question_0",
    "Image_1_Question_0",
    "Image_0_Question_1",
    "Image_1_Question_1",
)

CITATION = r"""@inproceedings{li2024naturalbench,
    title = {NaturalBench: Evaluating Vision-Language Models on Natural Adversarial Samples},
    author = {Li, Baiqi and Lin, Zhiqiu and Peng, Wenxuan and Nyandwi, Jean de Dieu and Jiang,
              Daniel and Ma, Zixian and Khanuja, Simran and Krishna, Ranjay and Neubig, Graham
              and Ramanan, Deva},
    booktitle = {Advances in Neural Information Processing Systems (Datasets and Benchmarks)},
    year = {2024},
}"""

TEXT = RepoText(
    benchmark="naturalbench",
    pretty_name="NaturalBench",
    intro=(
        "NaturalBench (Li et al., NeurIPS 2024): two natural images and two questions whose "
        "answers differ between the images. Converted from the authors' Hub release "
        "BaiqiL/NaturalBench."
    ),
    licence="Apache-2.0 (BaiqiL/NaturalBench).",
    licenses=("apache-2.0",),
    citation=CITATION,
    config_titles=QUESTION_TYPES,
)


def build_naturalbench(source: Path, out: Path) -> tuple[dict, dict[str, ConfigRows]]:
    """Build the NaturalBench repo at ``out`` from the parquet files under ``source``."""
    source = Path(source)
    files = sorted(source.glob("data/*.parquet")) or sorted(source.glob("*.parquet"))
    if not files:
        raise BuildError(f"--source {source} holds no data/*.parquet")
    configs = {config: ConfigRows() for config in QUESTION_TYPES}
    hashes: dict[str, str] = {}
    ids = UniqueIds()
    for path in files:
        rows = parquet_rows(path, REQUIRED)
        kind = next((c for c in TYPE_COLUMNS if c in rows[0]), None)
        if kind is None:
            raise BuildError(f"{path} lacks the column(s) {TYPE_COLUMNS[0]}")
        for number, row in enumerate(rows):
            where = f"{path} row {number}"
            key = ids.add(item_id(row["Index"], where), where)
            where = f"{path} Index {key}"
            configs[question_type(row, kind, where)].rows.append(row_of(row, key, kind, where))
        hashes[f"data/{path.name}"] = sha256_file(path)
    return build_repo(out, TEXT, configs, hashes, BUILDER), configs


def question_type(row: dict, column: str, where: str) -> str:
    """The row's question type, one of :data:`QUESTION_TYPES`."""
    kind = row[column]
    if not isinstance(kind, str) or kind not in QUESTION_TYPES:
        raise BuildError(f"{where}: unknown question type {kind!r}")
    return kind


def row_of(row: dict, key: str, kind: str, where: str) -> dict:
    """The dataset row of one NaturalBench item, every value typed as the features say."""
    images = [embedded_image(row[c], where, c) for c in ("Image_0", "Image_1")]
    for image, column in zip(images, ("Image_0", "Image_1"), strict=True):
        image["path"] = image["path"] or column
    asked = row[kind]
    answers = [[answer(row, i, q, asked, where) for q in (0, 1)] for i in (0, 1)]
    return {
        "id": key,
        "image_0": images[0],
        "image_1": images[1],
        "question_0": text_field(row, "Question_0", where),
        "question_1": text_field(row, "Question_1", where),
        "answers": answers,
        "question_type": asked,
        "source": text_field(row, "Source", where, required=False),
    }


def answer(row: dict, image: int, question: int, question_type: str, where: str) -> str:
    """The answer to ``question`` on ``image``, a text the benchmark reads as its question
    type's gold answer (``Yes`` / ``No``, ``A`` / ``B``: ``naturalbench_gold``)."""
    column = f"Image_{image}_Question_{question}"
    value = text_field(row, column, where)
    try:
        naturalbench_gold(value, question_type)
    except ValueError as err:
        raise BuildError(f"{where}: {column}: {err}") from None
    return value


@dataclass(frozen=True, kw_only=True)
class NaturalBenchOptions:
    """The options of ``python -m builders naturalbench``."""

    source: Path = input_path(
        "folder of the Hub release BaiqiL/NaturalBench (data/train-*.parquet)"
    )
    out: Path = out_folder()


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``naturalbench``: a download of BaiqiL/NaturalBench -> dataset repo."""
    p = sub.add_parser(
        "naturalbench", help="build a dataset repo from a download of BaiqiL/NaturalBench"
    )
    add_field_options(p, NaturalBenchOptions)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    return run_cli(build_naturalbench, "NaturalBench", (args.source, args.out), args.out, BUILDER)
