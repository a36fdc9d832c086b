"""Evaluation protocols of BLA-specific learning (paper §6): zero-shot, and in-context learning
with demonstrations from the same datapoint (SD) or from the other construction (DD).

A protocol turns each target sentence of a datapoint into its demonstrations: ``(sentence,
"yes"|"no")`` turns shown before the target, in order. The generative scorer formats them with
:func:`plain_prompt` (one string, the paper's prompt) or :func:`chat_messages` (earlier
user/assistant turns about the same image, for models with a chat template).

- ``icl-sd`` (same task): one true and one false sentence of the *same* datapoint that differ from
  the target as the paper says: the other voice for active-passive (target TA or FA -> TP and FP;
  target TP or FP -> TA and FA), the other person for coordination and relative clauses (target
  TP1 or FP1 -> TP2 and FP2, and the other way round). So a demonstration is never the target.
  (The authors' released script picks True1/False1 for the targets True1 and False1, i.e. the
  target's own voice or person, so the target itself is one of its demonstrations.)
- ``icl-dd`` (cross task, coordination <-> relative clauses only, as in the paper): one true and
  one false sentence of the *other* construction about the same image, from that construction's
  full config; as in the authors' script, the sentences of the target's person (True1/False1 for
  the targets at positions 1 and 3, True2/False2 for positions 2 and 4). A datapoint whose image
  the other construction lacks has no demonstrations: it is counted and reported, not scored.

``paper``, ``paper-icl-sd`` and ``paper-icl-dd`` run the authors' scripts instead (their strings,
their demonstration choice with the target among its own demonstrations, generated answers):
:mod:`bla_eval.paper_protocol`.

The caption type names the truth and the group of a sentence: ``TA`` = true, voice ``A``;
``FP2`` = false, person ``P2`` (first letter T/F, the rest the group).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import paper_protocol
from .paper_protocol import PAPER_PROTOCOLS, is_paper
from .prompts import ANSWERS, QUESTION

PROTOCOLS = ("zero-shot", "icl-sd", "icl-dd", *PAPER_PROTOCOLS)
"""Protocol names (``bla-eval --protocol``); zero-shot is the default. ``paper``,
``paper-icl-sd`` and ``paper-icl-dd`` are the authors' own (:mod:`bla_eval.paper_protocol`)."""

ICL_PROTOCOLS = ("icl-sd", "icl-dd", "paper-icl-sd", "paper-icl-dd")

PAPER_KINDS = ("generative",)
"""The model kinds that run the authors' protocols (they generate answers locally)."""

ORDERS = ("true-first", "shuffled")
"""Order of the two demonstrations: the true one first (the paper's example), or shuffled per
target sentence with a recorded seed (the authors' script shuffled without a seed)."""

TITLES = {
    "zero-shot": "Zero-shot",
    "icl-sd": "In-context, same task (ICL SD)",
    "icl-dd": "In-context, cross task (ICL DD: {pairs})",
    "paper": "Zero-shot, the authors' script (generated answers)",
    "paper-icl-sd": "In-context, same task, the authors' script",
    "paper-icl-dd": "In-context, cross task, the authors' script ({pairs})",
}
"""Menu label of each protocol; ``{pairs}`` = the DD partner constructions (see :func:`title`)."""

RULES = {
    "zero-shot": "no demonstrations",
    "icl-sd": "one true and one false sentence of the same datapoint whose voice (AP) or person "
    "(CO, RC) differs from the target's: TA/FA -> TP, FP; TP/FP -> TA, FA; TP1/FP1 -> TP2, FP2; "
    "TP2/FP2 -> TP1, FP1",
    "icl-dd": "one true and one false sentence of the other construction ({pairs}) about the "
    "same image, from its full config, of the target's person: "
    "TP1/FP1 -> TP1, FP1; TP2/FP2 -> TP2, FP2; datapoints whose image the other construction "
    "lacks are not scored and are counted",
}
"""The demonstration rule of each protocol; ``{pairs}`` = the DD partner constructions (the
recorded text is :func:`demonstration_rule`)."""

Demonstrations = tuple[tuple[str, str], ...]


def _dd_pairs(name: Any) -> str:
    """The DD partner constructions as ``a <-> b`` (``name`` picks the config or abbreviation)."""
    from bla_metric.tasks import dd_pairs

    return ", ".join(f"{name(a)} <-> {name(b)}" for a, b in dd_pairs())


