"""The thesis' chapter-7 analyses as data (fractions in [0, 1]; the thesis prints percentages).

Source: the master thesis behind BLA (``seeds/000_bd22ba4998870dc7.txt``), chapter 7. Its caption
sets are older and larger than the release (paper Table 1), so these rows are for comparison, not
for equality. Pair keys and metric names are those of :mod:`bla_metric.formulas`.

- :data:`PAIRWISE` (Tables 7.1 and 7.4): share of datapoints where type X scores above type Y.
- :data:`VERB_COUNTS` (§7.1.3) and :data:`VERB_METRICS` / :data:`VERB_PAIRWISE` (Tables 7.2, 7.3).
- :data:`NOUN_ORDER` (§7.1.2): share of cases whose ranking follows the noun / SVO order.
- :data:`REGRESSION_SIGNS` (Tables 7.5, 7.6): "+" / "-" for predictors significant at p < 0.01,
  "×" otherwise.
"""

from __future__ import annotations

MODELS = ("CLIP", "ViLBERT", "LXMERT", "GPT-2")
"""Models of the thesis' analyses (GPT-2 only in Tables 7.1 and 7.4)."""

SOURCES = {
    "pairwise": "thesis Tables 7.1, 7.4",
    "verbs": "thesis Tables 7.2, 7.3",
    "noun_order": "thesis §7.1.2",
    "regression": "thesis Tables 7.5, 7.6",
}

_AP_PAIRS = ("TA>FA", "TP>FP", "TP>FA", "TA>FP", "TA>TP", "FA>FP")
_PERSON_PAIRS = ("TP1>FP1", "TP2>FP2", "TP2>FP1", "TP1>FP2", "TP1>TP2", "FP1>FP2")


def _pct(keys: tuple[str, ...], values: tuple[float, ...]) -> dict[str, float]:
    return {key: round(value / 100, 6) for key, value in zip(keys, values, strict=True)}


# Table 7.1 (AP) and Table 7.4 (CO, RC), %: one value per pair in the thesis' row order.
PAIRWISE: dict[str, dict[str, dict[str, float]]] = {
    "active_passive": {
        "CLIP": _pct(_AP_PAIRS, (42.41, 58.08, 70.64, 30.18, 27.9, 34.09)),
        "ViLBERT": _pct(_AP_PAIRS, (47.31, 58.89, 54.81, 45.35, 44.21, 51.71)),
        "LXMERT": _pct(_AP_PAIRS, (47.31, 44.54, 54.32, 38.66, 41.92, 43.88)),
        "GPT-2": _pct(_AP_PAIRS, (58.56, 65.58, 99.18, 0.98, 0.65, 0.98)),
    },
    "coordination": {
        "CLIP": _pct(_PERSON_PAIRS, (54.37, 47.25, 39.12, 59.25, 59.5, 57.12)),
        "ViLBERT": _pct(_PERSON_PAIRS, (52.75, 50.62, 41.5, 58.75, 56.88, 56.5)),
        "LXMERT": _pct(_PERSON_PAIRS, (49.38, 49.75, 43.0, 56.88, 54.75, 54.75)),
        "GPT-2": _pct(_PERSON_PAIRS, (50.0, 54.0, 48.5, 53.62, 49.88, 53.5)),
    },
    "relative_clause": {
        "CLIP": _pct(_PERSON_PAIRS, (53.49, 47.53, 38.4, 62.86, 60.08, 57.54)),
        "ViLBERT": _pct(_PERSON_PAIRS, (52.85, 50.19, 42.21, 57.92, 57.29, 55.89)),
        "LXMERT": _pct(_PERSON_PAIRS, (49.94, 50.44, 42.59, 58.68, 56.15, 55.64)),
        "GPT-2": _pct(_PERSON_PAIRS, (45.75, 53.87, 48.67, 51.96, 48.16, 52.6)),
    },
}

VERBS = ("watch", "look at", "hold", "help", "carry", "feed")
"""AP predicates (lemmas) with at least 20 caption sets, most frequent first; the rest is
``OTHER``."""
OTHER = "other"
MIN_VERB_SETS = 20

