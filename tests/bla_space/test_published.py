"""The Space's published-scores section: its setting, and the runs it ranks together (the pull
and the ranking through the stand-in Hub: ``tests/hub/test_published_scores.py``)."""

from __future__ import annotations

from bla_space import published
from bla_space.config import SpaceConfig


def test_the_setting_names_results_repos() -> None:
    config = SpaceConfig.from_env({"BLA_PUBLISHED_RESULTS": " me/results , you/bla-scores "})
    assert config.published_repos == ("me/results", "you/bla-scores")
    assert SpaceConfig.from_env({}).published_repos == ()


def test_a_repo_named_twice_or_in_its_folder_spelling_is_read_once() -> None:
    value = "org/res,org__res, ORG/res ,org/res,other/x"
    assert published.read_setting(value) == (("org/res", "other/x"), ())
    assert published.repo_folder("org/res") != published.repo_folder("org-/res")


def test_an_invalid_id_is_one_line_and_the_space_still_starts(caplog) -> None:
    long_id = "a" * 300
    config = SpaceConfig.from_env({"BLA_PUBLISHED_RESULTS": f"me/results,../../etc,{long_id}"})
    assert config.published_repos == ("me/results",)
    assert len(config.published_warnings) == 2
    first, second = config.published_warnings
    assert first == (
        "BLA_PUBLISHED_RESULTS: '../../etc' is not a Hub dataset repo id (org/name, at most 96 "
        "characters each): skipped"
    )
    assert "aaaa..." in second and long_id not in second and "\n" not in second
    assert [r.getMessage() for r in caplog.records] == list(config.published_warnings)


def test_pulls_go_to_the_cache_and_never_replace_a_users_file(tmp_path, monkeypatch) -> None:
    from bla_space import published_tab

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    env = {"BLA_CACHE_DIR": str(tmp_path / "cache"), "BLA_RESULTS_DIR": str(tmp_path / "runs")}
    config = SpaceConfig.from_env(env)
    assert published_tab.folder(config) == tmp_path / "cache" / "published"
    folder = published_tab.folder(config)
    mine = folder / published.repo_folder("org/res")
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("the user's own", encoding="utf-8")
    folders, failed = published.pull(["org/res", "../x"], folder)
    assert folders == [] and len(failed) == 2
    assert failed[1].startswith("could not read org/res: output ") and "notes.txt" in failed[1]
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "the user's own"
    assert sorted(p.name for p in folder.iterdir()) == [mine.name]


class FakeRun:
    def __init__(self, ids: list[str]) -> None:
        self.records = {"coordination": [{"id": i} for i in ids]}


def test_only_runs_on_the_same_datapoints_are_ranked_together() -> None:
    a, b, c = FakeRun(["1", "2"]), FakeRun(["1", "2"]), FakeRun(["1"])
    assert published.same_datapoints([a, c, b]) == [a, b]
    assert published.same_datapoints([a, c]) == []
    assert published.statistics([], None, "sentence_accuracy", 10)[1:] == (None, None)
