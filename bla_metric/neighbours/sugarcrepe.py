"""The metrics of the compositional suite, in plain NumPy: SugarCrepe, SugarCrepe++, ARO, MMVP-VLM
and NaturalBench, each as its authors compute it.

Inputs follow :mod:`bla_metric.formulas` (one score list per datapoint, higher = more likely true,
and one 0/1 label list) or, for the two-image benchmarks, one 2x2 matrix per datapoint
``[image][text]`` as Winoground's (:func:`bla_metric.neighbours.winoground_outcomes`). Ties never
count as a success, as in BLA; where an author's code breaks ties otherwise the function says so.

- SugarCrepe (Hsieh et al., NeurIPS 2023 D&B; ``main_eval.py`` of RAIVNLab/sugar-crepe): an item
  is right when the positive caption scores strictly above the negative (``pos_score >
  neg_score``); accuracy per subset.
- SugarCrepe++ (Dumpala et al., NeurIPS 2024 D&B): ITT, an item is right when both positive
  captions score strictly above the negative one against the image; TOT, the text-only task, an
  item is right when the cosine of the two positives' text embeddings is strictly above that of
  each positive with the negative (:func:`text_only_accuracy`).
- ARO (Yuksekgonul et al., ICLR 2023; mertyg/vision-language-models-are-bows): VG-Relation and
  VG-Attribution are macro accuracies, the mean over relations (the notebook "Replicate ARO!"
  drops :data:`ARO_SYMMETRIC_RELATIONS`) or over attribute pairs with at least
  :data:`ARO_MIN_ATTRIBUTE_COUNT` items (``VG_Attribution.evaluate_scores``) of the share of items
  whose true caption scores above the false one. Upstream takes ``argmax([false, true])``, so a
  tie picks the false caption: the same strict rule. COCO-Order and Flickr30k-Order: the share of
  captions scored strictly above their four perturbations (``Precision@1``; upstream's ``argmax``
  gives a tie to the caption, listed first).
- MMVP-VLM (Tong et al., CVPR 2024; ``scripts/evaluate_vlm.py`` of tsb0601/MMVP): a pair of
  images with one statement each; a statement is right when its own image gets the higher
  softmax over the two images (> 0.5, i.e. the strictly higher score; upstream's tie gives the
  second image, so its second statement wins ties and ours does not); a pair is right when both
  statements are. Pair accuracy per visual pattern, and their mean.
- NaturalBench (Li et al., NeurIPS 2024 D&B; ``example.py`` of Baiqi-Li/NaturalBench): two
  questions x two images with opposite answers; ``acc`` over the four (question, image)
  answers, ``q_acc`` a question right on both images, ``i_acc`` an image right for both
  questions, ``g_acc`` all four right. Generated answers are read as upstream's
  ``extract_answer`` reads each question type (yes / no; multiple choice: A / B), the gold
  answers as :func:`naturalbench_gold` (:func:`naturalbench_answer_metrics`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from bla_metric.neighbours.valse import pair_outcomes, pairwise_accuracy, winoground_outcomes

SUGARCREPE_SUBSETS: dict[str, str] = {
    "replace_obj": "Replace object",
    "replace_att": "Replace attribute",
    "replace_rel": "Replace relation",
    "swap_obj": "Swap object",
    "swap_att": "Swap attribute",
    "add_obj": "Add object",
    "add_att": "Add attribute",
}
"""SugarCrepe's seven subsets (upstream ``data/<subset>.json``) -> title, in the paper's order."""

SUGARCREPE_PP_SUBSETS: dict[str, str] = {
    k: v for k, v in SUGARCREPE_SUBSETS.items() if not k.startswith("add_")
}
"""SugarCrepe++'s five subsets (``data/<subset>.json`` of Aman-J/SugarCrepe_pp): SugarCrepe's
replace and swap subsets with a second positive caption."""

ARO_TASKS: dict[str, str] = {
    "vg_relation": "VG-Relation",
    "vg_attribution": "VG-Attribution",
    "coco_order": "COCO-Order",
    "flickr30k_order": "Flickr30k-Order",
}
"""ARO's tasks -> title: two Visual Genome tasks, two caption-order tasks."""
ARO_ORDER_GROUP = "order"
"""The one group of an Order task's items: its macro accuracy is the accuracy over items, the
authors' ``Precision@1`` (the caption strictly above its four perturbations; upstream's
``argmax`` would give a tie to the caption, listed first)."""

