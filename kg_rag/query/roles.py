"""The part a named entity plays in the relation a question asks about: "Who founded Publix?" asks for
``X -[FOUNDED]-> Publix``, and ``Publix -[FOUNDED]-> Y`` answers another question. A question's grammar gives the
relation a direction, as a sentence's does (direction is meaning on the question's side too); a type says which of
its ends acts. :func:`reads_backwards` joins the two for :func:`kg_rag.query.select.backwards_relations`."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from functools import lru_cache

from kg_rag.model.lemmas import lemma
from kg_rag.model.names import CURATED_PASSIVES, DEFAULT_RELATION_PATTERNS, RELATED, canonical_key
from kg_rag.model.predicates import FILLER, PREPOSITIONS, past_participle, tokens
from kg_rag.query.relation_match import RELATION_NOUNS, STOP_WORDS, bare_word

AGENT = "agent"
PATIENT = "patient"
_AUX = frozenset("did does do has have had will would can could should might may must".split())
_BE = frozenset("was were is are been be".split())
_WH = frozenset("who whom what which whose".split())
_CLAUSE = frozenset("and or but which who whom whose that when where what while".split())
"""Words that open another clause: a role read in one clause says nothing about the next."""
SYMMETRIC = frozenset(
    "border adjoin neighbour neighbor marry wed meet divorce date debate befriend ally partner play face fight "
    "compete rival tie merge collaborate correspond negotiate sign sibling spouse".split()
)
"""Verbs whose two ends do the same to each other ("Which state borders Tennessee?" is answered by a state
*bordered by* Tennessee as well): no end acts, so no edge reads them backwards."""
_AGENT_ENDINGS = ("er", "or", "ist")
_AGENT_NOUNS = frozenset(("founder", "owner", "author", "successor", "predecessor"))
"""Agent nouns whose length or ending says nothing."""
_PASSIVE_AUX = frozenset("be been being get got gotten".split())
"""Words of a passive after another auxiliary: "has X been revoked by", "did X get acquired by"."""
_ARTICLES = frozenset("the a an".split())


def _agent_noun(word: str) -> bool:
    """A noun for whoever does what a verb says (*performer*, *founder*, *manager*): "the performer of X" asks for
    whoever performed X. An event noun is none: "Microsoft's offer", "Oprah Winfrey's endorsement" are what the
    possessor did (*offer*, *order*: five letters or fewer, as few agent nouns are)."""
    return word in _AGENT_NOUNS or (len(word) > 5 and word.endswith(_AGENT_ENDINGS) and word not in STOP_WORDS)


def question_roles(question: str, named: Iterable[str]) -> dict[str, dict[str, str]]:
    """For each named entity (by canonical key), the part it plays in the relations the question asks about, by
    relation word: ``agent`` when it does what the word says, ``patient`` when it undergoes it. The answer is then
    the other end, so an edge of the asked type that has the named entity at the wrong end answers another
    question (a question's grammar gives the direction, as a sentence's does).

    Read from the question's shape, for a verb or an agent noun next to the name:

    - "Who founded X?", "Which directive replaced X?" (the asked thing is the subject): X is the patient;
    - "What did X revoke?", "Who does X report to?" (X is the subject after an auxiliary): X is the agent;
    - "Who was X founded by?" (X is a passive's subject): the patient; "... founded by X": the agent;
    - "the performer of X", "X's manager" (an agent noun of X): X is the patient.

    Anything else says nothing (an empty mapping), and no edge is filtered by it."""
    written = tokens(question)
    words = [bare_word(w) for w in written]
    owned = [w != b for w, b in zip(written, words)]
    roles: dict[str, dict[str, str]] = {}
    for name in named:
        span = _find(words, tokens(name))
        if span is None:
            continue
        found = _roles_at(words, owned, *span)
        if found:
            roles[canonical_key(name)] = found
    return roles


def _find(words: list[str], name: list[str]) -> tuple[int, int] | None:
    name = [bare_word(w) for w in name]
    n = len(name)
    for i in range(len(words) - n + 1):
        if n and words[i : i + n] == name:
            return i, i + n
    return None


def _relation_lemmas(word: str) -> list[str]:
    return [lemma(word), *RELATION_NOUNS.get(word, ())]


def _roles_at(words: list[str], owned: list[bool], start: int, end: int) -> dict[str, str]:
    out: dict[str, str] = {}

    def put(word: str, role: str) -> None:
        if len(word) >= 3 and word not in STOP_WORDS and word not in _AUX and word not in _BE:
            for w in _relation_lemmas(word):
                if w not in SYMMETRIC:
                    out.setdefault(w, role)

    # "the performer of X", "the founder of the X"
    k = start - 1
    if k >= 1 and words[k] == "the":
        k -= 1
    if k >= 1 and words[k] == "of" and _agent_noun(words[k - 1]) and not owned[end - 1]:  # not "of X's country"
        put(words[k - 1], PATIENT)
    # "X's manager", "X's first owner"
    if owned[end - 1]:
        for w in words[end : end + 2]:
            if _agent_noun(w):
                put(w, PATIENT)
                break
    # "... founded by X": X is the agent of a passive
    if start >= 2 and words[start - 1] == "by" and past_participle(words[start - 2]):
        put(words[start - 2], AGENT)
    first = 1 if words and words[0] not in _WH and len(words) > 1 and words[1] in _WH else 0  # "In which ..."
    if not words or words[first] not in _WH:
        return out
    # "Who founded X?", "Which directive replaced X?": the asked thing is the subject of an active verb
    for j in range(first + 1, min(first + 4, start)):
        w = words[j]
        if w in _AUX or w in _BE:
            break
        # after "what" or "which" a plural is the asked thing's noun ("What products does Apple sell?")
        if past_participle(w) or (_third_person(w) and (words[first] == "who" or j > first + 1)):
            between = words[j + 1 : start]
            if (
                all(b in _ARTICLES or b in PREPOSITIONS for b in between)
                and not owned[end - 1]
                and not (end < len(words) and past_participle(words[end]))
            ):  # the name is the verb's object: not "the film Clint Eastwood starred in", "Apple's iPhone"
                put(w, PATIENT)
            break
    # "What did X revoke?", "Who does X ultimately report to?": X is the subject after an auxiliary
    aux = next((j for j in range(first + 1, min(first + 5, start)) if words[j] in _AUX or words[j] in _BE), None)
    if aux is None:
        return out
    between = words[aux + 1 : start]
    if between not in ([], ["the"]) or owned[end - 1]:  # "did X's team play": the team is the subject
        return out
    after = list(itertools.takewhile(lambda w: w not in _CLAUSE, words[end : end + 4]))  # the verb, a particle
    if words[aux] in _BE or _PASSIVE_AUX & set(after):  # "Who was X founded by?", "What has X been revoked by?",
        by = "by" in after or (first == 1 and words[0] == "by")  # "By whom was X founded?": a passive's subject
        for w in after:
            if past_participle(w) and by:
                put(w, PATIENT)
        return out
    verb = next((w for w in after if w not in FILLER and w not in PREPOSITIONS and not w.endswith("ly")), None)
    if verb is not None:  # "Who does X ultimately report to?": the verb, not the words after it
        put(verb, AGENT)
    return out


@lru_cache(maxsize=16384)
def type_voice(relation_type: str) -> str | None:
    """Which end of a type's edge does what its verb says: ``"active"`` (the source: ``FOUNDED``, ``SUPERSEDES``,
    ``REPORTS_TO``), ``"passive"`` (the target: ``FOUNDED_BY``), or ``None`` when the type does not say
    (``FOUNDED_IN`` may be a reduced passive, ``WAS_ELECTED``'s target is an office, ``SPOUSE`` has no agent,
    ``MEMBERS`` may be a noun, ``MARRIED`` and ``BORDERED_BY`` are :data:`SYMMETRIC`)."""
    verb = relation_type.casefold().split("_")[0]
    if lemma(verb) in SYMMETRIC or verb in SYMMETRIC:
        return None  # "MARRIED", "BORDERED_BY": neither end acts on the other
    return _voice(relation_type)


def _voice(relation_type: str) -> str | None:
    if relation_type in CURATED_PASSIVES or relation_type in _CURATED_ACTIVE:
        return "active"
    if relation_type in _CURATED_PASSIVE_TYPES:
        return "passive"
    parts = relation_type.casefold().split("_")
    if len(parts) >= 2 and parts[-1] == "by" and past_participle(parts[-2]):
        return "passive"
    if len(parts) == 1 and relation_type != RELATED and parts[0].endswith("ed") and lemma(parts[0]) != parts[0]:
        return "active"  # a past verb alone: "X founded Y" (a plural noun, "MEMBERS", says nothing)
    return None  # "X was elected": the target of WAS_ELECTED is the office, not who elected


_CURATED_PASSIVE_TYPES = frozenset(CURATED_PASSIVES.values())
_NOT_VERBS = frozenset({"PART_OF", "MEMBER_OF", "LOCATED_IN"})
_CURATED_ACTIVE = frozenset(
    t for t in DEFAULT_RELATION_PATTERNS.values() if t not in _CURATED_PASSIVE_TYPES and t not in _NOT_VERBS
)
"""The curated vocabulary's verbs (``REPORTS_TO``, ``CREATED``); ``PART_OF``, ``MEMBER_OF`` and ``LOCATED_IN`` name
no doer."""


def _third_person(word: str) -> bool:
    return word.endswith("s") and not word.endswith("ss") and lemma(word) != word


def reads_backwards(relation_type: str, named_is_source: bool, role: str) -> bool:
    """Whether an edge of ``relation_type`` with the named entity at its source (or target) puts that entity in
    the other part than the question gives it (``role``)."""
    voice = type_voice(relation_type)
    if voice is None:
        return False
    agent_at_source = voice == "active"
    return (named_is_source == agent_at_source) != (role == AGENT)
