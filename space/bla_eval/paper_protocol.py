"""The BLA authors' own protocols for generative models, as their scripts ran them.

``--protocol paper`` (zero-shot), ``paper-icl-sd`` and ``paper-icl-dd`` (in-context) reproduce
``evaluation_models/blip2/test_blip2_bla.py`` of the public repository shin-ee-chen/BLA:

- prompt ``"Question: {} Answer: {}".format(question, "")``, so it ends in ``"Answer: "`` with a
  trailing space; zero-shot question ``"Is the sentence {} appropriate for this image? yes or
  no?"``; in context every question drops "yes or no?" and demonstrations are answered
  ``"yes."`` / ``"no."``; turns joined by one space;
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
from collections.abc import Mapping, Sequence
from typing import Any

from bla_metric.answers import NO, YES, parse_answer

PAPER_PROTOCOLS: dict[str, str] = {
    "paper": "zero-shot",
    "paper-icl-sd": "icl-sd",
    "paper-icl-dd": "icl-dd",
}
"""Each of the authors' protocols -> the corrected protocol that runs on the same tasks."""

TEMPLATE = "Question: {} Answer: {}"
QUESTION = "Is the sentence {} appropriate for this image? yes or no?"
ICL_QUESTION = "Is the sentence {} appropriate for this image?"
DEMONSTRATION_ANSWERS = {YES: "yes.", NO: "no."}
"""How the authors' in-context demonstrations answer (``bla_eval.protocols.ANSWERS`` -> text)."""

RULES = {
    "paper": "no demonstrations",
    "paper-icl-sd": "the authors' choice: (True1, False1) of the target's own datapoint when the "
    "target's position is even (True1, False1), (True2, False2) when odd; the target is one of "
    "its own demonstrations; order by a seeded coin flip per target",
    "paper-icl-dd": "the authors' choice: (True1, False1) of the other construction's datapoint "
    "of the same image when the target's position is even, (True2, False2) when odd; images "
    "without one are not scored and are counted; order by a seeded coin flip per target",
}
"""The demonstration rule of each of the authors' protocols, as recorded in results.json."""

Demonstrations = tuple[tuple[str, str], ...]


def is_paper(protocol: str) -> bool:
    """True for the authors' protocols (generated answers, their strings and rules)."""
    return protocol in PAPER_PROTOCOLS


def zero_shot_prompt(sentence: str) -> str:
    """The authors' zero-shot prompt (ends in ``"Answer: "``)."""
    return TEMPLATE.format(QUESTION.format(sentence), "")


def turns(sentence: str, demonstrations: Sequence[tuple[str, str]] = ()) -> list[tuple[str, str]]:
    """(question text, answer) per turn, the target's last with answer ``""``; demonstration
    answers are ``"yes"``/``"no"`` and become ``"yes."``/``"no."``."""
    if not demonstrations:
        return [(TEMPLATE.format(QUESTION.format(sentence), ""), "")]
    shown = [(s, DEMONSTRATION_ANSWERS[a]) for s, a in demonstrations]
    return [(TEMPLATE.format(ICL_QUESTION.format(s), ""), a) for s, a in [*shown, (sentence, "")]]


def prompt(sentence: str, demonstrations: Sequence[tuple[str, str]] = ()) -> str:
    """The authors' prompt: one string, ``"Question: ... Answer: yes."`` turns joined by spaces,
    ending in ``"Answer: "``."""
    return " ".join(question + answer for question, answer in turns(sentence, demonstrations))


def chat_messages(
    sentence: str, demonstrations: Sequence[tuple[str, str]] = ()
) -> list[dict[str, Any]]:
    """The authors' strings as chat turns for a processor's chat template."""
    messages: list[dict[str, Any]] = []
    for question, answer in turns(sentence, demonstrations):
        content: list[dict[str, Any]] = [] if messages else [{"type": "image"}]
        content.append({"type": "text", "text": question})
        messages.append({"role": "user", "content": content})
        if answer:
            messages.append({"role": "assistant", "content": [{"type": "text", "text": answer}]})
    return messages


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


def _flat(labels: Sequence[Any]) -> list[int]:
    if labels and isinstance(labels[0], Sequence):
        return [int(x) for x in labels[0]]
    return [int(x) for x in labels]


def demonstrations_for(
    point: Any, protocol: str, partners: Mapping[str, Any] | None, seed: int
) -> list[Demonstrations] | None:
    """Per caption of ``point`` (an engine Item), its demonstrations under one of the authors'
    protocols; None when ``paper-icl-dd`` finds no partner datapoint for the image."""
    count = len(point.captions)
    if protocol == "paper":
        return [() for _ in range(count)]
    source = point
    if protocol == "paper-icl-dd":
        from .protocols import image_key

        source = (partners or {}).get(image_key(point))
        if source is None:
            return None
    captions, labels = list(source.captions), _flat(source.labels)
    return [authors_pair(captions, labels, i, seed, point.id) for i in range(count)]


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


def parsed(answers: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """``"yes"``/``"no"``/None per generated answer (the records' ``parsed`` field)."""
    return [[parse_answer(a) for a in row] for row in answers]


def protocol_record(protocol: str, seed: int, chat: bool, plan_: Any = None) -> dict[str, Any]:
    """The part of results.json that says what one of the authors' protocols did."""
    demos = (("[true]", YES), ("[false]", NO)) if protocol != "paper" else ()
    record: dict[str, Any] = {
        "name": protocol,
        "template": TEMPLATE,
        "question": ICL_QUESTION if demos else QUESTION,
        "prompt_example": prompt("[target]", demos),
        "demonstration_format": "chat turns (user question, assistant answer) about the same image"
        if chat
        else "'Question: <question> Answer: <yes.|no.>' per demonstration, then the target's "
        "'Question: <question> Answer: ', joined by ' '",
        "demonstration_rule": RULES[protocol],
    }
    if demos:
        record["order"] = "true-first when the coin flip is above 0.5 (the authors' rule)"
        record["seed"] = seed
    if plan_ is not None and protocol == "paper-icl-dd":
        from .protocols import partner_record

        record.update(partner_record(plan_))
    return record
