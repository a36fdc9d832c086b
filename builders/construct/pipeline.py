"""The construction pipeline (paper section 3.3): Visual Genome images -> BLA caption sets.

``construct(vg_dir, task)`` streams the images, builds candidate caption sets per image (steps
1-4), scores every candidate sentence for grammar and keeps the best set per image (step 5), and
counts what each step kept or dropped in a :class:`Report`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from statistics import fmean

from tqdm.auto import tqdm

from bla_metric.tasks import TASKS
from builders.construct.attributes import (
    Attribute,
    Embedder,
    deduplicate,
    is_plural,
    unique_across,
)
from builders.construct.config import ConstructConfig
from builders.construct.filters import BodyParts, ReasoningLanguage, area_ratio, box_overlap
from builders.construct.grammar import AcceptabilityScorer, make_scorer
from builders.construct.persons import PersonDetector
from builders.construct.predicates import TransitiveVerbs, clean_predicate, tokens_of
from builders.construct.report import Report
from builders.construct.templates import (
    Articles,
    Person,
    active_passive,
    coordination,
    noun_phrase,
    relative_clause,
    same_words,
)
from builders.construct.vg import VGImage, VGObject, VGRelationship, iter_images

PLURAL_ONLY = frozenset({"people", "police", "clothes", "jeans", "trousers", "pants", "shorts"})
NO_GRAMMAR = "none"
"""``grammar_scorer`` value that turns the grammar filter off."""


@dataclass
class CaptionSet:
    """One candidate datapoint: four captions (True1, True2, False1, False2) for one image."""

    image_id: int
    captions: list[str]
    predicate: str = ""
    relationship_ids: tuple[int, ...] = ()
    scores: list[float] | None = None

    @property
    def mean_score(self) -> float:
        return fmean(self.scores) if self.scores else float("-inf")


@dataclass
class ConstructResult:
    """The kept sets (one per image, VG order), every candidate set by image, and the report."""

    sets: list[CaptionSet]
    candidates: dict[int, list[CaptionSet]]
    report: Report
    scorer_name: str = ""


@dataclass
class Resources:
    """The word lists, WordNet and models a run needs (built once from the configuration)."""

    config: ConstructConfig
    scorer: AcceptabilityScorer | None = None
    embedder: Embedder | None = None
    persons: PersonDetector = field(init=False)

    def __post_init__(self) -> None:
        c = self.config
        self.persons = PersonDetector(c.wordnet_dir, c.person_lexfile, c.extra_person_synsets)
        self.reasoning = ReasoningLanguage(c.positional_words)
        self.body_parts = BodyParts(c.body_parts)
        self.transitive = TransitiveVerbs(c.transitive_verbs)
        self.articles = Articles(c.uncountable_nouns)
        self.embedder = self.embedder or Embedder(c.sbert_model)

    @cached_property
    def grammar(self) -> AcceptabilityScorer:
        return self.scorer or make_scorer(self.config)

    def is_person(self, obj: VGObject) -> bool:
        return self.persons.is_person(obj.synsets)

    def clean_attributes(self, obj: VGObject) -> list[str]:
        """The object's attributes without reasoning language, in annotation order."""
        return [a for a in obj.attributes if self.reasoning.reason(a) is None]


# --- AP ----------------------------------------------------------------------------------------


def ap_sets(image: VGImage, res: Resources, report: Report) -> list[CaptionSet]:
    """Candidate AP sets: person-person relationships with a transitive verb (steps 1-4)."""
    sets: list[CaptionSet] = []
    seen: set[tuple[str, ...]] = set()
    for rel in image.relationships:
        report.add("relationships", "read")
        made = _ap_set(image, rel, res)
        if isinstance(made, str):
            report.add("relationships", f"dropped: {made}")
            continue
        report.add("relationships", "kept")
        report.add("sets", "built")
        if tuple(made.captions) in seen:
            report.add("sets", "dropped: duplicate of another set of the image")
            continue
        seen.add(tuple(made.captions))
        sets.append(made)
    return sets


def _ap_set(image: VGImage, rel: VGRelationship, res: Resources) -> CaptionSet | str:
    """The AP set of one relationship, or the reason it is dropped."""
    subject, obj = image.objects[rel.subject_id], image.objects[rel.object_id]
    if not res.is_person(subject):
        return "subject is not a person"
    if not res.is_person(obj):
        return "object is not a person"
    if subject.object_id == obj.object_id:
        return "subject and object are the same object"
    clean = clean_predicate(rel.predicate, tuple(tokens_of(obj.name)))
    if clean.verb is None:
        return "predicate is not a verb"
    if clean.verb not in res.transitive:
        return "not a transitive verb"
    if clean.passive:
        subject, obj = obj, subject
    reason = res.reasoning.reason(f"{rel.predicate} {subject.name} {obj.name}")
    if reason:
        return f"reasoning language ({reason})"
    minimum = res.config.min_person_area
    if min(area_ratio(subject, image), area_ratio(obj, image)) < minimum:
        return "person too small"
    people = _distinguish(subject, obj, res)
    if people is None:
        return "same noun and no distinguishing attribute"
    agent, patient = people
    captions = active_passive(agent, clean.verb, patient)
    if not same_words(captions):
        return "false sentences do not use the true sentences' words"
    return CaptionSet(image.image_id, captions, clean.verb.present(), (rel.relationship_id,))