ARO_MIN_ATTRIBUTE_COUNT = 25
"""VG-Attribution keeps the attribute pairs with at least this many items (upstream
``VG_Attribution.evaluate_scores``)."""

ARO_SYMMETRIC_RELATIONS: frozenset[str] = frozenset(
    """adjusting|attached to|between|bigger than|biting|boarding|brushing|chewing|cleaning|climbing|
close to|coming from|coming out of|contain|crossing|dragging|draped over|drinking|drinking from|
driving|driving down|driving on|eating from|eating in|enclosing|exiting|facing|filled with|
floating in|floating on|flying|flying above|flying in|flying over|flying through|full of|
going down|going into|going through|grazing in|growing in|growing on|guiding|hanging from|
hanging in|hanging off|hanging over|higher than|holding onto|hugging|in between|jumping off|
jumping on|jumping over|kept in|larger than|leading|leaning over|leaving|licking|longer than|
looking in|looking into|looking out|looking over|looking through|lying next to|lying on top of|
making|mixed with|mounted on|moving|on the back of|on the edge of|on the front of|
on the other side of|opening|painted on|parked at|parked beside|parked by|parked in|
parked in front of|parked near|parked next to|perched on|petting|piled on|playing|playing in|
playing on|playing with|pouring|reaching for|reading|reflected on|riding on|running in|
running on|running through|seen through|sitting behind|sitting beside|sitting by|
sitting in front of|sitting near|sitting next to|sitting under|skiing down|skiing on|sleeping in|
sleeping on|smiling at|sniffing|splashing|sprinkled on|stacked on|standing against|
standing around|standing behind|standing beside|standing in front of|standing near|
standing next to|staring at|stuck in|surrounding|swimming in|swinging|talking to|topped with|
touching|traveling down|traveling on|tying|typing on|underneath|wading in|waiting for|
walking across|walking by|walking down|walking next to|walking through|working in|working on|
worn on|wrapped around|wrapped in|by|of|near|next to|with|beside|on the side of|around""".replace(
        "\n", ""
    ).split("|")
)
"""The relations the ARO notebook "Replicate ARO! VG-Relation, VG-Attribution" (mertyg/
vision-language-models-are-bows @ 42dbb5e) leaves out of VG-Relation's macro accuracy."""

MMVP_PATTERNS: tuple[str, ...] = (
    "Orientation and Direction",
    "Presence of Specific Features",
    "State and Condition",
    "Quantity and Count",
    "Positional and Relational Context",
    "Color and Appearance",
    "Structural Characteristics",
    "Texts",
    "Viewpoint and Perspective",
)
"""MMVP-VLM's nine visual patterns, in upstream ``evaluate_vlm.py``'s order (15 pairs each)."""

NATURALBENCH_METRICS = ("acc", "q_acc", "i_acc", "g_acc")
"""NaturalBench's accuracies (``example.py``: binary, question, image and group score)."""


def image_to_text_accuracy(
    scores: Sequence[Sequence[float]], labels: Sequence[Sequence[int]]
) -> float:
    """Share of items whose every true caption scores strictly above every false one: SugarCrepe
    (one positive, one negative) and SugarCrepe++'s ITT (two positives, one negative)."""
    return pairwise_accuracy(scores, labels)


