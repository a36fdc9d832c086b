"""Text-only baseline: a causal LM's mean token log-probability of each sentence (no image), or,
asked with a prompt template (``--prompt`` / ``--prompts``), P(yes) / (P(yes) + P(no)) of the
template's question without the image: how a model answers from language priors alone. Those
P(yes) are probabilities (binary view: threshold 0.5, as the generative kind's), so benchmarks
that need answers (NaturalBench) score the blind row; log-probabilities are ranked (top-k)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..batching import BatchedCache
from ..language_model import mean_log_probs, next_token_logits, prefix_token
from ..protocols.templates import (
    PromptTemplate,
    answer_token_ids,
    asked_with,
    get_template,
    yes_probability,
)
from ..queries import Query
from .base import Scored
from .capabilities import Capabilities
from .local import LocalScorer
from .registry import register_kind
from .resolved_model import ResolvedModel, is_gguf


def text_of(query: Query, template: PromptTemplate | None) -> tuple[str, str]:
    """(template name or "", the text scored): the question without the image when the query
    or the run (``template``) names a template, else the sentence itself."""
    template = asked_with(query.template, template) if query.template else template
    if template is None:
        return "", query.sentence
    return template.name, template.text(query.sentence, query.demonstrations)


def by_length(key: tuple[str, str]) -> tuple[int, str, str]:
    """The order texts are batched in: by length, then text, so the batches (and so the last
    bits of padded scores) are the same in every process, whatever the hash seed that orders a
    set."""
    return len(key[1]), key[1], key[0]


@register_kind
class TextScorer(LocalScorer):
    """``AutoModelForCausalLM`` (also from GGUF); higher mean log-probability = lower perplexity."""

    kind = "text"
    needs_images = False
    asks_question = True

    @classmethod
    def matches_name(cls, model: Capabilities) -> bool:
        return is_gguf(model.path)

    @classmethod
    def probabilistic_for(cls, model: ResolvedModel, prompted: bool = False) -> bool:
        """P(yes) when the run asks a template's question (``prompted``), thresholded at 0.5 as
        the generative kind's; the sentences' mean log-probabilities otherwise (top-k)."""
        return prompted

    @classmethod
    def matches_config(cls, model: Capabilities) -> bool:
        return model.causal_lm and not model.takes_images  # a model that takes images: not blind

    def load(self, model: ResolvedModel) -> None:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        super().load(model)
        source, self.gguf_file = model.weights
        kwargs: dict[str, Any] = {"trust_remote_code": self.options.trust_remote_code}
        if self.gguf_file:
            kwargs["gguf_file"] = self.gguf_file
        self.tokenizer = AutoTokenizer.from_pretrained(source, **kwargs)
        self.model = AutoModelForCausalLM.from_pretrained(
            source, dtype=self.dtype, **kwargs, **model.config_kwargs
        )
        self.model.to(self.device).eval()
        self.prefix = prefix_token(self.tokenizer)
        self._cache = {
            asked: BatchedCache(self._scores_of(asked), self.batch_size, by_length)
            for asked in (False, True)
        }
        """(template name or "", text) -> score, one cache per way of scoring (a template's
        question or the sentence itself)."""
        self.template = get_template(self.options.prompt) if self.options.prompt else None
        """The template of ``--prompt`` (None: the sentence's own log-probability)."""
        self.yes_ids = self.no_ids = None
        prompted = self.options.prompt is not None or bool(self.options.prompts)
        self.probabilistic = self.probabilistic_for(model, prompted)
        if prompted:
            try:
                self.yes_ids, self.no_ids, self.answer_tokens = answer_token_ids(self.tokenizer)
            except ValueError as err:
                raise ValueError(f"model {model.path!r}: {err}") from err

    def mean_log_probs(self, texts: Sequence[str]) -> list[float]:
        """Mean log-probability of each text's tokens, each given a BOS (or EOS) token before it."""
        return mean_log_probs(self.model, self.tokenizer, texts, self.prefix, self.device)

    def yes_scores(self, texts: Sequence[str]) -> list[float]:
        """P(yes) / (P(yes) + P(no)) of the token after each question text."""
        logits = next_token_logits(self.model, self.tokenizer, texts, self.prefix, self.device)
        return yes_probability(logits, self.yes_ids, self.no_ids).cpu().tolist()

    def text_of(self, query: Query) -> tuple[str, str]:
        """(template name or "", the text scored) of ``query`` (see :func:`text_of`)."""
        return text_of(query, self.template)

    def _scores_of(self, asked: bool):
        """The scores of a batch of (template name, text) keys: P(yes) of a template's
        question (``asked``), else the text's mean log-probability."""
        run = self.yes_scores if asked else self.mean_log_probs
        return lambda keys: run([text for _, text in keys])

    def skip(
        self,
        queries: Sequence[Sequence[Query]],
        known: Sequence[Mapping[Query, float]] | None = None,
    ) -> None:
        """The batch's texts planned into the caches as :meth:`score` batches them (scored
        only when a later batch asks for one of their batch), and the ``known`` scores of
        the kept items taken as they are (a text's score is the same for every image)."""
        for asked, keys in self._keys_by_way(queries).items():
            self._cache[asked].plan(keys)
        for group, scores in zip(queries, known or (), strict=False):
            for query in group:
                if query in scores:
                    key = self.text_of(query)
                    self._cache[bool(key[0])].seed({key: scores[query]})

    def _keys_by_way(self, queries: Sequence[Sequence[Query]]) -> dict[bool, list]:
        keys = [self.text_of(q) for group in queries for q in group]
        return {asked: [k for k in keys if bool(k[0]) == asked] for asked in (False, True)}

    def score(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
        found: dict[tuple[str, str], float] = {}
        for asked, keys in self._keys_by_way(queries).items():
            found.update(zip(keys, self._cache[asked].get(keys), strict=True))
        return Scored([[found[self.text_of(q)] for q in group] for group in queries])

    def describe(self) -> dict[str, Any]:
        if self.template is not None or self.options.prompts:
            return {
                "score": "P(yes) / (P(yes) + P(no)) of the question without the image, first "
                "answer token",
                "gguf_file": self.gguf_file,
            }
        return {"score": "mean token log-probability", "gguf_file": self.gguf_file}
