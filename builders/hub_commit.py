"""A local folder pushed to a Hub repo as one commit, and the same push as a printed plan.

``create_commit`` with every operation at once is the one way ``huggingface_hub`` changes a
branch atomically: the files are uploaded first (that touches no branch), then one commit adds
them and deletes every other file of ``main`` (the ``.gitattributes`` the Hub manages is kept),
with ``parent_commit`` set to the head read before, so a concurrent change makes the commit fail
instead of being mixed in. ``upload_folder`` is not used: for large folders it may split the
upload into several commits, and readers of ``main`` would see a partial repo in between.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from huggingface_hub.utils import validate_repo_id

KEPT_ON_HUB = frozenset({".gitattributes"})
"""Files of the Hub repo a push never deletes (the Hub keeps ``.gitattributes`` up to date)."""
BRANCH = "main"
HEAD = "<head of main, from repo_info>"
STALE = "<CommitOperationDelete of every other file on main except .gitattributes>"


@dataclass(frozen=True)
class HubCall:
    """One ``huggingface_hub.HfApi`` method call (placeholders in ``<>`` are filled at run)."""

    method: str
    kwargs: dict = field(default_factory=dict)

    def render(self) -> str:
        """The call as Python code, e.g. ``HfApi().create_repo(repo_id='org/bla', ...)``."""
        args = ", ".join(f"{k}={v!r}" for k, v in self.kwargs.items())
        return f"HfApi().{self.method}({args})"


@dataclass(frozen=True)
class Add:
    """A file of the folder, as it appears in a printed ``operations`` list."""

    path_in_repo: str
    path_or_fileobj: str

    def __repr__(self) -> str:
        return (
            f"CommitOperationAdd(path_in_repo={self.path_in_repo!r}, "
            f"path_or_fileobj={self.path_or_fileobj!r})"
        )


@dataclass(frozen=True)
class FolderPush:
    """What to push: ``files`` (relative paths) of ``folder`` to ``repo_id`` of ``repo_type``."""

    repo_id: str
    repo_type: str
    folder: Path
    files: tuple[str, ...]
    message: str
    create: dict[str, Any] = field(default_factory=dict)
    """Extra keyword arguments of ``create_repo`` (``private``, ``space_sdk``)."""

    def __post_init__(self) -> None:
        check_repo_id(self.repo_id)
        missing = [f for f in self.files if not (Path(self.folder) / f).is_file()]
        if missing:
            raise FileNotFoundError(f"{self.folder} lacks {', '.join(missing[:5])}")

    def calls(self) -> list[HubCall]:
        """The calls of :func:`push_folder`, in order."""
        repo = {"repo_id": self.repo_id, "repo_type": self.repo_type}
        folder = Path(self.folder).resolve()
        adds = [Add(f, str(folder / f)) for f in self.files]
        return [
            HubCall("create_repo", {**repo, "exist_ok": True, **self.create}),
            HubCall("repo_info", {**repo, "revision": BRANCH}),
            HubCall("list_repo_files", {**repo, "revision": HEAD}),
            HubCall(
                "create_commit",
                {
                    **repo,
                    "revision": BRANCH,
                    "parent_commit": HEAD,
                    "commit_message": self.message,
                    "operations": [*adds, STALE],
                },
            ),
        ]


def check_repo_id(repo_id: str) -> None:
    """``repo_id`` is ``ORG/NAME`` as the Hub spells it (ValueError naming it otherwise)."""
    try:
        validate_repo_id(repo_id)
    except Exception as err:  # HFValidationError: a message that names the rule broken
        raise ValueError(f"--repo-id {repo_id!r}: {err}") from None
    if "/" not in repo_id:
        raise ValueError(f"--repo-id {repo_id!r} must be ORG/NAME")


def print_plan(title: str, push: FolderPush, calls: list[HubCall]) -> None:
    """The dry run: the files with their sizes, then the calls, numbered."""
    sizes = [(f, (Path(push.folder) / f).stat().st_size) for f in push.files]
    total = sum(size for _, size in sizes)
    print(f"Dry run: nothing is sent. {title} would run:")
    for number, call in enumerate(calls, 1):
        print(f"{number}. {call.render()}")
    print(f"files ({len(sizes)}, {total / 1e6:.1f} MB) from {Path(push.folder).resolve()}:")
    for name, size in sizes:
        print(f"  {name}  {size} bytes")


def push_folder(api: Any, push: FolderPush) -> Any:
    """Create the repo if needed and make ``main`` hold exactly ``push.files`` in one commit.

    Returns the ``CommitInfo`` (its ``oid`` is the head of ``main`` when nothing changed).
    """
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete

    repo = {"repo_id": push.repo_id, "repo_type": push.repo_type}
    api.create_repo(**repo, exist_ok=True, **push.create)
    head = api.repo_info(**repo, revision=BRANCH).sha
    on_hub = set(api.list_repo_files(**repo, revision=head))
    stale = sorted(on_hub - set(push.files) - KEPT_ON_HUB)
    operations = [
        CommitOperationAdd(path_in_repo=f, path_or_fileobj=str(Path(push.folder) / f))
        for f in push.files
    ] + [CommitOperationDelete(path_in_repo=f) for f in stale]
    return api.create_commit(
        **repo,
        operations=operations,
        commit_message=push.message,
        revision=BRANCH,
        parent_commit=head,
    )


def one_line_http(err: BaseException) -> str:
    """A Hub error as one short line: the HTTP status and the server's message, from ``err`` or
    the error it wraps (an upload failure wraps the HTTP error)."""
    cause = err
    while _status(cause) is None and cause.__cause__ is not None:
        cause = cause.__cause__
    status = _status(cause)
    lines = str(cause).strip().splitlines()
    text = getattr(cause, "server_message", None) or (lines[0] if lines else type(cause).__name__)
    text = " ".join(str(text).split())
    return f"HTTP {status}: {text}" if status else text


def _status(err: BaseException) -> int | None:
    response = getattr(err, "response", None)
    return getattr(response, "status_code", None)
