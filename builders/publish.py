"""Publish a built dataset repo to the Hugging Face Hub: create the repo, upload, tag the commit.

The tag must be ``v`` + the manifest's ``dataset_version``: the tag is the revision users pin
(``load_dataset(..., revision="v1.0.0")``), so it has to name exactly the content it points to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from huggingface_hub.utils import validate_repo_id

from builders.manifest import MANIFEST, read_manifest, verify_files

TAG_PATTERN = re.compile(r"^v\d+\.\d+\.\d+$")
UPLOAD_COMMIT = "<oid of the upload_folder commit>"
"""Placeholder, in the plan, for the commit the upload creates; the tag points to it."""


@dataclass(frozen=True)
class HubCall:
    """One ``huggingface_hub.HfApi`` method call."""

    method: str
    kwargs: dict = field(default_factory=dict)

    def render(self) -> str:
        """The call as Python code, e.g. ``HfApi().create_repo(repo_id='org/bla', ...)``."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"HfApi().{self.method}({args})"


def check_tag(tag: str, manifest: dict) -> None:
    """The tag is ``v<dataset_version>`` of the manifest (raises ValueError otherwise)."""
    expected = "v" + manifest["dataset_version"]
    if not TAG_PATTERN.match(tag):
        raise ValueError(f"tag {tag!r} is not of the form vMAJOR.MINOR.PATCH (expected {expected})")
    if tag != expected:
        raise ValueError(
            f"tag {tag!r} does not match the built dataset version {manifest['dataset_version']} "
            f"(manifest.json): use --tag {expected}, or bump DATASET_VERSION in "
            "builders/schema.py and rebuild"
        )


def plan_publish(folder: Path, repo_id: str, tag: str, private: bool = False) -> list[HubCall]:
    """Check the built folder against its manifest and the tag; return the Hub calls to make."""
    folder = Path(folder)
    validate_repo_id(repo_id)
    if "/" not in repo_id:
        raise ValueError(f"--repo-id {repo_id!r} must be ORG/NAME")
    manifest = read_manifest(folder)
    check_tag(tag, manifest)
    problems = verify_files(folder, manifest)
    if problems:
        raise ValueError(f"{folder} does not match its manifest: " + "; ".join(problems[:5]))
    files = sorted([*manifest["files"], MANIFEST])
    return [
        HubCall(
            "create_repo",
            {"repo_id": repo_id, "repo_type": "dataset", "exist_ok": True, "private": private},
        ),
        HubCall(
            "upload_folder",
            {
                "repo_id": repo_id,
                "repo_type": "dataset",
                "folder_path": str(folder.resolve()),
                "allow_patterns": files,
                "delete_patterns": ["data/**"],
                "commit_message": f"BLA dataset {tag}",
            },
        ),
        HubCall(
            "create_tag",
            {
                "repo_id": repo_id,
                "repo_type": "dataset",
                "tag": tag,
                "tag_message": f"BLA dataset {tag}",
                "revision": UPLOAD_COMMIT,
            },
        ),
    ]


def publish(
    folder: Path, repo_id: str, tag: str, dry_run: bool = False, private: bool = False
) -> list[HubCall]:
    """Publish ``folder`` as dataset ``repo_id`` tagged ``tag``; with ``dry_run`` only print.

    Returns the calls (planned, or made). Stale files under ``data/`` on the Hub are deleted
    in the same commit, so the tagged revision holds exactly this build.
    """
    calls = plan_publish(folder, repo_id, tag, private)
    if dry_run:
        print(f"Dry run: nothing is sent. Publishing {folder} would run:")
        for number, call in enumerate(calls, 1):
            print(f"{number}. {call.render()}")
        return calls
    from huggingface_hub import HfApi

    api = HfApi()
    commit = None
    for call in calls:
        kwargs = dict(call.kwargs)
        if kwargs.get("revision") == UPLOAD_COMMIT:
            kwargs["revision"] = commit.oid
        print(f"running {call.method} on {repo_id}")
        result = getattr(api, call.method)(**kwargs)
        if call.method == "upload_folder":
            commit = result
    print(f"published {repo_id} at {tag} (commit {commit.oid})")
    return calls
