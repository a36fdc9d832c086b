"""The dataset schema: one declaration per dataset's rows, read by the builders (features), the
engine's benchmark specs (required columns) and the tests; loaded without ``datasets``."""

from __future__ import annotations

import subprocess
import sys

import datasets
from bla_eval.benchmarks import BENCHMARKS

from bla_metric.schema import BENCHMARK_ROWS, BLA_ROWS, SENTENCE_ROWS


def test_every_benchmark_of_the_engine_has_its_rows_and_items_read_declared_columns():
    assert list(BENCHMARK_ROWS) == BENCHMARKS.builtin_names()
    for schema in [*BENCHMARK_ROWS.values(), SENTENCE_ROWS]:
        assert set(schema.required) <= set(schema.names)
        assert sorted([*schema.required, *schema.optional]) == sorted(schema.names)


def test_types_are_datasets_own():
    features = BENCHMARK_ROWS["naturalbench"].features()
    assert features["image_0"] == datasets.Image()
    assert features["answers"] == datasets.Sequence(datasets.Sequence(datasets.Value("string")))
    assert BLA_ROWS.features()["labels"] == datasets.Sequence(datasets.Value("int8"))
    assert SENTENCE_ROWS.features()["image"] == datasets.Value("string")  # a data URI
    assert list(BLA_ROWS.features()) == list(BLA_ROWS.names)  # file order


def test_the_module_loads_without_datasets():
    code = "import sys, bla_metric.schema; print('datasets' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    assert done.stdout.strip() == "False"
