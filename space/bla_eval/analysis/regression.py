"""Ordinary least squares of the model's sentence scores on sentence properties (thesis §7.2).

One row per (datapoint, sentence). Predictors: ``length``; ``voice[passive]`` (AP; reference
level active); ``grammar_score`` (CO/RC: the dataset's per-sentence grammar scores);
``avg_frequency``; ``avg_concreteness``; ``verb[...]`` (AP: the verb groups of §7.1.3 as
treatment-coded dummies, reference level the alphabetically first group, "carry", as R's ``lm``
does, so the thesis' Table 7.5 rows line up). The thesis' ``person_size`` and ``attribute_size``
need Visual Genome boxes, which the release does not carry: they are left out.

The fit is ``statsmodels.OLS``; a predictor is significant at p < 0.01 as in the thesis.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from . import features
from .thesis_tables import REGRESSION_MODELS, REGRESSION_SIGNS, SIGNIFICANCE_LEVEL

VOICE = {"TA": "active", "FA": "active", "TP": "passive", "FP": "passive"}


def sentence_table(config: str, records: list[dict], rows: list[dict]) -> pd.DataFrame:
    """One row per scored sentence: id, caption type, sentence, score and its properties."""
    ap = config.removesuffix("_learning") == "active_passive"
    groups = features.verb_groups([r.get("predicate") or "" for r in rows]) if ap else None
    out = []
    for i, (record, row) in enumerate(zip(records, rows, strict=True)):
        grammar = row.get("grammar_scores") or [None] * len(row["captions"])
        for j, sentence in enumerate(row["captions"]):
            item: dict[str, Any] = {
                "id": record["id"],
                "caption_type": record["caption_types"][j],
                "label": int(record["labels"][j]),
                "sentence": sentence,
                "score": float(record["scores"][j]),
                "length": len(features.words(sentence)),
                "avg_frequency": features.avg_frequency(sentence),
                "avg_concreteness": features.avg_concreteness(sentence),
            }
            if ap:
                item["voice"] = VOICE.get(item["caption_type"], "")
                item["verb"] = groups[i]
            else:
                item["grammar_score"] = math.nan if grammar[j] is None else float(grammar[j])
            out.append(item)
    return pd.DataFrame(out)


def design(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series]:
    """(X with a ``const`` column and named predictors, y = score) on the complete rows."""
    columns = ["length"]
    if "voice" in table:
        columns.append("voice")
    if "grammar_score" in table and table["grammar_score"].notna().any():
        columns.append("grammar_score")
    columns += ["avg_frequency", "avg_concreteness"]
    if "verb" in table:
        columns.append("verb")
    data = table.dropna(subset=[c for c in columns if c not in ("voice", "verb")])
    x = pd.DataFrame({"const": 1.0}, index=data.index)
    for column in columns:
        if column in ("voice", "verb"):
            levels = sorted(data[column].unique())
            for level in levels[1:]:
                x[f"{column}[{level}]"] = (data[column] == level).astype(float)
        else:
            x[column] = data[column].astype(float)
    return x, data["score"].astype(float)


class TooFewForFit(ValueError):
    """The sentences cannot identify the fit's coefficients (fewer rows than coefficients plus
    one, or predictors that do not vary apart): no fit is made."""


def check_identifiable(x: pd.DataFrame) -> None:
    """:class:`TooFewForFit` unless ``x`` has more rows than columns and full column rank (so
    every coefficient is identified and one residual degree of freedom is left)."""
    rows, columns = x.shape
    if rows <= columns:
        raise TooFewForFit(
            f"too few datapoints for the fit: {rows} sentences for {columns} coefficients"
        )
    rank = int(np.linalg.matrix_rank(x.to_numpy()))
    if rank < columns:
        raise TooFewForFit(
            f"too few datapoints for the fit: the {rows} sentences' properties identify "
            f"{rank} of its {columns} coefficients"
        )


def fit(config: str, table: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Coefficient table (predictor, coefficient, std_error, t, p_value, sign, thesis signs) and
    fit facts (n, r_squared, dropped rows); :class:`TooFewForFit` where the sentences cannot
    identify it."""
    import statsmodels.api as sm

    x, y = design(table)
    check_identifiable(x)
    result = sm.OLS(y.to_numpy(), x.to_numpy()).fit()
    thesis = REGRESSION_SIGNS.get(config.removesuffix("_learning"), {})
    rows = []
    for k, name in enumerate(x.columns):
        p = float(result.pvalues[k])
        coefficient = float(result.params[k])
        sign = ("+" if coefficient > 0 else "-") if p < SIGNIFICANCE_LEVEL else "×"
        row = {
            "predictor": name,
            "coefficient": coefficient,
            "std_error": float(result.bse[k]),
            "t": float(result.tvalues[k]),
            "p_value": p,
            "sign": sign if name != "const" else "",
        }
        for model in REGRESSION_MODELS:
            row[f"thesis {model}"] = thesis.get(name, {}).get(model, "")
        rows.append(row)
    for name, signs in thesis.items():  # thesis predictors the release cannot give
        if name not in x.columns:
            rows.append(
                {
                    "predictor": name,
                    "coefficient": math.nan,
                    "std_error": math.nan,
                    "t": math.nan,
                    "p_value": math.nan,
                    "sign": "n/a",
                    **{f"thesis {m}": signs.get(m, "") for m in REGRESSION_MODELS},
                }
            )
    facts = {
        "n": int(result.nobs),
        "dropped": int(len(table) - len(y)),
        "r_squared": float(result.rsquared),
        "condition_number": float(np.linalg.cond(x.to_numpy())),
    }
    return pd.DataFrame(rows), facts
