"""The per-sentence configs (``<task>_sentences``): one row per (image, sentence) of a task's
``test`` split, shaped for harnesses that ask one yes/no question per row (the Hub's
``inspect eval hf/<dataset>`` tasks of ``eval.yaml``, ``builders/hub_eval.py``).

The image is a ``data:`` URI of the original JPEG bytes, repeated on the four rows of its
datapoint: a URL would name one Hub host and repo id at build time (a mirror, a copy under another
organisation or an offline server would send the model to the original), while a data URI is
read at the revision the harness loads. Parquet's dictionary encoding stores each repeated value
once per row group and zstd compresses the base64 text back to about the JPEG's size, so a
``_sentences`` file is about as large as its task's ``test`` file.
"""

from __future__ import annotations

from pathlib import Path

from bla_eval.api.messages import data_url
from bla_eval.protocols.templates import get_template

from bla_metric.answers import NO, YES
from bla_metric.schema import SENTENCE_ROWS, sentence_config
from builders.io import data_file, write_parquet
from builders.records import Datapoint

SPLIT = "test"
COMPRESSION = "zstd"


def sentence_rows(dp: Datapoint, image: bytes) -> list[dict]:
    """The four SENTENCE_ROWS rows of one datapoint, in release order."""
    uri = data_url(image)
    question = get_template().question
    return [
        {
            "id": f"{dp.id}-{position}",
            "datapoint_id": dp.id,
            "position": position,
            "image_id": dp.image_id,
            "sentence": sentence,
            "caption_type": kind,
            "label": int(label),
            "question": question.format(sentence=sentence),
            "target": YES if label else NO,
            "image": uri,
        }
        for position, (sentence, label, kind) in enumerate(
            zip(dp.captions, dp.labels, dp.caption_types, strict=True)
        )
    ]


def write_sentence_tables(
    stage: Path, tests: dict[str, list[Datapoint]], images: dict[str, bytes]
) -> dict[str, dict[str, dict[str, int]]]:
    """Write ``<config>_sentences/test`` for each task config of ``tests`` (config -> its test
    datapoints); return their example and byte counts (the shape of ``write_tables``)."""
    info: dict[str, dict[str, dict[str, int]]] = {}
    for config, points in tests.items():
        rows = [row for dp in points for row in sentence_rows(dp, images[dp.image_id])]
        name = sentence_config(config)
        path = stage / data_file(name, SPLIT)
        num_bytes = write_parquet(rows, path, SENTENCE_ROWS.features(), compression=COMPRESSION)
        info[name] = {
            SPLIT: {
                "num_examples": len(rows),
                "num_bytes": num_bytes,
                "file_bytes": path.stat().st_size,
            }
        }
    return info