VERB_COUNTS: dict[str, int] = {
    "watch": 247,
    "look at": 73,
    "hold": 59,
    "help": 51,
    "carry": 24,
    "feed": 20,
    "other": 139,
}
"""Caption sets per verb (thesis §7.1.3); the release gives exactly these counts."""

_VERB_COLUMNS = ("ALL", *VERBS, OTHER)

# Table 7.2 (%): sentence accuracy, set accuracy, set error per verb column (ALL first).
_TABLE72 = {
    "sentence_accuracy": {
        "CLIP": (50.08, 47.77, 49.32, 53.59, 54.9, 50.0, 55.0, 50.72),
        "ViLBERT": (51.22, 48.79, 52.74, 56.78, 50.98, 52.08, 52.5, 52.16),
        "LXMERT": (48.12, 45.14, 50.68, 51.69, 50.0, 54.17, 45.0, 49.28),
    },
    "set_accuracy": {
        "CLIP": (6.2, 2.43, 4.11, 10.17, 11.76, 8.33, 10.0, 9.35),
        "ViLBERT": (8.48, 6.07, 10.96, 13.56, 7.84, 8.33, 5.0, 10.07),
        "LXMERT": (5.55, 5.67, 4.11, 6.78, 7.84, 16.67, 0.0, 3.6),
    },
    "set_error": {
        "CLIP": (6.04, 6.88, 5.48, 3.39, 1.96, 8.33, 0.0, 7.91),
        "ViLBERT": (6.04, 8.5, 5.48, 0.0, 5.88, 4.17, 0.0, 5.76),
        "LXMERT": (9.3, 15.38, 2.74, 3.39, 7.84, 8.33, 10.0, 5.04),
    },
}

# Table 7.3 (%): pairwise shares per verb column (ALL first).
_TABLE73 = {
    "TA>FA": {
        "CLIP": (42.41, 34.41, 38.36, 50.85, 43.14, 54.17, 50.0, 51.8),
        "ViLBERT": (47.31, 40.49, 50.68, 62.72, 37.25, 62.5, 40.0, 53.24),
        "LXMERT": (47.31, 34.82, 58.9, 54.24, 58.82, 45.83, 55.0, 55.4),
    },
    "TP>FP": {
        "CLIP": (58.08, 53.85, 50.68, 71.19, 70.59, 66.67, 90.0, 53.24),
        "ViLBERT": (58.89, 59.51, 54.79, 72.88, 58.82, 58.33, 70.0, 52.52),
        "LXMERT": (44.54, 44.13, 43.84, 49.15, 49.02, 66.67, 55.0, 37.41),
    },
    "TP>FA": {
        "CLIP": (70.64, 83.81, 56.16, 47.46, 68.63, 83.33, 50.0, 66.19),
        "ViLBERT": (54.81, 44.94, 57.53, 84.75, 54.9, 70.83, 60.0, 54.68),
        "LXMERT": (54.32, 44.94, 82.19, 71.19, 66.67, 54.17, 55.0, 44.6),
    },
    "TA>FP": {
        "CLIP": (30.18, 9.31, 47.95, 61.02, 43.14, 16.67, 55.0, 38.85),
        "ViLBERT": (45.35, 43.32, 42.47, 35.59, 43.14, 41.67, 50.0, 55.4),
        "LXMERT": (38.66, 38.46, 19.18, 25.42, 39.22, 58.33, 30.0, 52.52),
    },
    "TA>TP": {
        "CLIP": (27.9, 10.53, 43.84, 45.76, 29.41, 20.83, 45.0, 41.01),
        "ViLBERT": (44.21, 44.94, 43.84, 22.03, 31.37, 37.5, 45.0, 58.27),
        "LXMERT": (41.92, 43.72, 26.03, 37.29, 33.33, 45.83, 35.0, 52.52),
    },
    "FA>FP": {
        "CLIP": (34.09, 18.22, 50.68, 57.63, 43.14, 12.5, 70.0, 38.85),
        "ViLBERT": (51.71, 62.35, 42.47, 33.9, 47.06, 33.33, 65.0, 48.2),
        "LXMERT": (43.88, 52.23, 20.55, 27.12, 35.29, 58.33, 45.0, 48.92),
    },
}


