"""A resumed run writes the bytes of an uninterrupted one: whatever prefix of ``scores.jsonl``
an interruption left (the state a killed run leaves: its records so far, no ``results.json``),
``--resume`` completes it to the very file of a run that was never stopped."""

from __future__ import annotations

from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.runs import RESULTS_FILE, SCORES_FILE

pytestmark = pytest.mark.usefixtures("one_thread")


def _argv(tiny_clip: Path, data: Path, out: Path, *more: str) -> list[str]:
    return [
        "--model", str(tiny_clip), "--data", str(data), "--output", str(out), "--tasks", "ap",
        "co", "--limit", "7", "--device", "cpu", "--images-per-batch", "3", "--batch-size", "5",
        "--control", "shuffled", *more,
    ]  # fmt: skip


def test_resume_after_any_interruption_is_byte_identical(tiny_clip, built_dataset, tmp_path):
    lines = _resume_after(
        lambda out, *more: _argv(tiny_clip, built_dataset, out, *more), tmp_path, (1, 4, 8, 13)
    )  # inside a batch and at its end, early and late
    assert lines == 14


def _resume_after(argv, root: Path, cuts: tuple[int, ...]) -> int:
    """Run ``argv(out)`` uninterrupted, then, for each cut, a run stopped after that many records
    (no results.json) resumed with ``--resume``: its scores.jsonl must be the uninterrupted bytes.
    Returns the number of records."""
    whole = root / "whole"
    assert bla_eval(argv(whole)) == 0
    expected = (whole / SCORES_FILE).read_bytes()
    lines = expected.splitlines(keepends=True)
    for kept in cuts:
        out = root / f"stopped-{kept}"
        assert bla_eval(argv(out)) == 0
        (out / RESULTS_FILE).unlink()
        (out / SCORES_FILE).write_bytes(b"".join(lines[:kept]))
        assert bla_eval(argv(out, "--resume")) == 0
        assert (out / SCORES_FILE).read_bytes() == expected, f"resumed after {kept} records"
    return len(lines)


@pytest.fixture(scope="module")
def tiny_text(built_dataset: Path, tiny_model) -> Path:
    """A tiny random Llama of the text kind, its tokenizer trained on the benchmark's sentences."""
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.testing.generative import build_llama_text

    texts = [c for item in load_bla(str(built_dataset)) for c in item.captions]
    return tiny_model("llama_text", texts, build_llama_text)


def _text_argv(model: Path, data: Path, out: Path, *more: str) -> list[str]:
    return [
        "--model", str(model), "--kind", "text", "--data", str(data), "--output", str(out),
        "--tasks", "co", "rc", "--limit", "6", "--device", "cpu", "--images-per-batch", "2",
        "--batch-size", "3", *more,
    ]  # fmt: skip


def test_a_resumed_text_run_is_byte_identical(tiny_text, built_dataset, tmp_path):
    """The text kind's cache is filled a batch of texts at a time: a resume plans the kept
    batches without scoring them and still writes the uninterrupted bytes."""
    lines = _resume_after(
        lambda out, *more: _text_argv(tiny_text, built_dataset, out, *more), tmp_path, (3, 6)
    )
    assert lines > 6


def test_a_resume_scores_only_the_texts_of_pending_items(tiny_text, built_dataset):
    """The kept half of a run is never scored again: the text kind computes the texts of the
    pending items' batches only, and the progress counts the kept items as done at once."""
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.scorers import LoadOptions, load_scorer
    from bla_eval.scoring import score_items

    items = load_bla(str(built_dataset), ["co"], limit=8)
    calls: list[tuple[int, int]] = []
    scorer = load_scorer(str(tiny_text), "text", 4, LoadOptions(device="cpu"))
    kept, pending = items[:4], items[4:]
    assert not {i.images[0].key for i in kept} & {i.images[0].key for i in pending}
    score_items(
        scorer,
        items,
        lambda *_: None,
        images_per_batch=2,
        progress=lambda done, total, _: calls.append((done, total)),
        pending=pending,
    )
    computed = {text for _, text in scorer._cache[False].values}
    assert computed == {c for item in pending for c in item.captions}
    assert calls[0] == (4, 8) and calls[-1] == (8, 8)


def test_a_resume_takes_the_kept_texts_scores_from_their_records(tiny_text, built_dataset):
    """The text kind's scores of the kept items are their records' (a text scores the same
    against every image): a pending sentence that a kept batch holds too is not computed again,
    and every pending score is the uninterrupted run's."""
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.scorers import LoadOptions, load_scorer
    from bla_eval.scoring import group_by_image, image_batches, score_items

    items = load_bla(str(built_dataset), ["ap"], limit=30)  # sentences repeat across images

    def run(pending, kept=None):
        scorer = load_scorer(str(tiny_text), "text", 3, LoadOptions(device="cpu"))
        cache, computed = scorer._cache[False], set()
        compute = cache.compute  # the model's batch function, each text it is given counted
        cache.compute = lambda keys: computed.update(t for _, t in keys) or compute(keys)
        found = {}
        score_items(
            scorer, items, lambda item, scores, *_: found.setdefault((item.task, item.id), scores),
            images_per_batch=2, pending=pending, kept=kept,
        )  # fmt: skip
        return found, computed

    whole, _ = run(items)
    batches = image_batches(group_by_image(items), 2)
    first = {k for batch in batches[: len(batches) // 2] for k in batch}
    kept = [i for i in items if all(r.key in first for r in i.images)]  # the first half
    pending = [i for i in items if i not in kept]
    assert {c for i in kept for c in i.captions} & {c for i in pending for c in i.captions}
    by_key = {(i.task, i.id): whole[(i.task, i.id)] for i in kept}
    resumed, computed = run(pending, lambda item: by_key.get((item.task, item.id)))
    assert resumed == {k: v for k, v in whole.items() if k not in by_key}
    asked = {c for item in pending for c in item.captions}
    unasked = {c for item in kept for c in item.captions} - asked
    assert computed and not computed & unasked  # no kept batch is computed again
    assert computed <= asked
