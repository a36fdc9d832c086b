"""The BLA task registry: every fact about a construction, written once.

Every other list, map or tuple of tasks in the project (builders, engine, Space, reports) is
derived from :data:`TASKS`, a table of facts kept in the project's one registry type
(:mod:`.registry`). Adding a construction is one :func:`register_task` call (plus its sentence
templates in ``builders/construct`` when it should be built from Visual Genome). Plain Python,
so the metric folder still works alone when uploaded to the Hub.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

from .registry import Registry

LEARNING_SUFFIX = "_learning"
LEARNING_SPLITS = ("train", "validation", "test")


@dataclass(frozen=True)
class Task:
    """One BLA construction.

    ``caption_types`` are in release order (True1, True2, False1, False2); ``pairs`` are the
    ordered caption-type pairs (X, Y) of the thesis' pairwise tables (§7.1); ``release_dir`` is the
    folder of its learning splits in the release (``annotations/finetune/finetune_random/<dir>``);
    ``dd_partner`` is the config of the construction whose sentences about the same image are the
    demonstrations of cross-task in-context learning (``icl-dd``, paper §6), empty when none.
    """

    code: str
    config: str
    title: str
    abbreviation: str
    caption_types: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]
    release_dir: str = ""
    dd_partner: str = ""

    @property
    def learning_config(self) -> str:
        """Config name of the learning splits (train / validation / test, paper §6)."""
        return self.config + LEARNING_SUFFIX

    @property
    def label(self) -> str:
        """``Title (AB)``, for tables and menus."""
        return f"{self.title} ({self.abbreviation})"


TASKS: Registry[Task] = Registry(
    "task",
    key=attrgetter("code"),
    aliases=lambda task: (task.config, task.learning_config),
    unique=True,
    hint=" or a config name",
)
"""Short code -> task, in registration order (the order of every table and menu); a config or
learning config finds its task too (``get_task``)."""
register_task = TASKS.register
"""Add a task (its code and configs must be new); returns it."""
unregister_task = TASKS.unregister
"""Remove a task added with :func:`register_task` (tests register toy tasks)."""
get_task = TASKS.require
"""The task of a short code (``ap``), a config (``active_passive``) or a learning config."""


def task_codes() -> tuple[str, ...]:
    """Short codes of every registered task."""
    return tuple(TASKS)


def task_configs() -> tuple[str, ...]:
    """Config names of every registered task (the whole benchmark, split ``test``)."""
    return tuple(t.config for t in TASKS.values())


def config_names() -> list[str]:
    """Every dataset config: the tasks, then their learning variants."""
    return [t.config for t in TASKS.values()] + [t.learning_config for t in TASKS.values()]


def dd_pairs() -> list[tuple[Task, Task]]:
    """The DD partner constructions as pairs, each pair once, in registration order."""
    pairs: list[tuple[Task, Task]] = []
    for task in TASKS.values():
        partner = get_task(task.dd_partner) if task.dd_partner else None
        if partner is not None and (partner, task) not in pairs:
            pairs.append((task, partner))
    return pairs


_PERSON_TYPES = ("TP1", "TP2", "FP1", "FP2")
_PERSON_PAIRS = (
    ("TP1", "FP1"),
    ("TP2", "FP2"),
    ("TP2", "FP1"),
    ("TP1", "FP2"),
    ("TP1", "TP2"),
    ("FP1", "FP2"),
)

register_task(
    Task(
        code="ap",
        config="active_passive",
        title="Active-passive voice",
        abbreviation="AP",
        caption_types=("TA", "TP", "FA", "FP"),
        pairs=(("TA", "FA"), ("TP", "FP"), ("TP", "FA"), ("TA", "FP"), ("TA", "TP"), ("FA", "FP")),
        release_dir="active_passive",
        # no dd_partner: active-passive shares too few images with the other two (paper §6)
    )
)
register_task(
    Task(
        code="co",
        config="coordination",
        title="Coordination",
        abbreviation="CO",
        caption_types=_PERSON_TYPES,
        pairs=_PERSON_PAIRS,
        release_dir="coord",
        dd_partner="relative_clause",
    )
)
register_task(
    Task(
        code="rc",
        config="relative_clause",
        title="Relative clauses",
        abbreviation="RC",
        caption_types=_PERSON_TYPES,
        pairs=_PERSON_PAIRS,
        release_dir="rc",
        dd_partner="coordination",
    )
)
