"""The outputs module: readers, atomic files, staged outputs, stale temporaries, ownership."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bla_eval import outputs
from bla_eval.outputs import (
    OWNER_FILE,
    check_file_replaceable,
    check_replaceable,
    read_json,
    read_records,
    remove_stale,
    staged,
    write_json_atomic,
    write_lines_atomic,
)

RECORDS = [{"task": "t", "id": str(i), "scores": [i, -i]} for i in range(3)]
LINES = "".join(json.dumps(r) + "\n" for r in RECORDS)


def dead_pid() -> int:
    """The pid of a process that has exited."""
    code = "import os; print(os.getpid())"
    child = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return int(child.stdout)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (links not followed) -> its bytes."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ----------------------------------------------------------------------------- readers
def test_a_half_written_last_line_is_dropped_and_repaired(tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_bytes(LINES.encode() + '{"task": "t", "id": "3", "scores": [0.5, "é'.encode()[:-1])
    assert read_records(path) == RECORDS
    assert read_records(path, repair=True) == RECORDS
    assert path.read_text(encoding="utf-8") == LINES


def test_a_complete_last_line_without_newline_is_kept_and_terminated(tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_text(LINES.rstrip("\n"), encoding="utf-8")
    assert read_records(path) == RECORDS
    assert path.read_text(encoding="utf-8") == LINES.rstrip("\n")  # a reader does not write
    assert read_records(path, repair=True) == RECORDS
    assert path.read_text(encoding="utf-8") == LINES


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", "line 2 is not a score record: Expecting value"),
        ('{"task": "t", "id": "x"}', r"line 2 is not a score record \(it needs task, id, scores\)"),
        ("[1, 2]", "line 2 is not a score record"),
    ],
)
def test_a_bad_line_is_named(tmp_path, line, message):
    path = tmp_path / "scores.jsonl"
    path.write_text(LINES.replace("\n", f"\n{line}\n", 1), encoding="utf-8")
    with pytest.raises(ValueError, match=f"^{path}: {message}"):
        read_records(path, repair=True)
    assert line in path.read_text(encoding="utf-8")  # an error never rewrites the file


def test_non_utf8_content_is_one_error_naming_file_and_line(tmp_path):
    path = tmp_path / "scores.jsonl"
    path.write_bytes(LINES.encode() + b'{"task": "t", "id": "\xff", "scores": []}\n')
    with pytest.raises(ValueError, match=f"^{path}: line 4 is not UTF-8 text"):
        read_records(path)
    doc = tmp_path / "results.json"
    doc.write_bytes(b'{"model": "\xe9"}')
    with pytest.raises(ValueError, match=f"^{doc} is not UTF-8 text"):
        read_json(doc)


def test_read_json_names_the_file(tmp_path):
    path = tmp_path / "run.json"
    for text, message in [("{", "is not valid JSON"), ("[1]", "is not a JSON object")]:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(ValueError, match=f"^{path} {message}"):
            read_json(path)
    with pytest.raises(ValueError, match=f"^cannot read {tmp_path / 'missing.json'}"):
        read_json(tmp_path / "missing.json")
    assert read_records(tmp_path / "missing.jsonl") == []


# ----------------------------------------------------------------------------- atomic files
def test_atomic_writes_replace_in_one_rename_and_leave_no_temporary(tmp_path):
    path = tmp_path / "results.json"
    path.write_text("old", encoding="utf-8")
    write_json_atomic(path, {"model": "é", "n": 1})
    assert path.read_bytes() == '{\n  "model": "é",\n  "n": 1\n}\n'.encode()
    with pytest.raises(TypeError), outputs.atomic_file(path) as handle:
        handle.write("half")
        raise TypeError("crash while writing")
    assert json.loads(path.read_text(encoding="utf-8")) == {"model": "é", "n": 1}
    write_lines_atomic(tmp_path / "scores.jsonl", RECORDS)
    assert (tmp_path / "scores.jsonl").read_text(encoding="utf-8") == LINES
    assert listing(tmp_path) == ["results.json", "scores.jsonl"]


# ----------------------------------------------------------------------------- staging
def test_staging_success_renames_into_place_with_the_marker(tmp_path):
    target = tmp_path / "out"
    with staged(target, "bla-eval analyze") as stage:
        holder = stage.parent  # a marked hidden folder beside the target
        assert holder.parent == tmp_path and holder.name.startswith(".out.bla-staging-")
        assert outputs.is_temporary(holder) and stage.name == "out"
        (stage / "report.md").write_text("r", encoding="utf-8")
        (stage / "thumbs").mkdir()
        (stage / "thumbs" / "a.jpg").write_bytes(b"x")
        assert not target.exists()
    assert listing(tmp_path) == ["out"]
    assert listing(target) == [OWNER_FILE, "report.md", "thumbs"]
    marker = json.loads((target / OWNER_FILE).read_text(encoding="utf-8"))
    assert marker == {"command": "bla-eval analyze", "files": ["report.md", "thumbs/a.jpg"]}
    with staged(target, "bla-eval analyze") as stage:  # ours: replaced as a whole
        (stage / "new.md").write_text("n", encoding="utf-8")
    assert listing(target) == [OWNER_FILE, "new.md"] and listing(tmp_path) == ["out"]


def test_staging_failure_removes_the_stage_and_keeps_the_target(tmp_path):
    target = tmp_path / "out"
    with staged(target, "bla-finetune") as stage:
        (stage / "finetune.json").write_text("{}", encoding="utf-8")
    before = (target / OWNER_FILE).read_bytes()
    with pytest.raises(RuntimeError, match="disk full"), staged(target, "bla-finetune") as stage:
        (stage / "model.safetensors").write_bytes(b"half")
        raise RuntimeError("disk full")
    assert listing(tmp_path) == ["out"]
    assert listing(target) == [OWNER_FILE, "finetune.json"]
    assert (target / OWNER_FILE).read_bytes() == before


def test_staging_checks_again_before_the_rename(tmp_path):
    target = tmp_path / "out"
    with pytest.raises(FileExistsError, match="it holds thesis.tex"), staged(target) as stage:
        (stage / "a.txt").write_text("a", encoding="utf-8")
        target.mkdir()
        (target / "thesis.tex").write_text("mine", encoding="utf-8")
    assert listing(tmp_path) == ["out"] and listing(target) == ["thesis.tex"]


def temporary(path: Path, pid: int) -> Path:
    """A temporary folder of ``outputs`` as process ``pid`` leaves it (its marker inside)."""
    path.mkdir()
    marker = {"pid": pid, "name": path.name}
    (path / outputs.TEMP_MARKER).write_text(json.dumps(marker), encoding="utf-8")
    return path


def test_stale_temporaries_of_dead_processes_are_removed(tmp_path):
    dead, alive = dead_pid(), os.getpid()
    stale = temporary(tmp_path / f".out.bla-staging-{dead}", dead)
    (stale / "out").mkdir()
    (stale / "out" / "model.safetensors").write_bytes(b"checkpoint")
    temporary(tmp_path / f".results.json.bla-tmp-{dead}.7", dead)
    temporary(tmp_path / f".other.bla-staging-{alive}", alive)  # a live writer: kept
    (tmp_path / f".keep.staging-{dead}").mkdir()  # not a name of ours: kept
    gone = temporary(tmp_path / f".gone.bla-replaced-{dead}", dead)  # killed between renames
    (gone / "gone").mkdir()
    (gone / "gone" / "finetune.json").write_text("{}", encoding="utf-8")
    (tmp_path / "done").mkdir()  # killed after the swap: the old output set aside is removed
    done = temporary(tmp_path / f".done.bla-replaced-{dead}", dead)
    (done / "done").mkdir()
    (done / "done" / "old.json").write_text("{}", encoding="utf-8")
    with staged(tmp_path / "new") as stage:
        (stage / "x").write_text("x", encoding="utf-8")
    assert listing(tmp_path) == [
        f".keep.staging-{dead}",
        f".other.bla-staging-{alive}",
        "done",
        "gone",  # put back: its replacement never arrived
        "new",
    ]
    assert listing(tmp_path / "done") == []
    assert listing(tmp_path / "gone") == ["finetune.json"]
    assert remove_stale(tmp_path) == []


def test_a_name_of_the_pattern_is_no_proof_of_ownership(tmp_path):
    """A user's entries named like temporaries of a dead process survive every writer: without
    a marker, with a marker naming another folder or pid, a link, a marker that is a link."""
    dead = dead_pid()
    user = tmp_path / f".photos.bla-staging-{dead}"
    user.mkdir()
    (user / "holiday.jpg").write_bytes(b"jpeg")
    (tmp_path / f".notes.bla-tmp-{dead}").write_text("mine", encoding="utf-8")  # a file
    gone = tmp_path / f".thesis.bla-replaced-{dead}"  # would be "put back" as thesis/
    gone.mkdir()
    (gone / "thesis").mkdir()
    other = tmp_path / f".x.bla-staging-{dead}"
    other.mkdir()
    (other / outputs.TEMP_MARKER).write_text(json.dumps({"pid": dead, "name": "elsewhere"}))
    wrong_pid = tmp_path / f".y.bla-staging-{dead}"
    wrong_pid.mkdir()
    (wrong_pid / outputs.TEMP_MARKER).write_text(json.dumps({"pid": 1, "name": wrong_pid.name}))
    proof = temporary(tmp_path / "real-temporary", dead)
    linked = tmp_path / f".z.bla-staging-{dead}"
    linked.mkdir()
    (linked / outputs.TEMP_MARKER).symlink_to(proof / outputs.TEMP_MARKER)
    (tmp_path / f".w.bla-staging-{dead}").symlink_to(user, target_is_directory=True)
    before = snapshot(tmp_path)
    names = listing(tmp_path)
    with staged(tmp_path / "an", "bla-eval analyze") as stage:
        (stage / "report.md").write_text("r", encoding="utf-8")
    with outputs.atomic_file(tmp_path / "single.json") as handle:
        handle.write("{}")
    assert remove_stale(tmp_path) == []
    assert listing(tmp_path) == sorted([*names, "an", "single.json"])
    after = snapshot(tmp_path)
    assert {k: after.get(k) for k in before} == before


def test_a_killed_writer_leaves_staging_that_the_next_run_removes(tmp_path):
    script = (
        "import os, sys\n"
        "from bla_eval.outputs import staged\n"
        "with staged(sys.argv[1], 'bla-finetune') as stage:\n"
        "    (stage / 'seed-0').mkdir()\n"
        "    os._exit(9)\n"
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "out")], check=False)
    assert [p.name.split("-staging-")[0] for p in tmp_path.iterdir()] == [".out.bla"]
    with staged(tmp_path / "out", "bla-finetune") as stage:
        (stage / "finetune.json").write_text("{}", encoding="utf-8")
    assert listing(tmp_path) == ["out"]


# ----------------------------------------------------------------------------- ownership
def test_absent_empty_and_own_outputs_are_replaceable(tmp_path):
    check_replaceable(tmp_path / "absent", "bla-eval compare")
    (tmp_path / "empty").mkdir()
    check_replaceable(tmp_path / "empty", "bla-eval compare")
    with staged(tmp_path / "ours", "bla-eval compare") as stage:
        (stage / "compare.md").write_text("c", encoding="utf-8")
    check_replaceable(tmp_path / "ours", "bla-eval compare")
    with pytest.raises(FileExistsError, match="holds the output of `bla-eval compare`"):
        check_replaceable(tmp_path / "ours", "bla-eval analyze")
    with pytest.raises(FileExistsError, match=r"is not empty \(it holds .bla-output.json, compa"):
        check_replaceable(tmp_path / "ours")  # no command: new or empty only


def test_foreign_content_is_refused_listing_what_is_there(tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    for name in ("thesis.tex", "a.txt", "b.txt", "c.txt", "d.txt", "e.txt"):
        (user / name).write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError) as err:
        check_replaceable(user, "bla-finetune")
    assert str(err.value) == (
        f"output {user} is not empty and was not written by `bla-finetune` (it holds a.txt, "
        "b.txt, c.txt, d.txt, e.txt and 1 more): choose an empty or new folder"
    )
    file = tmp_path / "notes.txt"
    file.write_text("mine", encoding="utf-8")
    with pytest.raises(FileExistsError, match="exists and is not a folder"):
        check_replaceable(file, "bla-eval compare")
    with staged(tmp_path / "ours", "bla-eval compare") as stage:
        (stage / "compare.md").write_text("c", encoding="utf-8")
    (tmp_path / "ours" / "thesis.tex").write_text("added by the user", encoding="utf-8")
    with pytest.raises(FileExistsError, match=r"did not write \(thesis.tex\)"):
        check_replaceable(tmp_path / "ours", "bla-eval compare")
    with pytest.raises(FileExistsError), staged(user, "bla-finetune"):
        pass
    assert len(list(user.iterdir())) == 6 and file.read_text(encoding="utf-8") == "mine"


def test_a_users_empty_folders_inside_an_own_output_are_refused(tmp_path):
    with staged(tmp_path / "ours", "bla-eval compare") as stage:
        (stage / "tables").mkdir()
        (stage / "tables" / "compare.md").write_text("c", encoding="utf-8")
    check_replaceable(tmp_path / "ours", "bla-eval compare")  # its own folders hold its files
    (tmp_path / "ours" / "drafts" / "2026").mkdir(parents=True)
    with pytest.raises(FileExistsError, match=r"did not write \(drafts/, drafts/2026/\)"):
        check_replaceable(tmp_path / "ours", "bla-eval compare")
    with pytest.raises(FileExistsError), staged(tmp_path / "ours", "bla-eval compare"):
        pass
    assert (tmp_path / "ours" / "drafts" / "2026").is_dir()


def test_a_marked_file_is_not_written_through_a_link_on_the_way(tmp_path):
    user = tmp_path / "user"
    (user / ".eval_results").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(user)
    target = link / ".eval_results" / "bla.yaml"
    with pytest.raises(FileExistsError, match=f"{link} is a symbolic link"):
        check_file_replaceable(target, "bla-eval export", root=link)
    assert check_file_replaceable(target, "bla-eval export") == target  # no root: parent only
    assert not (user / ".eval_results" / "bla.yaml").exists()


@pytest.mark.parametrize("name", [".", "..", "sub/..", "/"])
def test_the_working_directory_and_its_parents_are_refused(tmp_path, monkeypatch, name):
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="is the working directory or holds it"):
        check_replaceable(name, "bla-finetune")
    with pytest.raises(ValueError, match="working directory"), staged(name, "bla-finetune"):
        pass
    assert listing(tmp_path) == ["sub"]


def test_a_symlink_target_is_refused(tmp_path):
    real = tmp_path / "real"
    with staged(real, "bla-eval analyze") as stage:
        (stage / "report.md").write_text("r", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(ValueError, match=f"output {link} is a symbolic link"):
        check_replaceable(link, "bla-eval analyze")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="symbolic link"), staged(tmp_path / "dangling"):
        pass
    assert listing(tmp_path) == ["dangling", "link", "real"]


def test_the_module_imports_nothing_heavy():
    code = "import sys, bla_eval.outputs; print({'torch', 'datasets'} & set(sys.modules))"
    child = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert child.stdout.strip() == "set()"


def test_threads_writing_one_file_never_mix_their_temporaries(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    path = tmp_path / "cache.json"
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda n: write_json_atomic(path, {"n": n, "pad": "x" * 10_000}), range(64)))
    assert read_json(path)["pad"] == "x" * 10_000 and listing(tmp_path) == ["cache.json"]


def test_read_records_drops_a_cut_off_last_line(tmp_path):
    path = tmp_path / "scores.jsonl"
    good = [{"task": "t", "id": str(i), "scores": [i]} for i in range(3)]
    text = "".join(json.dumps(r) + "\n" for r in good)
    path.write_text(text + '{"task": "t", "id": "3", "sco', encoding="utf-8")
    assert read_records(path) == good
    assert path.read_text(encoding="utf-8").endswith('"sco')  # a reader does not write
    assert read_records(path, repair=True) == good
    assert path.read_text(encoding="utf-8") == text


def test_read_records_rejects_a_broken_middle_line(tmp_path):
    path = tmp_path / "scores.jsonl"
    good = '{"task": "t", "id": "1", "scores": [1]}\n'
    path.write_text(good + "not json\n" + good, encoding="utf-8")
    with pytest.raises(ValueError, match="line 2"):
        read_records(path)


@pytest.mark.parametrize("depth", [64, 100_000])
def test_json_nested_too_deep_is_refused_naming_the_file(tmp_path: Path, depth: int):
    deep = "[" * depth + "]" * depth  # inside an object: one level more than the limit
    (tmp_path / "results.json").write_text('{"a": ' + deep + "}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"results.json is not valid JSON: nested deeper than 64"):
        read_json(tmp_path / "results.json")
    line = '{"task": "t", "id": "1", "scores": ' + deep + "}\n"
    (tmp_path / "scores.jsonl").write_text(line, encoding="utf-8")
    with pytest.raises(ValueError, match=r"scores.jsonl: line 1 is not a score record: nested"):
        read_records(tmp_path / "scores.jsonl")


def test_json_nested_to_the_limit_is_read(tmp_path: Path):
    (tmp_path / "doc.json").write_text('{"a": ' + "[" * 63 + "]" * 63 + "}", encoding="utf-8")
    assert "a" in read_json(tmp_path / "doc.json")


def test_every_json_number_is_bounded_where_it_is_parsed(tmp_path: Path):
    """An integer of 10**400 (an OverflowError once a reader makes it a float) and a number too
    large for a float are refused by the one parser, naming the file (and the line)."""
    from bla_eval.outputs import MAX_JSON_INT_DIGITS, owner, parse_json

    (tmp_path / "results.json").write_text('{"n": ' + str(10**400) + "}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"results.json is not valid JSON: an integer of 401 dig"):
        read_json(tmp_path / "results.json")
    line = '{"task": "t", "id": "1", "scores": [-' + str(10**400) + "]}\n"
    (tmp_path / "scores.jsonl").write_text(line, encoding="utf-8")
    with pytest.raises(ValueError, match=r"scores.jsonl: line 1 is not a score record: an integ"):
        read_records(tmp_path / "scores.jsonl")
    with pytest.raises(ValueError, match="the number 1e400 is too large for a float"):
        parse_json('{"a": 1e400}')
    largest = int("9" * MAX_JSON_INT_DIGITS)
    assert parse_json(f"[{largest}, -{largest}, 0.5, 1e308]") == [largest, -largest, 0.5, 1e308]
    (tmp_path / OWNER_FILE).write_text(
        '{"command": "x", "files": [], "n": ' + str(10**400) + "}", encoding="utf-8"
    )
    assert owner(tmp_path) is None  # a marker with such a number is no marker


@pytest.mark.parametrize("reader", [read_json, read_records, outputs.owner])
def test_a_fifo_where_a_file_is_read_is_refused_at_once(tmp_path: Path, reader):
    """No writer ever opens the FIFO: a reader that waited for one would hang the test."""
    path = tmp_path / "results.json"
    os.mkfifo(path)
    if reader is outputs.owner:
        os.rename(path, tmp_path / OWNER_FILE)
        assert reader(tmp_path) is None  # a FIFO is no marker
        return
    with pytest.raises(ValueError, match=r"results.json is a FIFO, not a regular file"):
        reader(path)


def test_a_marked_file_that_is_a_fifo_is_never_opened(tmp_path: Path):
    os.mkfifo(tmp_path / "bla.yaml")
    with pytest.raises(FileExistsError, match="exists and is not a file"):
        check_file_replaceable(tmp_path / "bla.yaml", "bla-eval export")


def test_a_key_given_twice_is_refused_where_unique_keys_are_asked():
    from bla_eval.outputs import parse_json

    assert parse_json('{"1": 1, "1": 2}') == {"1": 2}  # json's own reading, for run files
    with pytest.raises(ValueError, match="the key '1' is given twice in one object"):
        parse_json('{"0": {}, "1": 1, "1": 2}', unique_keys=True)


WRITE_BOTH = """
import resource, signal, sys
from pathlib import Path
from bla_eval.outputs import write_texts_atomic
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG)
resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))
out = Path(sys.argv[1])
try:
    write_texts_atomic({out / "a" / "small.txt": "small", out / "a" / "big.txt": "x" * 20000})