def title(protocol: str) -> str:
    """The menu label of ``protocol`` (e.g. ``In-context, cross task (ICL DD: CO <-> RC)``)."""
    return TITLES[check_protocol(protocol)].format(pairs=_dd_pairs(lambda t: t.abbreviation))


def demonstration_rule(protocol: str) -> str:
    """The demonstration rule of ``protocol`` as recorded in results.json."""
    if is_paper(check_protocol(protocol)):
        return paper_protocol.RULES[protocol]
    return RULES[check_protocol(protocol)].format(pairs=_dd_pairs(lambda t: t.config))


def base_protocol(protocol: str) -> str:
    """The corrected protocol that runs on the same tasks (``paper-icl-dd`` -> ``icl-dd``)."""
    return PAPER_PROTOCOLS.get(protocol, protocol)


def check_protocol(protocol: str) -> str:
    """``protocol`` when known, else a ValueError naming it."""
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}: use one of {', '.join(PROTOCOLS)}")
    return protocol


def check_order(order: str) -> str:
    """``order`` when known, else a ValueError naming it."""
    if order not in ORDERS:
        raise ValueError(f"unknown demonstration order {order!r}: use one of {', '.join(ORDERS)}")
    return order


def type_group(caption_type: str) -> str:
    """The voice or person of a caption type: ``TA`` -> ``A``, ``FP2`` -> ``P2``."""
    if len(caption_type) < 2 or caption_type[0] not in "TF":
        raise ValueError(f"caption type {caption_type!r} does not start with T or F")
    return caption_type[1:]


def _flat_labels(labels: Sequence[Any]) -> list[int]:
    """Labels as one list (an engine Item keeps one row per image)."""
    if labels and isinstance(labels[0], Sequence):
        return [int(x) for x in labels[0]]
    return [int(x) for x in labels]


def _pick(
    captions: Sequence[str],
    caption_types: Sequence[str],
    labels: Sequence[int],
    keep: Any,
    where: str,
) -> tuple[str, str]:
    """The one true and the one false caption whose type satisfies ``keep``."""
    true = [c for c, t, y in zip(captions, caption_types, labels, strict=True) if y and keep(t)]
    false = [
        c for c, t, y in zip(captions, caption_types, labels, strict=True) if not y and keep(t)
    ]
    if len(true) != 1 or len(false) != 1:
        raise ValueError(
            f"{where}: expected one true and one false demonstration, found "
            f"{len(true)} true and {len(false)} false among {list(caption_types)}"
        )
    return true[0], false[0]


def arrange(
    true: str, false: str, order: str = "true-first", seed: int = 0, key: str = ""
) -> Demonstrations:
    """The two demonstrations as turns; ``shuffled`` draws the order from ``(seed, key)``, so the
    same target gets the same order in every run."""
    turns = ((true, ANSWERS[1]), (false, ANSWERS[0]))
    if check_order(order) == "shuffled" and random.Random(f"{seed}:{key}").random() < 0.5:
        turns = turns[::-1]
    return turns


def sd_demonstrations(
    captions: Sequence[str],
    caption_types: Sequence[str],
    labels: Sequence[Any],
    index: int,
    order: str = "true-first",
    seed: int = 0,
    key: str = "",
) -> Demonstrations:
    """SD demonstrations of ``captions[index]``: the true and the false sentence of the other
    voice or person of the same datapoint."""
    group = type_group(caption_types[index])
    true, false = _pick(
        captions,
        caption_types,
        _flat_labels(labels),
        lambda t: type_group(t) != group,
        f"target {caption_types[index]} of {key or 'a datapoint'}",
    )
    return arrange(true, false, order, seed, f"{key}:{index}")


def dd_demonstrations(
    target_type: str,
    partner_captions: Sequence[str],
    partner_types: Sequence[str],
    partner_labels: Sequence[Any],
    order: str = "true-first",
    seed: int = 0,
    key: str = "",
) -> Demonstrations:
    """DD demonstrations of a target of type ``target_type``: the partner datapoint's (other
    construction, same image) true and false sentence of the target's person."""
    group = type_group(target_type)
    true, false = _pick(
        partner_captions,
        partner_types,
        _flat_labels(partner_labels),
        lambda t: type_group(t) == group,
        f"partner of {key or 'a datapoint'} for target {target_type}",
    )
    return arrange(true, false, order, seed, f"{key}:{target_type}")


