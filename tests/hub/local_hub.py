"""A stand-in for the Hugging Face Hub's write path, on 127.0.0.1, for the tests of publishing,
deploying, exporting and syncing results.

It implements the HTTP endpoints the real ``huggingface_hub`` client calls for those operations,
with the Hub's semantics where they matter: a commit is applied at once under a lock on top of
the branch head (or refused with 412 when ``parentCommit`` is not the head), an existing tag is
never moved (409), files are regular git blobs or LFS objects (``*.parquet`` and files over
10 MB), a commit with ``create_pr=1`` opens ``refs/pr/<n>``. LFS uses the ``basic`` transfer
(upload + verify); the Xet protocol is not implemented, so clients run with
``HF_HUB_DISABLE_XET=1``. Write endpoints need an ``Authorization`` header (401 otherwise).

Every request is recorded in ``LocalHub.calls`` (method, route name); ``LocalHub.fail`` makes
the next matching requests fail with a given status (a failure injected mid-operation).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

PREFIX = {"model": "", "dataset": "datasets/", "space": "spaces/"}
TYPES = {"models": "model", "datasets": "dataset", "spaces": "space"}
LFS_THRESHOLD = 10 * 1024 * 1024
GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"


def git_blob_oid(data: bytes) -> str:
    """The git object id of a blob (what the Hub reports for a regular file)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    spec = "version https://git-lfs.github.com/spec/v1"
    return f"{spec}\noid sha256:{sha256}\nsize {size}\n".encode()


@dataclass(frozen=True)
class Entry:
    """A file at a commit: its content's sha256 and size, and whether it is stored in LFS."""

    sha256: str
    size: int
    lfs: bool
    git_oid: str


@dataclass
class Repo:
    repo_type: str
    repo_id: str
    commits: dict[str, dict[str, Entry]] = field(default_factory=dict)
    messages: dict[str, str] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)
    lfs: set[str] = field(default_factory=set)
    prs: int = 0
    variables: dict[str, str] = field(default_factory=dict)

    def resolve(self, revision: str) -> str | None:
        for ref in (f"refs/heads/{revision}", f"refs/tags/{revision}", revision):
            if ref in self.refs:
                return self.refs[ref]
        return revision if revision in self.commits else None


class HubError(Exception):
    """An error answer: status, message, ``X-Error-Code`` header, extra body keys."""

    def __init__(self, status: int, message: str, code: str | None = None, **extra) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.extra = status, message, code, extra


@dataclass
class Failure:
    method: str
    route: str
    status: int
    skip: int
    times: int


