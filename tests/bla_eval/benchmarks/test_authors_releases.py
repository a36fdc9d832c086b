"""SugarCrepe, SugarCrepe++, ARO, MMVP-VLM and NaturalBench on small copies of each authors' release
in its own layout and file format (JSON + COCO-named JPEGs, ARO's JSON with boxes, MMVP's
Questions.csv and image folders, NaturalBench's parquet with embedded images), converted by the
builders and scored by tiny contrastive, ITM, generative and text-only models. Every metric in
results.json is recomputed here from scores.jsonl by hand."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from bla_metric.neighbours import aro, naturalbench
from tests.bla_eval.benchmarks.runs import records_by_task, run_bla_eval, strictly_above

pytestmark = pytest.mark.usefixtures("one_thread")


# ----------------------------------------------------------------------------- formulas


def test_macro_accuracy_drops_left_out_and_small_groups_and_weights_items() -> None:
    outcomes = [1, 0, 1, 1, 0, 1]
    groups = ["on", "on", "behind", "near", "near", "near"]
    macro = aro.macro_accuracy(outcomes, groups, exclude={"near"})
    assert macro["accuracy"] == pytest.approx((0.5 + 1.0) / 2) and macro["groups"] == 2
    small = aro.macro_accuracy(outcomes, groups, min_count=2)
    assert small["accuracy"] == pytest.approx((0.5 + 2 / 3) / 2)
    values = aro.macro_item_values(outcomes, groups, min_count=2)
    assert values.mean() == pytest.approx(small["accuracy"]) and values[2] == 0
    assert "near" in aro.ARO_SYMMETRIC_RELATIONS
    assert "wrapped in" in aro.ARO_SYMMETRIC_RELATIONS
    assert "on" not in aro.ARO_SYMMETRIC_RELATIONS


def test_naturalbench_scores_follow_the_authors_get_scores() -> None:
    # upstream example.py's get_scores on answers [q0_i0, q0_i1, q1_i0, q1_i1] where the gold is
    # (1, 0, 0, 1), rewritten here; ours takes correct[k][image][question]
    samples = [[1, 0, 0, 1], [1, 1, 0, 1], [0, 1, 1, 0], [1, 0, 1, 1]]
    gold = [1, 0, 0, 1]

    def upstream(r: list[int]) -> tuple[int, int, int, int]:
        question = (r[0] == 1 and r[1] == 0) + (r[3] == 1 and r[2] == 0)
        image = (r[0] == 1 and r[2] == 0) + (r[3] == 1 and r[1] == 0)
        binary = sum(a == g for a, g in zip(r, gold, strict=True))
        return question, image, binary, int(question == 2 and image == 2)

    totals = np.sum([upstream(r) for r in samples], axis=0)
    n = len(samples)
    predicted = [[[r[0], r[2]], [r[1], r[3]]] for r in samples]  # [image][question]
    truth = [[[gold[0], gold[2]], [gold[1], gold[3]]]] * n
    ours = naturalbench.naturalbench_metrics(naturalbench.naturalbench_correct(predicted, truth))
    assert ours["q_acc"] == pytest.approx(totals[0] / (2 * n))
    assert ours["i_acc"] == pytest.approx(totals[1] / (2 * n))
    assert ours["acc"] == pytest.approx(totals[2] / (4 * n))
    assert ours["g_acc"] == pytest.approx(totals[3] / n)
    assert naturalbench.naturalbench_answer("No, yes") == 0
    assert naturalbench.naturalbench_answer("Yes.") == 1
    assert naturalbench.naturalbench_answer("nothing") == -1
    assert naturalbench.naturalbench_answer("B or A", "multiple_choice") == 0


# ----------------------------------------------------------------------------- builders


def test_the_builders_keep_the_layouts_and_refuse_bad_records(repos, tmp_path, capsys) -> None:
    import pyarrow.parquet as pq

    from builders.__main__ import main as builders_main

    table = pq.read_table(next((repos["sugarcrepe-pp"] / "data" / "replace_rel").glob("*.parquet")))
    row = table.to_pylist()[0]
    assert row["labels"] == [1, 1, 0] and row["filename"] == "000000000000.jpg"
    assert row["caption_types"] == ["caption", "caption2", "negative_caption"]
    aro = pq.read_table(next((repos["aro"] / "data" / "vg_relation").glob("*.parquet")))
    assert aro.column("id").to_pylist()[:2] == ["on-0", "behind-1"]
    from PIL import Image

    assert Image.open(io.BytesIO(aro.to_pylist()[1]["image"]["bytes"])).size == (21, 16)
    nb = {d.name for d in (repos["naturalbench"] / "data").iterdir()}
    assert nb == {"yes_no", "multiple_choice"}
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "swap_obj.json").write_text(json.dumps({"0": {"filename": "x.jpg", "caption": "a"}}))
    capsys.readouterr()
    argv = [
        "sugarcrepe",
        "--annotations",
        str(bad),
        "--images",
        str(bad),
        "--out",
        str(tmp_path / "o"),
    ]
    assert builders_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "swap_obj.json item 0: 'negative_caption'" in err[0], err


# ----------------------------------------------------------------------------- runs


def test_a_contrastive_model_gets_each_authors_metric(repos, texts, tiny_model, tmp_path) -> None:
    from bla_eval.benchmarks import get_benchmark

    clip = tiny_model("clip", texts)
    held = {"sugarcrepe": ("replace_obj", "swap_att"), "sugarcrepe-pp": ("replace_rel",)}
    for name, tasks in held.items():
        results = run_bla_eval(clip, repos[name], tmp_path / name, name, "--tasks", *tasks)
        view = "accuracy" if name == "sugarcrepe" else "itt"
        for task, records in records_by_task(tmp_path / name).items():
            right = [strictly_above(r["scores"], r["labels"]) for r in records]
            assert results["tasks"][task][view][view if view == "itt" else "accuracy"] == (
                pytest.approx(sum(right) / len(right))
            )
    results = run_bla_eval(clip, repos["aro"], tmp_path / "aro", "aro", "--tasks", "vg_relation")
    records = records_by_task(tmp_path / "aro")["vg_relation"]
    by_relation: dict[str, list[bool]] = {}
    for r in records:
        relation = r["id"].rsplit("-", 1)[0]
        if relation not in aro.ARO_SYMMETRIC_RELATIONS:
            by_relation.setdefault(relation, []).append(r["scores"][0] > r["scores"][1])
    macro = np.mean([np.mean(v) for v in by_relation.values()])
    assert set(by_relation) == {"on", "behind", "holding"}
    assert results["tasks"]["vg_relation"]["macro"]["macro_accuracy"] == pytest.approx(macro)
    _, stats = get_benchmark("aro").paired_stats(records, False)  # a leaderboard's item values
    assert stats["macro_accuracy"].mean() == pytest.approx(macro)
    results = run_bla_eval(clip, repos["mmvp-vlm"], tmp_path / "mmvp", "mmvp-vlm")
    records = records_by_task(tmp_path / "mmvp")["mmvp_vlm"]
    pairs = [
        s[0][0] > s[1][0] and s[1][1] > s[0][1] for s in (r["scores"] for r in records)
    ]  # each statement's own image strictly above the other
    assert [r["id"] for r in records] == ["0", "1", "2"]  # one pattern: the first 15 pairs
    assert results["tasks"]["mmvp_vlm"]["pairs"]["pair_accuracy"] == pytest.approx(np.mean(pairs))
    _, stats = get_benchmark("mmvp-vlm").paired_stats(records, False)
    assert stats["pair_accuracy"].mean() == pytest.approx(np.mean(pairs))


def test_an_itm_model_and_the_blind_baselines_score_sugarcrepe(
    repos, texts, tiny_model, tmp_path
) -> None:
    from bla_eval.testing.generative import build_llama_text

    itm = tiny_model("blip-itm", texts)
    results = run_bla_eval(
        itm, repos["sugarcrepe"], tmp_path / "itm", "sugarcrepe", "--tasks", "swap_att"
    )
    records = records_by_task(tmp_path / "itm")["swap_att"]
    right = np.mean([strictly_above(r["scores"], r["labels"]) for r in records])
    assert results["tasks"]["swap_att"]["accuracy"]["accuracy"] == pytest.approx(right)
    control = run_bla_eval(
        itm,
        repos["aro"],
        tmp_path / "control",
        "aro",
        "--control",
        "shuffled",
        "--tasks",
        "vg_relation",
    )
    assert "control" in control and "vg_relation" in control["control"]["tasks"]
    text = tiny_model("llama_text", texts, build_llama_text)
    blind = run_bla_eval(
        text,
        repos["sugarcrepe"],
        tmp_path / "blind",
        "sugarcrepe",
        "--kind",
        "text",
        "--tasks",
        "replace_obj",
    )
    records = records_by_task(tmp_path / "blind")["replace_obj"]
    right = np.mean([strictly_above(r["scores"], r["labels"]) for r in records])
    assert blind["tasks"]["replace_obj"]["accuracy"]["accuracy"] == pytest.approx(right)


def test_naturalbench_answers_from_p_yes_and_generated_answers_of_a_generative_model(
    repos, texts, tiny_model, tmp_path
) -> None:
    llava = tiny_model("llava", texts)
    for model, extra in ((llava, ()),):
        out = tmp_path / "runs" / model.name
        results = run_bla_eval(
            model, repos["naturalbench"], out, "naturalbench", "--prompt", "naturalbench", *extra
        )
        records = records_by_task(out)["yes_no"]
        assert len(records) == 3 and all(len(r["scores"]) == 2 for r in records)
        correct = [
            [
                [(s >= 0.5) == bool(y) for s, y in zip(srow, yrow, strict=True)]
                for srow, yrow in zip(r["scores"], r["labels"], strict=True)
            ]
            for r in records
        ]
        metrics = results["tasks"]["yes_no"]["accuracy"]
        assert metrics["g_acc"] == pytest.approx(np.mean([np.all(c) for c in correct]))
        assert metrics["acc"] == pytest.approx(np.mean(correct))
        assert metrics["q_acc"] == pytest.approx(
            np.mean([[c[0][q] and c[1][q] for q in (0, 1)] for c in correct])
        )
        assert metrics["i_acc"] == pytest.approx(
            np.mean([[c[i][0] and c[i][1] for i in (0, 1)] for c in correct])
        )
        if "answers" in records[0]:  # generated: "yes" / "no" as the first whole word decides
            said = [
                [
                    [_said_yes(a) == bool(y) for a, y in zip(arow, yrow, strict=True)]
                    for arow, yrow in zip(r["answers"], r["labels"], strict=True)
                ]
                for r in records
            ]
            parsed = results["tasks"]["yes_no"]["answers"]
            assert parsed["g_acc"] == pytest.approx(np.mean([np.all(c) for c in said]))
            assert parsed["acc"] == pytest.approx(np.mean(said))


def _said_yes(answer: str) -> bool | None:
    words = [w.strip(".,!?").lower() for w in answer.split()]
    first = next((w for w in words if w in ("yes", "no")), None)
    return None if first is None else first == "yes"


@pytest.mark.parametrize("name", ["sugarcrepe", "sugarcrepe-pp", "aro", "mmvp-vlm", "naturalbench"])
def test_without_data_a_run_asks_for_a_build(name, tmp_path, capsys) -> None:
    from bla_eval.cli import main as bla_eval

    argv = ["--benchmark", name, "--model", str(tmp_path / "m"), "--output", str(tmp_path / "o")]
    capsys.readouterr()
    assert bla_eval(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no default dataset" in err[0], err
    assert not (tmp_path / "o").exists()
