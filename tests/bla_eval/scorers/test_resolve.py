"""The model of a run is resolved once: one ResolvedModel per run, handed to the scorer."""

from __future__ import annotations

from pathlib import Path

import pytest
from bla_eval import bundled
from bla_eval.config import RunConfig
from bla_eval.run import evaluate
from bla_eval.scorers import capabilities, load_scorer, resolve
from bla_eval.scorers.contrastive import ContrastiveScorer


def counting(monkeypatch: pytest.MonkeyPatch, module, name: str) -> list:
    """Record each call of ``module.name`` (the real function still runs)."""
    calls: list = []
    real = getattr(module, name)

    def wrapper(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapper)
    return calls


def test_a_run_resolves_its_model_and_reads_its_config_once(
    built_dataset: Path, tiny_clip: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    resolved = counting(monkeypatch, bundled, "resolve_model")
    configs = counting(monkeypatch, capabilities, "read_config")
    loaded = []
    real_init = ContrastiveScorer.__init__

    def init(self, model, *args, **kwargs):
        loaded.append(model)
        real_init(self, model, *args, **kwargs)

    monkeypatch.setattr(ContrastiveScorer, "__init__", init)
    config = RunConfig(
        model=str(tiny_clip), data=str(built_dataset), output_dir=tmp_path / "run", limit=2
    )
    results = evaluate(config)
    assert results["kind"] == "contrastive" and results["model"] == str(tiny_clip)
    assert resolved == [(str(tiny_clip),)]
    assert configs == [(str(tiny_clip), False)]
    (model,) = loaded
    assert model.name == model.path == str(tiny_clip) and model.kind == "contrastive"
    assert model.config is not None and model.config.model_type == "clip"


def test_a_given_kind_is_checked_with_the_same_single_config_read(
    tiny_clip: Path, monkeypatch: pytest.MonkeyPatch
):
    configs = counting(monkeypatch, capabilities, "read_config")
    model = resolve(str(tiny_clip), "contrastive")
    assert len(configs) == 1 and model.config is not None
    scorer = load_scorer(model, batch_size=4)
    assert scorer.resolved is model and len(configs) == 1


def test_an_unfit_kind_is_refused_before_loading(tiny_clip: Path):
    with pytest.raises(ValueError, match="itm"):
        resolve(str(tiny_clip), "itm")


def test_a_remote_kind_keeps_the_name_as_typed_and_needs_an_endpoint():
    model = resolve("smollm2", None, endpoint="http://127.0.0.1:9/v1")
    assert model.kind == "openai-api" and model.path == "smollm2" and model.config is None
    with pytest.raises(ValueError, match="endpoint"):
        resolve("smollm2", "openai-api")


@pytest.mark.parametrize("typed", ["tiny-lava", "smollm3", "./runs/tiny-lava", "~/models/x/y"])
def test_a_mistyped_folder_or_bundled_name_is_refused_before_the_hub(
    typed: str, monkeypatch: pytest.MonkeyPatch
):
    """No wait for the Hub: a name that is no path, no org/name id and no open_clip name."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError, match="is not a local folder, not a bundled name"):
        resolve(typed)
    with pytest.raises(ValueError, match="is not a local folder, not a bundled name"):
        resolve(typed, "contrastive")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than 64 levels"),
        ('{"vocab_size": ' + "9" * 40 + "}", "an integer of 40 digits"),
    ],
)
def test_a_config_json_out_of_bounds_is_one_line_naming_it(text, said, tmp_path: Path):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=said) as err:
        resolve(str(tmp_path / "model"))
    assert str(tmp_path / "model" / "config.json") in str(err.value)


def _cached_hub_model(cache: Path, name: str, config: dict) -> None:
    """``name`` as the Hub cache holds a downloaded model: refs/main -> a snapshot with its
    config.json (the layout huggingface_hub writes)."""
    import json

    repo = cache / f"models--{name}"
    commit = "0" * 40
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps(config))


def test_a_canonical_hub_id_without_an_organisation_is_a_hub_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """``gpt2`` and ``bert-base-uncased`` are Hub ids: offline, one the Hub cache holds is
    taken, and a bare name it does not hold (a mistyped folder) is refused at once."""
    from bla_eval.scorers.resolve import check_findable
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    for name in ("gpt2", "bert-base-uncased"):
        _cached_hub_model(tmp_path, name, {"model_type": name.split("-")[0]})
        check_findable(name, name)
    with pytest.raises(ValueError, match="'gpt3' is not a local folder.*Hub is offline"):
        check_findable("gpt3", "gpt3")


@pytest.mark.parametrize("name", ["gpt2", "openai-community/gpt2"])
def test_offline_a_hub_id_missing_from_the_cache_is_named_so_at_once(
    name: str, built_dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
):
    """Not a typo: a Hub id the cache lacks while HF_HUB_OFFLINE is set, refused in one line
    before anything is loaded (no retries)."""
    import time

    from bla_eval.cli import main as bla_eval
    from huggingface_hub import constants

    from tests.bla_eval.commands import refused

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    started = time.monotonic()
    line = refused(
        bla_eval,
        ["--model", name, "--output", str(tmp_path / "run"), "--data", str(built_dataset)]
        + ["--tasks", "co", "--limit", "1"],
        capsys,
        f"model {name!r}",
        "not in the local Hub cache, and the Hub is offline",
    )
    assert "spelling" not in line and time.monotonic() - started < 30
    assert not (tmp_path / "run").exists()


def test_a_hub_that_cannot_be_reached_is_named_at_once(built_dataset: Path, tmp_path: Path):
    """The Hub's address refuses connections: a Hub id the cache lacks is named with the
    unreachable Hub, in one line, within seconds (no retries of the loader)."""
    import os
    import subprocess
    import sys
    import time

    env = {k: v for k, v in os.environ.items() if k != "HF_HUB_OFFLINE"}
    env |= {"HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_CACHE": str(tmp_path / "hub")}
    argv = ["--model", "openai-community/gpt2", "--output", str(tmp_path / "run")]
    argv += ["--data", str(built_dataset), "--tasks", "co", "--limit", "1"]
    code = "import sys; from bla_eval.cli import main; sys.exit(main(sys.argv[1:]))"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True, timeout=120
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "not in the local Hub cache, and the Hub cannot be reached" in lines[0]
    assert time.monotonic() - started < 30 and not (tmp_path / "run").exists()