class LocalHub:
    """The repositories and blobs of the stand-in (blobs on disk under ``root``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        (self.root / "blobs").mkdir(parents=True, exist_ok=True)
        self.repos: dict[tuple[str, str], Repo] = {}
        self.calls: list[tuple[str, str]] = []
        self.failures: list[Failure] = []
        self.lock = threading.Lock()
        self.url = ""
        self.signature = uuid.uuid4().hex

    # ---- test helpers -------------------------------------------------------------------------
    def fail(self, method: str, route: str, status: int, skip: int = 0, times: int = 1) -> None:
        """Answer ``status`` to ``times`` requests ``method route`` after letting ``skip`` pass."""
        self.failures.append(Failure(method, route, status, skip, times))

    def repo(self, repo_type: str, repo_id: str) -> Repo:
        return self.repos[(repo_type, repo_id)]

    def head(self, repo_type: str, repo_id: str, branch: str = "main") -> str:
        return self.repo(repo_type, repo_id).refs[f"refs/heads/{branch}"]

    def files(self, repo_type: str, repo_id: str, revision: str = "main") -> dict[str, bytes]:
        """Path -> bytes of every file of the repo at ``revision``."""
        repo = self.repo(repo_type, repo_id)
        entries = repo.commits[repo.resolve(revision)]
        return {path: self.blob(e.sha256) for path, e in sorted(entries.items())}

    def seed(self, repo_type: str, repo_id: str, files: dict[str, bytes], message: str) -> str:
        """Commit ``files`` to ``main`` (the repo is created when missing); returns the commit."""
        repo = self.repos.get((repo_type, repo_id)) or self.create_repo(repo_type, repo_id)
        lines = [{"key": "header", "value": {"summary": message}}]
        for path, data in files.items():
            content = base64.b64encode(data).decode()
            lines.append({"key": "file", "value": {"path": path, "content": content}})
        return self.commit(repo, "main", lines, create_pr=False)["commitOid"]

    def blob(self, sha256: str) -> bytes:
        return (self.root / "blobs" / sha256).read_bytes()

    # ---- storage ------------------------------------------------------------------------------
    def store(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        path = self.root / "blobs" / sha
        if not path.exists():
            tmp = path.with_name(f".{sha}.{uuid.uuid4().hex}")
            tmp.write_bytes(data)
            tmp.replace(path)
        return sha

    def create_repo(self, repo_type: str, repo_id: str) -> Repo:
        repo = Repo(repo_type, repo_id)
        sha = self.store(GITATTRIBUTES)
        entry = Entry(sha, len(GITATTRIBUTES), False, git_blob_oid(GITATTRIBUTES))
        oid = new_commit_oid()
        repo.commits[oid] = {".gitattributes": entry}
        repo.messages[oid] = "initial commit"
        repo.refs["refs/heads/main"] = oid
        self.repos[(repo_type, repo_id)] = repo
        return repo

    def commit(self, repo: Repo, branch: str, lines: list[dict], create_pr: bool) -> dict:
        """Apply one NDJSON commit payload at once; returns the Hub's commit answer."""
        header = next((line["value"] for line in lines if line["key"] == "header"), {})
        with self.lock:
            head = repo.resolve(branch)
            if head is None or f"refs/heads/{branch}" not in repo.refs:
                raise HubError(404, f"Revision Not Found: {branch}", "RevisionNotFound")
            parent = header.get("parentCommit")
            if parent and not head.startswith(parent) and not create_pr:
                raise HubError(412, "A commit has happened since. Please refresh and try again.")
            base = repo.resolve(parent) if parent else head
            files = dict(repo.commits[base or head])
            for line in lines:
                self._apply(repo, files, line["key"], line["value"])
            oid = new_commit_oid()
            repo.commits[oid] = files
            repo.messages[oid] = header.get("summary", "")
            answer = {"success": True, "commitOid": oid}
            prefix = f"{self.url}/{PREFIX[repo.repo_type]}{repo.repo_id}"
            answer["commitUrl"] = f"{prefix}/commit/{oid}"
            if create_pr:
                repo.prs += 1
                repo.refs[f"refs/pr/{repo.prs}"] = oid
                answer["pullRequestUrl"] = f"{prefix}/discussions/{repo.prs}"
            else:
                repo.refs[f"refs/heads/{branch}"] = oid
            return answer

    def _apply(self, repo: Repo, files: dict[str, Entry], key: str, value: dict) -> None:
        if key == "file":
            data = base64.b64decode(value["content"])
            files[value["path"]] = Entry(self.store(data), len(data), False, git_blob_oid(data))
        elif key == "lfsFile":
            if value["oid"] not in repo.lfs:
                raise HubError(400, f"LFS object {value['oid']} was never uploaded")
            pointer = lfs_pointer(value["oid"], value["size"])
            files[value["path"]] = Entry(value["oid"], value["size"], True, git_blob_oid(pointer))
        elif key == "deletedFile":
            if files.pop(value["path"], None) is None:
                raise HubError(404, f"File not found: {value['path']}", "EntryNotFound")
        elif key == "deletedFolder":
            folder = value["path"].rstrip("/") + "/"
            for path in [p for p in files if p.startswith(folder)]:
                del files[path]
        elif key != "header":
            raise HubError(400, f"unknown commit operation {key!r}")


def new_commit_oid() -> str:
    return hashlib.sha1(uuid.uuid4().bytes).hexdigest()


def tree_listing(entries: dict[str, Entry], path: str, recursive: bool) -> list[dict]:
    """The Hub's ``tree`` answer: files and folders under ``path``."""
    base = path.strip("/") + "/" if path.strip("/") else ""
    out, folders = [], set()
    for name, entry in sorted(entries.items()):
        if not name.startswith(base):
            continue
        rest = name[len(base) :]
        parts = rest.split("/")
        for depth in range(1, len(parts)):
            folder = base + "/".join(parts[:depth])
            if (recursive or depth == 1) and folder not in folders:
                folders.add(folder)
                out.append({"type": "directory", "oid": "0" * 40, "size": 0, "path": folder})
        if recursive or len(parts) == 1:
            out.append(file_info(name, entry))
    return out


