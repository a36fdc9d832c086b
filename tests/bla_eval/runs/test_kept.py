"""A resumed run's truth comes from the dataset: every kept record is checked (fields, types,
finite numbers, labels and caption types against the dataset) before the model is loaded or
anything is removed; part files count only when the run's marker lists them; a local model's
content hash is recorded and a resume after its weights changed is refused, and so is the data
folder's. Each refusal is one
line naming the file (and the line), exit 2, and changes no file. Runs are scored by the tiny
random CLIP on the built dataset, through the real ``bla-eval`` command."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path

import pytest
from bla_eval.cli import main as bla_eval
from bla_eval.runs import RUN_FILE, SCORES_FILE, RunFolder
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.bla_eval.commands import (
    LIMIT,
    call,
    copy_run,
    eval_args,
    lines_of,
    refused,
    snapshot,
    user_folder,
    write_lines,
)

pytestmark = pytest.mark.usefixtures("one_thread")


def resume_args(model: Path, data: Path, run: Path) -> list[str]:
    return eval_args(model, data, run, "--tasks", "co", "--limit", LIMIT, "--resume")


def top_two_labels(record: dict) -> list[int]:
    """Labels that make the record's two best-scored captions the true ones."""
    order = sorted(range(len(record["scores"])), key=lambda j: -record["scores"][j])
    return [1 if j in order[:2] else 0 for j in range(len(record["scores"]))]


def assert_refused_unchanged(tmp_path: Path, argv: list[str], capsys, *fragments: str) -> str:
    """``bla-eval argv`` refused in one line with ``fragments``; no file under ``tmp_path``
    changed (the run folder and the user's files beside it)."""
    before = snapshot(tmp_path)
    line = refused(bla_eval, argv, capsys, *fragments)
    assert snapshot(tmp_path) == before
    return line


