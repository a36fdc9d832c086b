"""Grammar acceptability scorers (step 5): a small interface, a registry, and the default LM scorer.

A scorer maps sentences to floats, higher = more acceptable. The pipeline drops a caption set when
any of its sentences scores <= ``ConstructConfig.threshold(task)`` and keeps the best-scored set
per image. To plug in GRUEN or any other model, register a factory:

    from builders.construct.grammar import SCORERS
    SCORERS["gruen"] = lambda config: MyGruenScorer(...)   # any object with .score(list[str])

and run with ``--grammar-scorer gruen --grammar-threshold 0.7`` (one threshold for every task;
the defaults in ``config.CALIBRATED_THRESHOLDS`` are per task and belong to the default scorer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from tqdm.auto import tqdm

from builders.construct.config import ConstructConfig, resolve_model, scorer_name


class AcceptabilityScorer(Protocol):
    """Anything that scores sentences for grammatical acceptability (higher = better)."""

    name: str

    def score(self, sentences: Sequence[str]) -> list[float]: ...


class LMScorer:
    """Normalised log-probability from a causal language model (default: SmolLM2-135M, GGUF).

    ``mode="slor"``: SLOR (Lau et al. 2017) with the model's own unigram estimate: the mean over
    tokens of ``log p(token | prefix) - log p(token | <bos>)``; it discounts rare words, so it
    tracks    acceptability rather than frequency. ``mode="mean"``: the mean token log-probability.
    """

    def __init__(self, model: str, mode: str = "slor", batch_size: int = 32) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if mode not in ("slor", "mean"):
            raise ValueError(f"unknown LM scoring mode {mode!r}: use 'slor' or 'mean'")
        path = Path(resolve_model(model))
        kwargs = {"gguf_file": path.name} if path.suffix == ".gguf" else {}
        where = str(path.parent) if kwargs else str(path) if path.exists() else model
        self.tokenizer = AutoTokenizer.from_pretrained(where, **kwargs)
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.model = AutoModelForCausalLM.from_pretrained(where, **kwargs).eval().to(self.device)
        self.name = scorer_name(f"lm-{mode}", model)
        self.mode, self.batch_size = mode, batch_size
        self.bos = self._bos_id()
        with torch.no_grad():
            start = torch.tensor([[self.bos]], device=self.device)
            self.unigram = self.model(start).logits[0, -1].float().log_softmax(-1)

    def _bos_id(self) -> int:
        tok = self.tokenizer
        document_start = tok.get_vocab().get("<|endoftext|>")  # GPT-2 / SmolLM2 style
        for candidate in (document_start, tok.bos_token_id, tok.eos_token_id, tok.pad_token_id):
            if candidate is not None:
                return int(candidate)
        raise ValueError("the grammar model's tokenizer has no bos/eos/pad token to start with")

    def score(self, sentences: Sequence[str], progress: bool = True) -> list[float]:
        """One score per sentence, in order."""
        out: list[float] = []
        starts = range(0, len(sentences), self.batch_size)
        for start in tqdm(starts, desc="grammar scores", disable=not progress or len(starts) < 2):
            out.extend(self._batch(sentences[start : start + self.batch_size]))
        return out

    def _batch(self, sentences: Sequence[str]) -> list[float]:
        from bla_eval.language_model import mean_log_probs

        baseline = self.unigram if self.mode == "slor" else None
        return mean_log_probs(
            self.model, self.tokenizer, sentences, self.bos, self.device, baseline
        )


SCORERS: dict[str, Callable[[ConstructConfig], AcceptabilityScorer]] = {
    "lm-slor": lambda c: LMScorer(c.grammar_model, "slor", c.grammar_batch_size),
    "lm-mean": lambda c: LMScorer(c.grammar_model, "mean", c.grammar_batch_size),
}
"""Scorer name -> factory taking the configuration."""


def make_scorer(config: ConstructConfig) -> AcceptabilityScorer:
    """The scorer named by ``config.grammar_scorer`` (ValueError names the known ones)."""
    try:
        factory = SCORERS[config.grammar_scorer]
    except KeyError:
        raise ValueError(
            f"unknown grammar scorer {config.grammar_scorer!r}; known: {', '.join(sorted(SCORERS))}"
        ) from None
    return factory(config)
