"""Helpers of the tests that run the commands in this process: exit codes and one-line errors,
snapshots of folders, a folder of the user's, the arguments of a tiny-model run or fine-tuning,
fine-tuning's zero-shot rows against bla-eval's, score records edited by hand."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from bla_eval.runs import SCORES_FILE

LIMIT = 3  # datapoints per task of the finished runs ``co_run`` and ``learning_run`` (conftest)


def call(main: Callable[[list[str]], int], argv: list[str], capsys) -> tuple[int, str]:
    """(exit code, stderr) of an entry point run in this process (argparse exits instead)."""
    capsys.readouterr()
    try:
        code = main([str(a) for a in argv])
    except SystemExit as stop:
        code = int(stop.code or 0)
    return code, capsys.readouterr().err


def refused(main, argv: list[str], capsys, *fragments: str) -> str:
    """Run ``main(argv)``: exit 2 and one error line ``<prog>: error: ...`` holding
    ``fragments``, the last on stderr (progress lines of a long command may come before)."""
    code, err = call(main, argv, capsys)
    lines = err.strip().splitlines()
    errors = [line for line in lines if ": error: " in line]
    assert code == 2, err
    assert len(errors) == 1 and errors[0] == lines[-1] and "Traceback" not in err, err
    for fragment in fragments:
        assert str(fragment) in errors[0], errors[0]
    return errors[0]


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (symbolic links not followed) -> its bytes."""
    root = Path(root)
    if root.is_file():
        return {".": root.read_bytes()}
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def eval_args(model: Path, data: Path, out: Path, *extra: object) -> list[str]:
    """The arguments of a ``bla-eval`` run of ``model`` on CPU."""
    argv = ["--model", model, "--output", out, "--data", data, "--device", "cpu", *extra]
    return [str(a) for a in argv]


def finetune_args(model: Path, data: Path, out: Path, *extra: object) -> list[str]:
    """A quick bla-finetune: one epoch, 2 validation and test datapoints of CO."""
    argv = ["--model", model, "--task", "co", "--output", out, "--data", data, "--device", "cpu"]
    argv += ["--epochs", "1", "--limit", "2", "--eval-tasks", "co", "--batch-size", "64", *extra]
    return [str(a) for a in argv]


def before_is_bla_evals(document: dict, data: Path, out: Path, regions: Path | None = None) -> None:
    """Check that the zero-shot ("before") rows of a fine-tuning's first seed are, to the bit,
    ``bla-eval``'s on the same model, test splits (``--tasks`` in the same order) and ``--limit``:
    the metrics, and each score the fine-tuning starts from (``score_rows`` of the model as
    ``bla-finetune`` loads it)."""
    import torch
    from bla_eval.cli import main as bla_eval
    from bla_eval.finetune.models import load_trainable
    from bla_eval.finetune.train import read_rows, score_rows
    from bla_eval.regions.source import open_regions

    settings, zero = document["settings"], document["runs"][0]["zero_shot"]
    extra = [] if regions is None else ["--regions", regions]
    argv = eval_args(settings["model"], data, out, "--tasks", *zero, "--dtype", "float32", *extra)
    assert bla_eval([*argv, "--limit", str(settings["limit"])]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    for config, entry in zero.items():
        task = results["tasks"][config]
        assert entry["all"]["n"] == task["n"]
        for view in ("binary", "ranking"):
            assert entry["all"][view] == {m: task[view][m] for m in entry["all"][view]}, view
    source = None if regions is None else open_regions(str(regions))
    model = load_trainable(settings["model"], torch.device("cpu"), regions=source)
    rows = [r for c in zero for r in read_rows(model, str(data), c, "test", settings["limit"])]
    records = [json.loads(line) for line in (out / SCORES_FILE).read_text().splitlines()]
    by_key = {(r["task"], r["id"]): r["scores"] for r in records}
    assert score_rows(model, rows) == [by_key[(r.item.task, r.item.id)] for r in rows]


def user_folder(path: Path) -> Path:
    """A folder of the user's own files (a thesis and their own results)."""
    path.mkdir(parents=True)
    (path / "thesis.tex").write_text("\\chapter{Mine}\n", encoding="utf-8")
    (path / "results.json").write_text('{"mine": true}\n', encoding="utf-8")
    (path / "scores.jsonl").write_text('{"task": "x", "id": "1", "scores": [1]}\n')
    return path


def copy_run(run: Path, tmp_path: Path, name: str = "run") -> Path:
    """A copy of the folder ``run`` as ``tmp_path / name``."""
    target = tmp_path / name
    shutil.copytree(run, target)
    return target


def lines_of(path: Path) -> list[dict]:
    """The records of a scores file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_lines(path: Path, records: list[dict]) -> None:
    """Write ``records`` as a scores file."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def tampered(run: Path) -> None:
    """One datapoint's scores turned around: results.json no longer follows from the scores."""
    records = lines_of(run / SCORES_FILE)
    first = records[0]
    pairs = list(zip(first["scores"], first["labels"], strict=True))
    right = min(s for s, y in pairs if y) > max(s for s, y in pairs if not y)
    first["scores"] = [float(1 - y if right else y) for y in first["labels"]]
    write_lines(run / SCORES_FILE, records)


def duplicated(run: Path) -> None:
    """The first datapoint again, with other scores."""
    records = lines_of(run / SCORES_FILE)
    write_lines(run / SCORES_FILE, [*records, {**records[0], "scores": [0.0, 0.0, 1.0, 1.0]}])


def tree_hashes(root: Path) -> dict[str, str]:
    """Every entry under ``root`` -> a hash of what it is: a file's sha256, a link's target (not
    followed), ``dir`` for a folder. Two calls before and after a command show every entry it
    created, changed or removed (:func:`changed_entries`)."""
    root = Path(root)
    found = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = f"link:{os.readlink(path)}"
        elif path.is_dir():
            found[rel] = "dir"
        else:
            found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def changed_entries(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The entries created, changed or removed between two :func:`tree_hashes`."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def only_own_changes(before: dict[str, str], after: dict[str, str], *own: str) -> None:
    """Nothing changed between two :func:`tree_hashes` but entries under the paths ``own``
    (relative to the same root): the command's own outputs."""
    stray = [
        k
        for k in changed_entries(before, after)
        if not any(k == o or k.startswith(f"{o}/") for o in own)
    ]
    assert not stray, f"changed outside the command's own outputs: {stray}"


def killed_mid_run(argv: list[str], out: Path, records: int, env: dict | None = None) -> int:
    """Start a real ``bla-eval`` process on ``argv`` writing to ``out``, SIGKILL it once
    ``records`` score lines are written, and return how many it wrote (the process must still
    have been running: a run that ends first fails the calling test)."""
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen(
        [str(Path(sys.executable).parent / "bla-eval"), *map(str, argv), "--output", str(out)],
        env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    scores = Path(out) / SCORES_FILE
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline:
        if scores.exists() and scores.read_bytes().count(b"\n") >= records:
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.01)
    assert proc.wait(timeout=60) == -signal.SIGKILL, "the run ended before it could be killed"
    return scores.read_bytes().count(b"\n")
