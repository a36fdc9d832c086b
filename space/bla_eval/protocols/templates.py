"""Prompt templates: the yes/no question put to generative models, how a sentence is put in it,
how in-context demonstrations are shown, and the spellings of the answers.

One registry for every model kind that asks the question (local generative models, API
endpoints, and text-only language models asked without the image): ``bla`` (the default: the
paper's question, §4.2 and §6), ``authors`` (the strings of the authors' released script), the
paper's three zero-shot templates as written (``blip2``, ``openflamingo``, ``magma-fromage``) and
widely used yes/no formulations of the literature (``mme``, ``llava``, ``vqascore``). A protocol
names the template it asks with (``Protocol.template``); ``--prompt NAME`` asks with another and
``--prompts`` with several; :func:`register_template` adds one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bla_metric.answers import NO, YES
from bla_metric.registry import Registry

ANSWERS = {1: YES, 0: NO}
"""The answer of a true (1) and a false (0) demonstration."""

YES_WORDS = ("yes", "Yes", " yes", " Yes", "YES")
"""Spellings of "yes" as a first answer token; the probabilities of those that are one token
each are summed into P(yes)."""

NO_WORDS = ("no", "No", " no", " No", "NO")
"""Spellings of "no" as a first answer token, summed into P(no)."""

IMAGE_MARKER = "<image>"
"""Where a template written for a model with an image token places the image (OpenFlamingo's
``<image>``). :meth:`PromptTemplate.plain` keeps it as written; the scorers put the image there
themselves (first, through the chat template or the processor) and drop the marker from the
text (:meth:`PromptTemplate.text`)."""


def named_sentence(question: str, sentence: str) -> str:
    """``question`` with ``sentence`` in its ``{sentence}`` field."""
    return question.format(sentence=sentence)


@dataclass(frozen=True)
class PromptTemplate:
    """How one question is asked.

    - ``question``: the target's question; ``fill(question, sentence)`` puts a sentence in it and
      gives the text of one question turn (default: the ``{sentence}`` field);
    - ``in_context_question``: the question of every turn when demonstrations are shown
      (empty: ``question``);
    - ``answers``: demonstration answer (``yes``/``no``) -> the text shown for it;
    - ``turn``: a demonstration in the one-string prompt (``{question}``, ``{answer}``); the
      turns and the target's question are joined by ``separator``;
    - ``source``: where the strings come from;
    - ``in_sweep``: part of ``--prompts all`` (False for a template whose zero-shot prompt is
      another's).
    """

    name: str
    question: str
    source: str
    fill: Callable[[str, str], str] = named_sentence
    in_context_question: str = ""
    answers: Mapping[str, str] = field(default_factory=lambda: {YES: YES, NO: NO})
    turn: str = "{question} {answer}."
    separator: str = " "
    in_sweep: bool = True

    def ask(self, sentence: str, in_context: bool = False) -> str:
        """The text of one question turn about ``sentence``."""
        question = (self.in_context_question or self.question) if in_context else self.question
        return self.fill(question, sentence)

    def turns(
        self, sentence: str, demonstrations: Sequence[tuple[str, str]] = ()
    ) -> list[tuple[str, str | None]]:
        """(question text, shown answer) per turn: each demonstration, then the target's
        question with answer None."""
        in_context = bool(demonstrations)
        shown = [(self.ask(s, in_context), self.answers[a]) for s, a in demonstrations]
        return [*shown, (self.ask(sentence, in_context), None)]

    def plain(self, sentence: str, demonstrations: Sequence[tuple[str, str]] = ()) -> str:
        """The one-string prompt: each demonstration as ``turn``, then the target's question.
        No demonstrations = the zero-shot prompt."""
        texts = [
            question if answer is None else self.turn.format(question=question, answer=answer)
            for question, answer in self.turns(sentence, demonstrations)
        ]
        return self.separator.join(texts)

    def text(self, sentence: str, demonstrations: Sequence[tuple[str, str]] = ()) -> str:
        """:meth:`plain` without the image marker: the text a scorer sends beside the image."""
        return self.plain(sentence, demonstrations).replace(IMAGE_MARKER, "")

    def chat(
        self, sentence: str, demonstrations: Sequence[tuple[str, str]] = ()
    ) -> list[dict[str, Any]]:
        """Chat turns for a processor's chat template: the image in the first user turn, each
        demonstration as a user question and the assistant's answer, then the target's
        question."""
        messages: list[dict[str, Any]] = []
        for question, answer in self.turns(sentence, demonstrations):
            content: list[dict[str, Any]] = [] if messages else [{"type": "image"}]
            content.append({"type": "text", "text": question.replace(IMAGE_MARKER, "")})
            messages.append({"role": "user", "content": content})
            if answer is not None:
                messages.append(
                    {"role": "assistant", "content": [{"type": "text", "text": answer}]}
                )
        return messages


AUTHORS_TEMPLATE = "Question: {} Answer: {}"
"""The authors' frame of one turn: ``AUTHORS_TEMPLATE.format(question, answer)``."""
AUTHORS_QUESTION = "Is the sentence {} appropriate for this image? yes or no?"
"""The authors' zero-shot question."""
AUTHORS_ICL_QUESTION = "Is the sentence {} appropriate for this image?"
"""The authors' question of every in-context turn (no "yes or no?")."""


def authors_sentence(question: str, sentence: str) -> str:
    """The authors' question turn: ``"Question: <question> Answer: "`` (trailing space)."""
    return AUTHORS_TEMPLATE.format(question.format(sentence), "")


CAPTION_REQUEST = "Describe the image in one sentence."
"""The user turn before the sentence when a model with a chat template is asked for the
sentence's likelihood (``--score caption``): the sentence is the assistant's answer to it."""

DEFAULT_TEMPLATE = "bla"
"""The template every kind asks with unless its protocol names another."""

BLA = PromptTemplate(
    DEFAULT_TEMPLATE,
    "Question: Is the sentence {sentence} appropriate for this image? yes or no? Answer:",
    "the paper's question (§4.2); one per demonstration and one for the target (§6)",
)
AUTHORS = PromptTemplate(
    "authors",
    AUTHORS_QUESTION,
    "the authors' script evaluation_models/blip2/test_blip2_bla.py (shin-ee-chen/BLA)",
    fill=authors_sentence,
    in_context_question=AUTHORS_ICL_QUESTION,
    answers={YES: "yes.", NO: "no."},
    turn="{question}{answer}",
    in_sweep=False,  # its zero-shot prompt is blip2's; the paper protocols ask with it
)

PAPER_QUESTION = "Is the sentence {sentence} appropriate for this image? yes or no?"
"""The question of the paper's three zero-shot templates (§4.2, Appendix F)."""
BLIP2 = PromptTemplate(
    "blip2",
    f"Question: {PAPER_QUESTION} Answer: ",
    "the paper's BLIP-2 template (§4.2, after Li et al. 2023's VQA prompt) with the trailing "
    "space of the authors' script evaluation_models/blip2/test_blip2_bla.py "
    '(`"Question: {} Answer: {}".format(question, "")`)',
)
OPENFLAMINGO = PromptTemplate(
    "openflamingo",
    f"{IMAGE_MARKER}Question: {PAPER_QUESTION} Short Answer:",
    "the paper's OpenFlamingo template (§4.2 and Appendix G, after Awadalla et al. 2023): the "
    "image first (<image>), no trailing space",
)
END_OF_CHUNK = "<|endofchunk|>"
"""OpenFlamingo's end of one image-text chunk: it closes each in-context demonstration."""
OPENFLAMINGO_ICL = PromptTemplate(
    "openflamingo-icl",
    OPENFLAMINGO.question,
    "the paper's second OpenFlamingo in-context format (Appendix G, after Awadalla et al. "
    "2023): <image> per turn, each demonstration answered 'yes.' / 'no.' and closed by "
    "<|endofchunk|>; its zero-shot prompt is the openflamingo template's",
    answers={YES: "yes.", NO: "no."},
    turn="{question} {answer}" + END_OF_CHUNK,
    separator="",
    in_sweep=False,
)
OPENFLAMINGO_AUTHORS_QUESTION = (
    f"{IMAGE_MARKER}Question: {PAPER_QUESTION}" + " " * 13 + "Short answer:"
)
"""The question the authors' OpenFlamingo script sends: a backslash continuation inside the
string literal joins ``"yes or no? "`` and the next line's 12 spaces of indentation before
``"Short answer:"`` (lower-case ``answer``)."""
OPENFLAMINGO_AUTHORS = PromptTemplate(
    "openflamingo-authors",
    OPENFLAMINGO_AUTHORS_QUESTION,
    "the authors' script evaluation_models/openflamingo/model_container.py (shin-ee-chen/BLA, "
    "prompt_question): 13 spaces before 'Short answer:'; in context, Appendix G's second format "
    "(openflamingo-icl)",
    in_context_question=OPENFLAMINGO.question,
    answers=OPENFLAMINGO_ICL.answers,
    turn=OPENFLAMINGO_ICL.turn,
    separator="",
    in_sweep=False,  # the openflamingo template with the script's spacing
)
MAGMA_FROMAGE = PromptTemplate(
    "magma-fromage",
    f"Q: {PAPER_QUESTION} A:",
    "the paper's MAGMA and FROMAGe template (Appendix F): the BLIP-2 template with Question -> Q "
    "and Answer -> A",
)
MME = PromptTemplate(
    "mme",
    "Is the sentence {sentence} appropriate for this image? Please answer yes or no.",
    'MME (Fu et al. 2023, arXiv:2306.13394): every question ends in "Please answer yes or no."',
)
LLAVA = PromptTemplate(
    "llava",
    "Is the sentence {sentence} appropriate for this image?\n"
    "Answer the question using a single word or phrase.",
    "LLaVA-1.5's short-answer instruction (Liu et al. 2023, Improved Baselines with Visual "
    "Instruction Tuning, arXiv:2310.03744; its VQAv2, GQA and POPE prompts)",
)
VQASCORE = PromptTemplate(
    "vqascore",
    'Does this figure show "{sentence}"? Please answer yes or no.',
    "VQAScore's question (Lin et al. 2024, Evaluating Text-to-Visual Generation with "
    "Image-to-Text Generation, arXiv:2404.01291): P(yes) as image-text alignment",
)

NATURALBENCH = PromptTemplate(
    "naturalbench",
    "{sentence}",
    "NaturalBench's own questions (Li et al. 2024, ``example.py`` of Baiqi-Li/NaturalBench): "
    'the question and the suffix of its type ("Please answer Yes or No." or, multiple choice, '
    '"Please output the letter corresponding to the correct option.") are the text of the item',
    in_sweep=False,
)

TEMPLATES: Registry[PromptTemplate] = Registry(
    "prompt template",
    (
        BLA,
        AUTHORS,
        BLIP2,
        OPENFLAMINGO,
        OPENFLAMINGO_ICL,
        OPENFLAMINGO_AUTHORS,
        MAGMA_FROMAGE,
        MME,
        LLAVA,
        VQASCORE,
        NATURALBENCH,
    ),
)
"""Template name -> template, built-in first, then registered."""
register_template = TEMPLATES.register
unregister_template = TEMPLATES.unregister
template_names = TEMPLATES.names


def get_template(name: str = DEFAULT_TEMPLATE) -> PromptTemplate:
    """The template named ``name`` (a ValueError names an unknown one and the choices)."""
    return TEMPLATES.require(name)


def asked_with(name: str, default: PromptTemplate) -> PromptTemplate:
    """The template a query names (``Query.template``), else the run's ``default``."""
    return get_template(name) if name else default


def run_template(prompt: str | None, protocol_template: str) -> PromptTemplate:
    """The template a run asks with: ``--prompt`` when given, else its protocol's."""
    return get_template(prompt or protocol_template)


def single_token_ids(tokenizer: Any, words: Sequence[str]) -> list[int]:
    """Ids of the words that are one token each (duplicates removed)."""
    ids = []
    for word in words:
        encoded = tokenizer.encode(word, add_special_tokens=False)
        if len(encoded) == 1 and encoded[0] not in ids:
            ids.append(encoded[0])
    return ids


def answer_token_ids(tokenizer: Any) -> tuple[list[int], list[int], str]:
    """(yes ids, no ids, how they were chosen): the spellings of "yes" and "no" that are one
    token each; a tokenizer in which no spelling of one of them is one token gives the first
    piece of each spelling instead (pieces that spell only spaces, or that both answers begin
    with, left out)."""
    yes, no = single_token_ids(tokenizer, YES_WORDS), single_token_ids(tokenizer, NO_WORDS)
    if yes and no:
        return yes, no, "single-token spellings"
    yes, no = first_pieces(tokenizer, YES_WORDS), first_pieces(tokenizer, NO_WORDS)
    yes, no = [i for i in yes if i not in no], [i for i in no if i not in yes]
    if not yes or not no:
        raise ValueError("its tokenizer spells 'yes' and 'no' with the same first token")
    return yes, no, "first piece of each spelling (no spelling is one token)"


def first_pieces(tokenizer: Any, words: Sequence[str]) -> list[int]:
    """The first token of each word that is not only whitespace (duplicates removed)."""
    ids = []
    for word in words:
        for token in tokenizer.encode(word, add_special_tokens=False):
            if tokenizer.decode([token]).strip():
                if token not in ids:
                    ids.append(token)
                break
    return ids


def yes_probability(logits: Any, yes_ids: Sequence[int], no_ids: Sequence[int]) -> Any:
    """P(yes) / (P(yes) + P(no)) per row of first-answer-token logits (a torch tensor)."""
    probs = logits.softmax(dim=-1)
    p_yes = probs[:, list(yes_ids)].sum(-1)
    p_no = probs[:, list(no_ids)].sum(-1)
    return p_yes / (p_yes + p_no).clamp(min=1e-30)


ALL = "all"
"""``--prompts all``: every template of the sweep (``PromptTemplate.in_sweep``)."""


def sweep_names(names: Sequence[str]) -> tuple[str, ...]:
    """The templates of a sweep (``--prompts``): ``all`` alone, or names each once and known
    (a ValueError names the duplicate or the unknown one)."""
    names = tuple(names)
    if names == (ALL,):
        return tuple(t.name for t in TEMPLATES.values() if t.in_sweep)
    seen: set[str] = set()
    for name in names:
        if name == ALL:
            raise ValueError("prompts: 'all' stands alone, not in a list")
        if name in seen:
            raise ValueError(f"prompts: template {name!r} is listed twice")
        get_template(name)
        seen.add(name)
    return names
