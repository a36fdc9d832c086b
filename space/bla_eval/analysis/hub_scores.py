"""``bla-eval export RUN --scores ORG/RESULTS``: a run's per-datapoint scores on the Hub.

The run's ``results.json`` and ``scores.jsonl`` go, in one commit, into the folder
:func:`folder_name` of a Hub dataset repo (created when missing), the layout of the Space's
results repo (``BLA_RESULTS_REPO``): any reader of run folders (``RunFolder.open``, the Space's
leaderboard, ``bla-eval compare``) reads them back, recomputes every metric from the scores and
ranks the run among others with rank intervals. Each ``.eval_results`` entry names that folder
(:func:`scores_location`) so a leaderboard can find the scores behind the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..hub_auth import require_token
from ..runs import RESULTS_FILE, SCORES_FILE

PUSH_COMMAND = "bla-eval export --scores --push"
COMMIT_MESSAGE = "Add BLA per-datapoint scores"


def folder_name(results: dict[str, Any]) -> str:
    """The run's folder in the results repo: its model and creation time, file-name safe (the
    same run always lands in the same folder)."""
    model = str(results.get("model") or "model").rstrip("/").split("/")[-1]
    stamp = re.sub(r"[^0-9]", "", str(results.get("created") or ""))[:14]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_.")[:80] or "model"
    return f"{slug}-{stamp}" if stamp else slug


def scores_location(repo_id: str, results: dict[str, Any]) -> str:
    """Where the scores are, as an ``hf://`` path (huggingface_hub's file system notation)."""
    return f"hf://datasets/{repo_id}/{folder_name(results)}/{SCORES_FILE}"


def scores_push_call(
    repo_id: str, run_dir: Path, results: dict[str, Any]
) -> tuple[str, Callable[[str | None], str]]:
    """(the huggingface_hub calls as Python source, a function that makes them with a token and
    returns the commit's id)."""
    folder = folder_name(results)
    files = {f"{folder}/{name}": str(Path(run_dir) / name) for name in (RESULTS_FILE, SCORES_FILE)}
    source = (
        "from huggingface_hub import CommitOperationAdd, HfApi\n"
        "api = HfApi()\n"
        f"api.create_repo({repo_id!r}, repo_type='dataset', exist_ok=True)\n"
        "api.create_commit(\n"
        f"    repo_id={repo_id!r},\n"
        "    repo_type='dataset',\n"
        "    operations=["
        + ", ".join(
            f"CommitOperationAdd(path_in_repo={k!r}, path_or_fileobj={v!r})"
            for k, v in files.items()
        )
        + "],\n"
        f"    commit_message={COMMIT_MESSAGE!r},\n"
        ")"
    )

    def run(token: str | None = None) -> str:
        from huggingface_hub import CommitOperationAdd, HfApi

        api = HfApi(token=token or require_token(PUSH_COMMAND))
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True)
        operations = [
            CommitOperationAdd(path_in_repo=k, path_or_fileobj=v) for k, v in files.items()
        ]
        commit = api.create_commit(
            repo_id, operations, repo_type="dataset", commit_message=COMMIT_MESSAGE
        )
        return commit.oid

    return source, run
