"""What ``python -m builders space`` and ``python -m builders metric-space`` share: their options,
writing the repo folder, the dry run, the push in one commit, and the project's pinned
requirement.

Both read the files they deploy from the checkout the builders run from (the builders are a
repository script, never installed).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import re
import subprocess
import tempfile
from dataclasses import MISSING, dataclass, field
from pathlib import Path

from bla_eval.cli_common import option
from bla_eval.hub_auth import require_token
from bla_eval.outputs import staged

from builders.hub_commit import (
    FolderPush,
    HubCall,
    check_repo_id,
    one_line_http,
    print_plan,
    push_folder,
)

CHECKOUT = Path(__file__).resolve().parents[1]
"""The repository the builders run from (the sources of the Space and the metric)."""
PACKAGED = ("pyproject.toml", "bla_metric", "space")
"""What a pinned commit must hold unchanged for the deployed Space to run this checkout's code."""


@dataclass(frozen=True)
class Deployment:
    """A Space repo to write and, optionally, push: ``files`` (path -> bytes) and the Space
    variables to set after the commit."""

    command: str
    files: dict[str, bytes]
    message: str
    variables: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class DeployOptions:
    """``--out``, ``--repo-id``, ``--push``, ``--dry-run``, ``--private`` of a deployment."""

    out: Path = option(
        MISSING,
        "folder to write the repo into (new or empty, or an earlier output of this command, "
        "which is replaced)",
        type=Path,
    )
    repo_id: str | None = option(help="the Space to push to, ORG/NAME")
    push: bool = option(
        False, "upload the folder to --repo-id in one commit (needs HF_TOKEN with write access)"
    )
    dry_run: bool = option(
        False, "print the files and the Hub calls of the push to --repo-id; send nothing"
    )
    private: bool = option(False, "create the Space as private")


def run(args: argparse.Namespace, deployment: Deployment) -> int:
    """Write the folder, then make the push (``--push``); or, with ``--dry-run``, assemble the
    folder in a temporary one, print the push and remove it (``--out`` is left untouched)."""
    if (args.push or args.dry_run) and not args.repo_id:
        raise ValueError("--push and --dry-run need --repo-id ORG/NAME (the Space)")
    if args.repo_id and not (args.push or args.dry_run):
        raise ValueError("--repo-id is used with --push or --dry-run")
    if args.repo_id:
        check_repo_id(args.repo_id)
    if args.dry_run:
        with tempfile.TemporaryDirectory(prefix="bla-dry-run-") as scratch:
            folder = Path(scratch) / (args.out.name or "repo")
            push = _push(
                args, deployment, folder, write_folder(folder, deployment.files, deployment.command)
            )
            calls = push.calls() + variable_calls(args.repo_id, deployment.variables)
            print_plan(f"Pushing {args.out} to the Space {args.repo_id}", push, calls)
        print(f"{args.out} was not written (a dry run writes nothing)")
        return 0
    token = require_token(deployment.command) if args.push else None
    names = write_folder(args.out, deployment.files, deployment.command)
    print(f"wrote {args.out}: {', '.join(names)}")
    if args.repo_id:
        send(_push(args, deployment, args.out, names), deployment.variables, token)
    return 0


def _push(
    args: argparse.Namespace, deployment: Deployment, folder: Path, names: list[str]
) -> FolderPush:
    """The push of ``folder`` (holding ``names``) to the Space ``--repo-id``."""
    return FolderPush(
        repo_id=args.repo_id,
        repo_type="space",
        folder=folder,
        files=tuple(names),
        message=deployment.message,
        create={"space_sdk": "gradio", "private": args.private},
    )


def variable_calls(repo_id: str, variables: dict[str, str]) -> list[HubCall]:
    return [
        HubCall("add_space_variable", {"repo_id": repo_id, "key": key, "value": value})
        for key, value in variables.items()
    ]


def send(push: FolderPush, variables: dict[str, str], token: str | None) -> None:
    """The push: one commit, then the Space variables; a failure is one line."""
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    try:
        commit = push_folder(api, push)
    except Exception as err:  # upload or commit refused: the Space's main was not changed
        raise ValueError(
            f"pushing to the Space {push.repo_id} failed ({one_line_http(err)}); its main "
            "branch is as it was"
        ) from err
    try:
        for key, value in variables.items():
            api.add_space_variable(push.repo_id, key, value)
    except Exception as err:
        raise ValueError(
            f"the Space {push.repo_id} holds the new files (commit {commit.oid}) but setting its "
            f"variables failed ({one_line_http(err)}): run the same command again"
        ) from err
    print(f"pushed {push.folder} to {api.endpoint}/spaces/{push.repo_id} (commit {commit.oid})")


def write_folder(out: Path, files: dict[str, bytes], command: str) -> list[str]:
    """Write ``files`` into ``out`` through a staging folder; returns their sorted names."""
    with staged(out, command=command) as stage:
        for name, data in files.items():
            path = stage / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return sorted(files)


def card_with(text: str, **fields: object) -> str:
    """A repo card (``README.md`` text) with its YAML header fields set to ``fields``."""
    from huggingface_hub import RepoCard

    card = RepoCard(text, ignore_metadata_errors=False)
    for key, value in fields.items():
        card.data[key] = value
    return str(card)


def gradio_version() -> str:
    """The installed Gradio version: the ``sdk_version`` the Space runs (the tested one)."""
    return importlib.metadata.version("gradio")


# ---------------------------------------------------------------------------- pinned project
def project_requirement(extra: str, root: Path = CHECKOUT) -> str:
    """``bla-benchmark[extra] @ git+https://...@<commit>``: the project at the checkout's commit.

    Refused (ValueError naming the fix) when the checkout has no ``origin`` remote reachable
    over https, or uncommitted changes in the packaged files.
    """
    remote = _git(root, "remote", "get-url", "origin")
    if remote is None:
        raise ValueError(
            f"{root} has no git remote 'origin' to install the project from: pass --requirement "
            f"(e.g. '{distribution()}[{extra}] @ git+https://github.com/ORG/REPO@COMMIT')"
        )
    commit = _git(root, "rev-parse", "HEAD")
    changed = (_git(root, "status", "--porcelain", "--", *PACKAGED) or "").splitlines()
    if changed:
        names = ", ".join(line.split(maxsplit=1)[-1] for line in changed[:3])
        raise ValueError(
            f"{root} has uncommitted changes ({names}): commit and push them first, so that the "
            "Space installs this code, or pass --requirement"
        )
    return f"{distribution()}[{extra}] @ git+{https_url(remote)}@{commit}"


def distribution() -> str:
    """The project's distribution name (the one that installs ``bla_eval``)."""
    names = importlib.metadata.packages_distributions().get("bla_eval") or ["bla-benchmark"]
    return names[0]


def https_url(remote: str) -> str:
    """A git remote as an https URL a Space can clone, credentials removed
    (``git@github.com:org/repo.git`` -> ``https://github.com/org/repo.git``)."""
    scp = re.match(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$", remote)
    if scp:
        return f"https://{scp[1]}/{scp[2]}"
    url = re.match(r"^(https?|ssh|git)://(?:[^@/]+@)?([^/:]+)(:\d+)?/(.+)$", remote)
    if url:
        port = url[3] if url[1].startswith("http") else ""  # an ssh port is not the https one
        return f"https://{url[2]}{port or ''}/{url[4]}"
    raise ValueError(
        f"git remote 'origin' ({remote}) is not a URL a Space can clone: pass --requirement"
    )


def _git(root: Path, *args: str) -> str | None:
    """The output of ``git -C root args`` (None when git fails)."""
    try:
        done = subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()
