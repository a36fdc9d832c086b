"""Published per-datapoint scores (``bla-eval export --scores ORG/RESULTS``) ranked together.

Model authors push their runs' ``results.json`` and ``scores.jsonl`` to results dataset repos;
the Space pulls the repos named in ``BLA_PUBLISHED_RESULTS`` (comma-separated), reads every run
folder in them with ``RunFolder.open`` (each metric recomputed from the scores; a run that
disagrees is skipped with a warning), keeps the largest group of runs that scored the same
datapoints, and ranks them with ``bla_eval.analysis.leaderboard``: per task the score with its
95% interval, the rank with its rank interval, and the groups
not separated.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bla_eval.analysis.rundata import Run, load_run
from bla_eval.cli_common import one_line
from bla_eval.outputs import staged
from bla_eval.redact import shown

from . import results_store

log = logging.getLogger(__name__)

VARIABLE = "BLA_PUBLISHED_RESULTS"
PULL_COMMAND = "bla-space published"
"""The marker of a pulled repo's folder (its files under :data:`REPO_FOLDER`): only such a
folder is ever replaced by the next pull."""
REPO_FOLDER = "repo"
MAX_ID_CHARS = 96
"""The longest name (and namespace) of a Hub repo id."""
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
SHOWN_CHARS = 40
"""Characters of a bad id its warning shows."""


def normalised(repo: str) -> str:
    """``repo`` as the one spelling it is read under: ``org__res`` (the folder spelling of an
    id) is ``org/res``; a ValueError (one line) names an id that is no ``org/name``."""
    repo = repo.strip()
    if "/" not in repo and "__" in repo:
        repo = repo.replace("__", "/", 1)
    parts = repo.split("/")
    if not (
        len(parts) == 2
        and all(0 < len(p) <= MAX_ID_CHARS and ID_RE.match(p) for p in parts)
        and not any(bad in repo for bad in ("--", "..", "_/", "/_"))
        and not any(p.endswith((".", "-")) for p in parts)
    ):
        shown = repo if len(repo) <= SHOWN_CHARS else repo[:SHOWN_CHARS] + "..."
        raise ValueError(
            f"{VARIABLE}: {shown!r} is not a Hub dataset repo id (org/name, at most "
            f"{MAX_ID_CHARS} characters each): skipped"
        )
    return repo


def read_setting(value: str | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(repo ids, warnings) of ``BLA_PUBLISHED_RESULTS`` (comma-separated): each id normalised
    (:func:`normalised`) and kept once (ids differing only in case are one repo); each bad id
    gives one warning line and is skipped."""
    ids: dict[str, str] = {}
    warnings = []
    for part in (value or "").split(","):
        if not part.strip():
            continue
        try:
            repo = normalised(part)
        except ValueError as err:
            warnings.append(str(err))
            continue
        ids.setdefault(repo.lower(), repo)
    return tuple(ids.values()), tuple(warnings)


def repo_folder(repo: str) -> str:
    """The folder name of a normalised repo id (``org--name``: ``--`` is in no id, so two repos
    never share a folder)."""
    return repo.lower().replace("/", "--")


def pull(repos: Sequence[str], folder: Path) -> tuple[list[Path], list[str]]:
    """(each repo's files, one line per repo that could not be pulled). A repo is downloaded
    (``snapshot_download``) into a staged folder of its own under ``folder`` (the Space's
    cache), marked as this pull's, which replaces only a folder an earlier pull marked: a
    folder or file there that the project did not write is never replaced."""
    out: list[Path] = []
    ids, failed = read_setting(",".join(repos))
    for repo in ids:
        target = Path(folder) / repo_folder(repo)
        try:
            with staged(target, PULL_COMMAND) as stage:
                results_store.download(repo, stage / REPO_FOLDER)
        except Exception as err:  # noqa: BLE001  (one line; the other repos are still read)
            failed = (*failed, f"could not read {repo}: {shown(one_line(err))}")
            log.warning("%s", failed[-1])
            continue
        out.append(target / REPO_FOLDER)
    return out, list(failed)


def published_runs(folders: Sequence[Path]) -> list[Run]:
    """Every readable, consistent BLA run folder in ``folders``, newest first."""
    runs = []
    for folder in folders:
        for found in results_store.list_runs(folder):
            if found.results.get("benchmark", "bla") != "bla":
                continue
            try:
                runs.append(load_run(found.path))
            except (ValueError, OSError) as err:
                log.warning("skipping published run %s: %s", found.path, err)
    return runs


def same_datapoints(runs: Sequence[Run]) -> list[Run]:
    """The largest group (two or more) of ``runs`` that scored the same datapoints of the same
    tasks; [] when no two did."""
    groups: dict[tuple, list[Run]] = {}
    for run in runs:
        key = tuple((t, tuple(str(r["id"]) for r in recs)) for t, recs in run.records.items())
        groups.setdefault(key, []).append(run)
    best = max(groups.values(), key=len, default=[])
    return best if len(best) > 1 else []


def ranking(runs: Sequence[Run], metric: str, resamples: int, seed: int = 0) -> dict[str, Any]:
    """The leaderboard (rank intervals, groups not separated) of the runs that share datapoints."""
    from bla_eval.analysis import leaderboard

    group = same_datapoints(runs)
    return leaderboard.leaderboard(group, resamples, seed, metric) if group else {}


def statistics(repos: Sequence[str], folder: Path, metric: str, resamples: int):
    """(Markdown, ``Table`` or None, PNG bytes or None) of the published runs' ranking."""
    from bla_eval.analysis import leaderboard

    if not repos:
        return f"No results repos are named ({VARIABLE} is not set).", None, None
    folders, failed = pull(repos, folder)
    runs = published_runs(folders)
    result = ranking(runs, metric, resamples)
    head = "".join(f"{line}\n\n" for line in failed)
    head += f"{len(runs)} published runs read from {', '.join(repos)}"
    if not result:
        return head + "; no two of them scored the same datapoints.", None, None
    table = leaderboard.leaderboard_table(result)
    count = len(next(iter(result.values()))["models"])
    text = f"{head}; {count} ranked on the same datapoints ({resamples} resamples, seed 0)."
    return text, table, leaderboard.leaderboard_figure(result)
