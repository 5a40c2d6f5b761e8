"""Stage 2: matching the query to entities — by entity embedding, by fact embedding, and by name."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from kg_rag.model.names import canonical_key
from kg_rag.query.history import MAX_QUERY_CHARS
from kg_rag.query.params import QueryParams
from kg_rag.store.base import EdgeFilter, QueryBackend

MAX_NAME_TOKENS = 12
"""Longest entity name (in words) matched lexically in the query: long enough for nearly every capitalised name
of a real index, long titles included (a shorter limit missed "Alexander and the Terrible, Horrible, No Good,
Very Bad Day", 11 words, and named its "Good" instead; coverage measured: evaluation/design-figures.md)."""

_STOP = frozenset(
    "a an the of in on at to for and or is was are were be by with from as it its this that who what which when "
    "where why how whom whose did does do has have had not no yes he she they them his her their i you we us "
    "one two also than then there here".split()
)


def _word_match(gram: str) -> bool:
    """An n-gram that can match an entity name as plain words: not only stop-words, at least three letters."""
    return any(w not in _STOP for w in gram.split()) and len(gram) >= 3


def names_entity(name: str, query: str) -> bool:
    """Whether a name found in the query names that entity: a proper name or code (an upper-case letter or
    a digit in it) — common nouns in lower case ("film", "spouse") are words of the question, not names.
    Short names and stop-words (WHO, US, EU, C#, 3M, R) count only as whole tokens written with the same
    case."""
    if not any(ch.isupper() or ch.isdigit() for ch in name):
        return False
    words = canonical_key(name).split()
    if len(name) <= 3 or all(w in _STOP for w in words):
        return written_alone(name, query)
    return True


def _word_char(ch: str) -> bool:
    """A character a pattern's ``\\w`` matches (a letter, digit or number of any script, or ``_``)."""
    return ch.isalnum() or ch == "_"


def written_alone(name: str, query: str) -> bool:
    """Whether the query writes ``name`` exactly (same case) as a whole token: with no letter, digit or ``_``
    right before or after it. A scan of its occurrences, not a pattern compiled per name."""
    at, n = query.find(name), len(name)
    while at >= 0:
        end = at + n
        if not (at and _word_char(query[at - 1])) and not (end < len(query) and _word_char(query[end])):
            return True
        at = query.find(name, at + 1)
    return False


def rare_in_text(view: QueryBackend, gram: str, limit: int) -> bool:
    """Whether some word of a name occurs in at most ``limit`` passages. The extraction may list a generic word
    ("country") as an entity of only a few passages, while hundreds of passages write it."""
    return any(len(view.lexical_search(w, limit + 1)) <= limit for w in gram.split() if w not in _STOP)


_ALNUM_BEFORE = r"(?<![^\W_])"  # not preceded by a letter or digit ("_" separates, as canonical keys read it)
_ALNUM_AFTER = r"(?![^\W_])"
NAME_CONNECTORS = frozenset("de la le les von van der den du da di del y al bin upon".split())
"""Lower-case words a proper name may contain besides the stop-words ("Ludwig van Beethoven"; "Bank of
America", "What a Wonderful World" and "Pride and Prejudice" are covered by the stop-words)."""


_WORD_RUN = re.compile(r"[^\W_]+")


@lru_cache(maxsize=64)
def _word_runs(query: str) -> tuple[tuple[str, ...], tuple[tuple[int, int], ...]]:
    """The words of an ASCII query — maximal runs of letters and digits — lower-cased, and their spans."""
    found = list(_WORD_RUN.finditer(query))
    return tuple(m.group().lower() for m in found), tuple(m.span() for m in found)


def gram_spans(gram: str, query: str) -> list[tuple[int, int]]:
    """Where the query writes a canonical n-gram: character spans of its words, separated by anything that is
    not a letter or digit (``"hello love"`` in ``"Hello Love's performer"``, ``"eo 14028"`` in ``EO_14028``).
    Names whose canonical form folds letters (``ß`` -> ``ss``) are not found, and count as written.

    A query asks this for each of its n-grams that names an entity, every one a new text: in ASCII the n-gram's
    words are matched against the query's words (a tuple comparison), since compiling a pattern per n-gram
    was a measurable share of a query (evaluation/design-figures.md); other text goes through the pattern, which folds
    case as Unicode does."""
    words = gram.split()
    if not words:
        return []
    if query.isascii() and all(w.isascii() and w.isalnum() for w in words):
        runs, spans = _word_runs(query)
        n, want, out, i = len(words), tuple(w.lower() for w in words), [], 0
        while i + n <= len(runs):  # non-overlapping, left to right, as a pattern search finds them
            if runs[i : i + n] == want:
                out.append((spans[i][0], spans[i + n - 1][1]))
                i += n
            else:
                i += 1
        return out
    pattern = _ALNUM_BEFORE + r"[\W_]+".join(re.escape(w) for w in words) + _ALNUM_AFTER
    return [m.span() for m in re.finditer(pattern, query, flags=re.IGNORECASE)]


def written_as_name(spans: list[tuple[int, int]], query: str, cased: bool = True) -> bool:
    """Whether the query writes the words with a capital or a digit somewhere ("Hello Love", "Damerjog", "3M")
    rather than as common words ("president", "the east of"). Case is evidence only from a writer who uses
    it: in a query typed all in lower case every name counts as written. Unknown spans (a name the query
    writes in another script or spelling) count as written too. ``cased``: the query has a capital anywhere."""
    if not spans or not cased:
        return True
    return any(any(ch.isupper() or ch.isdigit() for ch in query[a:b]) for a, b in spans)


def name_like(span: tuple[int, int], query: str, cased: bool = True) -> bool:
    """Whether the query writes a span as one proper name: every word capitalised, a digit, a stop-word or a
    name particle ("of", "a", "van"). "Meehan Bonnar", "What a Wonderful World" and "Microsoft CEO" are;
    "Beatles song" is not. In a query typed all in lower case (``cased`` false) every span is."""
    if not cased:
        return True
    words = [w for w in re.split(r"[\s,;:]+", query[span[0] : span[1]]) if w]
    return all(
        w.casefold() in NAME_CONNECTORS
        or w.casefold() in _STOP
        or next((ch.isupper() or ch.isdigit() for ch in w if ch.isalnum()), True)
        for w in words
    )


def inside_longer(spans: list[tuple[int, int]], others: list[list[tuple[int, int]]]) -> bool:
    """Whether every place the query writes a name lies inside a longer name it also writes ("Meehan" in
    "Meehan Bonnar"): the longer name is the one the question means. ``others`` holds only the spans of
    longer candidates that may suppress (see :func:`match_seeds`)."""
    if not spans:
        return False
    return all(any(a <= s and e <= b and (b - a) > (e - s) for o in others for a, b in o) for s, e in spans)


def query_grams(text: str) -> list[str]:
    """Every whole-word n-gram of the query's canonical form, longest first (up to ``MAX_NAME_TOKENS``)."""
    tokens = canonical_key(text).split()
    grams: dict[str, None] = {}
    for size in range(min(MAX_NAME_TOKENS, len(tokens)), 0, -1):
        for start in range(0, len(tokens) - size + 1):
            grams.setdefault(" ".join(tokens[start : start + size]))
    return list(grams)


@dataclass
class Seeds:
    """The entities a query starts from."""

    weights: dict[int, float] = field(default_factory=dict)
    """Seed entity handle -> weight (match score)."""
    similarity: dict[int, float] = field(default_factory=dict)
    """Entity handle -> cosine similarity to the query, for every entity looked at."""
    facts: list[int] = field(default_factory=list)
    """Relation handles of the matched facts (allowed by the filters), best first."""
    fact_scores: dict[int, float] = field(default_factory=dict)
    named: set[int] = field(default_factory=set)
    """Entities the question names: proper names it writes as names (a capital or a digit, see
    :func:`names_entity`), or the caller included them. Paths start here. A word the question writes in lower
    case ("country", "city", "person", "first", "the east") is never named, however few passages the extraction
    lists it in: it names a kind of thing. Only in a query typed all in lower case, where case says nothing, is
    a lower-case name named when it is specific: few chunks mention it and few passages write it."""
    proper: set[int] = field(default_factory=set)
    """The named entities written as proper names (their words are names, not relation words)."""
    included: set[int] = field(default_factory=set)
    """The entities the caller included (``include_entities``), found and not excluded."""


def resolve_names(view: QueryBackend, names: Sequence[str]) -> dict[str, int]:
    """Canonical key -> handle for the names that exist."""
    keys = [canonical_key(n) for n in names]
    return view.lookup_entities(keys)


def match_seeds(view: QueryBackend, q: np.ndarray, query_text: str, p: QueryParams, edge_filter: EdgeFilter) -> Seeds:
    """Seed entities for a query. All similarity search goes through the backend's vector search; lexical
    linking looks the query's n-grams up as entity names. Blocked (excluded) entities never seed, and a fact
    seeds only when its relation type is allowed and neither end is blocked."""
    out = Seeds()
    blocked = edge_filter.blocked
    if p.top_k_nodes:
        hits = view.search("entities", q, p.top_k_nodes)
        for r, s in zip(hits.ids.tolist(), hits.scores.tolist()):
            out.similarity[r] = s
            if s >= p.similarity_threshold and r not in blocked:
                out.weights[r] = max(out.weights.get(r, 0.0), s)
    if p.top_k_facts:
        hits = view.search("facts", q, p.top_k_facts, min_score=p.similarity_threshold)
        if len(hits):  # the facts' ends and types by handle: no relation record is read or decoded here
            edges = view.edges_by_id(hits.ids)
            found = {h: i for i, h in enumerate(edges.ids.tolist())}
            for handle, s in zip(hits.ids.tolist(), hits.scores.tolist()):
                i = found.get(handle)
                if i is None or not edge_filter.allows_type(edges.type_of(i), bool(edges.synonym[i])):
                    continue
                ends = [int(edges.src[i]), int(edges.dst[i])]
                if any(h in blocked for h in ends):
                    continue
                out.facts.append(handle)
                out.fact_scores[handle] = s
                for node in ends:
                    out.weights[node] = max(out.weights.get(node, 0.0), s)
    if p.lexical_linking:
        text = unicodedata.normalize("NFKC", query_text[:MAX_QUERY_CHARS])  # as names are read; bounded work
        found = view.lookup_entities(query_grams(text))
        lexical = [h for h in dict.fromkeys(found.values()) if h not in blocked]
        records = view.entities(np.asarray(lexical, dtype=np.int64)) if lexical else []
        gram_of = {h: k for k, h in found.items()}
        cased = any(ch.isupper() for ch in text)  # case is evidence only from a writer who uses it
        keep, common = [], []
        proper_spans: dict[int, list[tuple[int, int]]] = {}
        for h, rec in zip(lexical, records):
            gram = gram_of[h]
            if rec is None:
                continue
            spans = gram_spans(gram, text)
            if names_entity(rec.name, text) and written_as_name(spans, text, cased):
                proper_spans[h] = spans
                keep.append(h)
            elif _word_match(gram):  # any entity name in the query helps find passages about it, but a common
                keep.append(h)  # word ("country", "person") or a name written as one ("the east") names nothing
                if not cased:  # ... unless case says nothing: a query and names all in lower case
                    common.append(h)
        # a name inside a longer one the question writes as one name is not named ("Meehan" in "Meehan
        # Bonnar", "Virginia" in "West Virginia"; but "Beatles" in "Beatles song" is)
        suppressors = {h: [sp for sp in spans if name_like(sp, text, cased)] for h, spans in proper_spans.items()}
        for h, spans in proper_spans.items():
            if not inside_longer(spans, [o for k, o in suppressors.items() if k != h]):
                out.named.add(h)
                out.proper.add(h)
        if common:  # typed all in lower case: a name is named when it is specific ("alpha", not "country")
            counts = view.mention_counts(np.asarray(common, dtype=np.int64))
            rare = [h for h, c in zip(common, counts.tolist()) if c <= p.specific_mentions]
            out.named.update(h for h in rare if rare_in_text(view, gram_of[h], p.specific_mentions))
        if keep:
            sims = view.similarity("entities", q, np.asarray(keep, dtype=np.int64))
            for n, s in zip(keep, sims.tolist()):
                out.similarity.setdefault(n, s)
                out.weights[n] = max(out.weights.get(n, 0.0), s, p.similarity_threshold, 1e-3)
    for n in resolve_names(view, p.include_entities).values():
        if n not in blocked:
            out.weights[n] = max(out.weights.get(n, 0.0), 1.0)
            out.named.add(n)
            out.proper.add(n)
            out.included.add(n)
    return out


def unmatched_reason(view: QueryBackend, seeds: Seeds, p: QueryParams) -> str:
    """Why no entity seeded a query, for the warning: the threshold and the closest entity, so a user of the
    ``seed003`` preset (similarity >= 0.7, no dense fallback) sees that nothing was close enough rather than a
    silent empty result."""
    if not seeds.similarity:
        return "no entity matched it (the index has no entity vectors, or entity matching is off)"
    best = max(seeds.similarity, key=lambda h: (seeds.similarity[h], -h))
    record = view.entities(np.asarray([best], dtype=np.int64))[0]
    name = record.name if record is not None else "?"
    return (
        f"no entity is at least {p.similarity_threshold:g} similar to it (the closest, {name!r}, is "
        f"{seeds.similarity[best]:.3f}) and fill_with_dense is off; lower similarity_threshold, or use the "
        "default preset"
    )
