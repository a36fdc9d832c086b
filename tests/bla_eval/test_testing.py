"""``bla_eval.testing`` (random-weight models) is imported by the tests and the speed scripts only:
no command, no Space module, no builder and not the metric imports it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from bla_metric.likelihood import SCORES

REPO_ROOT = Path(__file__).resolve().parents[2]
SPACE = REPO_ROOT / "space"
ALLOWED = (SPACE / "bla_eval" / "testing", SPACE / "bla_eval" / "performance")


def _module_name(path: Path) -> str:
    """The dotted name of a module file under ``space/`` or the repository root."""
    root = SPACE if path.is_relative_to(SPACE) else REPO_ROOT
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports (function-local imports included), relative ones resolved."""
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_imported_modules_resolves_relative_imports():
    # the performance scripts import the package relatively: the resolver must see that
    script = SPACE / "bla_eval" / "performance" / "dual_encoder.py"
    assert "bla_eval.testing.dual_encoders" in imported_modules(script)


def test_nothing_that_ships_imports_the_testing_package():
    shipped = [*SPACE.rglob("*.py"), *(REPO_ROOT / "bla_metric").rglob("*.py")]
    shipped += (REPO_ROOT / "builders").rglob("*.py")
    importers = [
        str(path.relative_to(REPO_ROOT))
        for path in shipped
        if not any(path.is_relative_to(folder) for folder in ALLOWED)
        and any(m.startswith("bla_eval.testing") for m in imported_modules(path))
    ]
    assert importers == []


def test_one_command_builds_a_tiny_vision_language_model_that_bla_eval_runs_offline(
    built_dataset, tmp_path, capsys, monkeypatch
):
    from bla_eval.cli import main as bla_eval
    from bla_eval.testing.tiny import main as build_tiny

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tmp_path / "tiny-llava"
    assert build_tiny(["--out", str(folder)]) == 0
    assert f"wrote a tiny random-weight llava model to {folder}" in capsys.readouterr().out
    out = tmp_path / "run"
    argv = ["--model", folder, "--output", out, "--data", built_dataset, "--device", "cpu"]
    assert bla_eval([str(a) for a in [*argv, "--tasks", "co", "--limit", "1"]]) == 0
    assert '"kind": "generative"' in (out / "results.json").read_text(encoding="utf-8")
    assert build_tiny(["--out", str(out)]) == 2  # a run folder is not this command's output


def _weights_digest(folder: Path) -> str:
    import hashlib

    return hashlib.sha256((folder / "model.safetensors").read_bytes()).hexdigest()


def test_the_tiny_command_builds_any_row_and_its_seed_draws_the_weights(tmp_path, capsys):
    """``--architecture`` takes every row of the matrix; ``--seed`` changes every builder's
    weights (the CLIP row too), and the same seed gives the same bytes."""
    from bla_eval.testing.architectures import ARCHITECTURES
    from bla_eval.testing.tiny import build_parser
    from bla_eval.testing.tiny import main as build_tiny

    choices = next(a for a in build_parser()._actions if a.dest == "architecture").choices
    assert list(choices) == list(ARCHITECTURES)
    digests = {}
    for name, seed in (("clip", 0), ("clip", 1), ("qwen2_vl", 1)):
        folder = tmp_path / f"{name}-{seed}"
        argv = ["--architecture", name, "--seed", str(seed), "--out", str(folder)]
        assert build_tiny(argv) == 0
        assert f"kind {ARCHITECTURES[name].kind}" in capsys.readouterr().out
        digests[name, seed] = _weights_digest(folder)
    assert digests["clip", 0] != digests["clip", 1]
    assert build_tiny(["--architecture", "clip", "--out", str(tmp_path / "again")]) == 0
    assert _weights_digest(tmp_path / "again") == digests["clip", 0]


@pytest.fixture(scope="module")
def tiny_llava_command(tmp_path_factory) -> Path:
    """The model ``python -m bla_eval.testing.tiny`` saves by default."""
    from bla_eval.testing.tiny import build

    return build(tmp_path_factory.mktemp("tiny") / "llava")


@pytest.mark.parametrize("score", SCORES)
def test_the_tiny_llava_scores_by_image_and_word_order(score, tiny_llava_command, built_dataset):
    """The default tiny model's scores move with the image and with the order of the words: a
    sentence and its word-order swap (same words, same length) score apart, as do two images for
    one sentence (with transformers' default init a model this small scores a bag of words)."""
    from bla_eval.benchmarks.bla import load_bla
    from bla_eval.items import decode_image
    from bla_eval.scorers import LoadOptions, Query, load_scorer

    points = [p for p in load_bla(str(built_dataset)) if p.task == "active_passive"][:2]
    images = [decode_image(p, p.images[0]).resize((40, 30)) for p in points]
    sentences = points[0].captions  # TA, TP, FA, FP: each false one swaps the true one's roles
    alpha = 1.0 if score == "caption-pmi" else None
    options = LoadOptions(device="cpu", score=score, pmi_alpha=alpha)
    scorer = load_scorer(str(tiny_llava_command), "generative", 4, options)
    scores = scorer.score(images, [[Query(s) for s in sentences]] * 2).scores
    step = 0.002 if score == "yes-no" else 0.1  # a probability; a sum of log-probabilities
    for j in range(4):
        assert abs(scores[0][j] - scores[1][j]) > step, (score, sentences[j])
    for true, false in ((0, 2), (1, 3)):
        assert len(sentences[true].split()) == len(sentences[false].split())
        assert sorted(sentences[true].split()) == sorted(sentences[false].split())
        for row in scores:
            assert abs(row[true] - row[false]) > step, (score, sentences[true])


@pytest.mark.parametrize("name", ["clip", "metaclip_2", "clipseg", "blip", "blip-itm"])
def test_a_tiny_text_towers_token_ids_lie_in_its_vocabulary(name, tmp_path):
    """The configs name the tiny tokenizer's ids, not the released vocabulary's (CLIP's 49406,
    BLIP's 30522), so transformers has no token id to warn about."""
    import logging

    from bla_eval.testing.tiny import build
    from transformers.utils import logging as tf_logging

    class Record(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.messages: list[str] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.messages.append(record.getMessage())

    tf_logging.warning_once.cache_clear()  # a warning given once per process is given here
    handler, logger = Record(), tf_logging.get_logger("transformers")
    logger.addHandler(handler)
    try:
        build(tmp_path / name, name)
    finally:
        logger.removeHandler(handler)
    assert not [m for m in handler.messages if "token_id" in m]