def _distinguish(subject: VGObject, obj: VGObject, res: Resources) -> tuple[Person, Person] | None:
    """Noun phrases for the two persons; same nouns need a distinguishing attribute."""
    s_phrase, o_phrase = subject.name, obj.name
    if subject.name == obj.name:
        s_attrs, o_attrs = res.clean_attributes(subject), res.clean_attributes(obj)
        s_own = next((a for a in s_attrs if a not in o_attrs and a != subject.name), None)
        o_own = next((a for a in o_attrs if a not in s_attrs and a != obj.name), None)
        if s_own is None and o_own is None:
            return None
        s_phrase, o_phrase = noun_phrase(subject.name, s_own), noun_phrase(obj.name, o_own)
    return (
        Person(s_phrase, is_plural(subject.name, PLURAL_ONLY)),
        Person(o_phrase, is_plural(obj.name, PLURAL_ONLY)),
    )


# --- CO / RC -----------------------------------------------------------------------------------


def pair_sets(image: VGImage, task: str, res: Resources, report: Report) -> list[CaptionSet]:
    """Candidate CO or RC sets: two distinct persons with two unique attributes each."""
    people = _persons_with_attributes(image, res, report)
    if len(people) < 2:
        return []
    config, sets = res.config, []
    for (p1, a1), (p2, a2) in itertools.combinations(people, 2):
        if box_overlap(p1, p2) >= config.max_box_overlap:
            report.add("person pairs", "dropped: boxes overlap (same person)")
            continue
        u1, u2 = unique_across(
            a1, a2, res.embedder, config.unique_sbert_similarity, config.unique_first_n
        )
        if len(u1) < 2 or len(u2) < 2:
            report.add("person pairs", "dropped: fewer than two unique attributes per person")
            continue
        report.add("person pairs", "kept")
        person1, person2 = _pair_phrases(p1, p2, task, config.rc_neutral_noun)
        template = coordination if task == "co" else relative_clause
        pairs1, pairs2 = itertools.combinations(u1, 2), itertools.combinations(u2, 2)
        for f1, f2 in itertools.product(pairs1, pairs2):
            report.add("sets", "built")
            if len(sets) >= config.max_sets_per_image:
                report.add("sets", "dropped: over the maximum sets per image")
                continue
            captions = template(person1, f1, person2, f2)
            if not same_words(captions):
                report.add("sets", "dropped: false sentences do not use the true sentences' words")
                continue
            ids = tuple(a.relationship_id for a in (*f1, *f2))
            sets.append(CaptionSet(image.image_id, captions, "", ids))
    return sets


def _pair_phrases(p1: VGObject, p2: VGObject, task: str, neutral: str) -> tuple[Person, Person]:
    plural1, plural2 = is_plural(p1.name, PLURAL_ONLY), is_plural(p2.name, PLURAL_ONLY)
    n1, n2 = p1.name, p2.name
    if task == "rc" and n1 != n2 and not plural1 and not plural2:
        n1 = n2 = neutral  # the release writes "the person who ..." when the nouns differ
    return Person(n1, plural1), Person(n2, plural2)


def _persons_with_attributes(
    image: VGImage, res: Resources, report: Report
) -> list[tuple[VGObject, list[Attribute]]]:
    """Persons (subjects, in order of first appearance) with >= 2 deduplicated attributes."""
    by_subject: dict[int, list[VGRelationship]] = {}
    for rel in image.relationships:
        report.add("relationships", "read")
        if not res.is_person(image.objects[rel.subject_id]):
            report.add("relationships", "dropped: subject is not a person")
            continue
        by_subject.setdefault(rel.subject_id, []).append(rel)
    config, people = res.config, []
    for subject_id, rels in by_subject.items():
        person = image.objects[subject_id]
        if len(rels) < config.min_relations_per_person:
            _drop_person(report, rels, "fewer than two relationships")
            continue
        if area_ratio(person, image) < config.min_person_area:
            _drop_person(report, rels, "person too small")
            continue
        attributes = []
        for rel in rels:
            made = _attribute(image, rel, person, res)
            if isinstance(made, str):
                report.add("relationships", f"dropped: {made}")
            else:
                report.add("relationships", "kept")
                attributes.append(made)
        kept, dropped = deduplicate(attributes, res.embedder, config.dedup_last_word_similarity)
        for reason in (reason for _dropped, reason in dropped):
            report.add("attributes", f"dropped: {reason}")
        report.add("attributes", "kept", len(kept))
        if len(kept) < 2:
            report.add("persons", "dropped: fewer than two distinct attributes")
            continue
        report.add("persons", "kept")
        people.append((person, kept))
    return people


def _drop_person(report: Report, rels: list[VGRelationship], reason: str) -> None:
    report.add("persons", f"dropped: {reason}")
    report.add("relationships", f"dropped: {reason} (person)", len(rels))