def _by_verb(table: dict[str, dict[str, tuple[float, ...]]]) -> dict[str, dict[str, dict]]:
    """{model: {verb column: {key: fraction}}} from {key: {model: values per column}}."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for key, models in table.items():
        for model, values in models.items():
            for column, value in zip(_VERB_COLUMNS, values, strict=True):
                out.setdefault(model, {}).setdefault(column, {})[key] = round(value / 100, 6)
    return out


VERB_METRICS: dict[str, dict[str, dict[str, float]]] = _by_verb(_TABLE72)
"""Table 7.2: {model: {"ALL" | verb | "other": {sentence_accuracy, set_accuracy, set_error}}}."""
VERB_PAIRWISE: dict[str, dict[str, dict[str, float]]] = _by_verb(_TABLE73)
"""Table 7.3: {model: {"ALL" | verb | "other": {"TA>FA": share, ...}}}."""

NOUN_ORDER: dict[str, float] = {"noun_order": 0.32, "svo_order": 0.36}
"""§7.1.2 (model not named; the section discusses CLIP): share of cases whose sentence ranking
follows the ranking of the nouns (32%) and of the SVO orders (36%)."""

# Tables 7.5 (AP) and 7.6 (CO, RC): sign of each significant predictor (p < 0.01), "×" if not.
# Predictor names are those of the analysis' regression; the thesis' names are in comments.
REGRESSION_SIGNS: dict[str, dict[str, dict[str, str]]] = {
    "active_passive": {
        "length": {"ViLBERT": "×", "LXMERT": "+", "CLIP": "+"},  # len_sentence
        "voice[passive]": {"ViLBERT": "×", "LXMERT": "×", "CLIP": "-"},
        "grammar_score": {"ViLBERT": "×", "LXMERT": "-", "CLIP": "-"},  # gruen_score
        "person_size": {"ViLBERT": "+", "LXMERT": "+", "CLIP": "+"},
        "avg_concreteness": {"ViLBERT": "+", "LXMERT": "×", "CLIP": "+"},
        "avg_frequency": {"ViLBERT": "-", "LXMERT": "-", "CLIP": "-"},  # avg_freq
        "verb[feed]": {"ViLBERT": "+", "LXMERT": "+", "CLIP": "+"},
        "verb[help]": {"ViLBERT": "+", "LXMERT": "+", "CLIP": "+"},
        "verb[hold]": {"ViLBERT": "+", "LXMERT": "×", "CLIP": "-"},
        "verb[look at]": {"ViLBERT": "-", "LXMERT": "×", "CLIP": "-"},
        "verb[watch]": {"ViLBERT": "+", "LXMERT": "×", "CLIP": "×"},
        "verb[other]": {"ViLBERT": "-", "LXMERT": "×", "CLIP": "-"},
    },
    **{
        config: {
            "length": {"ViLBERT": "+", "LXMERT": "+", "CLIP": "+"},  # len_sen
            "grammar_score": {"ViLBERT": "-", "LXMERT": "-", "CLIP": "-"},  # gruen_score
            "person_size": {"ViLBERT": "+", "LXMERT": "+", "CLIP": "+"},
            "attribute_size": {"ViLBERT": "+", "LXMERT": "+", "CLIP": "+"},
            "avg_concreteness": {"ViLBERT": "+", "LXMERT": "+", "CLIP": "×"},
            "avg_frequency": {"ViLBERT": "-", "LXMERT": "-", "CLIP": "-"},  # avg_freq
        }
        for config in ("coordination", "relative_clause")
    },
}
REGRESSION_MODELS = ("ViLBERT", "LXMERT", "CLIP")
SIGNIFICANCE_LEVEL = 0.01
"""The thesis counts a predictor as significant when p < 0.01."""
