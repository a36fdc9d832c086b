"""Publish a built dataset repo to the Hugging Face Hub: one commit on ``main``, then its tag.

The tag must be ``v`` + the manifest's ``dataset_version``: the tag is the revision users pin
(``load_dataset(..., revision="v1.0.0")``), so it has to name exactly the content it points to,
and a published tag is never moved (a second publish of the same version is refused).

Order of the calls: create the repo if needed, refuse an existing tag, upload the files and make
``main`` hold exactly the build in one commit (:func:`builders.hub_commit.push_folder`), tag that
commit. Everything before the commit leaves ``main`` as it was; if tagging fails after the
commit, running the same command again tags it (the commit then changes nothing).
"""

from __future__ import annotations

import re
from pathlib import Path

from bla_eval.hub_auth import require_token

from builders.hub_commit import FolderPush, HubCall, one_line_http, print_plan, push_folder
from builders.hub_eval import check_eval_file
from builders.manifest import MANIFEST, read_manifest, verify_files

TAG_PATTERN = re.compile(r"^v\d+\.\d+\.\d+$")
PUBLISH_COMMIT = "<oid of the create_commit above>"
"""Placeholder, in the plan, for the commit the publish creates; the tag points to it."""


class PublishError(ValueError):
    """Publishing stopped; the message says what changed on the Hub (usually nothing)."""


def check_tag(tag: str, manifest: dict) -> None:
    """The tag is ``v<dataset_version>`` of the manifest (raises ValueError otherwise)."""
    expected = "v" + manifest["dataset_version"]
    if not TAG_PATTERN.match(tag):
        raise ValueError(f"tag {tag!r} is not of the form vMAJOR.MINOR.PATCH (expected {expected})")
    if tag != expected:
        raise ValueError(
            f"tag {tag!r} does not match the built dataset version {manifest['dataset_version']} "
            f"(manifest.json): use --tag {expected}, or bump DATASET_VERSION in "
            "bla_metric/schema.py and rebuild"
        )


def plan_push(folder: Path, repo_id: str, tag: str, private: bool = False) -> FolderPush:
    """Check the built folder against its manifest and the tag; the files to push."""
    folder = Path(folder)
    manifest = read_manifest(folder)
    check_tag(tag, manifest)
    problems = verify_files(folder, manifest)
    if problems:
        raise ValueError(f"{folder} does not match its manifest: " + "; ".join(problems[:5]))
    check_eval_file(folder, manifest.get("configs", {}))
    return FolderPush(
        repo_id=repo_id,
        repo_type="dataset",
        folder=folder,
        files=tuple(sorted([*manifest["files"], MANIFEST])),
        message=f"BLA dataset {tag}",
        create={"private": private},
    )


def plan_publish(folder: Path, repo_id: str, tag: str, private: bool = False) -> list[HubCall]:
    """The Hub calls of a publish, in order (placeholders in ``<>`` are filled when run)."""
    return publish_calls(plan_push(folder, repo_id, tag, private), tag)


def publish_calls(push: FolderPush, tag: str) -> list[HubCall]:
    """The calls of :func:`publish` for ``push``: the folder's push, the tag check and the tag."""
    repo = {"repo_id": push.repo_id, "repo_type": "dataset"}
    create, *commit = push.calls()
    return [
        create,
        HubCall("list_repo_refs", repo),
        *commit,
        HubCall(
            "create_tag",
            {**repo, "tag": tag, "tag_message": f"BLA dataset {tag}", "revision": PUBLISH_COMMIT},
        ),
    ]


def publish(
    folder: Path, repo_id: str, tag: str, dry_run: bool = False, private: bool = False
) -> list[HubCall]:
    """Publish ``folder`` as dataset ``repo_id`` tagged ``tag``; with ``dry_run`` only print.

    Returns the calls (planned, or made).
    """
    token = None if dry_run else require_token("python -m builders publish")
    push = plan_push(folder, repo_id, tag, private)
    calls = publish_calls(push, tag)
    if dry_run:
        print_plan(f"Publishing {folder} as dataset {repo_id} at {tag}", push, calls)
        return calls
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    print(f"publishing {folder} to dataset {repo_id} at {tag}")
    try:
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True, private=private)
        refuse_existing_tag(api, repo_id, tag)
        commit = push_folder(api, push)
    except PublishError:
        raise
    except Exception as err:  # upload or commit refused: main was not changed
        raise PublishError(
            f"publishing {repo_id} failed before main changed ({one_line_http(err)}); main and "
            "the tags are as they were"
        ) from err
    tag_commit(api, repo_id, tag, commit.oid)
    print(f"published {repo_id} at {tag} (commit {commit.oid})")
    return calls


def refuse_existing_tag(api, repo_id: str, tag: str) -> None:
    """Raise PublishError when ``tag`` exists on the dataset repo (a version is never moved)."""
    for ref in api.list_repo_refs(repo_id, repo_type="dataset").tags:
        if ref.name == tag:
            raise PublishError(
                f"tag {tag} already exists on dataset {repo_id} (commit {ref.target_commit[:12]}): "
                "a published version is never moved; bump DATASET_VERSION in bla_metric/schema.py, "
                "rebuild and publish the new version"
            )


def tag_commit(api, repo_id: str, tag: str, oid: str) -> None:
    """Tag the published commit; a failure says that ``main`` already holds the build."""
    try:
        api.create_tag(
            repo_id,
            repo_type="dataset",
            tag=tag,
            tag_message=f"BLA dataset {tag}",
            revision=oid,
        )
    except Exception as err:
        raise PublishError(
            f"main of {repo_id} now holds the build (commit {oid}) but tagging {tag} failed "
            f"({one_line_http(err)}): run the same command again to tag it"
        ) from err
