"""bla_metric.neighbours: VALSE, VL-CheckList and Winoground metrics on hand-made cases, ties."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bla_metric.neighbours.pairwise import pairwise_accuracy
from bla_metric.neighbours.references import VALSE_INSTRUMENTS, reference_rows
from bla_metric.neighbours.valse import auroc, valse_metrics
from bla_metric.neighbours.vl_checklist import (
    VL_CHECKLIST_CORPUS,
    VL_CHECKLIST_LEAVES,
    corpus_source,
    vl_checklist_leaf,
    vl_checklist_rollup,
)
from bla_metric.neighbours.winoground import winoground_metrics, winoground_outcomes

CF = [1, 0]  # caption, foil


# ----------------------------------------------------------------------------- VALSE


def test_acc_r_is_strict_and_counts_ties():
    scores = [[0.9, 0.1], [0.2, 0.8], [0.5, 0.5], [3.0, 2.0]]
    result = valse_metrics(scores, [CF] * 4)
    assert result["acc_r"] == 0.5  # the tie fails (Table 2 caption: caption > foil)
    assert result["ties"] == 1
    assert result["n"] == 4
    assert "accuracy" not in result  # contrastive scores: no binary view (as CLIP in the paper)


def test_auroc_mann_whitney_with_half_ties():
    # captions 0.9, 0.2, 0.5; foils 0.1, 0.8, 0.5. Pairs (c > f): 0.9 beats 0.1, 0.8, 0.5 (3);
    # 0.2 beats 0.1 (1); 0.5 beats 0.1 (1) and ties 0.5 (1/2): 5.5 of 9.
    scores = [[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]]
    assert auroc(scores, [CF] * 3) == pytest.approx(5.5 / 9)
    assert auroc([[1, 1], [1, 1]], [CF] * 2) == 0.5  # all tied: chance
    assert auroc([[2, 1], [3, 0]], [CF] * 2) == 1.0
    assert auroc([[0, 1], [0, 3]], [CF] * 2) == 0.0


def test_auroc_matches_brute_force():
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 4, size=(30, 2)).astype(float).tolist()  # many ties
    pos = [s[0] for s in scores]
    neg = [s[1] for s in scores]
    expected = np.mean(
        [1.0 if p > n else 0.5 if p == n else 0.0 for p, n in itertools.product(pos, neg)]
    )
    assert auroc(scores, [CF] * 30) == pytest.approx(expected)


def test_valse_binary_view_per_class_recall():
    # probabilities: caption matched when >= 0.5, foil rejected when < 0.5
    scores = [[0.9, 0.2], [0.6, 0.7], [0.4, 0.3], [0.5, 0.5]]
    result = valse_metrics(scores, [CF] * 4, probabilistic=True)
    # captions: 0.9 ok, 0.6 ok, 0.4 missed, 0.5 ok (>= threshold) -> p_c = 3/4
    # foils: 0.2 ok, 0.7 missed, 0.3 ok, 0.5 missed -> p_f = 2/4
    assert result["p_c"] == 0.75
    assert result["p_f"] == 0.5
    assert result["min_p_c_p_f"] == 0.5
    assert result["accuracy"] == pytest.approx(5 / 8)
    assert result["accuracy"] == pytest.approx((result["p_c"] + result["p_f"]) / 2)
    assert result["acc_r"] == 0.5  # [0.9>0.2], [0.6<0.7], [0.4>0.3], tie


def test_valse_bad_input_names_the_datapoint():
    with pytest.raises(ValueError, match="datapoint 1"):
        valse_metrics([[1, 0], [float("nan"), 0]], [CF, CF])
    with pytest.raises(ValueError, match="no false sentence"):
        valse_metrics([[1, 0]], [[1, 1]])


# ----------------------------------------------------------------------------- VL-CheckList


def test_pairwise_accuracy_strict():
    assert pairwise_accuracy([[2, 1], [1, 2], [1, 1]], [CF] * 3) == pytest.approx(1 / 3)


def test_leaf_averages_files_then_sources():
    # leaf "small": vg has two files, swig one (upstream radar.py: mean of files per source,
    # then mean over sources), pooled differs.
    corpora = (
        ["Object_Size_small_vg_obj"] * 2
        + ["Object_Size_small_vg_subj"] * 4
        + ["Object_Size_small_swig_agent"] * 2
    )
    scores = [
        [1, 0],
        [0, 1],  # vg_obj 1/2
        [1, 0],
        [1, 0],
        [1, 0],
        [0, 0],  # vg_subj 3/4 (a tie fails)
        [0, 1],
        [0, 1],
    ]  # swig_agent 0
    result = vl_checklist_leaf(scores, [CF] * 8, corpora)
    assert result["per_corpus"]["Object_Size_small_vg_obj"] == {"accuracy": 0.5, "n": 2}
    assert result["per_corpus"]["Object_Size_small_vg_subj"]["accuracy"] == 0.75
    assert result["accuracy"] == pytest.approx(((0.5 + 0.75) / 2 + 0.0) / 2)
    assert result["pooled_accuracy"] == pytest.approx(4 / 8)
    assert result["ties"] == 1
    assert result["n"] == 8


def test_rollup_matches_paper_clip_object_and_overall():
    clip = {
        r["task"]: r["accuracy"] for r in reference_rows("vl-checklist") if r["model"] == "CLIP"
    }
    leaves = {k: v for k, v in clip.items() if k in VL_CHECKLIST_LEAVES}
    rollup = vl_checklist_rollup(leaves)
    assert rollup["Object"] == pytest.approx(clip["Object"], abs=5e-5)  # 82.83
    assert rollup["Object/Size"] == pytest.approx(np.mean([0.8877, 0.8182, 0.7565]))
    assert set(rollup) == {
        "Object/Size",
        "Object/Location",
        "Object",
        "Attribute",
        "Relation",
        "overall",
    }
    # Table 2: overall = mean(Object, Attribute, Relation) of the paper's printed averages
    table2 = np.mean([clip["Object"], clip["Attribute"], clip["Relation"]])
    assert table2 == pytest.approx(clip["all"], abs=5e-5)
    assert rollup["overall"] == pytest.approx(
        np.mean([rollup["Object"], rollup["Attribute"], rollup["Relation"]])
    )


def test_rollup_skips_absent_nodes():
    rollup = vl_checklist_rollup({"relation_action": 0.5, "attribute_color": 1.0})
    assert rollup == {"Attribute": 1.0, "Relation": 0.5, "overall": 0.75}
    with pytest.raises(ValueError, match="unknown VL-CheckList leaf"):
        vl_checklist_rollup({"colour": 1.0})


def test_corpus_table_covers_every_leaf():
    assert {key for key, _ in VL_CHECKLIST_LEAVES.values()} == set(VL_CHECKLIST_CORPUS)
    assert corpus_source("Attribute_color_vaw") == ("attribute_color", "vaw")
    with pytest.raises(ValueError, match="unknown VL-CheckList corpus"):
        corpus_source("nope")


# ----------------------------------------------------------------------------- Winoground


@pytest.mark.parametrize(
    ("matrix", "expected"),
    [
        ([[2, 1], [1, 2]], (True, True, True)),  # diagonal wins everywhere
        ([[2, 1], [0, 0.5]], (True, False, False)),  # captions right, image 0 wins caption 1? no
        ([[2, 3], [1, 4]], (False, True, False)),  # image right, text wrong for image 0
        ([[1, 1], [1, 1]], (False, False, False)),  # all tied: every comparison fails
        ([[2, 1], [1, 1]], (False, False, False)),  # one tie in each score
        ([[1, 2], [2, 1]], (False, False, False)),  # fully swapped
    ],
)
def test_winoground_hand_cases(matrix, expected):
    out = winoground_outcomes([matrix])
    got = (bool(out["text_score"][0]), bool(out["image_score"][0]), bool(out["group_score"][0]))
    assert got == expected


def test_winoground_second_case_by_hand():
    # s(C0,I0)=2 > s(C1,I0)=1 and s(C1,I1)=0.5 > s(C0,I1)=0: text ok;
    # s(C0,I0)=2 > s(C0,I1)=0 but s(C1,I1)=0.5 < s(C1,I0)=1: image fails.
    out = winoground_outcomes([[[2, 1], [0, 0.5]]])
    assert out["text_score"][0] and not out["image_score"][0]


def test_winoground_metrics_and_groups():
    scores = [[[2, 1], [1, 2]], [[2, 1], [0, 0.5]], [[1, 1], [1, 1]], [[2, 3], [1, 4]]]
    result = winoground_metrics(scores, groups=["Object", "Object", "Relation", "Both"])
    assert result["text_score"] == 0.5
    assert result["image_score"] == 0.5
    assert result["group_score"] == 0.25
    assert result["n"] == 4
    assert result["per_group"]["Object"] == {
        "text_score": 1.0,
        "image_score": 0.5,
        "group_score": 0.5,
        "n": 2,
    }
    assert result["per_group"]["Relation"]["text_score"] == 0.0


def test_winoground_bad_input():
    with pytest.raises(ValueError, match="datapoint 1: predictions must be a 2x2"):
        winoground_metrics([[[1, 2], [3, 4]], [1, 2, 3, 4]])
    with pytest.raises(ValueError, match="datapoint 0"):
        winoground_metrics([[[1, float("inf")], [3, 4]]])


# ----------------------------------------------------------------------------- references


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