def text_only_margins(
    similarities: Sequence[Sequence[Sequence[float]]], labels: Sequence[Sequence[int]]
) -> np.ndarray:
    """Per item, how far the similarity of its two true captions lies above the highest
    similarity of a true caption with a false one (SugarCrepe++'s text-only task, TOT: the item
    is right when the margin is strictly positive, a tie when it is 0).

    ``similarities[k]`` is item ``k``'s caption x caption matrix (upstream: the cosine of the
    text encoder's embeddings of each caption alone), its captions in the order of
    ``labels[k]``; an item has exactly two true captions and at least one false one (P1, P2,
    N). Only the entries between a true caption and another caption are read."""
    if len(similarities) != len(labels):
        raise ValueError(f"similarities has {len(similarities)} items but labels has {len(labels)}")
    margins = []
    for k, (matrix, row) in enumerate(zip(similarities, labels, strict=True)):
        values, truth = np.asarray(matrix, float), np.asarray(row, int)
        n = len(truth)
        if values.shape != (n, n):
            raise ValueError(
                f"item {k}: similarities must be {n} x {n} (one row and column per caption), "
                f"not {list(values.shape)}"
            )
        true, false = np.flatnonzero(truth == 1), np.flatnonzero(truth == 0)
        if len(true) != 2 or len(false) == 0:
            raise ValueError(
                f"item {k}: the text-only task needs two true captions and a false one, got "
                f"labels {list(row)}"
            )
        positives = values[true[0], true[1]]
        margins.append(positives - values[np.ix_(true, false)].max())
    return np.asarray(margins, float)


def text_only_outcomes(
    similarities: Sequence[Sequence[Sequence[float]]], labels: Sequence[Sequence[int]]
) -> np.ndarray:
    """Each item's 0/1 outcome of SugarCrepe++'s TOT, as floats: sim(P1, P2) strictly above
    both sim(P1, N) and sim(P2, N) (``evaluate_ulms.py`` and ``VLMs/test_*.py`` of
    Sri-Harsha/scpp: ``p1_p2 > p1_ref and p1_p2 > p2_ref``; see :func:`text_only_margins`)."""
    return (text_only_margins(similarities, labels) > 0).astype(float)


def text_only_accuracy(
    similarities: Sequence[Sequence[Sequence[float]]], labels: Sequence[Sequence[int]]
) -> dict[str, Any]:
    """SugarCrepe++'s text-only accuracy (TOT): ``tot``, the share of items whose two positive
    captions are strictly more similar to each other than either is to the negative;
    ``ties``, the items whose positives' similarity equals the highest positive-negative one;
    ``n``. An empty list is a ValueError."""
    if not len(similarities):
        raise ValueError("similarities is empty: there must be at least one item")
    margins = text_only_margins(similarities, labels)
    return {
        "tot": float((margins > 0).mean()),
        "ties": int((margins == 0).sum()),
        "n": len(margins),
    }


def macro_accuracy(
    outcomes: Sequence[float],
    groups: Sequence[str],
    exclude: Iterable[str] = (),
    min_count: int = 1,
) -> dict[str, Any]:
    """ARO's macro accuracy: per group (relation, attribute pair) the mean outcome, then the mean
    over the groups kept (not in ``exclude``, at least ``min_count`` items).

    Returns ``accuracy`` (NaN when no group is kept), ``per_group`` ({group: {"accuracy", "n"}}
    of the kept groups), ``groups`` (how many), ``n`` (items) and ``n_kept`` (items of kept
    groups)."""
    if len(outcomes) != len(groups):
        raise ValueError(f"groups has {len(groups)} names but there are {len(outcomes)} items")
    values = np.asarray(outcomes, float)
    names = np.asarray([str(g) for g in groups])
    left_out = set(exclude)
    per_group: dict[str, dict[str, float | int]] = {}
    for name in sorted(set(names.tolist()) - left_out):
        mask = names == name
        if int(mask.sum()) >= min_count:
            per_group[name] = {"accuracy": float(values[mask].mean()), "n": int(mask.sum())}
    accuracies = [g["accuracy"] for g in per_group.values()]
    return {
        "accuracy": float(np.mean(accuracies)) if accuracies else float("nan"),
        "per_group": per_group,
        "groups": len(per_group),
        "n": len(values),
        "n_kept": int(sum(g["n"] for g in per_group.values())),
    }


