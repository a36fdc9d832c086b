"""Hypothesis fuzzing: random corruptions of real release records always end in a ReleaseError
naming the record (never another exception, never a silently accepted bad record); random score
arrays never crash the metric or give a value outside [0, 1]."""

from __future__ import annotations

import copy
import json
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bla_metric.formulas import compute
from builders.records import read_main
from builders.source import ReleaseError, ReleaseSource
from builders.validate import check_rows, check_unique

AP_FILE = "annotations/active_passive_captions.json"
KEYS = ("True1", "True2", "False1", "False2")
FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def records(release_dir: Path) -> list[dict]:
    """The first eight real AP records (with a grammar score list added to some)."""
    found = json.loads((release_dir / AP_FILE).read_text())[:8]
    for record in found[::2]:
        record["caption_group"][0]["score"] = [0.9, 0.8, 0.7, 0.6]
    return found


INTEGERS = st.integers(-(2**63), 2**64 - 1)
"""Integers a JSON reader takes (at most 20 digits); a longer one is refused for the whole file
(``test_an_integer_beyond_twenty_digits_is_refused_naming_the_file``)."""
JUNK = st.one_of(
    st.none(),
    INTEGERS,
    st.floats(allow_nan=False),
    st.booleans(),
    st.just(""),
    st.just("   "),
    st.lists(INTEGERS, max_size=2),
    st.dictionaries(st.text(max_size=3), INTEGERS, max_size=2),
)

# (name, must the reader refuse it?)
CORRUPTIONS = st.sampled_from(
    [
        ("delete-image_id", True),
        ("delete-caption_group", True),
        ("delete-caption", True),
        ("caption-junk", True),
        ("duplicate-caption", True),
        ("extra-true", True),
        ("group-junk", True),
        ("two-groups", True),
        ("score-junk", True),
        ("score-short", True),
        ("record-junk", True),
        ("duplicate-record", True),
        ("delete-score", False),
        ("delete-predicate", False),
        ("image_id-junk", False),
    ]
)


def corrupt(records: list[dict], name: str, pos: int, junk: object, data) -> list[dict]:
    out = copy.deepcopy(records)
    record = out[pos]
    group = record["caption_group"][0]
    key = data.draw(st.sampled_from(KEYS))
    match name:
        case "delete-image_id" | "delete-caption_group":
            del record[name.removeprefix("delete-")]
        case "delete-caption":
            del group[key]
        case "caption-junk":
            group[key] = junk if not isinstance(junk, str) or not junk.strip() else None
        case "duplicate-caption":
            other = data.draw(st.sampled_from([k for k in KEYS if k != key]))
            group[other] = group[key]
        case "extra-true":
            group[data.draw(st.sampled_from(["True3", "False3"]))] = "a new sentence here"
        case "group-junk":
            record["caption_group"] = data.draw(st.sampled_from([[], {}, "x", [1], None]))
        case "two-groups":
            record["caption_group"] = [group, dict(group)]
        case "score-junk":
            group["score"] = data.draw(st.sampled_from(["high", [0.1, "x", 0.2, 0.3], {}]))
        case "score-short":
            group["score"] = [0.5] * data.draw(st.sampled_from([0, 3, 5]))
        case "record-junk":
            out[pos] = junk if not isinstance(junk, dict) else []
        case "duplicate-record":
            out.insert(pos + 1, copy.deepcopy(record))
        case "delete-score":
            group.pop("score", None)
        case "delete-predicate":
            group.pop("predicate", None)
        case "image_id-junk":
            record["image_id"] = junk
    return out


def read(records: list[dict]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / AP_FILE
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(records))
        with ReleaseSource(Path(tmp)) as source:
            rows = read_main(source, "active_passive")
            check_unique(rows, source.describe(AP_FILE))
            check_rows("test", rows)


@FUZZ
@given(corruption=CORRUPTIONS, junk=JUNK, data=st.data())
def test_corrupted_records_fail_with_a_release_error_naming_the_record(
    records, corruption, junk, data
):
    name, must_refuse = corruption
    pos = data.draw(st.integers(0, len(records) - 1))
    bad = corrupt(records, name, pos, junk, data)
    try:
        read(bad)
    except ReleaseError as err:
        assert f"record {pos}" in str(err), (name, str(err))
    else:
        assert not must_refuse, f"{name} at record {pos} was accepted"


def test_uncorrupted_records_read(records):
    read(records)


# ----------------------------------------------------------------------------- metric

SCORE = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)


@st.composite
def datapoints(draw):
    """(scores, labels) of one datapoint: 2-6 sentences, at least one true and one false,
    often with ties."""
    size = draw(st.integers(2, 6))
    labels = draw(
        st.lists(st.sampled_from([0, 1]), min_size=size, max_size=size).filter(
            lambda ls: 0 < sum(ls) < len(ls)
        )
    )
    pool = draw(st.lists(SCORE, min_size=1, max_size=3))
    scores = draw(st.lists(st.one_of(st.sampled_from(pool), SCORE), min_size=size, max_size=size))
    return scores, labels


@FUZZ
@given(
    points=st.lists(datapoints(), min_size=1, max_size=12),
    threshold=st.one_of(SCORE, st.just("top_k")),
    groups=st.booleans(),
)
def test_random_scores_give_metrics_in_range(points, threshold, groups):
    scores = [s for s, _ in points]
    labels = [ls for _, ls in points]
    extra = {"groups": [i % 3 for i in range(len(points))]} if groups else {}
    for result in (
        compute(scores, labels, **extra),
        compute(scores, labels, mode="binary", threshold=threshold, **extra),
    ):
        assert result["n"] == len(points)
        values = [v for k, v in result.items() if k not in ("n", "per_group")]
        for group in result.get("per_group", {}).values():
            values += [v for k, v in group.items() if k != "n"]
        assert all(
            isinstance(v, float) and 0.0 <= v <= 1.0 and not math.isnan(v) for v in values
        ), result


GARBAGE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=3)),
    lambda inner: st.lists(inner, max_size=4),
    max_leaves=12,
)


@FUZZ
@given(predictions=GARBAGE, references=GARBAGE)
def test_random_inputs_are_refused_with_a_value_error_or_computed(predictions, references):
    try:
        result = compute(predictions, references)
    except ValueError:
        return
    assert 0.0 <= result["sentence_accuracy"] <= 1.0


@FUZZ
@given(
    data=st.one_of(
        st.binary(max_size=64),
        st.recursive(JUNK, lambda inner: st.lists(inner, max_size=3), max_leaves=8).map(
            lambda obj: json.dumps(obj).encode()
        ),
    )
)
def test_a_task_file_of_random_bytes_or_json_is_a_release_error_naming_it(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / AP_FILE
        path.parent.mkdir(parents=True)
        path.write_bytes(data)
        with ReleaseSource(Path(tmp)) as source:
            try:
                rows = read_main(source, "active_passive")
                check_rows("test", rows)
            except ReleaseError as err:
                assert AP_FILE in str(err)
            else:
                assert rows == []  # only an empty list reads


def test_an_integer_beyond_twenty_digits_is_refused_naming_the_file(records):
    bad = copy.deepcopy(records)
    bad[3]["image_id"] = 10**20
    with pytest.raises(
        ReleaseError, match=rf"{AP_FILE}.* is not valid JSON: an integer of 21 digits"
    ):
        read(bad)
