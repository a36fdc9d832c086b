"""The engine's protocols of BLA-specific learning (paper §6): zero-shot, and in-context learning
with demonstrations from the same datapoint (SD) or from the other construction (DD).

The demonstrations (:mod:`.demonstrations`) are shown with the default prompt template: one string
(``PromptTemplate.plain``, the paper's prompt) or earlier user/assistant turns about the same image
(``PromptTemplate.chat``, for models with a chat template).

- ``icl-sd`` (same task): the true and the false sentence of the same datapoint of the other voice
  or person, so a demonstration is never the target. (The authors' released script picks
  True1/False1 for the targets True1 and False1, i.e. the target's own voice or person, so the
  target itself is one of its demonstrations: :mod:`.authors`.)
- ``icl-dd`` (cross task, coordination <-> relative clauses only, as in the paper): the true and
  the false sentence of the other construction about the same image, of the target's person. A
  datapoint whose image the other construction lacks has no demonstrations: it is counted and
  reported, not scored.
"""

from __future__ import annotations

from typing import Any

from ..queries import Demonstrations
from .demonstrations import dd_demonstrations, sd_demonstrations
from .spec import Protocol, ProtocolPlan, partner_record
from .templates import ANSWERS, PromptTemplate

DEMONSTRATION_KINDS = ("generative", "vllm", "openai-api", "flamingo")
"""The model kinds that read in-context demonstrations (chat turns before the question)."""

ICL_KIND_ERROR = (
    "protocol {name!r} needs a generative model; this model is of kind {kind!r} "
    "(fine-tune ITM and contrastive models with bla-finetune instead)"
)
ICL_SETTINGS = ("icl_order", "icl_seed")
"""The settings of a run that decide its demonstrations (a resumed run keeps them)."""


def template_fields(template: PromptTemplate, in_context: bool) -> dict[str, Any]:
    """What a protocol record says of the template a run asks with: its question and an
    example prompt (with two demonstrations when ``in_context``)."""
    demos = (("[true]", ANSWERS[1]), ("[false]", ANSWERS[0])) if in_context else ()
    return {"template": template.question, "prompt_example": template.plain("[target]", demos)}


def kind_template_fields(template: PromptTemplate, in_context: bool) -> dict[str, Any]:
    """:func:`template_fields` of a kind that asks with its own default template (the
    ``flamingo`` kind), with how its demonstrations are shown."""
    fields = template_fields(template, in_context)
    fields["demonstration_format"] = (
        f"the {template.name!r} template: each demonstration as {template.turn!r}, the turns "
        f"joined by {template.separator!r}"
    )
    return fields


def engine_record(
    protocol: Protocol, order: str, seed: int, chat: bool, plan: ProtocolPlan | None
) -> dict[str, Any]:
    """The engine's protocol record: the exact question, an example prompt, the demonstration
    rule, the order and what was skipped."""
    record: dict[str, Any] = {
        "name": protocol.name,
        **template_fields(protocol.prompt_template, protocol.in_context),
        "demonstration_format": "chat turns (user question, assistant answer) about the same image"
        if chat
        else "'<question> <answer>.' per demonstration, then the target question, joined by ' '",
        "demonstration_rule": protocol.demonstration_rule(),
    }
    if protocol.in_context:
        record["order"] = order
        if order == "shuffled":
            record["seed"] = seed
    if plan is not None and protocol.cross_task:
        record.update(partner_record(plan))
    return record


def same_task(point: Any, partner: Any, order: str, seed: int) -> list[Demonstrations]:
    """SD: per caption, the other voice or person of the same datapoint."""
    captions, types = list(point.captions), list(point.caption_types)
    return [
        sd_demonstrations(captions, types, point.labels, i, order, seed, point.id)
        for i in range(len(captions))
    ]


def cross_task(point: Any, partner: Any, order: str, seed: int) -> list[Demonstrations]:
    """DD: per caption, the partner datapoint's sentences of the target's person."""
    return [
        dd_demonstrations(
            t, partner.captions, partner.caption_types, partner.labels, order, seed, point.id
        )
        for t in point.caption_types
    ]


ZERO_SHOT = Protocol(
    "zero-shot",
    title="Zero-shot",
    rule="no demonstrations",
    recorder=engine_record,
)
ICL_SD = Protocol(
    "icl-sd",
    title="In-context, same task (ICL SD)",
    rule="one true and one false sentence of the same datapoint whose voice (AP) or person "
    "(CO, RC) differs from the target's: TA/FA -> TP, FP; TP/FP -> TA, FA; TP1/FP1 -> TP2, FP2; "
    "TP2/FP2 -> TP1, FP1",
    recorder=engine_record,
    demonstrate=same_task,
    kinds=DEMONSTRATION_KINDS,
    kind_error=ICL_KIND_ERROR,
    resume_settings=ICL_SETTINGS,
)
ICL_DD = Protocol(
    "icl-dd",
    title="In-context, cross task (ICL DD: {pairs})",
    rule="one true and one false sentence of the other construction ({pairs}) about the "
    "same image, from its full config, of the target's person: "
    "TP1/FP1 -> TP1, FP1; TP2/FP2 -> TP2, FP2; datapoints whose image the other construction "
    "lacks are not scored and are counted",
    recorder=engine_record,
    demonstrate=cross_task,
    cross_task=True,
    kinds=DEMONSTRATION_KINDS,
    kind_error=ICL_KIND_ERROR,
    resume_settings=ICL_SETTINGS,
)