except OSError as err:
    print(err)
"""


def test_files_written_as_one_are_all_kept_or_none_when_a_write_fails(tmp_path: Path):
    """A write refused by the system (here: past the file-size limit, as a full disk refuses
    one) after another file of the output is written leaves no file and no folder of it."""
    run = [sys.executable, "-c", WRITE_BOTH, str(tmp_path / "out")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(run, capture_output=True, text=True, env=env, check=True)
    assert "File too large" in done.stdout and "big.txt" in done.stdout, done.stdout + done.stderr
    assert not (tmp_path / "out").exists()
    outputs.write_texts_atomic({tmp_path / "out" / "a.txt": "a", tmp_path / "out" / "b.txt": "b"})
    assert listing(tmp_path / "out") == ["a.txt", "b.txt"]


def test_a_markers_entries_that_are_no_names_are_left_out(tmp_path):
    """A damaged marker (``files`` or a sweep's ``cells`` listing an object, a list, a number)
    gives its readers names only: the folder is refused or replaced as its real names say,
    never a TypeError."""
    from bla_eval.outputs import OWNER_FILE, owner

    with staged(tmp_path / "ours", "bla-eval compare") as stage:
        (stage / "compare.md").write_text("c", encoding="utf-8")
    path = tmp_path / "ours" / OWNER_FILE
    marker = json.loads(path.read_text(encoding="utf-8"))
    bad = [{"a": 1}, ["b"], 3, None]
    path.write_text(json.dumps({**marker, "files": [*bad, "compare.md"], "cells": bad}))
    assert owner(tmp_path / "ours") == {
        "command": "bla-eval compare",
        "files": ["compare.md"],
        "cells": [],
    }
    check_replaceable(tmp_path / "ours", "bla-eval compare")


def _earlier_build(folder: Path, manifest: dict) -> None:
    """A dataset folder as the builders wrote it before :data:`OWNER_FILE`: its manifest."""
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "t.parquet").write_bytes(b"rows")
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD").write_text("ref", encoding="utf-8")


def test_a_folder_of_an_earlier_version_is_its_builders_through_the_manifest(tmp_path):
    from bla_eval.outputs import owner

    release = "python -m builders release"
    old = tmp_path / "bla"
    _earlier_build(old, {"builder": release, "files": {"data/t.parquet": {}}})
    assert owner(old) == {"command": release, "files": ["data/t.parquet", "manifest.json"]}
    check_replaceable(old, release, keep_hidden=True)
    with pytest.raises(FileExistsError, match=f"holds the output of `{release}`"):
        check_replaceable(old, "python -m builders construct", keep_hidden=True)
    with pytest.raises(FileExistsError, match=r"did not write \(.git/HEAD, .git/\)"):
        check_replaceable(old, release)  # hidden entries count unless they are kept
    (old / "data" / "mine.txt").write_text("x", encoding="utf-8")
    with pytest.raises(FileExistsError, match=r"did not write \(data/mine.txt\)"):
        check_replaceable(old, release, keep_hidden=True)
    oldest = tmp_path / "ap"
    _earlier_build(oldest, {"kind": "construct", "files": {"data/t.parquet": {}}})
    assert owner(oldest)["command"] == "python -m builders construct"
    other = tmp_path / "project"
    _earlier_build(other, {"builder": "my tool", "files": {"data/t.parquet": {}}})
    assert owner(other) is None


def test_a_replacement_keeping_hidden_entries_carries_them_unlisted(tmp_path):
    release = "python -m builders release"
    old = tmp_path / "bla"
    _earlier_build(old, {"builder": release, "files": {"data/t.parquet": {}}})
    with staged(old, release, keep_hidden=True) as stage:
        (stage / "README.md").write_text("card", encoding="utf-8")
    assert listing(old) == [".bla-output.json", ".git", "README.md"]
    assert (old / ".git" / "HEAD").read_text(encoding="utf-8") == "ref"
    assert json.loads((old / OWNER_FILE).read_text(encoding="utf-8")) == {
        "command": release,
        "files": ["README.md"],
    }
    check_replaceable(old, release, keep_hidden=True)