def image_key(point: Any) -> str:
    """The image key of an engine ``Item`` (its first image) or a ``Datapoint``."""
    images = getattr(point, "images", None)
    if images:
        return images[0].key
    return point.image_key


def partner_index(points: Iterable[Any]) -> dict[str, Any]:
    """Datapoints of the other construction by image key (DD looks its partner up here)."""
    return {image_key(p): p for p in points}


def partner_config(config: str) -> str:
    """The DD partner config of a task config or learning config (``Task.dd_partner``;
    ValueError when it has none)."""
    from bla_metric.tasks import TASKS, get_task

    try:
        partner = get_task(config).dd_partner
    except ValueError:
        partner = ""
    if not partner:
        with_partner = [t.config for t in TASKS.values() if t.dd_partner]
        raise ValueError(
            f"protocol icl-dd has no partner construction for {config!r}: it runs on "
            f"{' and '.join(with_partner)} only (paper §6)"
        )
    return partner


def demonstrations_for(
    point: Any,
    protocol: str,
    partners: Mapping[str, Any] | None = None,
    order: str = "true-first",
    seed: int = 0,
) -> list[Demonstrations] | None:
    """Per caption of ``point`` (an engine Item or a Datapoint), its demonstrations under
    ``protocol``; ``None`` when ``icl-dd`` finds no partner for the image (not scored)."""
    check_protocol(protocol)
    if is_paper(protocol):
        return paper_protocol.demonstrations_for(point, protocol, partners, seed)
    captions, types = list(point.captions), list(point.caption_types)
    if protocol == "zero-shot":
        return [() for _ in captions]
    if protocol == "icl-sd":
        return [
            sd_demonstrations(captions, types, point.labels, i, order, seed, point.id)
            for i in range(len(captions))
        ]
    partner = (partners or {}).get(image_key(point))
    if partner is None:
        return None
    return [
        dd_demonstrations(
            t, partner.captions, partner.caption_types, partner.labels, order, seed, point.id
        )
        for t in types
    ]


def plain_prompt(
    sentence: str, demonstrations: Sequence[tuple[str, str]] = (), template: str = QUESTION
) -> str:
    """The paper's prompt: each demonstration as ``<question> <answer>.``, then the target's
    question, joined by spaces. No demonstrations = the zero-shot prompt."""
    turns = [f"{template.format(sentence=s)} {answer}." for s, answer in demonstrations]
    return " ".join([*turns, template.format(sentence=sentence)])


def chat_messages(
    sentence: str, demonstrations: Sequence[tuple[str, str]] = (), template: str = QUESTION
) -> list[dict[str, Any]]:
    """Chat turns for a processor's chat template: the image in the first user turn, each
    demonstration as a user question and the assistant's answer, then the target's question."""
    messages: list[dict[str, Any]] = []
    for s, answer in [*demonstrations, (sentence, None)]:
        content: list[dict[str, Any]] = [] if messages else [{"type": "image"}]
        content.append({"type": "text", "text": template.format(sentence=s)})
        messages.append({"role": "user", "content": content})
        if answer is not None:
            messages.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
    return messages


@dataclass(frozen=True)
class ProtocolPlan:
    """What a protocol does for one run: demonstrations per datapoint id and what it skipped."""

    protocol: str
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

    def queries(self, item: Any) -> list[Any]:
        """The engine's ``Query`` objects of ``item`` (one per caption, in caption order)."""
        from .scorers.base import Query

        demos = self.demonstrations[(item.task, item.id)]
        return [Query(c, d) for c, d in zip(item.captions, demos, strict=True)]


def plan(
    points: Sequence[Any],
    protocol: str,
    partners_of: Mapping[str, Sequence[Any]] | None = None,
    order: str = "true-first",
    seed: int = 0,
) -> ProtocolPlan:
    """Demonstrations of every datapoint. ``partners_of`` maps a task config to the datapoints of
    its DD partner construction (``icl-dd`` only; see :func:`partner_config`)."""
    check_protocol(protocol)
    check_order(order)
    indexes = {task: partner_index(ps) for task, ps in (partners_of or {}).items()}
    demos: dict[tuple[str, str], list[Demonstrations]] = {}
    missing: dict[str, list[str]] = {}
    partner_configs: dict[str, str] = {}
    for point in points:
        index = None
        if base_protocol(protocol) == "icl-dd":
            partner_configs[point.task] = partner_config(point.task)
            index = indexes.get(point.task, {})
        found = demonstrations_for(point, protocol, index, order, seed)
        if found is None:
            missing.setdefault(point.task, []).append(point.id)
        else:
            demos[(point.task, point.id)] = found
    return ProtocolPlan(protocol, order, seed, demos, missing, partner_configs)


