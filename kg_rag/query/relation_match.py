"""Questions name relations: "spouse", "born", "capital", "replaced". Match the question's words against the
relation types (and their predicates and curated phrases), so edges of the asked-for types can be preferred.

A question word matches a type when their lemmas are equal, when one derives from the other (``performer`` /
``PERFORMED_BY``, ``composer`` / ``COMPOSED_BY``, ``citizen`` / ``CITIZEN_OF``: a shared stem of at least
five letters), when a curated phrase of the type uses it (``replaced`` -> ``SUPERSEDES``), or through the
few relation nouns whose verb looks different (``birth`` -> ``born``, ``wife`` -> ``married``). Words that
are part of an entity the question names, and stop-words, never match.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from kg_rag.model.lemmas import lemma
from kg_rag.model.names import CURATED_PASSIVES, DEFAULT_RELATION_PATTERNS, canonical_key
from kg_rag.model.predicates import FUNCTION_WORDS, PREPOSITIONS, analyse, tokens

STOP_WORDS = frozenset(
    """a an the of in on at to for and or is was are were be been by with from as it its this that who what
    which when where why how whom whose did does do has have had not no yes he she they them his her their i
    you we us one two also than then there here many much name named kind type year years time same other
    last first city country state county person people place area company""".split()
)
RELATION_NOUNS: dict[str, tuple[str, ...]] = {
    "birth": ("born", "bear"),
    "birthplace": ("born", "bear"),
    "wife": ("marry", "spouse"),
    "husband": ("marry", "spouse"),
    "spouse": ("marry", "spouse"),
    "death": ("die",),
    "founder": ("found", "establish"),
    "owner": ("own",),
    "successor": ("succeed", "supersede", "replace"),
    "predecessor": ("precede",),
    "child": ("child", "son", "daughter", "parent"),
    "parent": ("parent", "father", "mother", "child"),
}
"""Relation nouns whose verb is spelled differently (the few a shared stem cannot catch)."""

_CURATED: dict[str, set[str]] = {}
for _phrase, _type in DEFAULT_RELATION_PATTERNS.items():
    for _t in (_type, CURATED_PASSIVES.get(_type)):  # "replaced" asks for SUPERSEDES and SUPERSEDED_BY
        if _t is not None:
            _CURATED.setdefault(_t, set()).update(w for w in analyse(_phrase).key if w not in PREPOSITIONS)


def question_relation_words(question: str, named: Iterable[str] = ()) -> frozenset[str]:
    """Lemmas of the question's words that can name a relation (not stop-words, not in a named entity)."""
    named_words = {w for name in named for w in canonical_key(name).split()}
    words = set()
    for w in map(bare_word, tokens(question)):
        if len(w) < 3 or w in STOP_WORDS or w in named_words or w.isdigit():
            continue
        words.add(lemma(w))
        words.update(RELATION_NOUNS.get(w, ()))
    return frozenset(words)


def bare_word(word: str) -> str:
    """A word without its possessive *'s* ("Lars's" -> "lars")."""
    return word[:-2] if word.endswith(("'s", "’s")) else word


@lru_cache(maxsize=65536)
def _type_words(relation_type: str) -> frozenset[str]:
    words = {lemma(w) for w in relation_type.lower().split("_") if len(w) >= 3 and w not in STOP_WORDS}
    words.discard("")
    return frozenset(words | _CURATED.get(relation_type, set()))