def file_info(path: str, entry: Entry) -> dict:
    info = {"type": "file", "oid": entry.git_oid, "size": entry.size, "path": path}
    if entry.lfs:
        pointer_size = len(lfs_pointer(entry.sha256, entry.size))
        info["lfs"] = {"oid": entry.sha256, "size": entry.size, "pointerSize": pointer_size}
    return info


ROUTES: list[tuple[str, str, re.Pattern]] = [
    (m, name, re.compile(pattern))
    for m, name, pattern in [
        ("POST", "create_repo", r"^/api/repos/create$"),
        ("POST", "validate_yaml", r"^/api/validate-yaml$"),
        ("GET", "whoami", r"^/api/whoami-v2$"),
        ("GET", "repo_info", r"^/api/(?P<t>models|datasets|spaces)/(?P<id>[^/]+/[^/]+)$"),
        (
            "GET",
            "repo_info",
            r"^/api/(?P<t>models|datasets|spaces)/(?P<id>[^/]+/[^/]+)/revision/(?P<rev>[^/]+)$",
        ),
        ("GET", "refs", r"^/api/(?P<t>models|datasets|spaces)/(?P<id>[^/]+/[^/]+)/refs$"),
        (
            "GET",
            "tree",
            r"^/api/(?P<t>models|datasets|spaces)/(?P<id>[^/]+/[^/]+)/tree/(?P<rev>[^/]+)(?P<path>/.*)?$",
        ),
        (
            "POST",
            "paths_info",
            r"^/api/(?P<t>models|datasets|spaces)/(?P<id>[^/]+/[^/]+)/paths-info/(?P<rev>[^/]+)$",
        ),
        (
            "POST",
            "preupload",
            r"^/api/(?P<t>models|datasets|spaces)/(?P<id>[^/]+/[^/]+)/preupload/(?P<rev>[^/]+)$",
        ),
        (
            "POST",
            "commit",
            r"^/api/(?P<t>models|datasets|spaces)/(?P<id>[^/]+/[^/]+)/commit/(?P<rev>[^/]+)$",
        ),
        (
            "POST",
            "create_tag",
            r"^/api/(?P<t>models|datasets|spaces)/(?P<id>[^/]+/[^/]+)/tag/(?P<rev>[^/]+)$",
        ),
        (
            "POST",
            "lfs_batch",
            r"^/(?:(?P<t>datasets|spaces)/)?(?P<id>[^/]+/[^/]+)\.git/info/lfs/objects/batch$",
        ),
        ("POST", "space_variable", r"^/api/spaces/(?P<id>[^/]+/[^/]+)/variables$"),
        ("PUT", "lfs_upload", r"^/lfs-upload/(?P<t>\w+)/(?P<id>[^/]+/[^/]+)/(?P<oid>\w+)$"),
        ("POST", "lfs_verify", r"^/lfs-verify/(?P<t>\w+)/(?P<id>[^/]+/[^/]+)$"),
        (
            "GET",
            "resolve",
            r"^/(?:(?P<t>datasets|spaces)/)?(?P<id>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$",
        ),
        (
            "HEAD",
            "resolve",
            r"^/(?:(?P<t>datasets|spaces)/)?(?P<id>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$",
        ),
    ]
]
WRITES = {"create_repo", "preupload", "commit", "create_tag", "lfs_batch", "space_variable"}
"""Routes that need an ``Authorization`` header (an LFS upload URL is signed instead, like S3's)."""


