"""Settings of the Space, read once from environment variables (all optional)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bla_eval.benchmarks.bla import default_data
from bla_eval.user_cache import user_cache

from bla_metric import hub_ids

from .providers import ROUTER

log = logging.getLogger(__name__)

TRUE_WORDS = ("1", "true", "yes", "on")
RUNS_VARIABLE = "BLA_SPACE_RUNS"
DEFAULT_RUNS = Path("runs") / "space"
"""The Space's results folder, and its runs' folder, when no variable names them."""


@dataclass(frozen=True)
class SpaceConfig:
    """What the Space serves and what it accepts.

    Environment variables: ``BLA_DATASET`` (Hub dataset id or local folder; default: the
    project's local build if there is one, else the Hub id), ``BLA_RESULTS_DIR``
    (the folder of finished runs it shows: runs, a sweep folder or a folder holding one),
    ``BLA_SPACE_RUNS`` (where its own runs go: :attr:`runs_dir`), ``BLA_RESULTS_REPO`` (Hub
    dataset repo its own runs are synced with),
    ``BLA_MAX_PARAMS`` (model size cap, e.g. ``4e9``), ``BLA_ALLOW_LOCAL_MODELS`` (accept local
    folders as model ids), ``BLA_DEFAULT_LIMIT``, ``BLA_BATCH_SIZE``, ``BLA_DEVICE``,
    ``BLA_PUBLISHED_RESULTS`` (comma-separated Hub dataset repos of published per-datapoint
    scores, ranked in the Leaderboard tab: ``published.py``; a bad id is skipped with one
    warning line), ``BLA_CACHE_DIR`` (where those repos are pulled), ``BLA_INFERENCE_ROUTER``
    and ``BLA_INFERENCE_PROVIDERS`` (runs on Inference Providers: ``providers.py``).
    """

    dataset: str = hub_ids.DATASET
    results_dir: Path = DEFAULT_RUNS
    results_repo: str | None = None
    max_params: float = 4e9
    allow_local_models: bool = False
    default_limit: int = 20
    batch_size: int = 32
    device: str = "auto"
    published_repos: tuple[str, ...] = ()
    published_warnings: tuple[str, ...] = ()
    """One line per id of ``BLA_PUBLISHED_RESULTS`` that is skipped (not a repo id)."""
    router: str = ROUTER
    """The Inference Providers router (``BLA_INFERENCE_ROUTER``)."""
    providers: bool = False
    """Offer runs on Inference Providers with "Sign in with Hugging Face": on a Space (its
    README declares ``hf_oauth``), or ``BLA_INFERENCE_PROVIDERS=1`` (Gradio's local sign-in
    then stands for the machine's own Hub login)."""
    cache_dir: Path = field(default_factory=lambda: user_cache({}))
    """The project's cache (``$BLA_CACHE_DIR``, else ``$XDG_CACHE_HOME/bla``, else
    ``~/.cache/bla``): published results repos are pulled under it, nowhere else."""
    space_runs: Path | None = None
    """Where the Space writes its own runs (``BLA_SPACE_RUNS``); unset: :attr:`runs_dir`."""

    @property
    def runs_dir(self) -> Path:
        """The folder of the Space's own runs (evaluations, provider runs, runs pulled from
        ``BLA_RESULTS_REPO``): ``BLA_SPACE_RUNS``, else ``results_dir`` when that is no other
        command's output, else ``runs/space`` (a ``bla-eval sweep`` folder shown as
        ``results_dir`` stays the sweep's: a later sweep on its plan still runs). A folder
        another command's marker claims is a ValueError: the Space never writes into one."""
        from bla_eval.outputs import owner

        folder = self.space_runs
        if folder is None:
            folder = self.results_dir if owner(self.results_dir) is None else DEFAULT_RUNS
        marker = owner(folder)
        if marker is not None:
            raise ValueError(
                f"{folder} holds the output of `{marker['command']}`: the Space writes its runs "
                f"into a folder of its own; set {RUNS_VARIABLE} to another folder"
            )
        return folder

    @property
    def folders(self) -> tuple[Path, ...]:
        """Every folder whose runs the Space lists: ``results_dir``, then its own runs'."""
        try:
            own = self.runs_dir
        except ValueError:  # no runs of its own to list; a run says why
            return (self.results_dir,)
        return tuple(dict.fromkeys((self.results_dir, own)))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SpaceConfig:
        """Build the settings from ``env`` (default: ``os.environ``); unset keys keep defaults."""
        from .published import VARIABLE, read_setting

        env = os.environ if env is None else env
        base = cls()
        published, warnings = read_setting(env.get(VARIABLE))
        for line in warnings:  # the Space starts; the Leaderboard tab shows the lines too
            log.warning("%s", line)
        return cls(
            dataset=env.get("BLA_DATASET") or default_data(),
            results_dir=Path(env.get("BLA_RESULTS_DIR", str(base.results_dir))),
            results_repo=env.get("BLA_RESULTS_REPO") or None,
            max_params=_number(env, "BLA_MAX_PARAMS", base.max_params),
            allow_local_models=env.get("BLA_ALLOW_LOCAL_MODELS", "").lower() in TRUE_WORDS,
            default_limit=int(_number(env, "BLA_DEFAULT_LIMIT", base.default_limit)),
            batch_size=int(_number(env, "BLA_BATCH_SIZE", base.batch_size)),
            device=env.get("BLA_DEVICE", base.device),
            published_repos=published,
            published_warnings=warnings,
            router=env.get("BLA_INFERENCE_ROUTER") or base.router,
            providers=_flag(env, "BLA_INFERENCE_PROVIDERS", default=env.get("SYSTEM") == "spaces"),
            cache_dir=user_cache(env),
            space_runs=Path(env[RUNS_VARIABLE]) if env.get(RUNS_VARIABLE) else None,
        )


def _flag(env: Mapping[str, str], key: str, default: bool) -> bool:
    """``env[key]`` as on/off (``1``, ``true``, ``yes``, ``on``), else ``default`` when unset."""
    raw = env.get(key)
    return default if raw in (None, "") else raw.lower() in TRUE_WORDS


def _number(env: Mapping[str, str], key: str, default: float) -> float:
    """A positive number from ``env[key]``, or ``default`` when unset."""
    raw = env.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{key}={raw!r} is not a number") from None
    if value < 0:
        raise ValueError(f"{key}={raw!r} must not be negative")
    return value