def protocol_record(
    protocol: str,
    order: str = "true-first",
    seed: int = 0,
    template: str = QUESTION,
    chat: bool = False,
    plan_: ProtocolPlan | None = None,
) -> dict[str, Any]:
    """The protocol's part of results.json: the exact template, rule, order and what was skipped."""
    check_protocol(protocol)
    if is_paper(protocol):
        return paper_protocol.protocol_record(protocol, seed, chat, plan_)
    example = plain_prompt(
        "[target]",
        (("[true]", ANSWERS[1]), ("[false]", ANSWERS[0])) if protocol != "zero-shot" else (),
        template,
    )
    record: dict[str, Any] = {
        "name": protocol,
        "template": template,
        "prompt_example": example,
        "demonstration_format": "chat turns (user question, assistant answer) about the same image"
        if chat
        else "'<question> <answer>.' per demonstration, then the target question, joined by ' '",
        "demonstration_rule": demonstration_rule(protocol),
    }
    if protocol != "zero-shot":
        record["order"] = order
        if order == "shuffled":
            record["seed"] = seed
    if plan_ is not None and protocol == "icl-dd":
        record.update(partner_record(plan_))
    return record


def partner_record(plan_: Any) -> dict[str, Any]:
    """The cross-task part of a protocol record: partner configs and images without a partner."""
    return {
        "partner_configs": dict(plan_.partner_configs),
        "without_partner": {
            task: {"count": len(ids), "ids": list(ids)}
            for task, ids in plan_.without_partner.items()
        },
    }


def run_tasks(protocol: str, benchmark: str, tasks: Sequence[str], explicit: bool) -> list[str]:
    """The configs a run scores: unchanged for zero-shot; for the ICL protocols (BLA only) the
    learning configs of ``tasks`` (their test split), and for ``icl-dd`` only the constructions
    with a partner (an explicitly asked task without one is an error)."""
    check_protocol(protocol)
    if base_protocol(protocol) == "zero-shot":
        return list(tasks)
    if benchmark != "bla":
        raise ValueError(f"protocol {protocol!r} runs on benchmark 'bla' only, not {benchmark!r}")
    from bla_metric.tasks import get_task

    configs = list(dict.fromkeys(get_task(t).learning_config for t in tasks))
    if base_protocol(protocol) == "icl-dd":
        if explicit:
            for config in configs:
                partner_config(config)
        configs = [c for c in configs if get_task(c).dd_partner]
    return configs


DEMONSTRATION_KINDS = ("generative", "openai-api")
"""The model kinds that read in-context demonstrations (chat turns before the question)."""


def check_kind(protocol: str, kind: str) -> None:
    """The ICL protocols need a generative model (only generative kinds read demonstrations);
    the authors' protocols a local generative model (it generates the answers)."""
    if is_paper(protocol) and kind not in PAPER_KINDS:
        raise ValueError(
            f"protocol {protocol!r} generates answers with a local generative model; this model "
            f"is of kind {kind!r}"
        )
    if protocol in ICL_PROTOCOLS and kind not in DEMONSTRATION_KINDS:
        raise ValueError(
            f"protocol {protocol!r} needs a generative model; this model is of kind {kind!r} "
            "(fine-tune ITM and contrastive models with bla-finetune instead)"
        )


def plan_run(
    protocol: str,
    items: Sequence[Any],
    read_test: Any,
    order: str = "true-first",
    seed: int = 0,
) -> ProtocolPlan | None:
    """The plan of a run (None for zero-shot); ``read_test(config)`` returns the items of a
    config's test split (the full config of the DD partner construction)."""
    check_protocol(protocol)
    if base_protocol(protocol) == "zero-shot":
        return None
    partners = None
    if base_protocol(protocol) == "icl-dd":
        tasks = dict.fromkeys(i.task for i in items)
        partners = {t: read_test(partner_config(t)) for t in tasks}
    return plan(items, protocol, partners, order, seed)
