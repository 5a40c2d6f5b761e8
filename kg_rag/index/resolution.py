"""Entity resolution at index time: spelling variants of one thing become one entity.

Canonical keys already merge case and punctuation variants (``the United States`` / ``The United States``). This
merges the *other* spellings of one name — an acronym and its expansion (``U.S.``, ``US`` -> *United States*;
``USA``, ``U.S.A.`` -> *United States of America*), an acronym written with and without dots, a name with and
without a leading article, a name with and without ``of`` and the place or body it belongs to when no other thing
of that name is written (*United States of America* -> *United States*), a company's name with and without its
legal form (*NVIDIA Corporation* -> *NVIDIA*) — when the evidence agrees:

- a **name rule** relates the two spellings (one of the above);
- their **embeddings** are similar (at least :data:`MIN_SIMILARITY`; for an expansion, ``of`` plus more words,
  :data:`QUALIFIED_SIMILARITY`), and the acronym's expansion is the only one that is;
- their **entity types** agree (the same type, or one untyped);
- the **sense guard** holds (:mod:`kg_rag.query.senses`' rules): both are names (a capital or a digit: a kind —
  "unincorporated community" — is never one thing), any numbers they carry are the same, and no encyclopedia
  qualifier tells them apart (*Rochester, New York* is not *Rochester, Iowa*; a qualified name is merged with
  nothing but its own spellings).

Homonyms — one spelling, two things — are not resolved here (their key is one entity from the start); the query's
sense guard keeps their passages apart (:func:`kg_rag.query.senses.same_thing`). Decisions taken by hand
(``kg-rag entities merge`` / ``split``) are applied first and always win (:mod:`kg_rag.model.resolution`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from kg_rag.index.build import GraphIndex
from kg_rag.model.names import DEFAULT_ENTITY_TYPE, canonical_key, short_form
from kg_rag.model.resolution import Resolution, merge_entities, resolve_graph

logger = logging.getLogger(__name__)

MIN_SIMILARITY = 0.6
"""Two spellings a name rule relates are one thing when their embeddings are at least this similar."""
ACRONYM_MARGIN = 0.1
"""An acronym is merged into the expansion it is most similar to only when that one is at least this much more
similar than any other expansion of its letters (``US``: *United States* 0.80, the road *U.S. 95* 0.51)."""
QUALIFIED_SIMILARITY = 0.9
"""A name extended by ``of`` and another name needs near-identity: ``of`` usually picks one thing among several
(*Nicholas I of Russia* is one Nicholas I, *Prime Minister of India* one prime minister); only when the embeddings
hardly tell the two apart is ``of ...`` part of the name itself (*United States of America*)."""

ARTICLES = ("the", "a", "an")
_SKIP_IN_INITIALS = frozenset("of the and for de du des la le van von der da di y".split())
_ACRONYM = re.compile(r"^(?:[A-Z]\.?\s?){2,8}$")
_NUMBER = re.compile(r"\d+")
_QUALIFIED = re.compile(r"\(|, ")


@dataclass(frozen=True)
class Candidate:
    """A proposed merge of ``key`` into ``into``, by ``rule``, at embedding similarity ``similarity``."""

    key: str
    into: str
    rule: str
    similarity: float


def acronym_letters(name: str) -> str | None:
    """``U.S.A.``, ``USA``, ``U S`` -> the letters of an acronym written in capitals; ``None`` for other names."""
    text = name.strip()
    if not _ACRONYM.match(text):
        return None
    letters = re.sub(r"[^A-Z]", "", text)
    return letters if 2 <= len(letters) <= 8 else None


def initials(name: str) -> str | None:
    """The initials of a name of at least two capitalised words (``of``, ``the``, ``and``... skipped):
    *United States of America* -> ``USA``; ``None`` when a word is neither capitalised nor skipped."""
    words = re.findall(r"[^\W\d_]+", name)
    if len(words) < 2:
        return None
    out = []
    for w in words:
        if w.lower() in _SKIP_IN_INITIALS and not w[:1].isupper() or w in ("of", "the", "and"):
            continue
        if not w[:1].isupper():
            return None
        out.append(w[0])
    return "".join(out) if len(out) >= 2 else None


def without_article(key: str) -> str | None:
    """A key without its leading article (``the united states`` -> ``united states``)."""
    first, _, rest = key.partition(" ")
    return rest if first in ARTICLES and rest else None


def of_base(key: str) -> str | None:
    """The name an ``of`` expansion qualifies: ``united states of america`` -> ``united states`` (the part before
    ``of`` must be two words or more: *University of Chicago* is not *University*)."""
    head, sep, _ = key.partition(" of ")
    return head if sep and len(head.split()) >= 2 else None


def _numbers(text: str) -> list[int]:
    return [int(x) for x in _NUMBER.findall(text)]


def _guarded(name_a: str, name_b: str) -> bool:
    """Whether the sense guard lets two names be merged (see the module docstring)."""
    for name in (name_a, name_b):
        if not any(ch.isupper() or ch.isdigit() for ch in name):
            return False  # a kind, not one thing
    if _QUALIFIED.search(name_a) or _QUALIFIED.search(name_b):
        return False  # "Rochester, New York", "Madonna (book)": a qualifier says which thing; nothing else merges
    na, nb = _numbers(name_a), _numbers(name_b)
    return not (na and nb) or na == nb


def _types_agree(a: str, b: str) -> bool:
    return a == b or DEFAULT_ENTITY_TYPE in (a, b)


def find_candidates(index: GraphIndex, resolution: Resolution | None = None, embeddings: Any = None) -> list[Candidate]:
    """The merges the name rules propose and the evidence supports (not yet applied), in a stable order.

    With ``embeddings`` the similarity is of the names themselves (``name [TYPE]``), not of the index's entity
    vectors, which also embed every description: an entity met in many passages gathers many descriptions
    (300 for *United States* in an NLP graph), and its vector drifts from its name while a one-passage spelling's
    does not."""
    kg = index.kg
    nodes = kg.graph.nodes
    keys = [k for k in nodes if k in index.entities.position]
    name = {k: nodes[k]["name"] for k in keys}
    vectors = index.entities
    position = vectors.position
    named: dict[str, np.ndarray] = {}

    def similarity(a: str, b: str) -> float:
        if embeddings is not None:
            return float(np.dot(named[a], named[b]))
        return float(np.dot(vectors.vectors[position[a]], vectors.vectors[position[b]]))

    proposals: list[tuple[str, str, str]] = []
    key_set = set(keys)
    by_initials: dict[str, list[str]] = {}
    acronyms: dict[str, list[str]] = {}
    for k in keys:
        letters = acronym_letters(name[k])
        if letters is not None:
            acronyms.setdefault(letters, []).append(k)
        else:
            found = initials(name[k])
            if found is not None:
                by_initials.setdefault(found, []).append(k)
        base = without_article(k)
        if base is not None and base in key_set:
            proposals.append((k, base, "article"))
        base = of_base(k)
        if base is not None and base in key_set:
            proposals.append((k, base, "of"))
        short = short_form(name[k])
        if short is not None and canonical_key(short) in key_set and canonical_key(short) != k:
            proposals.append((k, canonical_key(short), "legal form"))
    for letters, group in acronyms.items():
        dotted = sorted(group, key=lambda k: (len(name[k]), k))
        proposals += [(k, dotted[0], "acronym spelling") for k in dotted[1:]]
        expansions = [e for e in by_initials.get(letters, []) if letters not in name[e].split()]  # not "GE Energy"
        if expansions:
            proposals += [(k, e, "acronym") for k in group for e in expansions]
    if embeddings is not None and proposals:
        involved = sorted({k for key, into, _ in proposals for k in (key, into)})
        texts = [_name_text(name[k], nodes[k]["entity_type"]) for k in involved]
        unit = np.asarray(embeddings.embed_documents(texts), dtype=np.float32)
        unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
        named.update(zip(involved, unit))
    out: list[Candidate] = []
    resolution = resolution or Resolution()
    acronym_best: dict[str, list[Candidate]] = {}
    all_expansions: dict[str, list[tuple[str, float]]] = {}  # acronym -> every expansion, similar or not
    for key, into, rule in proposals:
        if rule == "acronym":
            all_expansions.setdefault(key, []).append((into, similarity(key, into)))
        written = (short_form(name[key]) or name[key]) if rule == "legal form" else name[key]
        if resolution.kept_apart(key, into) or not _guarded(written, name[into]):
            continue  # "Amazon.com, Inc.": the comma before a legal form is no qualifier
        if not _types_agree(nodes[key]["entity_type"], nodes[into]["entity_type"]):
            continue
        if rule == "legal form" and nodes[into]["entity_type"] in ("LOCATION", "PERSON"):
            continue  # a company named after a place or a person is not that place or person
        sim = similarity(key, into)
        floor = QUALIFIED_SIMILARITY if rule == "of" else MIN_SIMILARITY
        if sim < floor:
            continue
        candidate = Candidate(key, into, rule, sim)
        if rule == "acronym":
            acronym_best.setdefault(key, []).append(candidate)
        else:
            out.append(candidate)
    for key, options in acronym_best.items():
        options.sort(key=lambda c: (-c.similarity, c.into))
        # expansions nearly identical to the most similar one are one candidate (a one-passage "United State"
        # beside "United States"): the acronym goes to the one written in most passages
        alike = [c for c in options if c is options[0] or similarity(c.into, options[0].into) >= QUALIFIED_SIMILARITY]
        best = max(alike, key=lambda c: (len(nodes[c.into]["chunk_ids"]), c.similarity, c.into))
        one = {c.into for c in alike}
        same = without_article(best.into) or best.into
        others = [sim for e, sim in all_expansions.get(key, []) if e not in one and (without_article(e) or e) != same]
        if not others or best.similarity - max(others) >= ACRONYM_MARGIN:
            out.append(best)
    return sorted(out, key=lambda c: (c.key, c.into))


def _name_text(name: str, entity_type: str) -> str:
    """An entity's name as the index embeds it, without its descriptions."""
    return name if entity_type == DEFAULT_ENTITY_TYPE else f"{name} [{entity_type}]"


