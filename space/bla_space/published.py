"""Published per-datapoint scores (``bla-eval export --scores ORG/RESULTS``) ranked together.

Model authors push their runs' ``results.json`` and ``scores.jsonl`` to results dataset repos;
the Space pulls the repos named in ``BLA_PUBLISHED_RESULTS`` (comma-separated), reads every run
folder in them with ``RunFolder.open`` (each metric recomputed from the scores; a run that
disagrees is skipped with a warning), keeps the largest group of runs that scored the same
datapoints, and ranks them with ``bla_eval.analysis.leaderboard``: per task the score with its
95% interval, the rank with its rank interval, and tied groups.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bla_eval.analysis.rundata import Run, load_run

from . import results_store

log = logging.getLogger(__name__)

VARIABLE = "BLA_PUBLISHED_RESULTS"


def repo_ids(value: str | None) -> tuple[str, ...]:
    """The repo ids of ``BLA_PUBLISHED_RESULTS`` (a ValueError names one that is not an id)."""
    from huggingface_hub.utils import validate_repo_id

    ids = tuple(part.strip() for part in (value or "").split(",") if part.strip())
    for repo in ids:
        try:
            validate_repo_id(repo)
        except ValueError:
            raise ValueError(f"{VARIABLE}: {repo!r} is not a Hub dataset repo id") from None
    return ids


def pull(repos: Sequence[str], folder: Path) -> list[Path]:
    """Each repo's files in a folder of its own under ``folder`` (``snapshot_download``)."""
    out = []
    for repo in repos:
        target = Path(folder) / re.sub(r"[^A-Za-z0-9._-]", "__", repo)
        results_store.pull_from_hub(repo, target)
        out.append(target)
    return out


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
    """The leaderboard (rank intervals, tied groups) of the runs that share datapoints."""
    from bla_eval.analysis import leaderboard

    group = same_datapoints(runs)
    return leaderboard.leaderboard(group, resamples, seed, metric) if group else {}


def statistics(repos: Sequence[str], folder: Path, metric: str, resamples: int):
    """(Markdown, ``Table`` or None, PNG bytes or None) of the published runs' ranking."""
    from bla_eval.analysis import leaderboard

    if not repos:
        return f"No results repos are named ({VARIABLE} is not set).", None, None
    runs = published_runs(pull(repos, folder))
    result = ranking(runs, metric, resamples)
    head = f"{len(runs)} published runs read from {', '.join(repos)}"
    if not result:
        return head + "; no two of them scored the same datapoints.", None, None
    table = leaderboard.leaderboard_table(result)
    count = len(next(iter(result.values()))["models"])
    text = f"{head}; {count} ranked on the same datapoints ({resamples} resamples, seed 0)."
    return text, table, leaderboard.leaderboard_figure(result)