class Handler(BaseHTTPRequestHandler):
    """One request: find its route, check the token of writes, answer JSON (or a file)."""

    hub: LocalHub
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # quiet: the calls are recorded in hub.calls
        pass

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def _dispatch(self, method: str) -> None:
        url = urlsplit(self.path)
        path = unquote(url.path)
        self.query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        length = int(self.headers.get("Content-Length") or 0)
        self.body = self.rfile.read(length) if length else b""
        for route_method, name, pattern in ROUTES:
            match = pattern.match(path)
            if route_method == method and match:
                self._run(method, name, match.groupdict())
                return
        self._send_json({"error": f"no route for {method} {path}"}, 404)

    def _run(self, method: str, name: str, params: dict) -> None:
        hub = self.hub
        hub.calls.append((method, name))
        try:
            self._maybe_fail(method, name)
            if name in WRITES and not self.headers.get("Authorization"):
                raise HubError(401, "Invalid credentials in Authorization header")
            params["t"] = TYPES.get(params.get("t") or "models", params.get("t") or "model")
            getattr(self, f"_{name}")(**params)
        except HubError as err:
            headers = {"X-Error-Code": err.code} if err.code else {}
            self._send_json({"error": err.message, **err.extra}, err.status, headers)

    def _maybe_fail(self, method: str, name: str) -> None:
        for failure in self.hub.failures:
            if failure.method == method and failure.route == name and failure.times > 0:
                if failure.skip > 0:
                    failure.skip -= 1
                    return
                failure.times -= 1
                raise HubError(failure.status, f"injected failure of {method} {name}")

    # ---- helpers ------------------------------------------------------------------------------
    def _send_json(self, obj, status: int = 200, headers: dict | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _json(self) -> dict:
        return json.loads(self.body or b"{}")

    def _repo(self, t: str, id: str) -> Repo:
        repo = self.hub.repos.get((t, id))
        if repo is None:
            raise HubError(404, "Repository Not Found", "RepoNotFound")
        return repo

    def _commit_at(self, repo: Repo, rev: str) -> tuple[str, dict[str, Entry]]:
        oid = repo.resolve(unquote(rev))
        if oid is None:
            raise HubError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        return oid, repo.commits[oid]

    # ---- routes -------------------------------------------------------------------------------
    def _create_repo(self, t: str) -> None:
        body = self._json()
        repo_type = body.get("type") or "model"
        repo_id = f"{body['organization']}/{body['name']}" if body.get("organization") else ""
        repo_id = repo_id or body["name"]
        url = f"{self.hub.url}/{PREFIX[repo_type]}{repo_id}"
        with self.hub.lock:
            if (repo_type, repo_id) in self.hub.repos:
                raise HubError(409, f"You already created this {repo_type} repo", url=url)
            self.hub.create_repo(repo_type, repo_id)
        self._send_json({"url": url, "name": repo_id})

    def _validate_yaml(self, t: str) -> None:
        self._send_json({"errors": [], "warnings": []})

    def _whoami(self, t: str) -> None:
        if not self.headers.get("Authorization"):
            raise HubError(401, "Invalid credentials in Authorization header")
        self._send_json({"type": "user", "name": "tester", "auth": {"type": "access_token"}})

    def _repo_info(self, t: str, id: str, rev: str = "main") -> None:
        repo = self._repo(t, id)
        oid, files = self._commit_at(repo, rev)
        self._send_json(
            {
                "id": id,
                "author": id.split("/")[0],
                "sha": oid,
                "private": False,
                "disabled": False,
                "tags": [],
                "siblings": [{"rfilename": path} for path in sorted(files)],
                "lastModified": "2026-01-01T00:00:00.000Z",
            }
        )

    def _refs(self, t: str, id: str) -> None:
        repo = self._repo(t, id)
        groups = {"refs/heads/": "branches", "refs/tags/": "tags"}
        if self.query.get("include_prs"):
            groups["refs/pr/"] = "pullRequests"
        out: dict[str, list] = {group: [] for group in groups.values()}
        out["converts"] = []
        for ref, oid in sorted(repo.refs.items()):
            for prefix, group in groups.items():
                if ref.startswith(prefix):
                    out[group].append({"name": ref[len(prefix) :], "ref": ref, "targetCommit": oid})
        self._send_json(out)

    def _tree(self, t: str, id: str, rev: str, path: str | None = None) -> None:
        _, files = self._commit_at(self._repo(t, id), rev)
        recursive = self.query.get("recursive", "").lower() in ("1", "true")
        self._send_json(tree_listing(files, path or "", recursive))

    def _paths_info(self, t: str, id: str, rev: str) -> None:
        _, files = self._commit_at(self._repo(t, id), rev)
        body = self.body.decode()
        wanted = parse_qs(body).get("paths") if "=" in body else None
        wanted = wanted or self._json().get("paths", [])
        self._send_json([file_info(p, files[p]) for p in wanted if p in files])

    def _preupload(self, t: str, id: str, rev: str) -> None:
        head, files = self._commit_at(self._repo(t, id), rev)
        answer = []
        for item in self._json()["files"]:
            lfs = item["path"].endswith(".parquet") or item["size"] > LFS_THRESHOLD
            existing = files.get(item["path"])
            oid = None
            if existing is not None:
                oid = existing.sha256 if existing.lfs else existing.git_oid
            mode = "lfs" if lfs else "regular"
            answer.append(
                {"path": item["path"], "uploadMode": mode, "shouldIgnore": False, "oid": oid}
            )
        self._send_json({"files": answer, "commitOid": head})

    def _lfs_batch(self, t: str, id: str) -> None:
        repo = self._repo(t, id)
        objects = []
        for obj in self._json()["objects"]:
            item = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in repo.lfs:
                item["actions"] = {
                    "upload": {
                        "href": f"{self.hub.url}/lfs-upload/{t}/{id}/{obj['oid']}"
                        f"?signature={self.hub.signature}"
                    },
                    "verify": {"href": f"{self.hub.url}/lfs-verify/{t}/{id}"},
                }
            objects.append(item)
        self._send_json({"transfer": "basic", "objects": objects})

    def _lfs_upload(self, t: str, id: str, oid: str) -> None:
        repo = self._repo(t, id)
        if self.query.get("signature") != self.hub.signature:
            raise HubError(403, "upload URL not signed")
        if hashlib.sha256(self.body).hexdigest() != oid:
            raise HubError(400, f"uploaded content does not match sha256 {oid}")
        self.hub.store(self.body)
        with self.hub.lock:
            repo.lfs.add(oid)
        self._send_json({})

    def _lfs_verify(self, t: str, id: str) -> None:
        body = self._json()
        if body["oid"] not in self._repo(t, id).lfs:
            raise HubError(404, f"LFS object {body['oid']} not found")
        self._send_json({})

    def _commit(self, t: str, id: str, rev: str) -> None:
        repo = self._repo(t, id)
        lines = [json.loads(line) for line in self.body.splitlines() if line.strip()]
        create_pr = self.query.get("create_pr") == "1"
        self._send_json(self.hub.commit(repo, unquote(rev), lines, create_pr))

    def _create_tag(self, t: str, id: str, rev: str) -> None:
        repo = self._repo(t, id)
        body = self._json()
        with self.hub.lock:
            oid, _ = self._commit_at(repo, rev)
            ref = f"refs/tags/{body['tag']}"
            if ref in repo.refs:
                raise HubError(409, f"Tag {body['tag']} already exists")
            repo.refs[ref] = oid
        self._send_json({"name": body["tag"], "ref": ref, "targetCommit": oid})

    def _space_variable(self, t: str, id: str) -> None:
        repo = self._repo("space", id)
        body = self._json()
        repo.variables[body["key"]] = body["value"]
        self._send_json({k: {"value": v} for k, v in repo.variables.items()})

    def _resolve(self, t: str, id: str, rev: str, path: str) -> None:
        repo = self._repo(t, id)
        oid, files = self._commit_at(repo, rev)
        entry = files.get(path)
        headers = {"X-Repo-Commit": oid}
        if entry is None:
            raise HubError(404, f"Entry not found: {path}", "EntryNotFound")
        data = self.hub.blob(entry.sha256)
        self.send_response(200)
        self.send_header("X-Repo-Commit", headers["X-Repo-Commit"])
        self.send_header("ETag", f'"{entry.git_oid}"')
        if entry.lfs:
            self.send_header("X-Linked-Etag", f'"{entry.sha256}"')
            self.send_header("X-Linked-Size", str(entry.size))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)


class HubServer:
    """The stand-in served by a thread on 127.0.0.1 (``start``/``stop``; ``url`` once started)."""

    def __init__(self, root: Path) -> None:
        self.hub = LocalHub(root)
        handler = type("BoundHandler", (Handler,), {"hub": self.hub})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.hub.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return self.hub.url

    def start(self) -> HubServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)
