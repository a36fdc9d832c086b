"""The protocol spec: everything the engine, the CLI, the Space and the reports need to know about
one evaluation protocol, and the plan it makes for one run."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bla_metric.answers import parse_answer
from bla_metric.tasks import get_task

from ..queries import Demonstrations, Query
from .demonstrations import check_order, image_key, pairs_text, partner_config, partner_index
from .templates import DEFAULT_TEMPLATE, PromptTemplate, get_template

Demonstrator = Callable[[Any, Any, str, int], list[Demonstrations]]
"""``(point, partner, order, seed)`` -> the demonstrations of each caption of ``point``
(``partner``: the other construction's datapoint of the same image, cross-task protocols only)."""

Recorder = Callable[["Protocol", str, int, bool, "ProtocolPlan | None"], dict[str, Any]]
"""``(protocol, order, seed, chat, plan)`` -> the protocol's part of results.json."""


@dataclass(frozen=True)
class Protocol:
    """One evaluation protocol (``bla-eval --protocol NAME``).

    - ``title``: the menu label; ``rule``: the demonstration rule recorded in results.json
      (``{pairs}`` in either = the DD partner constructions);
    - ``recorder``: what the protocol records in results.json (:meth:`record`);
    - ``demonstrate``: how the demonstrations of a datapoint are chosen (None: none are shown,
      the run has no plan); ``cross_task``: they come from the other construction's datapoint
      of the same image;
    - ``kinds``: the model kinds it runs (None: every kind), ``kind_error`` the error for another
      (``{name}``, ``{kind}``);
    - ``generates_answers``: answers are generated and parsed (recorded beside the scores);
    - ``template``: the prompt template it asks with (:mod:`.templates`);
    - ``resume_settings``: the ``RunConfig`` fields a resumed run must keep besides the usual.
    """

    name: str
    title: str
    rule: str
    recorder: Recorder
    demonstrate: Demonstrator | None = None
    cross_task: bool = False
    kinds: tuple[str, ...] | None = None
    kind_error: str = ""
    generates_answers: bool = False
    template: str = DEFAULT_TEMPLATE
    resume_settings: tuple[str, ...] = ()

    @property
    def in_context(self) -> bool:
        """True when demonstrations are shown (the run scores the learning test splits)."""
        return self.demonstrate is not None

    @property
    def prompt_template(self) -> PromptTemplate:
        """The prompt template this protocol asks with."""
        return get_template(self.template)

    def menu_title(self) -> str:
        """The menu label (e.g. ``In-context, cross task (ICL DD: CO <-> RC)``)."""
        return self.title.format(pairs=pairs_text(lambda t: t.abbreviation))

    def demonstration_rule(self) -> str:
        """The demonstration rule as recorded in results.json."""
        return self.rule.format(pairs=pairs_text(lambda t: t.config))

    def check_kind(self, kind: str) -> None:
        """A ValueError when models of ``kind`` cannot run this protocol."""
        if self.kinds is not None and kind not in self.kinds:
            raise ValueError(self.kind_error.format(name=self.name, kind=kind))

    def run_tasks(self, benchmark: str, tasks: Sequence[str], explicit: bool) -> list[str]:
        """The configs a run scores: ``tasks`` unchanged without demonstrations; in context (BLA
        only) the learning configs of ``tasks`` (their test split), and for cross-task protocols
        only the constructions with a partner (an explicitly asked task without one is an
        error)."""
        if not self.in_context:
            return list(tasks)
        if benchmark != "bla":
            raise ValueError(
                f"protocol {self.name!r} runs on benchmark 'bla' only, not {benchmark!r}"
            )
        configs = list(dict.fromkeys(get_task(t).learning_config for t in tasks))
        if self.cross_task:
            if explicit:
                for config in configs:
                    partner_config(config)
            configs = [c for c in configs if get_task(c).dd_partner]
        return configs

    def demonstrations_for(
        self,
        point: Any,
        partners: Mapping[str, Any] | None = None,
        order: str = "true-first",
        seed: int = 0,
    ) -> list[Demonstrations] | None:
        """Per caption of ``point`` (an engine Item or a Datapoint), its demonstrations;
        ``None`` when a cross-task protocol finds no partner for the image (not scored)."""
        if self.demonstrate is None:
            return [() for _ in point.captions]
        partner = None
        if self.cross_task:
            partner = (partners or {}).get(image_key(point))
            if partner is None:
                return None
        return self.demonstrate(point, partner, order, seed)

    def plan(
        self,
        points: Sequence[Any],
        partners_of: Mapping[str, Sequence[Any]] | None = None,
        order: str = "true-first",
        seed: int = 0,
    ) -> ProtocolPlan:
        """Demonstrations of every datapoint. ``partners_of`` maps a task config to the
        datapoints of its DD partner construction (cross-task protocols only; see
        :func:`.demonstrations.partner_config`)."""
        check_order(order)
        indexes = {task: partner_index(ps) for task, ps in (partners_of or {}).items()}
        demos: dict[tuple[str, str], list[Demonstrations]] = {}
        missing: dict[str, list[str]] = {}
        partner_configs: dict[str, str] = {}
        for point in points:
            index = None
            if self.cross_task:
                partner_configs[point.task] = partner_config(point.task)
                index = indexes.get(point.task, {})
            found = self.demonstrations_for(point, index, order, seed)
            if found is None:
                missing.setdefault(point.task, []).append(point.id)
            else:
                demos[(point.task, point.id)] = found
        return ProtocolPlan(self, order, seed, demos, missing, partner_configs)

    def plan_run(
        self,
        items: Sequence[Any],
        read_test: Callable[[str], Sequence[Any]],
        order: str = "true-first",
        seed: int = 0,
    ) -> ProtocolPlan | None:
        """The plan of a run (None without demonstrations); ``read_test(config)`` returns the
        items of a config's test split (the full config of the DD partner construction)."""
        if not self.in_context:
            return None
        partners = None
        if self.cross_task:
            tasks = dict.fromkeys(i.task for i in items)
            partners = {t: read_test(partner_config(t)) for t in tasks}
        return self.plan(items, partners, order, seed)

    def record(
        self,
        order: str = "true-first",
        seed: int = 0,
        chat: bool = False,
        plan: ProtocolPlan | None = None,
    ) -> dict[str, Any]:
        """The protocol's part of results.json: its strings, rule, order and what it skipped."""
        return self.recorder(self, order, seed, chat, plan)

    def parsed(self, answers: Sequence[Sequence[str]] | None) -> dict[str, Any] | None:
        """``{"parsed": [[yes|no|None, ...], ...]}`` of generated answers when this protocol
        parses them (the records' ``parsed`` field), else None."""
        if answers is None or not self.generates_answers:
            return None
        return {"parsed": [[parse_answer(a) for a in row] for row in answers]}


@dataclass(frozen=True)
class ProtocolPlan:
    """What a protocol does for one run: demonstrations per datapoint id and what it skipped."""

    protocol: Protocol
    order: str
    seed: int
    demonstrations: dict[tuple[str, str], list[Demonstrations]]
    """(config, datapoint id) -> the demonstrations of each of its captions."""
    without_partner: dict[str, list[str]]
    """Config -> ids of datapoints whose image the DD partner construction lacks (not scored)."""
    partner_configs: dict[str, str]

    def covers(self, point: Any) -> bool:
        """True when ``point`` has demonstrations (it is scored under this protocol)."""
        return (point.task, point.id) in self.demonstrations

    def queries(self, item: Any) -> list[Query]:
        """The engine's ``Query`` objects of ``item`` (one per caption, in caption order)."""
        demos = self.demonstrations[(item.task, item.id)]
        return [Query(c, d) for c, d in zip(item.captions, demos, strict=True)]

    def record(self, chat: bool = False) -> dict[str, Any]:
        """The protocol's part of results.json for this run."""
        return self.protocol.record(self.order, self.seed, chat, self)


def partner_record(plan: ProtocolPlan) -> dict[str, Any]:
    """The cross-task part of a protocol record: partner configs and images without a partner."""
    return {
        "partner_configs": dict(plan.partner_configs),
        "without_partner": {
            task: {"count": len(ids), "ids": list(ids)}
            for task, ids in plan.without_partner.items()
        },
    }