def _related(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    return len(short) >= 5 and long_.startswith(short[:5]) and len(long_) - len(short) <= 4


@lru_cache(maxsize=65536)
def matches(words: frozenset[str], relation_type: str, predicate: str | None = None) -> bool:
    """Whether a relation of this type (and predicate) is one the question asks about."""
    if not words:
        return False
    candidates = set(_type_words(relation_type))
    if predicate:
        candidates |= {w for w in analyse(predicate).key if w not in PREPOSITIONS and len(w) >= 3}
    return any(_related(q, t) for q in words for t in candidates)


_HOW_MUCH = re.compile(r"\bhow (many|much|long|old|far|tall|big|large|high|deep|wide|often)\b", re.IGNORECASE)
"""*how* with a measure asks for a quantity wherever it stands (it is never a relative)."""
_WHAT_TIME = re.compile(
    r"\b(what|which) (year|years|date|day|month|century|decade|age|amount|number|percentage)\b"
    r"|\b(what|which) (is|was|are|were) the (year|date|population|number|amount|total|percentage)\b",
    re.IGNORECASE,
)
"""*what* / *which* with a time or quantity noun ("In what year", "What is the population of")."""
_WHEN = re.compile(r"(?:^|[.;:!?]\s+)\W*(?:and |but |so )?when\b|\bwhen\s*\?\s*$", re.IGNORECASE)
"""*when* opening the question or a sentence of it, or closing it ("Italy entered the war when?"); elsewhere it
joins a clause ("Who was president when the state was admitted?" asks for a person)."""


def asks_for_value(question: str) -> bool:
    """Whether the question asks for a date or a quantity ("When did ...", "In what year ...", "How many ...",
    "... has how many districts?"). The answer is then a value (:func:`kg_rag.query.senses.value_name`), and a
    relation ending at one is of the asked kind, as a relation of an asked type is."""
    text = " ".join(str(question).split())
    return bool(_HOW_MUCH.search(text) or _WHAT_TIME.search(text) or _WHEN.search(text))


_COUNTED = re.compile(r"\bhow (?:many|much)\s+((?:[a-z][\w'-]*\s*){1,3})", re.IGNORECASE)


def counted_words(question: str) -> frozenset[str]:
    """Lemmas of the words that say what a "how many" question counts ("... has how many congressional
    districts?" -> ``congressional``, ``district``), up to three, stopping at a function word: the answer is a
    number of that thing, written "4 congressional districts" as often as "4" (see
    :func:`~kg_rag.query.senses.count_of`)."""
    m = _COUNTED.search(" ".join(str(question).split()))
    if not m:
        return frozenset()
    words = []
    for w in tokens(m.group(1)):
        if w in FUNCTION_WORDS:
            break
        words.append(lemma(w))
    return frozenset(words)


class TypeIndex:
    """The words of every type of a vocabulary, indexed by word and by five-letter stem, so finding the types
    a question names costs a few dictionary lookups instead of a scan of the vocabulary."""

    def __init__(self, types: Iterable[str]) -> None:
        self.types = frozenset(types)
        self.by_word: dict[str, set[str]] = {}
        self.by_stem: dict[str, list[tuple[str, str]]] = {}
        """Five-letter stem -> ``(word, type)`` for the types' words of at least five letters."""
        for t in self.types:
            for w in _type_words(t):
                self.by_word.setdefault(w, set()).add(t)
                if len(w) >= 5:
                    self.by_stem.setdefault(w[:5], []).append((w, t))

    def types_for(self, words: frozenset[str]) -> frozenset[str]:
        """The types :func:`matches` finds for ``words``: a question word equal to a word of the type, or
        related to one (:func:`_related` needs five letters in common at the start, so only that stem's words
        are tested)."""
        found: set[str] = set()
        for q in words:
            found |= self.by_word.get(q, set())
            if len(q) >= 5:
                found.update(t for w, t in self.by_stem.get(q[:5], ()) if _related(q, w))
        return frozenset(found)


_INDEXES: dict[str, TypeIndex] = {}


def type_index(types: Iterable[str], version: str = "") -> TypeIndex:
    """The word index of a vocabulary (cached by ``version``; built anew without one)."""
    index = _INDEXES.get(version) if version else None
    if index is None:
        index = TypeIndex(types)
        if version:
            if len(_INDEXES) > 16:
                _INDEXES.clear()
            _INDEXES[version] = index
    return index
