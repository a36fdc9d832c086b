"""The model of one run, resolved once: what it is called, where it loads from, its kind,
transformers config and what detection read of it (``bla_eval.scorers.resolve`` builds it; the
scorers load from it)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..outputs import content_hash
from .capabilities import Capabilities


def is_gguf(model: str) -> bool:
    """A path to a ``.gguf`` file."""
    return model.lower().endswith(".gguf")


@dataclass(frozen=True)
class ResolvedModel:
    """A model as a run names and loads it."""

    name: str
    """The model as typed (``--model``; results.json's ``model``)."""
    path: str
    """Where it loads from: a local path or Hub id (a bundled short name's file), or, for a
    remote kind, the name its server knows."""
    kind: str
    """The model kind: detected, or given and checked."""
    config: Any = None
    """The transformers config, read once (None for open_clip, GGUF, a remote kind, or a config
    that could not be read for a given kind: the loader then reads it)."""
    revision: str | None = None
    """The Hub commit the config came from, when known."""
    gguf_file: str | None = None
    """``--gguf-file``: the GGUF file inside ``path``."""
    endpoint: str | None = None
    """``--endpoint`` of a remote kind."""
    capabilities: Capabilities | None = None
    """What detection read of the model, ``config`` included (given none: a record of
    ``config`` alone); the kinds read it, as their detection rules did."""

    def __post_init__(self) -> None:
        if self.capabilities is None:
            object.__setattr__(self, "capabilities", Capabilities(self.path, config=self.config))

    @property
    def weights(self) -> tuple[str, str | None]:
        """(folder or Hub id, GGUF file name): a path to a ``.gguf`` file is split into both."""
        if self.gguf_file is None and is_gguf(self.path):
            path = Path(self.path)
            return str(path.parent), path.name
        return self.path, self.gguf_file

    @cached_property
    def content_hash(self) -> str | None:
        """SHA-256 over the files of a model on this machine (a folder's files, not its
        subfolders; a single weights file itself; a GGUF file with its folder's JSON files),
        read once per run and never stored but in ``run.json``: a resume after the weights
        changed in place is refused. None for a Hub id, an open_clip name or a remote kind
        (their revision or the endpoint identifies them)."""
        if self.endpoint is not None:
            return None
        folder, gguf = self.weights
        path = Path(folder)
        if gguf is not None:
            files = [path / gguf, *sorted(path.glob("*.json"))] if path.is_dir() else []
        elif path.is_dir():
            files = sorted(p for p in path.iterdir() if not p.name.startswith("."))
        elif path.is_file():
            files = [path]
        else:
            return None
        return content_hash([f for f in files if f.is_file()], path)

    @property
    def config_kwargs(self) -> dict[str, Any]:
        """``config=`` for ``from_pretrained`` when the config was read (else transformers reads
        it; GGUF weights carry their own)."""
        if self.config is None or self.weights[1] is not None:
            return {}
        return {"config": self.config}
