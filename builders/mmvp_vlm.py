"""MMVP-VLM -> dataset repo: ``python -m builders mmvp-vlm --source DIR --out DIR``.

Reads a download of the authors' Hub repo MMVP/MMVP_VLM (MIT): ``Questions.csv`` (a header, then
rows ``question id, type, statement``, two consecutive rows a pair) and ``MLLM_VLM
Images/<type>/<question id>.jpg``, as upstream ``scripts/evaluate_vlm.py`` reads them. The odd
question id's statement is true of its own image, the even one's of the other; each pair's
visual pattern is upstream's: the ``k``-th pair belongs to ``MMVP_PATTERNS[k // 15]``. One config
``mmvp_vlm``, split ``test``; ``caption_0`` / ``caption_1`` are the statements as written (the
benchmark prefixes ``a photo of``, as upstream does).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from bla_eval.cli_common import add_field_options

from bla_metric.neighbours.mmvp_vlm import MMVP_PATTERNS
from builders.neighbours import (
    BuildError,
    ConfigRows,
    ImageStore,
    RepoText,
    UniqueIds,
    build_repo,
    csv_rows,
    input_path,
    inside,
    out_folder,
    run_cli,
    sha256_text,
)

BUILDER = "python -m builders mmvp-vlm"
CONFIG = "mmvp_vlm"
IMAGES = "MLLM_VLM Images"
PAIRS_PER_PATTERN = 15

CITATION = r"""@inproceedings{tong2024eyes,
    title = {Eyes Wide Shut? Exploring the Visual Shortcomings of Multimodal LLMs},
    author = {Tong, Shengbang and Liu, Zhuang and Zhai, Yuexiang and Ma, Yi and LeCun, Yann and
              Xie, Saining},
    booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern
                 Recognition (CVPR)},
    year = {2024},
}"""

TEXT = RepoText(
    benchmark="mmvp-vlm",
    pretty_name="MMVP-VLM",
    intro=(
        "MMVP-VLM (Tong et al., CVPR 2024): 135 pairs of CLIP-blind images, each with one "
        "statement per image, in nine visual patterns of 15 pairs. Converted from the authors' "
        "Hub repo MMVP/MMVP_VLM."
    ),
    licence="MIT (MMVP/MMVP_VLM).",
    licenses=("mit",),
    citation=CITATION,
    config_titles={CONFIG: "all pairs"},
)


def read_questions(path: Path) -> list[tuple[int, str, str]]:
    """(question id, type, statement) of every row after the header; errors name the line."""
    questions = []
    ids = UniqueIds()
    rows = csv_rows(path)
    next(rows, None)  # the header
    for number, row in rows:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != 3:
            raise BuildError(f"{path} line {number}: expected 3 columns (id, type, statement)")
        if not (row[0].isascii() and row[0].isdigit() and len(row[0]) <= 9):
            raise BuildError(f"{path} line {number}: question id {row[0]!r} is no integer")
        qid = int(ids.add(str(int(row[0])), f"{path} line {number}"))
        if not row[2].strip():
            raise BuildError(f"{path} line {number}: empty statement")
        questions.append((qid, row[1], row[2]))
    if not questions or len(questions) % 2:
        raise BuildError(f"{path}: expected an even, non-zero number of statements (pairs)")
    return questions


def build_mmvp_vlm(source: Path, out: Path) -> tuple[dict, dict[str, ConfigRows]]:
    """Build the MMVP-VLM repo at ``out`` from a download of MMVP/MMVP_VLM."""
    source = Path(source)
    questions_file = source / "Questions.csv"
    if not questions_file.is_file():
        raise BuildError(f"--source {source} holds no Questions.csv")
    questions = read_questions(questions_file)
    if len(questions) // 2 > PAIRS_PER_PATTERN * len(MMVP_PATTERNS):
        raise BuildError(f"{questions_file}: more pairs than the nine patterns of 15 hold")
    store = ImageStore()
    part = ConfigRows()
    for k in range(len(questions) // 2):
        (id_0, kind, text_0), (id_1, _, text_1) = questions[2 * k], questions[2 * k + 1]
        if id_0 % 2 != 1 or id_1 % 2 != 0:
            raise BuildError(
                f"{questions_file}: pair {k + 1} is not (odd id, even id): {id_0}, {id_1}"
            )
        where = f"{questions_file} pair {k + 1}"
        paths = [inside(source / IMAGES, f"{kind}/{qid}.jpg", where) for qid in (id_0, id_1)]
        if not all(p.is_file() for p in paths):
            part.missing_images += 1
            if len(part.missing_examples) < 3:
                part.missing_examples.append(str(next(p for p in paths if not p.is_file())))
            continue
        images = [{"bytes": store.get(p, where, f"{kind}/{p.name}"), "path": p.name} for p in paths]
        part.rows.append(
            {
                "id": str(k),
                "image_0": images[0],
                "image_1": images[1],
                "caption_0": text_0,
                "caption_1": text_1,
                "pattern": MMVP_PATTERNS[k // PAIRS_PER_PATTERN],
                "question_ids": [str(id_0), str(id_1)],
            }
        )
    configs = {CONFIG: part}
    hashes = {"Questions.csv": sha256_text(questions_file)}
    hashes.update({f"images/{k}": v for k, v in store.read.items()})
    return build_repo(out, TEXT, configs, hashes, BUILDER), configs


@dataclass(frozen=True, kw_only=True)
class MmvpVlmOptions:
    """The options of ``python -m builders mmvp-vlm``."""

    source: Path = input_path(
        "folder of the Hub repo MMVP/MMVP_VLM (Questions.csv, 'MLLM_VLM Images/')"
    )
    out: Path = out_folder()


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``mmvp-vlm``: a download of MMVP/MMVP_VLM -> dataset repo."""
    p = sub.add_parser("mmvp-vlm", help="build a dataset repo from a download of MMVP/MMVP_VLM")
    add_field_options(p, MmvpVlmOptions)
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    return run_cli(build_mmvp_vlm, "MMVP-VLM", (args.source, args.out), args.out, BUILDER)
