"""The model kinds: one scorer class per kind, registered here; lists and menus derive from them.

The kind names, their help lines and examples are known without importing any scorer module (so
``bla-eval --help`` and the kind menus need no torch); a scorer class is imported when it is used.

Adding a kind: one module with a ``Scorer`` subclass decorated with ``@register_kind``, and its
``KindInfo`` (its class as ``module:Class``) in ``BUILTIN_KINDS`` (the order is the precedence of
detection).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

from bla_metric.registry import Registry

from .base import Scorer

PACKAGE = __name__.rpartition(".")[0]
"""The package of the built-in scorer modules."""


@dataclass(frozen=True)
class KindInfo:
    """What menus and ``--help`` show of a kind, and its scorer class as ``module:Class``."""

    kind: str
    scorer: str
    help: str = ""
    """One line: what the model is and what its score means."""
    example: str = ""
    """A Hub model of this kind (the Space's examples)."""
    remote: bool = False
    """The model runs behind an API endpoint (``--endpoint``); the Space does not offer it."""
    example_params: float | None = None
    """The example's parameter count, roughly (the Space offers only examples under its cap)."""
    reads_regions: bool = False
    """The kind reads region features (``--regions``), which the Space has no way to give: it
    is scored from the command line, and the Space lists its runs."""
    more_examples: tuple[tuple[str, float], ...] = ()
    """Hub models of other architecture families of this kind, with their parameter counts
    (the Space's examples; ``docs/models.md`` lists the architectures the tests cover)."""


BUILTIN_KINDS = (
    KindInfo(
        "itm",
        f"{PACKAGE}.itm:MatchingScorer",
        "image-text matching head: match probability",
        "Salesforce/blip-itm-base-coco",
        example_params=2.2e8,
    ),
    KindInfo(
        "region-itm",
        f"{PACKAGE}.region_itm:RegionMatchingScorer",
        "image-text matching on region features (LXMERT, VOLTA's ViLBERT and LXMERT; "
        "--regions): match probability",
        "unc-nlp/lxmert-base-uncased",
        example_params=2.1e8,
        reads_regions=True,
    ),
    KindInfo(
        "generative",
        f"{PACKAGE}.generative:GenerativeScorer",
        "image-to-text model: P(yes) to 'Is the sentence ... appropriate?'",
        "Salesforce/blip2-opt-2.7b",
        example_params=3.7e9,
        more_examples=(
            ("HuggingFaceTB/SmolVLM-256M-Instruct", 2.6e8),
            ("LiquidAI/LFM2-VL-450M", 4.5e8),
            ("llava-hf/llava-onevision-qwen2-0.5b-ov-hf", 8.9e8),
            ("OpenGVLab/InternVL3-1B-hf", 9.4e8),
            ("Qwen/Qwen3-VL-2B-Instruct", 2.1e9),
            ("Qwen/Qwen2.5-VL-3B-Instruct", 3.8e9),
        ),
    ),
    KindInfo(
        "flamingo",
        f"{PACKAGE}.flamingo:FlamingoScorer",
        "OpenFlamingo (a released openflamingo/ Hub id, or a folder of checkpoint.pt and its "
        "config.json): P(yes) to the authors' question",
        "openflamingo/OpenFlamingo-4B-vitl-rpj3b-langinstruct",
        example_params=3.3e9,
    ),
    KindInfo(
        "contrastive",
        f"{PACKAGE}.contrastive:ContrastiveScorer",
        "dual encoder (CLIP-like): image-sentence similarity",
        "openai/clip-vit-base-patch32",
        example_params=1.5e8,
        more_examples=(("google/siglip2-base-patch16-224", 3.8e8),),
    ),
    KindInfo(
        "open_clip",
        f"{PACKAGE}.openclip:OpenClipScorer",
        "open_clip dual encoder: image-sentence similarity",
        "hf-hub:laion/CLIP-ViT-B-32-laion2B-s34B-b79K",
        example_params=1.5e8,
    ),
    KindInfo(
        "text",
        f"{PACKAGE}.text:TextScorer",
        "text-only language model (no image): sentence likelihood, a blind baseline",
        "openai-community/gpt2",
        example_params=1.2e8,
    ),
    KindInfo(
        "vllm",
        f"{PACKAGE}.vllm_engine:VllmScorer",
        "image-to-text or text-only model run by vLLM's engine (--kind vllm, the vllm extra): "
        "P(yes) from the exact yes/no log-probabilities; a text-only model as the text kind",
        "llava-hf/llava-1.5-7b-hf",
        example_params=7.1e9,
    ),
    KindInfo(
        "openai-api",
        f"{PACKAGE}.openai_api:OpenAIApiScorer",
        "model behind an OpenAI-compatible endpoint (--endpoint URL): P(yes) from top "
        "log-probabilities, else the generated answer",
        remote=True,
    ),
)
"""The built-in kinds, in detection order (a remote kind is chosen by ``--endpoint`` only)."""

KIND_INFO: Registry[KindInfo] = Registry("model kind", BUILTIN_KINDS, key=attrgetter("kind"))
"""Kind name -> its menu facts and scorer class path, in detection order (built-in, then
registered)."""

KINDS: Registry[type[Scorer]] = Registry(
    "model kind", lazy={info.kind: info.scorer for info in BUILTIN_KINDS}, key=attrgetter("kind")
)
"""Kind name -> scorer class, a built-in one imported on first use."""


def register_kind(cls: type[Scorer]) -> type[Scorer]:
    """Class decorator: make ``cls`` the scorer of ``cls.kind``.

    A built-in kind's class takes its help line and example from ``BUILTIN_KINDS``; any other
    class states them as class attributes.
    """
    path = f"{cls.__module__}:{cls.__qualname__}"
    info = KIND_INFO.get(cls.kind)
    if info is not None and info.scorer == path:
        cls.help, cls.example = info.help, info.example
    else:
        KIND_INFO.register(KindInfo(cls.kind, path, cls.help, cls.example, cls.remote))
    KINDS.register(cls)
    return cls


def unregister_kind(kind: str) -> None:
    """Remove a kind added with :func:`register_kind` (tests register toy kinds); a built-in
    kind of that name is restored."""
    KINDS.unregister(kind)
    KIND_INFO.unregister(kind)


def kinds() -> tuple[str, ...]:
    """Every kind, in detection order (imports no scorer module)."""
    return tuple(KIND_INFO)


def kind_helps() -> dict[str, str]:
    """Kind -> its help line, in detection order (imports no scorer module)."""
    return {kind: info.help for kind, info in KIND_INFO.items()}


def remote_kinds() -> list[str]:
    """The kinds whose models run behind an API endpoint (imports no scorer module)."""
    return [kind for kind, info in KIND_INFO.items() if info.remote]


def scorer_class(kind: str) -> type[Scorer]:
    """The scorer class of a kind, its module imported on first use (an error lists the kinds)."""
    return KINDS.require(kind)


def scorer_classes() -> dict[str, type[Scorer]]:
    """Every kind's scorer class, in detection order (imports every scorer module)."""
    return dict(KINDS)
