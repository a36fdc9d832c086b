"""In-context learning protocols (paper §6) on the real learning configs: exact prompts, the
demonstration rules, DD partners, and disjoint learning splits."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import datasets
import pytest
from bla_eval.protocols import get_protocol, get_template, partner_config

Q = "Question: Is the sentence {} appropriate for this image? yes or no? Answer:"
SD, DD = get_protocol("icl-sd"), get_protocol("icl-dd")
TEMPLATE = get_template()
LEARNING = ("active_passive", "coordination", "relative_clause")


def read(dataset: Path, config: str, split: str = "test") -> list[SimpleNamespace]:
    """Rows of one config and split as datapoint-like objects (what the protocols read)."""
    files = sorted(str(f) for f in (dataset / "data" / config).glob(f"{split}-*.parquet"))
    ds = datasets.load_dataset("parquet", data_files={split: files})[split]
    ds = ds.remove_columns("image")
    return [
        SimpleNamespace(
            task=config,
            id=row["id"],
            image_key=f"id:{row['image_id']}",
            captions=row["captions"],
            labels=row["labels"],
            caption_types=row["caption_types"],
        )
        for row in ds
    ]


@pytest.fixture(scope="module")
def points(built_dataset: Path) -> dict[str, list[SimpleNamespace]]:
    configs = [*LEARNING, *(c + "_learning" for c in LEARNING)]
    return {c: read(built_dataset, c) for c in configs}


def prompt(demos, target: str) -> str:
    return TEMPLATE.plain(target, demos)


def test_sd_prompts_are_exact_for_one_datapoint_of_each_task(points):
    ap = points["active_passive_learning"][0]
    assert ap.id == "ap-0346"
    demos = SD.demonstrations_for(ap)
    assert prompt(demos[0], ap.captions[0]) == (
        f"{Q.format('the skateboarder is watched by the spectators')} yes. "
        f"{Q.format('the spectators are watched by the skateboarder')} no. "
        f"{Q.format('the spectators watch the skateboarder')}"
    )
    # target FP (passive) -> the active demonstrations TA (yes), FA (no)
    assert prompt(demos[3], ap.captions[3]) == (
        f"{Q.format('the spectators watch the skateboarder')} yes. "
        f"{Q.format('the skateboarder watches the spectators')} no. "
        f"{Q.format('the spectators are watched by the skateboarder')}"
    )
    co = points["coordination_learning"][0]
    assert co.id == "co-0248"
    demos = SD.demonstrations_for(co)
    assert prompt(demos[2], co.captions[2]) == (
        "Question: Is the sentence the man wears a black short and wears white and blue tennis "
        "shoes appropriate for this image? yes or no? Answer: yes. Question: Is the sentence the "
        "man wears a red tank and wears white and blue tennis shoes appropriate for this image? "
        "yes or no? Answer: no. Question: Is the sentence the player holds a tennis racket and "
        "wears a black short appropriate for this image? yes or no? Answer:"
    )
    rc = points["relative_clause_learning"][0]
    assert rc.id == "rc-0200"
    demos = SD.demonstrations_for(rc)
    assert prompt(demos[1], rc.captions[1]) == (
        f"{Q.format('the person who wears a knit hat wears a blue coat')} yes. "
        f"{Q.format('the person who wears a knit hat wears a green jacket')} no. "
        f"{Q.format('the person who stands on adult skis wears a green jacket')}"
    )


def test_dd_prompts_are_exact_for_one_datapoint_of_each_cross_task(points):
    plan = DD.plan(
        points["coordination_learning"][:1],
        {"coordination_learning": points["relative_clause"]},
    )
    demos = plan.demonstrations[("coordination_learning", "co-0248")]
    assert prompt(demos[0], "the player holds a tennis racket and wears a red tank") == (
        f"{Q.format('the person who holds a tennis racket wears a red tank')} yes. "
        f"{Q.format('the person who holds a tennis racket wears white and blue tennis shoes')} "
        f"no. {Q.format('the player holds a tennis racket and wears a red tank')}"
    )
    plan = DD.plan(
        points["relative_clause_learning"][:1],
        {"relative_clause_learning": points["coordination"]},
    )
    demos = plan.demonstrations[("relative_clause_learning", "rc-0200")]
    assert prompt(demos[3], "the person who stands on adult skis wears a blue coat") == (
        f"{Q.format('the man wears a green jacket and wears black snow pants')} yes. "
        f"{Q.format('the man wears a knit hat and wears black snow pants')} no. "
        f"{Q.format('the person who stands on adult skis wears a blue coat')}"
    )


def test_zero_shot_prompt_is_the_papers_question():
    assert TEMPLATE.plain("the man walks") == Q.format("the man walks")
    assert get_protocol("zero-shot").demonstrations_for(
        SimpleNamespace(captions=["a", "b"], caption_types=["TA", "FA"], labels=[1, 0], id="x")
    ) == [(), ()]


@pytest.mark.parametrize("config", [c + "_learning" for c in LEARNING])
def test_sd_demonstrations_have_the_other_voice_or_person_and_never_the_target(points, config):
    for point in points[config]:
        types = dict(zip(point.captions, point.caption_types, strict=True))
        for i, demos in enumerate(SD.demonstrations_for(point)):
            assert [a for _, a in demos] == ["yes", "no"]
            assert all(s != point.captions[i] for s, _ in demos)
            target = point.caption_types[i]
            shown = [types[s] for s, _ in demos]
            assert [t[0] for t in shown] == ["T", "F"]
            assert all(t[1:] != target[1:] for t in shown)  # voice A/P, person P1/P2
            assert len({t[1:] for t in shown}) == 1


@pytest.mark.parametrize(
    ("config", "missing"),
    [("coordination_learning", 6), ("relative_clause_learning", 15)],
)
def test_dd_demonstrations_share_the_image_and_datapoints_without_partner_are_counted(
    points, config, missing
):
    partner = partner_config(config)
    plan = DD.plan(points[config], {config: points[partner]})
    assert len(plan.without_partner[config]) == missing
    assert len(plan.demonstrations) == 200 - missing
    by_image = {p.image_key: p for p in points[partner]}
    for point in points[config]:
        if point.id in plan.without_partner[config]:
            assert point.image_key not in by_image
            continue
        other = by_image[point.image_key]
        for i, demos in enumerate(plan.demonstrations[(config, point.id)]):
            assert {s for s, _ in demos} <= set(other.captions)  # same image, other construction
            assert all(s != point.captions[i] for s, _ in demos)
            assert [a for _, a in demos] == ["yes", "no"]
    record = plan.record()
    assert record["without_partner"][config]["count"] == missing
    assert record["partner_configs"] == {config: partner}


def test_dd_refuses_active_passive(points):
    with pytest.raises(ValueError, match="icl-dd has no partner construction"):
        DD.plan(points["active_passive_learning"][:1], {})


def test_shuffled_order_is_recorded_and_reproducible(points):
    point = points["coordination_learning"][0]
    one = SD.demonstrations_for(point, order="shuffled", seed=3)
    assert one == SD.demonstrations_for(point, order="shuffled", seed=3)
    orders = {
        tuple(a for _, a in d)
        for p in points["coordination_learning"][:20]
        for d in SD.demonstrations_for(p, order="shuffled", seed=3)
    }
    assert orders == {("yes", "no"), ("no", "yes")}
    record = SD.record(order="shuffled", seed=3)
    assert (record["order"], record["seed"]) == ("shuffled", 3)
    assert record["template"] == TEMPLATE.question
    with pytest.raises(ValueError, match="unknown demonstration order 'random'"):
        SD.demonstrations_for(point, order="random")


def test_chat_messages_put_demonstrations_in_earlier_turns():
    demos = (("the man feeds the woman", "yes"), ("the woman feeds the man", "no"))
    messages = TEMPLATE.chat("the man is fed by the woman", demos)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[0]["content"][0] == {"type": "image"}
    assert all({"type": "image"} not in m["content"] for m in messages[1:])
    assert messages[1]["content"] == [{"type": "text", "text": "yes"}]
    assert messages[-1]["content"][-1]["text"] == Q.format("the man is fed by the woman")


@pytest.mark.parametrize("task", LEARNING)
def test_learning_split_images_are_disjoint(built_dataset, task):
    config = task + "_learning"
    images = {s: {p.image_key for p in read(built_dataset, config, s)} for s in P_SPLITS}
    assert [len(images[s]) for s in P_SPLITS] == [100, 200, 200]
    assert not images["train"] & images["validation"]
    assert not images["train"] & images["test"]
    assert not images["validation"] & images["test"]


P_SPLITS = ("train", "validation", "test")
