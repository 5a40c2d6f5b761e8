"""The building blocks of a relation read off a parse: a :class:`Triple` (subject -[predicate]-> object, with its
sentence), the predicate's words as written, and the relations a prepositional phrase gives. Shared by the verb
clauses (:mod:`kg_rag.ingest.nlp.clauses`) and the verbless phrases (:mod:`kg_rag.ingest.nlp.nouns`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kg_rag.ingest.nlp.parse import Parse
from kg_rag.ingest.nlp.refs import (
    RELATIVES,
    Passage,
    Ref,
    refs_of,
)
from kg_rag.ingest.nlp.spans import ARTICLES
from kg_rag.ingest.nlp.things import THING
from kg_rag.model.predicates import ROLE_MODIFIERS

DIRECT, RESOLVED = 1.0, 0.8
"""Confidence of a relation whose ends are both written as names, and of one where an end was resolved from a
pronoun, a description or a clause it belongs to."""


BIRTH = frozenset({"born", "b."})


@dataclass(frozen=True, slots=True)
class Triple:
    source: Ref
    predicate: str
    target: Ref
    evidence: str

    @property
    def confidence(self) -> float:
        return RESOLVED if self.source.resolved or self.target.resolved else DIRECT


# ------------------------------------------------------------------ predicates
_CONTRACTED = {
    "'s": "is",
    "’s": "is",
    "'re": "are",
    "’re": "are",
    "'ve": "have",
    "’ve": "have",
    "n't": "not",
    "n’t": "not",
}


def article(d: Parse, noun: int, prep: int) -> list[str]:
    """The article of a noun before "by" ("published a novel by X", "from a screenplay by X"): kept in the
    predicate, it says the verb is active and "by" names the noun's maker, not an agent, which the typer would
    read in "published novel by" (:attr:`~kg_rag.model.predicates.PredicateForm.active`)."""
    if d.lower[prep] != "by":
        return []
    return [d.lower[k] for k in d.kids(noun, "det") if d.lower[k] in ARTICLES]


def predicate_of(d: Parse, group: list[int], *rest: int | str) -> str:
    """The predicate: the verb group in its order, then what follows it in the order it is said (a fronted
    preposition, ``Via the river, X is ...``, still follows the verb); contractions written out (``'s`` -> ``is``)."""
    words = (w if isinstance(w, str) else d.lower[w] for w in [*sorted(group), *rest])
    return " ".join(_CONTRACTED.get(w, w) for w in words)


def noun_words(d: Parse, n: int) -> list[int]:
    """A relational noun with the words that make it one (``impact factor``, ``head coach``, ``deputy mayor``:
    an adjective that changes the relation, :data:`~kg_rag.model.predicates.ROLE_MODIFIERS`), no numbers."""
    words = [c for c in d.kids(n, "compound") if c < n and not d.num[c] and d.pos[c] != "PROPN"]
    words += [c for c in d.kids(n, "amod") if c < n and d.lower[c] in ROLE_MODIFIERS]
    return [*sorted(words), n]


def role_words(d: Parse, n: int) -> list[str]:
    """A role noun held of something, in its singular, with the words that make it that role ("served as vice
    chairs of" holds *vice chair*)."""
    return [d.lower[c] for c in noun_words(d, n)[:-1]] + [d.lemma(n)]


def relative(d: Parse, prep: int) -> bool:
    """``in which``, ``by whom``: a preposition fronted with the relative pronoun it governs."""
    return any(d.lower[o] in RELATIVES for o in d.kids(prep, "pobj"))


def prep_objects(p: Passage, prep: int) -> list[Ref]:
    return [r for o in p.doc.kids(prep, "pobj") for r in refs_of(p, o)]


def emit(subjects: list[Ref], predicate: str, objects: list[Ref], evidence: str) -> Iterator[Triple]:
    for s in subjects:
        if s.is_value:
            continue
        for o in objects:
            if o.name.casefold() != s.name.casefold():
                yield Triple(s, predicate, o, evidence)


def via(p: Passage, subjects: list[Ref], words: str, prep: int, evidence: str) -> Iterator[Triple]:
    """The relations a prepositional phrase gives: to the entities it governs, or through a generic noun with a
    preposition of its own (``on behalf of X``, ``in collaboration with X``). A time after "by" is a deadline, not
    an agent ("by the 6th century BC it was replaced by ...", "by early 2011 ... took charge"): no relation —
    unless the parse reads a passive's agent there and no number says it is a time (the recogniser calls "the
    Qing dynasty" a date). A "by" before its verb is never the agent ("By the Late Middle Ages, Britain was
    separated"; an agent follows the passive it completes)."""
    d = p.doc
    objects = prep_objects(p, prep)
    if d.lower[prep] == "by":
        relative = any(d.tag[o] in ("WDT", "WP") for o in d.kids(prep, "pobj"))  # "by which it was acquired"
        if prep < d.head[prep] and not relative:  # "By the Late Middle Ages, Britain was separated": not an agent
            return
        times = [r.name for r in objects if r.label in ("DATE", "TIME")]
        if times and (d.dep[prep] != "agent" or any(ch.isdigit() for t in times for ch in t)):
            return
    if objects and all(r.label == THING for r in objects):
        named = [t for o in d.kids(prep, "pobj") for t in behind_thing(p, subjects, words, o, evidence)]
        if named:
            yield from named
            return
    if objects:
        yield from emit(subjects, words, objects, evidence)
        return
    for o in d.kids(prep, "pobj"):
        if d.pos[o] == "NOUN":
            yield from _through(p, subjects, words, o, evidence)


def behind_thing(p: Passage, subjects: list[Ref], words: str, noun: int, evidence: str) -> list[Triple]:
    """The named ends behind a thing's own prepositions ("found the sea route to India", "grew up in a log cabin in
    Kentucky"): they say more than the thing, and stand in its place when there are any."""
    return [t for t in _through(p, subjects, words, noun, evidence) if t.target.label != THING]


STAFF = frozenset(
    """researcher scientist engineer developer scholar student staff employee member team group lab laboratory
    physician doctor astronomer economist investigator analyst""".split()
)
"""Nouns for a body's people: what they did "at X" a passive may credit to X ("developed by engineers at Google");
"of" and "from" name a teacher, a band or a country as often ("a student of Socrates")."""


def _through(p: Passage, subjects: list[Ref], words: str, noun: int, evidence: str) -> Iterator[Triple]:
    """Through a noun with a preposition of its own: ``on behalf of X`` is ``words + behalf of`` X."""
    d = p.doc
    for inner in d.kids(noun, "prep"):
        if words.endswith(" by") and d.lemma(noun) in STAFF and d.lower[inner] == "at":
            yield from emit(subjects, words, prep_objects(p, inner), evidence)  # "created by researchers at
            continue  # Stanford": the body they work at did it (not "a student of Socrates", "a member of Queen")
        said = [*article(d, noun, inner), *(d.lower[w] for w in noun_words(d, noun))]
        yield from emit(subjects, f"{words} {' '.join(said)} {d.lower[inner]}", prep_objects(p, inner), evidence)


def places_in(p: Passage, prep: int) -> list[Ref]:
    """The places an ``in`` phrase governs when it governs places only (else none): "X is in New York" says where
    X is located (a copula with "in" says nothing more; "was in the army" or "in 1990" is no location)."""
    if p.doc.lower[prep] not in ("in", "within"):
        return []
    objects = prep_objects(p, prep)
    return objects if objects and all(r.label == "LOCATION" for r in objects) else []


def describe(p: Passage, name: str, n: int) -> None:
    """Note the passage's description of ``name`` (its first): a noun phrase headed by a word, not a figure
    ("the United States, 3.1 %" describes nothing)."""
    if p.doc.alpha[n]:
        p.descriptions.setdefault(name, _description(p.doc, n))


def _description(d: Parse, n: int) -> str:
    """The noun phrase a copula or apposition describes an entity with, without its clauses (``a peer-reviewed
    journal``)."""
    return " ".join(d.span_text(d.left_edge(n), n + 1).split())[:200]
