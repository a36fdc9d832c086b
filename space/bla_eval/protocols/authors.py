"""The BLA authors' own protocols for generative models, as their scripts ran them.

``--protocol paper`` (zero-shot), ``paper-icl-sd`` and ``paper-icl-dd`` (in-context) reproduce
``evaluation_models/blip2/test_blip2_bla.py`` of the public repository shin-ee-chen/BLA:

- the ``authors`` prompt template (:mod:`.templates`): prompt ``"Question: {} Answer: {}".format(
  question, "")``, so it ends in ``"Answer: "`` with a trailing space; zero-shot question ``"Is
  the sentence {} appropriate for this image? yes or no?"``; in context every question drops "yes
  or no?" and demonstrations are answered ``"yes."`` / ``"no."``; turns joined by one space;
- demonstrations for the target at position i (release order True1, True2, False1, False2):
  (True1, False1) when i is even, (True2, False2) when i is odd, from the target's own datapoint
  (SD: so the target is always one of its own demonstrations) or from the other construction's
  datapoint of the same image (DD; images without one are skipped); true-first when a coin flip
  is above 0.5, else false-first (the authors' ``random.random()`` was not seeded; ours is seeded
  per target from ``--icl-seed`` and recorded);
- ``model.generate(**inputs)`` with the model's default generation settings, the output decoded
  with special tokens skipped (for decoder-only models only the generated continuation: the
  authors' BLIP-2 is an encoder-decoder, whose output holds no prompt), then classified by
  :func:`bla_metric.answers.parse_answer`; the metrics are :mod:`bla_metric.paper`'s.

Chat models get the same strings as turns: each question (with its trailing ``"Answer: "``) as a
user turn, each demonstration answer as an assistant turn, the image in the first user turn.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from bla_metric.answers import NO, YES

from ..queries import Demonstrations
from .demonstrations import flat_labels
from .in_context import ICL_SETTINGS
from .spec import Protocol, ProtocolPlan, partner_record
from .templates import AUTHORS, AUTHORS_ICL_QUESTION, AUTHORS_QUESTION, AUTHORS_TEMPLATE

PAPER_KINDS = ("generative", "vllm", "flamingo")
"""The model kinds that run the authors' protocols (they generate answers locally)."""

PAPER_KIND_ERROR = (
    "protocol {name!r} generates answers with a local generative model; this model is of kind "
    "{kind!r}"
)


def _release_order(captions: Sequence[str], labels: Sequence[int], where: str) -> None:
    if len(captions) != 4 or [int(y) for y in labels] != [1, 1, 0, 0]:
        raise ValueError(
            f"{where}: the authors' demonstration choice needs four sentences in release order "
            f"(True1, True2, False1, False2), got labels {list(labels)}"
        )


def true_first(seed: int, key: str) -> bool:
    """The authors' coin flip (``random.random() > 0.5`` -> true demonstration first), seeded
    per target by ``(seed, key)``."""
    return random.Random(f"{seed}:{key}").random() > 0.5


def authors_pair(
    captions: Sequence[str], labels: Sequence[int], index: int, seed: int, key: str
) -> Demonstrations:
    """The demonstrations of the target at position ``index``: (True1, False1) of ``captions``
    when ``index`` is even, (True2, False2) when odd, in the coin flip's order."""
    _release_order(captions, labels, key or "a datapoint")
    true, false = captions[index % 2], captions[2 + index % 2]
    pair = ((true, YES), (false, NO))
    return pair if true_first(seed, f"{key}:{index}") else pair[::-1]


def authors_choice(point: Any, partner: Any, order: str, seed: int) -> list[Demonstrations]:
    """Per caption of ``point``, the authors' pair from ``partner`` (DD) or from ``point``
    itself (SD); ``order`` is the coin flip's, not a setting."""
    source = point if partner is None else partner
    captions, labels = list(source.captions), flat_labels(source.labels)
    return [authors_pair(captions, labels, i, seed, point.id) for i in range(len(point.captions))]


def generation_record(model: Any) -> dict[str, Any]:
    """The model's default generation settings as ``generate(**inputs)`` uses them."""
    config = model.generation_config
    return {
        "call": "model.generate(**inputs): the model's default generation settings",
        "max_length": config.max_length,
        "max_new_tokens": config.max_new_tokens,
        "do_sample": config.do_sample,
        "num_beams": config.num_beams,
        "non_default": {
            k: v for k, v in config.to_diff_dict().items() if k != "transformers_version"
        },
        "decoding": "skip_special_tokens=True; strip, lower-case, one trailing '.' removed; "
        "'appropriate' -> yes, else 'yes' -> yes, else 'no' -> no, else unparsed",
    }


def authors_record(
    protocol: Protocol, order: str, seed: int, chat: bool, plan: ProtocolPlan | None
) -> dict[str, Any]:
    """The part of results.json that says what one of the authors' protocols did."""
    demos = (("[true]", YES), ("[false]", NO)) if protocol.in_context else ()
    record: dict[str, Any] = {
        "name": protocol.name,
        "template": AUTHORS_TEMPLATE,
        "question": AUTHORS_ICL_QUESTION if demos else AUTHORS_QUESTION,
        "prompt_example": protocol.prompt_template.plain("[target]", demos),
        "demonstration_format": "chat turns (user question, assistant answer) about the same image"
        if chat
        else "'Question: <question> Answer: <yes.|no.>' per demonstration, then the target's "
        "'Question: <question> Answer: ', joined by ' '",
        "demonstration_rule": protocol.demonstration_rule(),
    }
    if demos:
        record["order"] = "true-first when the coin flip is above 0.5 (the authors' rule)"
        record["seed"] = seed
    if plan is not None and protocol.cross_task:
        record.update(partner_record(plan))
    return record


def _authors(name: str, title: str, rule: str, **facts: Any) -> Protocol:
    return Protocol(
        name,
        title=title,
        rule=rule,
        recorder=authors_record,
        kinds=PAPER_KINDS,
        kind_error=PAPER_KIND_ERROR,
        generates_answers=True,
        template=AUTHORS.name,
        resume_settings=ICL_SETTINGS,
        **facts,
    )


PAPER = _authors("paper", "Zero-shot, the authors' script (generated answers)", "no demonstrations")
PAPER_ICL_SD = _authors(
    "paper-icl-sd",
    "In-context, same task, the authors' script",
    "the authors' choice: (True1, False1) of the target's own datapoint when the "
    "target's position is even (True1, False1), (True2, False2) when odd; the target is one of "
    "its own demonstrations; order by a seeded coin flip per target",
    demonstrate=authors_choice,
)
PAPER_ICL_DD = _authors(
    "paper-icl-dd",
    "In-context, cross task, the authors' script ({pairs})",
    "the authors' choice: (True1, False1) of the other construction's datapoint "
    "of the same image when the target's position is even, (True2, False2) when odd; images "
    "without one are not scored and are counted; order by a seeded coin flip per target",
    demonstrate=authors_choice,
    cross_task=True,
)