def macro_item_values(
    outcomes: Sequence[float],
    groups: Sequence[str],
    exclude: Iterable[str] = (),
    min_count: int = 1,
) -> np.ndarray:
    """Per item, a value whose mean over all items is :func:`macro_accuracy`'s accuracy: the
    item's outcome times ``n / (G * n_g)`` (``G`` kept groups, ``n_g`` items of its group), 0
    for an item of a group left out. Paired tests and rank sets take these as any per-item
    values."""
    summary = macro_accuracy(outcomes, groups, exclude, min_count)
    kept = summary["per_group"]
    n = len(outcomes)
    weights = np.asarray(
        [n / (len(kept) * kept[str(g)]["n"]) if str(g) in kept else 0.0 for g in groups]
    )
    return np.asarray(outcomes, float) * weights


def aro_metrics(
    scores: Sequence[Sequence[float]],
    labels: Sequence[Sequence[int]],
    groups: Sequence[str],
    task: str,
) -> dict[str, Any]:
    """ARO's ``macro_accuracy`` of one task (:data:`ARO_TASKS`) and the ``accuracy`` pooled over
    every item (upstream's VG-Relation ``Accuracy``; the Order tasks' ``Precision@1``, which their
    one group makes the macro accuracy too)."""
    outcomes = pair_outcomes(scores, labels)
    macro = macro_accuracy(outcomes, groups, *aro_rule(task))
    return {
        "macro_accuracy": macro["accuracy"],
        "accuracy": float(outcomes.mean()) if len(outcomes) else float("nan"),
        "groups": macro["groups"],
        "per_group": macro["per_group"],
        "n": len(outcomes),
    }


def aro_rule(task: str) -> tuple[frozenset[str], int]:
    """(groups left out, minimum items per group) of an ARO task's macro accuracy."""
    if task == "vg_relation":
        return ARO_SYMMETRIC_RELATIONS, 1
    if task == "vg_attribution":
        return frozenset(), ARO_MIN_ATTRIBUTE_COUNT
    if task in ("coco_order", "flickr30k_order"):
        return frozenset(), 1
    raise ValueError(f"unknown ARO task {task!r}: use one of {', '.join(ARO_TASKS)}")


def mmvp_pair_outcomes(scores: Any) -> np.ndarray:
    """Per pair (2x2 ``[image][statement]``, statement ``k`` true of image ``k``): both
    statements give their own image the strictly higher score (Winoground's image score)."""
    return winoground_outcomes(scores)["image_score"]


def mmvp_metrics(scores: Any, patterns: Sequence[str]) -> dict[str, Any]:
    """Pair accuracy per visual pattern (``per_pattern``: {pattern: {"accuracy", "n"}}), their
    mean (``pair_accuracy``, upstream's average over the nine patterns) and ``n``."""
    outcomes = mmvp_pair_outcomes(scores)
    summary = macro_accuracy(outcomes, patterns)
    return {
        "pair_accuracy": summary["accuracy"],
        "per_pattern": summary["per_group"],
        "n": len(outcomes),
    }


def naturalbench_outcomes(correct: Any) -> dict[str, np.ndarray]:
    """Per sample, from ``correct[k][i][q]`` (the answer to question ``q`` on image ``i`` is
    right): ``acc`` (share of the four right), ``q_acc`` and ``i_acc`` (share of the two
    questions / images right on both), ``g_acc`` (all four right)."""
    right = np.asarray(correct, dtype=bool)
    if right.ndim != 3 or right.shape[1:] != (2, 2):
        raise ValueError(f"correct must be one 2x2 matrix per sample, got shape {right.shape}")
    return {
        "acc": right.mean(axis=(1, 2)),
        "q_acc": right.all(axis=1).mean(axis=1),
        "i_acc": right.all(axis=2).mean(axis=1),
        "g_acc": right.all(axis=(1, 2)).astype(float),
    }


