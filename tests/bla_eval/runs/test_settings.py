"""The settings ``run.json`` records (read from ``RunConfig``'s metadata) and how a resume
compares them with an older run's."""

from __future__ import annotations

from dataclasses import fields

from bla_eval.config import Recorded, RunConfig
from bla_eval.runs.settings import changed_settings, resume_settings

CONFIG = RunConfig("m", "out", tasks=("ap",), limit=3, similarity="clipscore", icl_seed=4)


def test_the_recorded_settings_are_the_fields_that_say_so_with_what_the_run_resolved():
    settings = resume_settings(CONFIG, "contrastive", "/data", ["active_passive"])
    recorded = {f.name for f in fields(RunConfig) if f.metadata.get("resume") is not None}
    endpoint = {f.name for f in fields(RunConfig) if f.metadata["resume"] is Recorded.IF_READ}
    assert set(settings) == recorded - {"icl_order", "icl_seed"} - endpoint  # zero-shot, local
    assert settings["kind"] == "contrastive" and settings["data"] == "/data"
    assert settings["tasks"] == ["active_passive"] and settings["similarity"] == "clipscore"
    assert resume_settings(CONFIG, "contrastive", "/data")["tasks"] == ["ap"]  # none resolved


def test_kind_and_protocol_decide_which_settings_are_recorded():
    generative = resume_settings(CONFIG.with_(protocol="icl-sd"), "generative", "/data")
    assert generative["similarity"] is None  # a kind that takes no similarity
    assert (generative["icl_order"], generative["icl_seed"]) == ("true-first", 4)
    remote = resume_settings(CONFIG.with_(endpoint="http://127.0.0.1:1/v1"), "openai-api", "d")
    assert remote["endpoint"] == "http://127.0.0.1:1/v1" and remote["api_scoring"] == "auto"
    assert "endpoint" not in resume_settings(CONFIG, "contrastive", "/data")
    shortcut = resume_settings(CONFIG.with_(endpoint="openai"), "openai-api", "d")
    assert shortcut["endpoint"] == "https://api.openai.com/v1"  # its record function's value


def test_settings_older_runs_did_not_record_count_as_their_value_then():
    now = resume_settings(CONFIG, "contrastive", "/data", ["active_passive"])
    older = {k: v for k, v in now.items() if k not in ("benchmark", "protocol", "tasks", "limit")}
    assert changed_settings(older, now) == {}
    assert changed_settings(older, {**now, "protocol": "icl-sd"}) == {
        "protocol": ("zero-shot", "icl-sd")
    }
    assert changed_settings({**older, "extra": 1}, now) == {"extra": (1, None)}


def test_a_model_on_this_machine_is_recorded_by_the_hash_of_its_files(tmp_path):
    from bla_eval.scorers import ResolvedModel

    folder = tmp_path / "model"
    (folder / "sub").mkdir(parents=True)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"\0" * 3_000_000)  # more than one chunk
    (folder / "sub" / "optimizer.pt").write_bytes(b"x")  # subfolders are not the model's

    def recorded(model: ResolvedModel) -> str | None:
        return resume_settings(CONFIG, "contrastive", "/data", None, model).get("model_sha256")

    first = recorded(ResolvedModel("m", str(folder), "contrastive"))
    assert first is not None and len(first) == 64
    (folder / "sub" / "optimizer.pt").write_bytes(b"y")
    assert recorded(ResolvedModel("m", str(folder), "contrastive")) == first
    (folder / "model.safetensors").write_bytes(b"\0" * 2_999_999 + b"\1")
    assert recorded(ResolvedModel("m", str(folder), "contrastive")) != first
    assert recorded(ResolvedModel("org/name", "org/name", "contrastive")) is None  # a Hub id
    single = recorded(ResolvedModel("f", str(folder / "config.json"), "text"))
    assert single is not None and single != first
    # run.json of runs that recorded no hash are resumed without comparing one
    assert changed_settings({"model": "m"}, {"model": "m", "model_sha256": first}) == {}
