"""The scorer interface: one class per model kind, each giving one score per (image, sentence).

Kinds that load a model on this machine subclass ``bla_eval.scorers.local.LocalScorer`` (device
and dtype); a kind served elsewhere subclasses ``Scorer`` itself.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from ..config import run_default
from ..queries import Query
from .capabilities import Capabilities
from .resolved_model import ResolvedModel

if TYPE_CHECKING:  # PIL is imported when a scorer is made, not with the kind list
    from PIL import Image

SIMILARITIES = ("cosine", "clipscore")
"""Similarities of dual encoders (``--similarity``): cosine, or CLIPScore = 2.5 * max(cosine, 0)."""


@dataclass(frozen=True)
class LoadOptions:
    """How to load a model: device, dtype, remote code, contrastive similarity, placement.

    Each field but ``api`` is the ``RunConfig`` setting of its name, with its default
    (``RunConfig.settings_for`` builds the options of a run); ``device``, ``api`` and
    ``regions`` hold what the run resolved from its settings."""

    device: str = run_default("device")
    """The device this process loads on (a multi-process run gives each its own)."""
    dtype: str | None = run_default("dtype")
    trust_remote_code: bool = run_default("trust_remote_code")
    similarity: str = run_default("similarity")
    device_map: str | None = run_default("device_map")
    protocol: str = run_default("protocol")
    """The run's protocol (``bla_eval.protocols``): it names the prompt template, and whether
    generative kinds generate their answers."""
    api: Any = None
    """``bla_eval.api.settings.ApiSettings`` of a model behind an endpoint (remote kinds)."""
    prompt: str | None = run_default("prompt")
    """The prompt template the run asks with (None: the protocol's)."""
    prompts: tuple[str, ...] = run_default("prompts")
    """The templates of a sweep (empty: one template)."""
    tensor_parallel_size: int = run_default("tensor_parallel_size")
    data_parallel_size: int = run_default("data_parallel_size")
    max_model_len: int | None = run_default("max_model_len")
    gpu_memory_utilization: float | None = run_default("gpu_memory_utilization")
    enforce_eager: bool = run_default("enforce_eager")
    score: str = run_default("score")
    pmi_alpha: float | None = run_default("pmi_alpha")
    regions: Any = run_default("regions")
    """``bla_eval.regions.source.RegionSource`` of a kind that reads region features, opened
    from ``--regions``."""


class Scored(NamedTuple):
    """What ``Scorer.score`` returns: ``scores[i][j]`` for image i and query j, and, for
    generative kinds, the generated answer of each pair (else None), and the terms of each
    score where a kind keeps them."""

    scores: list[list[float]]
    answers: list[list[str]] | None = None
    terms: list[list[dict[str, Any]]] | None = None
    """Per pair, the numbers the score is made of (the likelihood scores' log-probabilities,
    token count and alpha), kept beside it in ``scores.jsonl``."""


class Scorer(ABC):
    """Scores sentences against images; higher = more likely true.

    ``score`` receives prepared images (the output of ``prepare_image``, run in prefetch threads)
    and, per image, the distinct queries to score against it. Kinds that do not look at images set
    ``needs_images = False`` and receive ``None`` for each image.

    A kind is one subclass that states its facts as class attributes (``kind``, ``probabilistic``,
    ...) and how to recognise its models (``matches_name``, ``matches_config``: rules that read
    the one record of what the model's files declare, ``capabilities.Capabilities``);
    ``bla_eval.scorers`` derives auto-detection from the registered classes, and the kind list,
    CLI choices and the Space's menu from ``KIND_INFO`` (built-in kinds' help lines and examples
    live in ``BUILTIN_KINDS``, so listing kinds imports no scorer module).
    """

    kind: ClassVar[str]
    help: ClassVar[str] = ""
    """One line for menus and ``--help`` (built-in kinds: set from ``BUILTIN_KINDS``)."""
    example: ClassVar[str] = ""
    """A Hub model of this kind (built-in kinds: set from ``BUILTIN_KINDS``)."""
    probabilistic: ClassVar[bool] = False
    """True when scores are probabilities (binary view: threshold 0.5), else top-k (binary view)."""
    needs_images: ClassVar[bool] = True
    wants_encoded: ClassVar[bool] = False
    """True when ``prepare_image`` takes the image's encoded bytes as stored, not decoded RGB."""
    wants_handle: ClassVar[bool] = False
    """True when ``prepare_image`` takes the image's ``bla_eval.items.ImageHandle`` (its key
    and dataset id, its bytes or pixels on demand), e.g. to look its regions up by its id."""
    takes_regions: ClassVar[bool] = False
    """True when the kind reads region features (``--regions``)."""
    remote: ClassVar[bool] = False
    """True when the model runs behind an API endpoint (``--endpoint``): chosen by the endpoint,
    never detected from a model name, and not offered by the Space."""
    takes_similarity: ClassVar[bool] = False
    """True when ``--similarity`` (cosine / CLIPScore) applies."""
    default_batch_size: ClassVar[int] = 32
    """Model forward batch when the run does not set one."""
    asks_question: ClassVar[bool] = False
    """True when the kind asks the yes/no question of a prompt template (``--prompt``)."""
    scores_captions: ClassVar[bool] = False
    """The kind can score a sentence by its likelihood (``--score caption``, ``caption-pmi``)."""
    engine_options: ClassVar[bool] = False
    """The kind runs an inference engine of its own and reads its options
    (``--tensor-parallel-size``, ``--max-model-len``, ...: the vllm kind)."""
    takes_device_map: ClassVar[bool] = False
    """The kind places its model with ``from_pretrained(device_map=...)`` (``--device-map``)."""
    one_batch: ClassVar[bool] = False
    """True when the kind schedules its own batches (an engine such as vLLM): ``score`` then
    receives every image of the run in one call."""

    @classmethod
    def matches_name(cls, model: Capabilities) -> bool:
        """True when the model's name (``model.path``) or its folder's files alone say it is
        this kind (checked for every kind before the transformers config is read)."""
        return False

    @classmethod
    def matches_config(cls, model: Capabilities) -> bool:
        """True when the model, its transformers config read (``model.config``), is of this
        kind (checked in registry order)."""
        return False

    @classmethod
    def probabilistic_for(cls, model: ResolvedModel, prompted: bool = False) -> bool:
        """Whether this kind's scores of ``model`` are probabilities (``probabilistic``; a kind
        that serves models of both sorts decides by the model, a kind whose scores are P(yes)
        only when the run names a prompt template by ``prompted``: ``--prompt`` or
        ``--prompts`` given)."""
        return cls.probabilistic

    probability_name: ClassVar[str] = "yes-no"
    """What the kind's probabilities are (``results.json``'s ``score.name``): P(yes)."""
    value_name: ClassVar[str] = "mean log-probability"
    """What the kind's other scores are: a sentence's mean token log-probability."""

    @classmethod
    def score_name(
        cls, model: ResolvedModel, score: str, similarity: str, prompted: bool = False
    ) -> str:
        """What a run's scores of ``model`` are (``results.json``'s ``score.name``, the report's
        "Score:" line): a dual encoder's ``similarity``, a likelihood ``score`` (caption,
        caption-pmi), else :attr:`probability_name` or :attr:`value_name` as
        :meth:`probabilistic_for` says."""
        if cls.takes_similarity:
            return similarity
        if score != "yes-no":
            return score
        return cls.probability_name if cls.probabilistic_for(model, prompted) else cls.value_name

    @classmethod
    def needs_images_for(cls, model: ResolvedModel) -> bool:
        """Whether this kind shows ``model`` the image (``needs_images``; a kind that serves
        text-only models too decides by the model)."""
        return cls.needs_images

    def __init__(
        self,
        model: ResolvedModel,
        batch_size: int | None = None,
        options: LoadOptions | None = None,
    ) -> None:
        self.resolved = model
        """The model as resolved for the run (path, kind, config)."""
        self.model_id = model.path
        self.batch_size = batch_size or self.default_batch_size
        self.options = options or LoadOptions()
        self.load(model)

    def load(self, model: ResolvedModel) -> None:  # noqa: B027 (a hook; optional)
        """Load what the kind scores with from the resolved ``model`` (with ``self.options``);
        called once by ``__init__``. Default: nothing to load."""

    def prepare_image(self, image: Image.Image) -> Any:
        """Per-image preprocessing that can run in a worker thread (default: the image itself)."""
        return image

    @abstractmethod
    def score(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
        """``scores[i][j]`` = score of ``queries[i][j]`` for ``images[i]``."""

    def skip(
        self,
        queries: Sequence[Sequence[Query]],
        known: Sequence[Mapping[Query, float]] | None = None,
    ) -> None:
        """A batch a resumed run does not score (its items were kept): a scorer whose scores
        depend on the batches before (a cache filled a batch at a time) plans it as
        :meth:`score` would fill it, without computing anything
        (``bla_eval.batching.BatchedCache``), so the later batches score as in an uninterrupted
        run and a resume costs only the missing work. ``known[i]``: the kept scores of image
        i's queries (where the run keeps them), for a cache that holds scores. Default:
        nothing."""
        return None

    def forget(self) -> None:  # noqa: B027 (a hook; optional)
        """Drop what earlier calls computed from the model's weights and kept (a dual encoder's
        sentence features): the weights changed (``bla-finetune`` scores the model it trains).
        Default: nothing kept."""

    def text_similarities(self, sentences: Sequence[str]) -> list[list[float]] | None:
        """The cosine similarity of each pair of ``sentences`` by the model's text encoder
        alone, ``[i][j]`` (SugarCrepe++'s text-only task asks for them: the benchmark spec's
        ``text_similarities``). Default: None, a kind that embeds no sentence on its own."""
        return None

    def describe(self) -> dict[str, Any]:
        """Protocol details recorded in the results (prompt, similarity, padding, ...)."""
        return {}


def raised_by_engine(err: BaseException) -> bool:
    """True when ``err`` was raised by this package's own code (its message is for the user),
    not inside a library it calls."""
    import traceback
    from pathlib import Path

    frames = traceback.extract_tb(err.__traceback__)
    package = str(Path(__file__).resolve().parents[1])
    return bool(frames) and str(Path(frames[-1].filename).resolve()).startswith(package)


def scoring_failure(scorer: Scorer, err: Exception) -> ValueError:
    """The one-line error of a model that fails while it scores (inside its library: a
    processor or a forward that does not take what it is given), naming the model, its
    architecture and the library's own message."""
    config = getattr(scorer.resolved, "config", None)
    model_type = getattr(config, "model_type", None) or scorer.kind
    first = (str(err).strip().splitlines() or [""])[0]
    return ValueError(
        f"model {scorer.model_id!r} ({model_type}) failed while scoring: "
        f"{type(err).__name__}: {first}".rstrip(": ")
    )


def regroup(values: Sequence[Any], groups: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """Split a flat list of values back into the lengths of ``groups``."""
    out, start = [], 0
    for group in groups:
        out.append(list(values[start : start + len(group)]))
        start += len(group)
    return out
