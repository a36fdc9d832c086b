"""The neighbours' published rows (``bla_metric.neighbours.references``): every cell of the
authors' tables, in the benchmark specs' task and metric names."""

from __future__ import annotations

import pytest

from bla_metric.neighbours.mmvp_vlm import MMVP_PATTERNS
from bla_metric.neighbours.references import MMVP_PER_PATTERN, VALSE_INSTRUMENTS, reference_rows
from bla_metric.neighbours.sugarcrepe import SUGARCREPE_SUBSETS


def test_sugarcrepe_rows_are_one_per_model_and_subset_with_their_kinds():
    rows = reference_rows("sugarcrepe")
    models = {r["model"] for r in rows}
    assert len(models) == 20 and len(rows) == 20 * len(SUGARCREPE_SUBSETS)
    cell = reference_rows("sugarcrepe", "swap_obj")
    by_model = {r["model"]: r for r in cell}
    assert by_model["OpenAI ViT-B-32"]["accuracy"] == pytest.approx(0.6138)
    assert by_model["DataComp xlarge ViT-L-14"]["accuracy"] == pytest.approx(0.6504)
    assert (by_model["Human"]["kind"], by_model["Vera"]["kind"]) == ("human", "text")
    assert by_model["OpenAI RN50"]["kind"] == "contrastive"
    assert {r["task"] for r in rows} == set(SUGARCREPE_SUBSETS)


def test_mmvp_rows_give_the_printed_average_and_the_patterns_apart():
    rows = {r["model"]: r for r in reference_rows("mmvp-vlm")}
    assert len(rows) == 10 and {r["task"] for r in rows.values()} == {"mmvp_vlm"}
    assert rows["OpenAI ViT-L-14 (224px)"]["pair_accuracy"] == pytest.approx(0.193)
    patterns = MMVP_PER_PATTERN["DFN ViT-H-14 (224px)"]
    assert list(patterns) == list(MMVP_PATTERNS)
    assert patterns["State and Condition"] == pytest.approx(0.733)
    for model, row in rows.items():  # the printed average is the patterns' mean, to rounding
        mean = sum(MMVP_PER_PATTERN[model].values()) / len(MMVP_PATTERNS)
        assert row["pair_accuracy"] == pytest.approx(mean, abs=1e-3)


def test_the_benchmark_specs_and_reports_carry_the_rows():
    from bla_eval.benchmarks import get_benchmark
    from bla_eval.report import reference_cells

    sugarcrepe = get_benchmark("sugarcrepe")
    rows = reference_cells(sugarcrepe, list(SUGARCREPE_SUBSETS), "accuracy")
    assert rows[0][0] == "Chance" and len(rows) == 21
    assert rows[2][:3] == ["Vera (SugarCrepe paper, evaluation table)", "49.39", "49.62"]
    mmvp = get_benchmark("mmvp-vlm")
    assert len(mmvp.reference_rows("pairs")) == 10
    assert get_benchmark("aro").reference_rows("accuracy") == []


def test_reference_rows_are_fractions_with_sources():
    for benchmark in ("valse", "vl-checklist", "winoground"):
        rows = reference_rows(benchmark)
        assert rows
        for row in rows:
            assert row["source"] and row["model"]
            for key, value in row.items():
                if isinstance(value, float):
                    assert 0.0 <= value <= 1.0, (row, key)
    clip = [r for r in reference_rows("valse", "existence") if r["model"] == "CLIP"]
    assert clip == [
        {
            "model": "CLIP",
            "source": "VALSE paper Table 2",
            "benchmark": "valse",
            "task": "existence",
            "kind": "contrastive",
            "acc_r": 0.669,
        }
    ]
    assert len({r["task"] for r in reference_rows("valse")}) == len(VALSE_INSTRUMENTS) + 1
    kinds = {r["model"]: r["kind"] for r in reference_rows("valse")}
    assert (kinds["LXMERT"], kinds["ViLBERT"], kinds["CLIP"]) == ("region-itm",) * 2 + (
        "contrastive",
    )
    vl_checklist = {r["model"]: r["kind"] for r in reference_rows("vl-checklist")}
    assert (vl_checklist["UNITER"], vl_checklist["ViLT"]) == ("region-itm", "itm")
    wino = [r for r in reference_rows("winoground") if r["model"] == "CLIP (ViT-B/32)"]
    assert wino[0]["text_score"] == 0.3075 and wino[0]["group_score"] == 0.08
