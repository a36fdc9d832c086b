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
from pathlib import Path

from builders.manifest import sha256_file
from builders.neighbours import (
    BuildError,
    ConfigRows,
    RepoText,
    build_repo,
    run_cli,
)
from builders.validate import check_decodable

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
    import pyarrow.parquet as pq

    source = Path(source)
    files = sorted(source.glob("data/*.parquet")) or sorted(source.glob("*.parquet"))
    if not files:
        raise BuildError(f"--source {source} holds no data/*.parquet")
    configs = {config: ConfigRows() for config in QUESTION_TYPES}
    hashes: dict[str, str] = {}
    for path in files:
        try:
            table = pq.read_table(path)
        except (OSError, ValueError) as err:
            raise BuildError(f"{path} is not a readable parquet file: {err}") from err
        names = table.column_names
        missing = [c for c in REQUIRED if c not in names]
        kind = next((c for c in TYPE_COLUMNS if c in names), None)
        if missing or kind is None:
            lacking = missing or ["Question Type"]
            raise BuildError(f"{path} lacks the column(s) {', '.join(lacking)}")
        for row in table.to_pylist():
            where = f"{path} Index {row['Index']}"
            images = []
            for column in ("Image_0", "Image_1"):
                image = row[column] or {}
                if not image.get("bytes"):
                    raise BuildError(f"{where}: {column} holds no image bytes")
                check_decodable(image["bytes"], f"{where}: {column}")
                images.append({"bytes": image["bytes"], "path": image.get("path") or column})
            kind_of_row = str(row[kind])
            if kind_of_row not in configs:
                raise BuildError(f"{where}: unknown question type {kind_of_row!r}")
            answers = [[str(row[f"Image_{i}_Question_{q}"]) for q in (0, 1)] for i in (0, 1)]
            configs[kind_of_row].rows.append(
                {
                    "id": str(row["Index"]),
                    "image_0": images[0],
                    "image_1": images[1],
                    "question_0": str(row["Question_0"]),
                    "question_1": str(row["Question_1"]),
                    "answers": answers,
                    "question_type": kind_of_row,
                    "source": str(row.get("Source") or ""),
                }
            )
        hashes[f"data/{path.name}"] = sha256_file(path)
    return build_repo(out, TEXT, configs, hashes, BUILDER), configs


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``naturalbench``: a download of BaiqiL/NaturalBench -> dataset repo."""
    p = sub.add_parser(
        "naturalbench", help="build a dataset repo from a download of BaiqiL/NaturalBench"
    )
    p.add_argument(
        "--source",
        type=Path,
        required=True,
        help="folder of the Hub release BaiqiL/NaturalBench (data/train-*.parquet)",
    )
    p.add_argument(
        "--out", type=Path, required=True, help="output folder, replaced only after a build"
    )
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    return run_cli(build_naturalbench, "NaturalBench", (args.source, args.out), args.out, BUILDER)