def naturalbench_metrics(correct: Any) -> dict[str, Any]:
    """NaturalBench's ``acc``, ``q_acc``, ``i_acc`` and ``g_acc`` over samples, and ``n``."""
    outcomes = naturalbench_outcomes(correct)
    result: dict[str, Any] = {k: float(v.mean()) for k, v in outcomes.items()}
    result["n"] = len(outcomes["acc"])
    return result


def naturalbench_correct(
    predicted: Sequence[Sequence[Sequence[int]]], gold: Sequence[Sequence[Sequence[int]]]
) -> np.ndarray:
    """``correct[k][i][q]``: the predicted answer (1 = yes) equals the gold one; an answer that
    could not be parsed (-1) is wrong."""
    predicted_array, gold_array = np.asarray(predicted), np.asarray(gold)
    if predicted_array.shape != gold_array.shape:
        raise ValueError(
            f"predictions have shape {predicted_array.shape} but the answers {gold_array.shape}"
        )
    return predicted_array == gold_array


def naturalbench_answer(text: str, question_type: str = "yes_no") -> int:
    """An answer as upstream ``extract_answer`` reads it: 1 when "yes" (``multiple_choice``:
    "A") comes first as a whole word (case-insensitive), 0 when "no" ("B") does, -1 when
    neither appears. Upstream's search ignores case for the letters too, so the article "a"
    reads as option A, as it does there."""
    first, second = naturalbench_options(question_type)

    def position(word: str) -> int:
        match = re.search(r"\b" + re.escape(word) + r"\b", text, re.IGNORECASE)
        return match.start() if match else -1

    at_first, at_second = position(first), position(second)
    if at_first == -1 and at_second == -1:
        return -1
    if at_first != -1 and at_second != -1:
        return 1 if at_first < at_second else 0
    return 0 if at_first == -1 else 1


def naturalbench_options(question_type: str = "yes_no") -> tuple[str, str]:
    """The two answers of a NaturalBench question type, the one read as 1 first: ("yes",
    "no") for ``yes_no``, ("A", "B") for ``multiple_choice`` (upstream ``extract_answer``'s
    words; the release's gold answers are these, capitalised or not)."""
    if question_type == "yes_no":
        return "yes", "no"
    if question_type == "multiple_choice":
        return "A", "B"
    raise ValueError(f"unknown question type {question_type!r}: use yes_no or multiple_choice")


def naturalbench_gold(answer: str, question_type: str = "yes_no") -> int:
    """A gold answer of the release as 1 / 0 (``Yes`` / ``No``; ``A`` / ``B``; any case, outer
    spaces ignored); anything else is a ValueError naming it."""
    first, second = naturalbench_options(question_type)
    said = str(answer).strip().lower()
    if said in (first.lower(), second.lower()):
        return int(said == first.lower())
    raise ValueError(f"a {question_type} answer must be {first} or {second}, got {answer!r}")


def naturalbench_answer_metrics(
    answers: Sequence[Sequence[Sequence[str]]],
    gold: Sequence[Sequence[Sequence[int]]],
    question_type: str = "yes_no",
) -> dict[str, Any]:
    """``acc``, ``q_acc``, ``i_acc``, ``g_acc`` and ``n`` of generated answers
    (``answers[k][i][q]``: the text answering question ``q`` on image ``i`` of sample ``k``)
    read as upstream ``extract_answer`` reads that question type, against the gold answers
    (1 / 0, :func:`naturalbench_gold`); an answer with neither word is wrong."""
    parsed = [
        [[naturalbench_answer(str(text), question_type) for text in image] for image in sample]
        for sample in answers
    ]
    predicted = np.asarray(parsed, int).reshape(-1, 2, 2)
    truth = np.asarray(gold, int).reshape(-1, 2, 2)
    return naturalbench_metrics(naturalbench_correct(predicted, truth))
