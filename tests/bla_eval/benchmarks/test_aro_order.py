"""ARO's COCO-Order and Flickr30k-Order: small copies of the Hub draws MTEB scores
(``gowitheflow/ARO-COCO-order``, ``gowitheflow/ARO-Flickr-Order``: parquet with the image embedded
in ``images``, ``correct_caption`` and ``hard_text_1`` ... ``hard_text_4``), converted by
``python -m builders aro`` and scored by a tiny CLIP and a text-only model; the accuracy is
recomputed here from scores.jsonl (the caption strictly above its four perturbations)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.bla_eval.benchmarks.runs import records_by_task, run_bla_eval, strictly_above

pytestmark = pytest.mark.usefixtures("one_thread")

CAPTIONS = [
    "a dog sits on a red couch",
    "two cats sleep under a wooden table",
    "a man rides a horse near the river",
]


def _shuffles(caption: str) -> list[str]:
    """Four word-order perturbations of ``caption`` (fixed, as the Hub draw is)."""
    words = caption.split()
    return [
        " ".join(words[::-1]),
        " ".join(words[1:] + words[:1]),
        " ".join(words[2:] + words[:2]),
        " ".join(sorted(words)),
    ]


def _hub_download(root: Path, name: str, count: int) -> Path:
    """A download of one Order draw, in its Hub layout (``data/test-*.parquet``)."""
    import datasets
    from PIL import Image

    def jpeg(k: int) -> dict:
        buffer = io.BytesIO()
        Image.new("RGB", (36 + k, 30), (40 * k, 200 - 40 * k, 90)).save(buffer, format="JPEG")
        return {"bytes": buffer.getvalue(), "path": f"{k}.jpg"}

    rows: dict[str, list] = {"images": [], "correct_caption": []}
    rows |= {f"hard_text_{k}": [] for k in range(1, 5)}
    for k in range(count):
        caption = CAPTIONS[k % len(CAPTIONS)]
        rows["images"].append(jpeg(k))
        rows["correct_caption"].append(caption)
        for j, text in enumerate(_shuffles(caption), start=1):
            rows[f"hard_text_{j}"].append(text)
    features = datasets.Features(
        {"images": datasets.Image(), **{c: datasets.Value("string") for c in rows if c != "images"}}
    )
    folder = root / name
    (folder / "data").mkdir(parents=True)
    datasets.Dataset.from_dict(rows, features=features).to_parquet(
        folder / "data" / "test-00000-of-00001.parquet"
    )
    return folder


@pytest.fixture(scope="module")
def order_repo(tmp_path_factory) -> Path:
    from builders.__main__ import main as builders_main

    root = tmp_path_factory.mktemp("aro_order")
    coco, flickr = _hub_download(root, "coco", 3), _hub_download(root, "flickr", 2)
    out = root / "repo"
    argv = ["aro", "--coco-order", str(coco), "--flickr30k-order", str(flickr), "--out", str(out)]
    assert builders_main(argv) == 0
    return out


def _texts() -> list[str]:
    return sorted({t for c in CAPTIONS for t in (c, *_shuffles(c))} | {"yes", "no"})


def test_the_builder_keeps_the_draw_as_five_captions_the_first_true(order_repo) -> None:
    import pyarrow.parquet as pq

    table = pq.read_table(next((order_repo / "data" / "coco_order").glob("*.parquet")))
    rows = table.to_pylist()
    assert [r["id"] for r in rows] == ["order-0", "order-1", "order-2"]
    assert rows[1]["captions"] == [CAPTIONS[1], *_shuffles(CAPTIONS[1])]
    assert rows[1]["labels"] == [1, 0, 0, 0, 0] and rows[1]["group"] == "order"
    assert rows[0]["image"]["bytes"][:2] == b"\xff\xd8"  # the JPEG as the draw embeds it
    assert (order_repo / "data" / "flickr30k_order").is_dir()
    manifest = json.loads((order_repo / "manifest.json").read_text())
    assert "coco_order/test-00000-of-00001.parquet" in json.dumps(manifest)


def test_a_contrastive_and_a_text_only_model_get_the_order_accuracy(
    order_repo, tiny_model, tmp_path
) -> None:
    from bla_eval.testing.generative import build_llama_text

    clip = tiny_model("clip", _texts())
    text = tiny_model("llama_text", _texts(), build_llama_text)
    for model, extra in ((clip, ()), (text, ("--kind", "text"))):
        out = tmp_path / f"run-{model.name}"
        tasks = ("--tasks", "coco_order", "flickr30k_order")
        results = run_bla_eval(model, order_repo, out, "aro", *tasks, *extra)
        records = records_by_task(out)
        for task, n in (("coco_order", 3), ("flickr30k_order", 2)):
            assert len(records[task]) == n and all(len(r["scores"]) == 5 for r in records[task])
            right = [strictly_above(r["scores"], r["labels"]) for r in records[task]]
            macro = results["tasks"][task]["macro"]
            assert macro["accuracy"] == pytest.approx(sum(right) / n)
            assert macro["macro_accuracy"] == macro["accuracy"] and macro["groups"] == 1


@pytest.mark.parametrize(
    ("drop", "args", "message"),
    [
        ("hard_text_4", (), "lacks the column(s) hard_text_4"),
        (None, ("--annotations", "{root}"), "--annotations and --images go together"),
        (None, ("--coco-order", "{root}/nothing"), "holds no data/*.parquet"),
    ],
)
def test_a_bad_order_source_is_one_line_and_writes_nothing(
    drop, args, message, tmp_path, capsys
) -> None:
    import pyarrow.parquet as pq

    from builders.__main__ import main as builders_main

    coco = _hub_download(tmp_path, "coco", 1)
    if drop:
        path = next((coco / "data").glob("*.parquet"))
        pq.write_table(pq.read_table(path).drop_columns([drop]), path)
        args = ("--coco-order", str(coco))
    out = tmp_path / "out"
    argv = ["aro", *(a.format(root=tmp_path) for a in args), "--out", str(out)]
    capsys.readouterr()  # the download's own progress bars
    assert builders_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not out.exists()
