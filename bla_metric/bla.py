"""BLA metric: ranking and binary views of the BLA benchmark (Chen et al., EMNLP 2023)."""

import re

import datasets
import evaluate

from .citation import CITATION
from .formulas import check_inputs, compute
from .registry import Registry
from .tasks import TASKS

# evaluate copies only the files this script imports directly (formulas imports tasks, and tasks
# the registry type, so both are imported here too), and no data file: the metric needs none of
# the published numbers.
__all__ = ["Bla", "Registry", "TASKS"]

_CITATION = CITATION

_DESCRIPTION = """\
BLA (Basic Language Abilities) tests whether vision-and-language models understand active-passive
voice, coordination and relative clauses. Each datapoint is an image with true and false sentences
(two of each in the benchmark). A model scores every (image, sentence) pair on its own; this metric
turns the scores into the numbers of the BLA paper and thesis.

Ranking view (default; scores, higher = more likely true): sentence_accuracy (share of sentences
correctly placed: a true one among the top k, a false one outside, k = number of true sentences;
tied scores share their positions evenly, i.e. the expected value over random tie-breaking),
set_accuracy (every true sentence strictly above every false one) and set_error (every false
sentence strictly above every true one). Ties never favour true sentences: four equal scores give
0.5 / 0 / 0. Binary view (hard 0/1 labels, or scores with a threshold): accuracy, precision and
recall of the true and of the false class, and all_same_rate.
"""