# ----------------------------------------------------------------------------- labels and fields
def test_labels_edited_to_match_the_model_are_refused(
    co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    run = copy_run(co_run, tmp_path)
    user_folder(tmp_path / "mine")
    records = lines_of(run / SCORES_FILE)
    edited = [{**r, "labels": top_two_labels(r)} for r in records]
    assert any(e["labels"] != r["labels"] for e, r in zip(edited, records, strict=True))
    line = next(n for n, (e, r) in enumerate(zip(edited, records, strict=True), 1) if e != r)
    write_lines(run / SCORES_FILE, edited)
    (run / "results.json").unlink()  # as a killed run leaves it
    assert_refused_unchanged(
        tmp_path,
        resume_args(tiny_clip, built_dataset, run),
        capsys,
        f"{run / SCORES_FILE}: line {line} (coordination datapoint",
        "differ from the dataset's",
    )


def _edit(field, value):
    def edit(record: dict) -> dict:
        if value is _DELETE:
            return {k: v for k, v in record.items() if k != field}
        return {**record, field: value}

    return edit


_DELETE = object()

MALFORMED = {
    "no labels": (_edit("labels", _DELETE), "lacks labels"),
    "no caption_types": (_edit("caption_types", _DELETE), "lacks caption_types"),
    "a NaN score": (_edit("scores", [math.nan, 0.1, 0.2, 0.3]), "not a finite number"),
    "an infinite score": (_edit("scores", [math.inf, 0.1, 0.2, 0.3]), "not a finite number"),
    "a boolean score": (_edit("scores", [True, 0.1, 0.2, 0.3]), "not a number"),
    "a string score": (_edit("scores", ["0.5", 0.1, 0.2, 0.3]), "not a number"),
    "a score of 10**400": (_edit("scores", [10**400, 0.1, 0.2, 0.3]), "an integer of 401"),
    "three scores for four captions": (_edit("scores", [0.1, 0.2, 0.3]), "scores must be 4"),
    "scores as an object": (_edit("scores", {"a": 1}), "scores must be 4"),
    "a numeric id": (_edit("id", 7), "id must be a string"),
    "a boolean label": (_edit("labels", [True, True, False, False]), "not a label"),
    "a label of 2": (_edit("labels", [2, 1, 0, 0]), "not a label"),
    "answers of numbers": (_edit("answers", [1, 2, 3, 4]), "not an answer text"),
    "other caption types": (_edit("caption_types", ["x", "y", "z", "w"]), "caption_types"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_kept_record_is_refused_before_anything_changes(
    case, co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    edit, fragment = MALFORMED[case]
    run = copy_run(co_run, tmp_path)
    records = lines_of(run / SCORES_FILE)
    write_lines(run / SCORES_FILE, [records[0], edit(records[1]), *records[2:]])
    assert_refused_unchanged(
        tmp_path,
        resume_args(tiny_clip, built_dataset, run),
        capsys,
        f"cannot resume {run}: {run / SCORES_FILE}: line 2",
        fragment,
    )


def test_a_malformed_part_record_is_refused(co_run, tiny_clip, built_dataset, tmp_path, capsys):
    run = copy_run(co_run, tmp_path)
    records = lines_of(run / SCORES_FILE)
    write_lines(run / SCORES_FILE, records[:1])
    part = run / "scores.part-1-of-2.jsonl"
    write_lines(part, [{**records[1], "labels": top_two_labels(records[1])}, records[2]])
    RunFolder(run).mark(2)  # a killed two-process run: its marker lists its parts
    assert_refused_unchanged(
        tmp_path,
        resume_args(tiny_clip, built_dataset, run),
        capsys,
        f"{part}: line 1",
    )


# ----------------------------------------------------------------------------- part files
def test_a_part_file_the_marker_does_not_list_is_refused(
    co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    run = copy_run(co_run, tmp_path)
    records = lines_of(run / SCORES_FILE)
    write_lines(run / SCORES_FILE, records[:1])
    foreign = [{**r, "scores": [9.0, 8.0, 0.0, 0.0]} for r in records[1:]]
    write_lines(run / "scores.part-0-of-2.jsonl", foreign)
    for extra in (["--resume"], []):  # neither folded in by a resume nor removed by a new run
        argv = eval_args(tiny_clip, built_dataset, run, "--tasks", "co", "--limit", LIMIT, *extra)
        assert_refused_unchanged(
            tmp_path, argv, capsys, "scores.part-0-of-2.jsonl is not a part of the run"
        )


# ----------------------------------------------------------------------------- the model's content
def test_a_resume_after_the_weights_changed_in_place_is_refused(
    tiny_clip, built_dataset, tmp_path, capsys
):
    model = tmp_path / "model"
    shutil.copytree(tiny_clip, model)
    run = tmp_path / "run"
    assert bla_eval(eval_args(model, built_dataset, run, "--tasks", "co", "--limit", "2")) == 0
    recorded = json.loads((run / RUN_FILE).read_text(encoding="utf-8"))["model_sha256"]
    assert len(recorded) == 64
    write_lines(run / SCORES_FILE, lines_of(run / SCORES_FILE)[:1])
    weights = next(model.glob("*.safetensors"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1  # one bit of one weight
    weights.write_bytes(bytes(data))
    argv = eval_args(model, built_dataset, run, "--tasks", "co", "--limit", "2", "--resume")
    assert_refused_unchanged(tmp_path, argv, capsys, "model_sha256")
    weights.write_bytes(bytes(data[:-1]) + bytes([data[-1] ^ 1]))  # as it was: resumes
    assert call(bla_eval, argv, capsys)[0] == 0
    assert json.loads((run / RUN_FILE).read_text(encoding="utf-8"))["model_sha256"] == recorded


# ----------------------------------------------------------------------------- the data's content
def rewrite_sentences(folder: Path) -> None:
    """The CO parquet file of ``folder`` rebuilt in place with other sentences (labels, caption
    types and ids kept: what the kept-records check compares)."""
    import pyarrow.parquet as pq

    path = next((folder / "data" / "coordination").glob("test-*.parquet"))
    table = pq.read_table(path)
    captions = [[f"{c} again" for c in row] for row in table.column("captions").to_pylist()]
    index = table.schema.get_field_index("captions")
    table = table.set_column(index, table.schema.field(index), [captions])
    pq.write_table(table, path)


def test_a_resume_after_the_data_was_rebuilt_in_place_is_refused(
    tiny_clip, built_dataset, tmp_path, capsys
):
    data = tmp_path / "data"
    shutil.copytree(built_dataset / "data" / "coordination", data / "data" / "coordination")
    run = tmp_path / "run"
    argv = eval_args(tiny_clip, data, run, "--tasks", "co", "--limit", "2")
    assert bla_eval(argv) == 0
    recorded = json.loads((run / RUN_FILE).read_text(encoding="utf-8"))
    assert len(recorded["data_sha256"]) == 64
    write_lines(run / SCORES_FILE, lines_of(run / SCORES_FILE)[:1])
    rewrite_sentences(data)
    assert_refused_unchanged(tmp_path, [*argv, "--resume"], capsys, "data_sha256")


def test_a_run_of_an_earlier_version_without_a_data_hash_still_resumes(
    co_run, tiny_clip, built_dataset, tmp_path, capsys
):
    """``run.json`` written before the data hash was recorded: its kept records are checked
    against the dataset's items, as then, and the resumed run records the hash."""
    run = copy_run(co_run, tmp_path)
    settings = json.loads((run / RUN_FILE).read_text(encoding="utf-8"))
    del settings["data_sha256"]
    (run / RUN_FILE).write_text(json.dumps(settings), encoding="utf-8")
    write_lines(run / SCORES_FILE, lines_of(run / SCORES_FILE)[:1])
    assert call(bla_eval, resume_args(tiny_clip, built_dataset, run), capsys)[0] == 0
    assert len(lines_of(run / SCORES_FILE)) == LIMIT
    assert len(json.loads((run / RUN_FILE).read_text(encoding="utf-8"))["data_sha256"]) == 64


# ----------------------------------------------------------------------------- fuzz
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)
FIELDS = ["task", "id", "scores", "labels", "caption_types", "answers", "parsed", "extra"]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    line=st.integers(0, LIMIT - 1),
    field=st.sampled_from(FIELDS),
    value=JSON | st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=4, max_size=4),
    delete=st.booleans(),
)
def test_fuzzed_kept_records_resume_consistently_or_are_refused(
    co_run, tiny_clip, built_dataset, tmp_path, capsys, line, field, value, delete
):
    """Any edit of one kept record: the resume ends with a run whose results follow from its
    scores and whose labels are the dataset's, or is refused in one line naming the scores file
    and changes nothing."""
    root = Path(tempfile.mkdtemp(dir=tmp_path))
    run = copy_run(co_run, root)
    user_folder(root / "mine")
    records = lines_of(run / SCORES_FILE)
    truth = {r["id"]: r["labels"] for r in records}
    edited = dict(records[line])
    if delete:
        edited.pop(field, None)
    else:
        edited[field] = value
    write_lines(run / SCORES_FILE, [*records[:line], edited, *records[line + 1 :]])
    before = snapshot(root)
    code, err = call(bla_eval, resume_args(tiny_clip, built_dataset, run), capsys)
    event(f"exit {code}")
    if code == 0:
        finished = RunFolder.open(run)
        kept = finished.records["coordination"]
        assert {r["id"]: r["labels"] for r in kept} == truth
        assert "Traceback" not in err
        assert {k: v for k, v in snapshot(root).items() if k.startswith("mine/")} == {
            k: v for k, v in before.items() if k.startswith("mine/")
        }
    else:
        lines = [x for x in err.strip().splitlines() if ": error: " in x]
        assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
        assert str(run / SCORES_FILE) in lines[0], lines[0]
        assert snapshot(root) == before


# ----------------------------------------------------------------------------- sweeps and controls
CONDITIONS = ("--tasks", "ap", "--limit", "3", "--prompts", "bla,mme", "--control", "shuffled")


@pytest.fixture(scope="module")
def conditions_run(
    built_dataset: Path, tiny_model, tmp_path_factory: pytest.TempPathFactory
) -> tuple:
    """(model, finished run, each datapoint's own image key) of a tiny blind LLaVA with a sweep
    of two templates and the shuffled control."""
    from bla_eval.benchmarks import get_benchmark, load_items
    from bla_eval.testing.generative import build_blind_llava

    items = load_items(get_benchmark("bla"), str(built_dataset), ["active_passive"], "test", 3)
    texts = [c for i in items for c in i.captions] + ["Question"] * 5
    blind = tiny_model("blind_llava", texts, build_blind_llava)
    run = tmp_path_factory.mktemp("kept_conditions") / "run"
    assert bla_eval(eval_args(blind, built_dataset, run, *CONDITIONS)) == 0
    return blind, run, {i.id: i.images[0].key for i in items}


def _lose_template(r: dict, own: str) -> dict:
    control = {**r["control"], "prompts": {"bla": r["control"]["prompts"]["bla"]}}
    return {**r, "prompts": {"bla": r["prompts"]["bla"]}, "control": control}


def _other_headline(r: dict, own: str) -> dict:
    return {**r, "scores": r["prompts"]["mme"]}


def _own_image(r: dict, own: str) -> dict:
    return {**r, "control": {**r["control"], "images": [own]}}


def _foreign_template(r: dict, own: str) -> dict:
    return {**r, "prompts": {**r["prompts"], "vqa": r["prompts"]["bla"]}}


def _other_image(r: dict, own: str) -> dict:
    return {**r, "control": {**r["control"], "images": [f"blank:{own}"]}}


def _no_control(r: dict, own: str) -> dict:
    return {k: v for k, v in r.items() if k != "control"}


@pytest.mark.parametrize(
    ("edit", "every_row", "fragment"),
    [
        (_lose_template, True, "prompts lacks the scores of template 'mme'"),
        (_other_headline, False, "scores differ from the scores of the sweep's first template"),
        (_own_image, False, "control.images names the datapoint's own image"),
        (_foreign_template, False, "holds template 'vqa', which the run does not ask"),
        (_other_image, False, "but the dataset's control of this datapoint shows"),
        (_no_control, False, "control must be an object with kind, images and scores"),
    ],
    ids=["lost-template", "headline", "own-image", "foreign-template", "other-image", "no-ctrl"],
)
def test_an_edited_sweep_or_control_record_is_refused(
    edit, every_row, fragment, conditions_run, built_dataset, tmp_path, capsys
):
    model, finished, own = conditions_run
    run = copy_run(finished, tmp_path)
    records = lines_of(run / SCORES_FILE)
    edited = [edit(r, own[r["id"]]) if every_row or n == 1 else r for n, r in enumerate(records)]
    write_lines(run / SCORES_FILE, edited)
    (run / "results.json").unlink()  # as a killed run leaves it
    line = 1 if every_row else 2
    argv = eval_args(model, built_dataset, run, *CONDITIONS, "--resume")
    assert_refused_unchanged(tmp_path, argv, capsys, f"{run / SCORES_FILE}: line {line}", fragment)


def test_a_whole_sweep_and_control_run_resumes(conditions_run, built_dataset, tmp_path, capsys):
    model, finished, _ = conditions_run
    run = copy_run(finished, tmp_path)
    write_lines(run / SCORES_FILE, lines_of(run / SCORES_FILE)[:2])  # one datapoint lost
    (run / "results.json").unlink()
    argv = eval_args(model, built_dataset, run, *CONDITIONS, "--resume")
    assert call(bla_eval, argv, capsys)[0] == 0
    assert lines_of(run / SCORES_FILE)[:2] == lines_of(finished / SCORES_FILE)[:2]
