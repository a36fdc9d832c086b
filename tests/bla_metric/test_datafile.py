"""The data files of the published numbers (``bla_metric/data/*.yaml``): read with the metric's
own dependencies, carried by the wheel, and a malformed entry is a ValueError that names the file
and the entry."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from bla_metric import learning_references, published
from bla_metric.datafile import DATA
from bla_metric.neighbours import references as neighbour_references

REPO_ROOT = Path(__file__).resolve().parents[2]

READERS: dict[str, Callable[[Path], object]] = {
    "published.yaml": published.read_published,
    "learning_references.yaml": learning_references.read_learning,
    "neighbours_valse_vl_checklist_winoground.yaml": neighbour_references.read_valse_vlc_winoground,
    "neighbours_sugarcrepe_mmvp_vlm.yaml": neighbour_references.read_sugarcrepe_mmvp,
}


def test_every_data_file_has_its_reader_and_goes_into_the_wheel():
    files = sorted(p.name for p in Path(str(DATA)).iterdir())
    assert files == sorted(READERS)
    pyproject = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    package_data = pyproject.split("[tool.setuptools.package-data]")[1].split("\n[")[0]
    assert re.search(r'^"bla_metric.data" = \["\*\.yaml"\]', package_data, re.M)


def test_the_numbers_load_without_the_engine():
    code = (
        "import sys; import bla_metric.references, bla_metric.neighbours.references; "
        "print(sorted(m for m in ('torch', 'transformers', 'bla_eval') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _broken(tmp_path: Path, name: str, old: str, new: str) -> Path:
    """A copy of the data file ``name`` with ``old`` (present once) replaced by ``new``."""
    text = (Path(str(DATA)) / name).read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path = tmp_path / name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "old", "new", "entry", "problem"),
    [
        (
            "published.yaml",
            "CLIP: [[50.08, 50.16, 50.16], [49.24, 49.24, 49.24], [49.33, 49.18, 49.18]]",
            "CLIP: [[50.08, 50.16, 50.16], [49.24, 49.24], [49.33, 49.18, 49.18]]",
            "table2['percent']['CLIP'][1]",
            "expected 3 items, got 2",
        ),
        (
            "published.yaml",
            "BLIP2: [54.65, 32.75, 38.55]",
            "BLIP2: [54.65, 132.75, 38.55]",
            "section53['percent']['BLIP2'][1]",
            "132.75 is outside [0.0, 100.0]",
        ),
        (
            "published.yaml",
            "  - {name: Humans, kind: human, protocol: zero-shot, runnable: false, "
            "reason: *people}\n",
            "",
            "table2['percent']['Humans']",
            "no setup named 'Humans' in setups",
        ),
        (
            "published.yaml",
            "  GPT-2:\n    tolerance: 0.01\n",
            "  GPT2:\n    tolerance: 0.01\n",
            "tolerances",
            "missing key 'GPT-2'",
        ),
        (
            "learning_references.yaml",
            "LXMERT: {ap: 4.50, co: 1.25, rc: -1.00}",
            "LXMERT: {ap: 4.50, co: 1.25, xx: -1.00}",
            "table3['precision_true']['LXMERT']['xx']",
            "unknown task code 'xx'",
        ),
        (
            "neighbours_valse_vl_checklist_winoground.yaml",
            "VisualBERT: [1.3, 0.3, 0.0, 0.0, 0.0, 1.3, 0.0, 0.0, 0.0, 0.0, 0.2, 0.3]",
            "VisualBERT: [1.3, 0.3, 0.0, 0.0, 0.0, 1.3, 0.0, n/a, 0.0, 0.0, 0.2, 0.3]",
            "valse['percent']['min_p_c_p_f']['VisualBERT'][7]",
            "expected a number, got str 'n/a'",
        ),
        (
            "neighbours_valse_vl_checklist_winoground.yaml",
            "    foil_it: 943\n",
            "",
            "valse['validated']",
            "expected the instruments",
        ),
        (
            "neighbours_sugarcrepe_mmvp_vlm.yaml",
            "[13.3, 20.0, 66.7, 26.7, 26.7, 66.7, 26.7, 20.0, 33.3, 33.3]",
            "[13.3, 20.0, 66.7, 26.7, 26.7, 66.7, 26.7, 20.0, 33.3, 38.3]",
            "mmvp_vlm['percent']['EVA02 ViT-bigE-14+ (224px)']",
            "the average 38.3 is not the patterns' mean 33.34",
        ),
        (
            "neighbours_sugarcrepe_mmvp_vlm.yaml",
            "Grammar: [50.00, 50.00, 50.00, 50.00, 50.00, 50.00, 50.00]",
            "Grammar: [50.00, 50.00, 50.00, 50.00, 50.00, 50.00]",
            "sugarcrepe['percent']['Grammar']",
            "expected 7 items, got 6",
        ),
        (
            "neighbours_sugarcrepe_mmvp_vlm.yaml",
            "replace_rel, swap_obj, swap_att, add_obj",
            "replace_rel, swap_att, swap_obj, add_obj",
            "sugarcrepe['subsets']",
            "expected ['replace_obj'",
        ),
    ],
)
def test_a_malformed_entry_names_the_file_and_the_entry(
    tmp_path: Path, name: str, old: str, new: str, entry: str, problem: str
):
    path = _broken(tmp_path, name, old, new)
    with pytest.raises(ValueError, match=re.escape(f"{path}: {entry}: {problem}")):
        READERS[name](path)


def test_a_file_that_is_no_yaml_mapping_is_refused(tmp_path: Path):
    path = tmp_path / "published.yaml"
    path.write_text("table2: [1, 2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}: not valid YAML")):
        published.read_published(path)
    path.write_text("- 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{path}: top level: expected a mapping")):
        published.read_published(path)