_KWARGS_DESCRIPTION = """
Computes the BLA metrics.
Args:
    predictions (`list` of `list` of `float`): one list per datapoint: a score per sentence
        (higher = more likely true), or 0/1 labels in the binary view.
    references (`list` of `list` of `int`): one list per datapoint: 1 for a true sentence, 0 for
        a false one; at least one of each.
    mode (`str`): "ranking" (default) or "binary".
    threshold (`float` or `str`, optional): binary view only: a number turns scores into labels
        (score >= threshold is true); "top_k" labels the k best-ranked sentences true (k = number
        of true sentences, ties broken against true sentences; the paper's CLIP protocol).
        Without it the predictions must be 0/1 labels.
    caption_types (`list` of `str`, or one such list per datapoint, optional): sentence types
        (e.g. ["TA", "TP", "FA", "FP"]); adds the pairwise preference table.
    groups (`list`, optional): one label per datapoint (e.g. the AP verb); adds every metric
        per group.
    bootstrap (`int`): number of resamples of datapoints for 95% confidence intervals (0 = none).
    seed (`int`): seed of the bootstrap (default 0).
Returns:
    ranking view: sentence_accuracy, set_accuracy, set_error (`float` in [0, 1]);
    binary view: accuracy, precision_true, precision_false, recall_true, recall_false,
        all_same_rate (`float` in [0, 1]; a ratio with a zero denominator is 0.0);
    n (`int`): number of datapoints;
    pairwise (`dict`, with caption_types): {"X>Y": share of datapoints where X scores strictly
        above Y};
    per_group (`dict`, with groups): {str(group): metrics of that group};
    ci (`dict`, with bootstrap): {metric: [low, high]}.
Examples:
    >>> bla = evaluate.load("bla_metric/bla.py")  # from the Hub: evaluate.load("bla-benchmark/bla")
    >>> results = bla.compute(
    ...     predictions=[[0.9, 0.8, 0.2, 0.1], [0.3, 0.6, 0.5, 0.4], [0.5, 0.5, 0.5, 0.5]],
    ...     references=[[1, 1, 0, 0], [1, 1, 0, 0], [1, 1, 0, 0]],
    ... )
    >>> print({key: round(value, 4) for key, value in results.items()})
    {'sentence_accuracy': 0.6667, 'set_accuracy': 0.3333, 'set_error': 0.0, 'n': 3}

    >>> results = bla.compute(
    ...     predictions=[[0.9, 0.8, 0.2, 0.1], [0.3, 0.6, 0.5, 0.4]],
    ...     references=[[1, 1, 0, 0], [1, 1, 0, 0]],
    ...     caption_types=["TA", "TP", "FA", "FP"],
    ... )
    >>> print(results["pairwise"])
    {'TA>FA': 0.5, 'TP>FP': 1.0, 'TP>FA': 1.0, 'TA>FP': 0.5, 'TA>TP': 0.5, 'FA>FP': 1.0}

    >>> results = bla.compute(
    ...     predictions=[[0.9, 0.8, 0.2, 0.1], [0.3, 0.6, 0.5, 0.4]],
    ...     references=[[1, 1, 0, 0], [1, 1, 0, 0]],
    ...     mode="binary",
    ...     threshold=0.5,
    ... )
    >>> print(results["accuracy"], results["precision_true"], results["precision_false"])
    0.75 0.75 0.75
    >>> print(results["all_same_rate"], results["n"])
    0.0 2
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Bla(evaluate.Metric):
    """The BLA metric: a thin wrapper over ``formulas.compute``."""

    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            module_type="metric",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("float64")),
                    "references": datasets.Sequence(datasets.Value("int64")),
                }
            ),
            homepage="https://github.com/shin-ee-chen/BLA",
            codebase_urls=["https://github.com/shin-ee-chen/BLA"],
            reference_urls=["https://aclanthology.org/2023.emnlp-main.356/"],
        )

    def compute(self, *, predictions=None, references=None, **kwargs):
        """``evaluate.Metric.compute``, with the inputs checked by ``formulas`` before evaluate
        casts them to the features (so 0.9 is refused, never truncated to 0)."""
        given = predictions is not None or references is not None
        if given:
            check_inputs(predictions, references, **kwargs)
            predictions, references = _plain(predictions, references)
        self._bla_checked = given
        try:
            return super().compute(predictions=predictions, references=references, **kwargs)
        finally:
            self._bla_checked, self._bla_seen = False, 0

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """``evaluate.Metric.add_batch``, each batch checked first (datapoints counted across
        batches in the messages)."""
        if not getattr(self, "_bla_checked", False):
            seen = getattr(self, "_bla_seen", 0)
            try:
                check_inputs(predictions, references)
            except ValueError as err:
                raise ValueError(_shift(str(err), seen)) from None
            predictions, references = _plain(predictions, references)
            self._bla_seen = seen + len(predictions)
        return super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """``evaluate.Metric.add`` for one datapoint, checked like a batch of one."""
        prediction = kwargs.pop("predictions", prediction)  # evaluate accepts both spellings
        reference = kwargs.pop("references", reference)
        seen = getattr(self, "_bla_seen", 0)
        try:
            check_inputs([prediction], [reference])
        except ValueError as err:
            raise ValueError(_shift(str(err), seen)) from None
        (prediction,), (reference,) = _plain([prediction], [reference])
        self._bla_seen = seen + 1
        return super().add(prediction=prediction, reference=reference, **kwargs)

    def _compute(
        self,
        predictions,
        references,
        mode="ranking",
        threshold=None,
        caption_types=None,
        groups=None,
        bootstrap=0,
        seed=0,
    ) -> dict:
        return compute(
            predictions,
            references,
            mode=mode,
            threshold=threshold,
            caption_types=caption_types,
            groups=groups,
            bootstrap=bootstrap,
            seed=seed,
        )


def _plain(predictions, references) -> tuple[list[list[float]], list[list[int]]]:
    """Checked inputs as plain floats and ints (lossless: they passed ``check_inputs``)."""
    return (
        [[float(v) for v in row] for row in predictions],
        [[int(v) for v in row] for row in references],
    )


def _shift(message: str, offset: int) -> str:
    """A ``datapoint i: ...`` message of one batch, renumbered to count earlier batches too."""
    return re.sub(r"^datapoint (\d+)", lambda m: f"datapoint {int(m[1]) + offset}", message)
