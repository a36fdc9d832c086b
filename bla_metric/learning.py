"""BLA-specific learning (paper §6): the improvement over zero-shot, the one formula of Tables 3
and 4 and Figure 3.

The paper calls it "relative improvement ... over the zero-shot setting" and prints it in
percentage points: the learned model's metric minus the zero-shot model's metric on the same
test split (e.g. ViLBERT on AP: about 50% zero-shot, "a respectable 61%" fine-tuned, Table 3 prints
11.00; the printed values are multiples of 1/8 point, one sentence of the 800 in a 200-datapoint
test split, which a ratio would not give). :func:`relative_change` gives the ratio for those who
want it; the report uses :func:`improvement`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from .formulas import binary_metrics, ranking_metrics, threshold_labels

LEARNING_METRICS = ("accuracy", "precision_true", "precision_false")
"""The binary metrics the paper reports for BLA-specific learning."""


def improvement(learned: float, zero_shot: float) -> float:
    """``learned - zero_shot`` in percentage points (inputs are fractions in [0, 1])."""
    return 100.0 * (float(learned) - float(zero_shot))


def relative_change(learned: float, zero_shot: float) -> float | None:
    """``(learned - zero_shot) / zero_shot`` in percent (None when zero-shot is 0)."""
    if not zero_shot:
        return None
    return 100.0 * (float(learned) - float(zero_shot)) / float(zero_shot)


def improvements(
    learned: Mapping[str, float],
    zero_shot: Mapping[str, float],
    metrics: Iterable[str] = LEARNING_METRICS,
) -> dict[str, float]:
    """:func:`improvement` of each metric present in both binary-view dicts."""
    return {
        m: improvement(learned[m], zero_shot[m]) for m in metrics if m in learned and m in zero_shot
    }


def pair_accuracy(
    scores: Sequence[Sequence[float]], labels: Sequence[Sequence[int]], probabilistic: bool
) -> float:
    """Share of training datapoints a model gets right while it learns (0.0 without any).

    Match probabilities (``probabilistic``, ITM heads): the share of sentences on the right side
    of 0.5 (the binary view's accuracy at threshold 0.5). Similarities (dual encoders): the share
    of datapoints whose true sentences all score strictly above their false ones (set accuracy).
    """
    if not labels:
        return 0.0
    if probabilistic:
        return binary_metrics(threshold_labels(scores, 0.5), labels)["accuracy"]
    return ranking_metrics(scores, labels)["set_accuracy"]
