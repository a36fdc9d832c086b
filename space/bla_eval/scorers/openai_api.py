"""Models behind an OpenAI-compatible chat-completions endpoint (vLLM, SGLang, llama.cpp,
``transformers serve``, OpenAI, Gemini, Claude): the engine's yes/no question, scored from the
first answer token's top log-probabilities, or from a short generated answer where the endpoint
returns none (``bla_eval.api.answers``); or, with ``--score caption`` / ``caption-pmi``, the
sentence's likelihood from the prompt log-probabilities of a vLLM server
(``bla_eval.api.prompt_logprobs``, ``scorers.caption``).

The kind is chosen by ``--endpoint`` and never detected from a model name. The first query of a
run decides the path (``auto``): one request with ``logprobs``; a response with top
log-probabilities keeps that path, a refusal or a response without them switches to generation.
Requests run ``concurrency`` at a time; each response is cached on disk by the exact request
(``bla_eval.api.cache``), so a resumed run or a re-run sends nothing twice.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Any

from ..api.answers import (
    Answer,
    answer_text,
    first_choice,
    first_token_alternatives,
    from_logprobs,
    from_token_ids,
)
from ..api.answers import from_text as answer_from_text
from ..api.cache import CACHE_FOLDER, ResponseCache, cache_key, request_bytes
from ..api.client import ChatClient, EndpointError, LogprobsRefused
from ..api.messages import api_messages, data_url
from ..api.prompt_logprobs import (
    head_body,
    prompt_ids,
    sentence_body,
    sentence_tokens,
    tail_log_prob,
)
from ..api.response import Malformed, check_completion
from ..api.usage import Usage
from ..api.vllm_server import yes_no_token_ids
from ..protocols import get_protocol
from ..protocols.templates import NO_WORDS, YES_WORDS, asked_with, run_template
from ..queries import Query
from ..redact import scrub_data
from .base import Scored, Scorer, regroup
from .registry import register_kind
from .resolved_model import ResolvedModel

LOGPROBS, GENERATION = "logprobs", "generation"

SCORE_RULES = {
    LOGPROBS: "P(yes) / (P(yes) + P(no)) over the top log-probabilities of the first answer "
    "token, summed over the yes/no spellings; a side missing from the list counts as 0",
    GENERATION: "generated answer classified by bla_metric.answers.parse_answer: yes 1.0, "
    "no 0.0, unparsed 0.5",
}
TOKEN_IDS_RULE = (
    "P(yes) / (P(yes) + P(no)) from the exact log-probabilities of the yes/no tokens of the "
    "first answer token (vLLM's logprob_token_ids), summed over the spellings that are one token"
)


@register_kind
class OpenAIApiScorer(Scorer):
    """A model name served by an OpenAI-compatible endpoint (``LoadOptions.api``)."""

    kind = "openai-api"
    probabilistic = True
    asks_question = True
    remote = True
    wants_encoded = True
    scores_captions = True
    default_batch_size = 1

    def load(self, model: ResolvedModel) -> None:
        super().load(model)
        settings = self.options.api
        if settings is None:
            raise ValueError(f"model kind {self.kind!r} needs --endpoint URL (the API base)")
        self.settings = settings
        protocol = get_protocol(self.options.protocol)
        self.template = run_template(self.options.prompt, protocol.template)
        self.device = settings.public_endpoint
        """Where the model runs (recorded as the run's device)."""
        self.chat = True  # the server applies the model's chat template
        self.needs_images = not settings.text_only
        self.client = ChatClient(settings, self.model_id)
        self.cache = ResponseCache(settings.cache_dir)
        self.usage = Usage()
        self.pool = ThreadPoolExecutor(settings.concurrency, thread_name_prefix="bla-api")
        self.path = None if settings.api_scoring == "auto" else settings.api_scoring
        self.path_reason = "" if self.path is None else f"--api-scoring {settings.api_scoring}"
        self.decided = False
        self.score_mode = self.options.score
        """What the model is asked: yes-no, caption or caption-pmi (``scorers.caption``)."""
        if self.score_mode != "yes-no" and settings.text_only:
            raise ValueError(
                f"--score {self.score_mode}: --text-only sends no image; the sentence's "
                "likelihood is scored after the image"
            )
        self.alpha = self.options.pmi_alpha
        self.alpha_source = "given (--pmi-alpha)" if self.alpha is not None else None
        self.priors: dict[str, tuple[float, int]] = {}
        self.prior_input: str | None = None
        self.head_ids: list[int] | None = None
        self._sentence_ids: dict[str, list[int]] = {}
        captions = self.score_mode != "yes-no"
        asks_ids = not captions and self.path != GENERATION
        self.token_ids = yes_no_token_ids(self.client) if asks_ids else None
        """(yes ids, no ids) when the server is vLLM: requests ask for exactly those tokens."""
        self.bar: Any = None
        self._bar_lock = threading.Lock()

    def prepare_image(self, image: bytes) -> str:  # type: ignore[override]
        """The item's encoded image bytes as a data URL (not decoded, not re-encoded)."""
        return data_url(image)

    def body(self, image_url: str | None, query: Query, path: str) -> dict[str, Any]:
        """The request for one query on one path (greedy; one token for log-probabilities)."""
        body: dict[str, Any] = {
            "model": self.model_id,
            "messages": api_messages(
                query.sentence,
                query.demonstrations,
                image_url,
                asked_with(query.template, self.template),
            ),
            "temperature": 0,
        }
        if path == LOGPROBS:
            body |= {"max_tokens": 1, "logprobs": True, "top_logprobs": self.settings.top_logprobs}
            if self.token_ids is not None:  # a vLLM server: exactly these tokens, by id
                ids = [*self.token_ids[0], *self.token_ids[1]]
                body |= {"logprob_token_ids": ids, "return_tokens_as_token_ids": True}
        else:
            body["max_tokens"] = self.settings.max_answer_tokens
        return body

    def fetch(self, body: dict[str, Any]) -> dict[str, Any]:
        """The response to ``body``: from the cache, else sent (and then cached)."""
        data = request_bytes(body)
        key = cache_key(self.settings.endpoint, data)  # the query string included
        doc = self.cache.get(key)
        if doc is not None:
            try:
                check_completion(doc)
            except Malformed:  # a damaged or edited entry: asked again
                doc = None
        cached = doc is not None
        # the server's strings (model, fingerprint, answers) are kept and used without the
        # run's secrets; nothing else of them changes (an answer is data: control characters
        # and credential-shaped words are removed only where text is printed)
        doc = scrub_data(doc if cached else self.client.post(data))
        if not cached:
            self.cache.put(key, self.settings.public_endpoint, doc)
        self.usage.add_response(doc, cached)
        self._tick()
        return doc

    def answer(self, image_url: str | None, query: Query) -> Answer:
        """The scored answer to one query on the run's path."""
        if self.path == LOGPROBS:
            doc = self.fetch(self.body(image_url, query, LOGPROBS))
            alternatives = first_token_alternatives(doc)
            if alternatives is None:  # this response came without them: its text decides
                self.usage.add_outcome("without_logprobs")
                result = answer_from_text(answer_text(doc))
            elif self.token_ids is not None:
                result = from_token_ids(alternatives, *self.token_ids, answer_text(doc))
            else:
                result = from_logprobs(alternatives, answer_text(doc))
        else:
            doc = self.fetch(self.body(image_url, query, GENERATION))
            result = answer_from_text(answer_text(doc))
        self.usage.add_outcome(result.outcome)
        return result

    def decide(self, image_url: str | None, query: Query) -> None:
        """Choose the path with the first query (``auto``), or check the forced one."""
        self.decided = True
        if self.path != GENERATION:
            try:
                self._grow_bar(1)
                doc = self.fetch(self.body(image_url, query, LOGPROBS))
            except LogprobsRefused as err:
                if self.path == LOGPROBS:
                    raise
                self.path, self.path_reason = GENERATION, f"{err}"
                return self._check_text(image_url, query)
            if first_token_alternatives(doc) is not None:
                self.path = LOGPROBS
                self.path_reason = "the endpoint returns top log-probabilities"
                return None
            if self.path == LOGPROBS:
                raise EndpointError(
                    f"endpoint {self.settings.public_endpoint} returned no log-probabilities for "
                    f"model {self.model_id!r}; use --api-scoring auto or generation"
                )
            self.path = GENERATION
            self.path_reason = "the endpoint returned no log-probabilities"
        return self._check_text(image_url, query)

    def _check_text(self, image_url: str | None, query: Query) -> None:
        """A generation path whose first answer has no text at all cannot score."""
        self._grow_bar(1)
        doc = self.fetch(self.body(image_url, query, GENERATION))
        if not answer_text(doc).strip():
            reason = first_choice(doc).get("finish_reason")
            raise EndpointError(
                f"endpoint {self.settings.public_endpoint} returned neither log-probabilities "
                f"nor text for model {self.model_id!r} (finish_reason: {reason}); a model that "
                "reasons before answering needs a larger --max-answer-tokens"
            )

    def score(self, images: Sequence[Any], queries: Sequence[Sequence[Query]]) -> Scored:
        from tqdm.auto import tqdm

        jobs = [(image, q) for image, group in zip(images, queries, strict=True) for q in group]
        # one bar per call (the engine's item bar shows the whole run), closed even on errors
        with tqdm(total=0, desc=f"requests ({self.kind})", unit="req", leave=False) as self.bar:
            if self.score_mode != "yes-no":
                from . import caption

                return caption.score(self, images, queries)
            if jobs and not self.decided:
                self.decide(*jobs[0])
            answers = self._run_all(self.answer, jobs)
        results = [answers[job] for job in jobs]
        scores = regroup([a.score for a in results], queries)
        return Scored(scores, regroup([a.text for a in results], queries))

    def caption_terms(self, images: Sequence[Any], texts: Sequence[Sequence[str]]) -> list:
        """Per text of each image, the terms of its likelihood score (``scorers.caption``), from
        the endpoint's prompt log-probabilities; each distinct text once without the image (its
        token count, and its prior)."""
        from . import caption

        if self.head_ids is None:
            self._grow_bar(1)
            self.head_ids = self._prompt_ids(head_body(self.model_id))
        flat = [t for group in texts for t in group]
        new = [(None, t) for t in dict.fromkeys(flat) if t not in self.priors]
        for (_, text), value in self._run_all(self._prior, new).items():
            self.priors[text] = value
        self.prior_input = caption.TEXT_ONLY
        jobs = [(image, t) for image, group in zip(images, texts, strict=True) for t in group]
        found = self._run_all(self._conditional, jobs)
        values = [found[job] for job in jobs]
        out = [[{"log_p_image": s, "tokens": n} for s, n in row] for row in regroup(values, texts)]
        if self.score_mode == "caption-pmi":
            caption.with_priors(out, texts, self.priors)
        return out

    def _prompt_ids(self, body: dict[str, Any]) -> list[int]:
        try:
            return prompt_ids(self.fetch(body))
        except Malformed as err:
            raise self._no_prompt_logprobs(err) from None

    def _prior(self, _: None, text: str) -> tuple[float, int]:
        """log P(text | no image) and the text's token count."""
        doc = self.fetch(sentence_body(self.model_id, text, None))
        try:
            count = sentence_tokens(prompt_ids(doc), self.head_ids or [])
            value, ids = tail_log_prob(doc, count)
        except Malformed as err:
            raise self._no_prompt_logprobs(err) from None
        self._sentence_ids[text] = ids
        return value, count

    def _conditional(self, image_url: str | None, text: str) -> tuple[float, int]:
        """log P(text | image) and the text's token count (its tokens checked against the
        text-only prompt's)."""
        doc = self.fetch(sentence_body(self.model_id, text, image_url))
        count = self.priors[text][1]
        try:
            value, ids = tail_log_prob(doc, count)
        except Malformed as err:
            raise self._no_prompt_logprobs(err) from None
        if ids != self._sentence_ids[text]:
            raise EndpointError(
                f"endpoint {self.settings.public_endpoint} tokenized sentence {text!r} after the "
                "image differently from after the text-only prompt; its likelihood cannot be "
                "read from the prompt's last tokens"
            )
        return value, count

    def _no_prompt_logprobs(self, err: Malformed) -> EndpointError:
        return EndpointError(
            f"endpoint {self.settings.public_endpoint} returned no usable prompt "
            f"log-probabilities for model {self.model_id!r} ({err}); --score {self.score_mode} "
            "needs a server that returns them (vLLM's chat completions)"
        )

    def _run_all(self, fn: Any, jobs: list[tuple[Any, Any]]) -> dict[Any, Any]:
        """``fn(*job)`` of every distinct job, ``concurrency`` at a time; the first failure stops
        the rest (requests not yet sent are not sent) and is raised once the requests in flight
        have ended, so nothing writes to the cache after the run has failed."""
        unique = list(dict.fromkeys(jobs))
        self._grow_bar(len(unique))
        futures = {job: self.pool.submit(fn, *job) for job in unique}
        try:
            done, _ = wait(futures.values(), return_when=FIRST_EXCEPTION)
            for future in done:
                if future.exception() is not None:
                    raise future.exception()
        except BaseException:
            self.client.stop.set()
            for future in futures.values():
                future.cancel()
            wait(futures.values())
            raise
        return {job: future.result() for job, future in futures.items()}

    def _grow_bar(self, n: int) -> None:
        with self._bar_lock:
            if self.bar is not None:
                self.bar.total += n
                self.bar.refresh()

    def _tick(self) -> None:
        with self._bar_lock:
            if self.bar is not None:
                requests = self.usage.requests
                self.bar.set_postfix(
                    sent=requests["sent"],
                    cached=requests["cached"],
                    retries=self.client.retries,
                    refresh=False,
                )
                self.bar.update(1)

    def describe(self) -> dict[str, Any]:
        if self.score_mode != "yes-no":
            from . import caption

            return {
                **caption.describe(self),
                "chat_template": "the server's",
                "forward_path": "the endpoint's prompt log-probabilities (chat completions with "
                "continue_final_message; vLLM reads no cached prefix for them)",
                "api": self._api_record(),
            }
        outcomes = self.usage.outcomes
        return {
            "prompt": self.template.question,
            "chat_template": "the server's",
            "scoring_path": self.path,
            "scoring_path_reason": self.path_reason,
            "score": TOKEN_IDS_RULE
            if self.token_ids is not None and self.path == LOGPROBS
            else SCORE_RULES.get(self.path or "", ""),
            "logprobs_source": None
            if self.path != LOGPROBS
            else "token ids (vLLM logprob_token_ids)"
            if self.token_ids is not None
            else "top-k",
            "yes_tokens": list(YES_WORDS),
            "no_tokens": list(NO_WORDS),
            "unparsed_answers": outcomes["unparsed"],
            "api": self._api_record(),
        }

    def _api_record(self) -> dict[str, Any]:
        """The endpoint's settings and the run's usage."""
        settings = self.settings
        prices = (settings.price_input, settings.price_output)
        return {
            "endpoint": settings.public_endpoint,
            "key_env": settings.api_key_env,
            "concurrency": settings.concurrency,
            "request_timeout_s": settings.request_timeout,
            "max_retries": settings.max_retries,
            "top_logprobs": settings.top_logprobs,
            "max_answer_tokens": settings.max_answer_tokens,
            "text_only": settings.text_only,
            "cache": CACHE_FOLDER if settings.cache_dir is not None else None,
            **self.usage.record(self.client.retries, prices),
        }