def _canonical_of(group: Iterable[str], kg) -> str:
    """The name a group of spellings keeps: not an acronym, no leading article, the most mentioned."""
    nodes = kg.graph.nodes

    def rank(k: str) -> tuple:
        n = nodes[k]
        return (
            acronym_letters(n["name"]) is not None,
            without_article(k) is not None,
            -len(n["chunk_ids"]),
            len(k),
            k,
        )

    return min(group, key=rank)


def resolve_entities(
    index: GraphIndex, resolution: Resolution, *, auto: bool = True, embeddings: Any = None
) -> dict[str, int]:
    """Resolve ``index.kg``: the merges recorded by hand first, then (``auto``) the spelling variants the evidence
    supports, never two entities kept apart. Every merge is recorded in ``resolution``. The index's vectors are then
    stale (call :meth:`GraphIndex.refresh`). Returns ``{"manual", "auto"}`` counts of entities merged away."""
    kg = index.kg
    manual = Resolution(merges={m.key: m for m in resolution.manual()}, apart=set(resolution.apart))
    done_manual = len(resolve_graph(kg, manual))
    for key in list(resolution.merges):
        if not resolution.merges[key].manual:
            del resolution.merges[key]  # the automatic ones are found again from this graph
    for m in manual.merges.values():
        resolution.record(m)
    if not auto:
        return {"manual": done_manual, "auto": 0}
    candidates = find_candidates(index, resolution, embeddings)
    group_of: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    rules: dict[str, str] = {}
    for c in candidates:
        ga, gb = group_of.get(c.key, c.key), group_of.get(c.into, c.into)
        if ga == gb:
            continue
        left, right = members.get(ga, [ga]), members.get(gb, [gb])
        if any(resolution.kept_apart(a, b) for a in left for b in right):
            continue  # a split by hand keeps these two groups apart
        for k in left:
            group_of[k] = gb
        members[gb] = right + left
        members.pop(ga, None)
        rules.setdefault(c.key, c.rule)
        rules.setdefault(c.into, c.rule)
    groups = {g: ks for g, ks in members.items() if len(ks) > 1}
    merged = 0
    for group in groups.values():
        keep = _canonical_of(group, kg)
        for k in sorted(group):
            if k == keep or k not in kg.graph:
                continue
            resolution.record(merge_entities(kg, keep, k, how=rules.get(k, "variant")))
            merged += 1
    logger.info("entity resolution: %d merged by hand, %d spelling variants merged", done_manual, merged)
    return {"manual": done_manual, "auto": merged}


def resolve_index(
    index: GraphIndex,
    embeddings: Any,
    decisions: Resolution | None = None,
    *,
    auto: bool = True,
    progress: bool = False,
) -> tuple[GraphIndex, dict[str, int]]:
    """A new index's entity resolution: the decisions taken by hand (``decisions``: an index's stored record, or
    none) and, with ``auto``, the spelling variants the evidence supports; the record goes to the index's ingest
    report and the vectors of what changed are embedded again. Returns the resolved index and the counts."""
    resolution = Resolution.from_dict(decisions.to_dict()) if decisions is not None else Resolution()
    counts = resolve_entities(index, resolution, auto=auto, embeddings=embeddings)
    index.report.resolution = resolution
    if counts["manual"] or counts["auto"]:
        index = index.refresh(embeddings, progress=progress)
    return index, counts