def _attribute(
    image: VGImage, rel: VGRelationship, person: VGObject, res: Resources
) -> Attribute | str:
    """The attribute phrase of one relationship of ``person``, or the reason it is dropped."""
    obj = image.objects[rel.object_id]
    clean = clean_predicate(rel.predicate, tuple(tokens_of(obj.name)))
    if clean.verb is None:
        return "predicate is not a verb"
    if clean.passive:
        return "passive predicate (the person is not the agent)"
    reason = res.reasoning.reason(f"{rel.predicate} {obj.name}")
    if reason:
        return f"reasoning language ({reason})"
    if not obj.name or obj.name in res.body_parts:
        return "body part" if obj.name else "object has no name"
    if area_ratio(obj, image) < res.config.min_object_area:
        return "object too small"
    adjective = next((a for a in res.clean_attributes(obj) if a not in obj.name.split()), None)
    complement = res.articles.complement(adjective, obj.name, is_plural(obj.name, PLURAL_ONLY))
    return Attribute(clean.verb, complement, rel.relationship_id)


# --- the run -----------------------------------------------------------------------------------

CANDIDATE_BUILDERS = {
    "ap": lambda image, task, res, report: ap_sets(image, res, report),
    "co": pair_sets,
    "rc": pair_sets,
}
"""Task code -> the function building one image's candidate sets (its templates). A task of the
registry (:mod:`bla_metric.tasks`) can be constructed once it has an entry here."""


def task_codes() -> tuple[str, ...]:
    """Codes of the registered tasks that can be constructed, in registry order."""
    return tuple(code for code in TASKS if code in CANDIDATE_BUILDERS)


def candidates(image: VGImage, task: str, res: Resources, report: Report) -> list[CaptionSet]:
    """Candidate sets of one image for ``task`` (steps 1-4), counting images with two persons."""
    persons = sum(res.is_person(o) for o in image.objects.values())
    if persons < 2:
        report.add("images", "dropped: fewer than two persons")
        return []
    made = CANDIDATE_BUILDERS[task](image, task, res, report)
    if not made:
        report.add("images", "dropped: no candidate set")
    return made


def select(
    by_image: dict[int, list[CaptionSet]], task: str, res: Resources, report: Report
) -> list[CaptionSet]:
    """Step 5: score every sentence; drop sets with a sentence <= threshold; best mean per image.

    With ``grammar_scorer="none"`` the filter is off: the first candidate set of each image is kept
    and ``grammar_scores`` stay null.
    """
    if res.config.grammar_scorer == NO_GRAMMAR and res.scorer is None:
        for sets in by_image.values():
            report.add(
                "sets",
                "dropped: not the first set of its image (grammar filter off)",
                len(sets) - 1,
            )
            report.add("sets", "kept")
            report.add("images", "kept")
        return [sets[0] for sets in by_image.values()]
    sentences = sorted(
        {c for sets in by_image.values() for s in sets for c in s.captions},
        key=lambda s: (len(s), s),
    )
    scores = dict(zip(sentences, res.grammar.score(sentences), strict=True))
    threshold, kept = res.config.threshold(task, getattr(res.grammar, "name", None)), []
    for sets in by_image.values():
        for s in sets:
            s.scores = [float(scores[c]) for c in s.captions]
        passing = [s for s in sets if min(s.scores) > threshold]
        failed = len(sets) - len(passing)
        report.add("sets", "dropped: a sentence scores <= grammar threshold", failed)
        if not passing:
            report.add("images", "dropped: every set fails the grammar filter")
            continue
        best = max(passing, key=lambda s: s.mean_score)  # first of equals wins
        report.add("sets", "dropped: not the best-scored set of its image", len(passing) - 1)
        report.add("sets", "kept")
        report.add("images", "kept")
        kept.append(best)
    return kept


def construct(
    vg_dir: Path,
    task: str,
    config: ConstructConfig | None = None,
    *,
    scorer: AcceptabilityScorer | None = None,
    embedder: Embedder | None = None,
    limit: int | None = None,
    progress: bool = True,
) -> ConstructResult:
    """Run the whole pipeline for ``task`` ("ap", "co" or "rc") over the images in ``vg_dir``."""
    if task not in task_codes():
        raise ValueError(f"unknown task {task!r}: use one of {', '.join(task_codes())}")
    res = Resources(config or ConstructConfig(), scorer, embedder)
    report = Report()
    by_image: dict[int, list[CaptionSet]] = {}
    images: Iterable[VGImage] = iter_images(Path(vg_dir), limit)
    for image in tqdm(images, desc=f"construct {task}", unit="img", disable=not progress):
        report.add("images", "read")
        made = candidates(image, task, res, report)
        if made:
            by_image[image.image_id] = made
    kept = select(by_image, task, res, report) if by_image else []
    name = (
        ""
        if not by_image or res.config.grammar_scorer == NO_GRAMMAR and scorer is None
        else (getattr(res.grammar, "name", type(res.grammar).__name__))
    )
    return ConstructResult(kept, by_image, report, name)
