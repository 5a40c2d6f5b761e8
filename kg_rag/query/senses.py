"""Same name, same thing? Whether two relations may be joined into one path at the entity they share.

Entities are merged by name, which is right for most names and wrong for some: the MuSiQue passages
*Consulate General of the United States, Frankfurt* and *Consulate General of the United States, Shanghai*
make one entity ``LOCATED_IN`` both Germany and China. The graph keeps the merged entity (chunks still link
through the shared name, and a question may rely on it: "the book named after the artist" needs *Madonna
(book)* and *Madonna (entertainer)* found together), but a path never joins two relations at it when their
passages say they are about different things.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from kg_rag.model.lemmas import lemma
from kg_rag.model.names import MONTHS, canonical_key
from kg_rag.store.base import QueryBackend

I64 = np.int64

_TITLE_SENSE = re.compile(r"^(?P<name>.+?) \((?P<paren>[^()]+)\)$|^(?P<base>[^,]+), (?P<comma>.+)$")


def title_sense(title: str | None) -> tuple[str, str] | None:
    """``(name key, qualifier key)`` of a passage title that tells its subject apart from others of the same
    name, as encyclopedias do (``Rochester, New York``, ``Madonna (book)``); ``None`` for any other title."""
    m = _TITLE_SENSE.match(str(title or "").strip())
    if not m:
        return None
    name, qualifier = (m["name"], m["paren"]) if m["name"] else (m["base"], m["comma"])
    key, qual = canonical_key(name), canonical_key(qualifier)
    return (key, qual) if key and qual else None


def common_noun(name: str) -> bool:
    """A name with no capital and no digit ("clock tower", "the city"): a kind of thing, not one thing."""
    return not any(ch.isupper() or ch.isdigit() for ch in str(name))


_VALUE_WORDS = MONTHS | frozenset(
    "ad bc bce ce a.d. b.c. c. ca. circa century centuries year years decade the of in on early late mid around about "
    "and to from until between million billion thousand hundred percent per cent".split()
)
_NUMBER = re.compile(r"^[$£€¥]?[-–'’]?\d[\d,.:/–-]*(st|nd|rd|th|s|'s|%)?$")


def value_name(name: str) -> bool:
    """A date or number ("1899", "March 3, 1974", "the 1990s", "12th century", "$1.2 billion"): a value, not a
    thing. Two passages that write the same value share it by coincidence — *Johann Strauss II* died in 1899 and
    *Finlandia* was written in 1899 — so a path never passes through a value (it may end at one: "when did he
    die"). Passages are still linked through values by the chain strategy: unlinking them gained nothing on MuSiQue
    and cost answers on SEC 10-Q, where chunks of one filing share its figures (measured: evaluation/chain.md)."""
    words = [w for w in re.split(r"[\s–-]+|,(?!\d)", str(name).lower()) if w]  # "13,507" stays one number
    return (
        any(ch.isdigit() for ch in str(name))
        and bool(words)
        and all(w in _VALUE_WORDS or _NUMBER.match(w) is not None for w in words)
    )


_YEAR = re.compile(r"^(1\d{3}|20\d{2})(s|'s)?$")


def date_name(name: str) -> bool:
    """A value that is a date ("1930", "April 1, 2023", "the 1990s", "12th century"), not a count: "how many stores"
    is not answered by the year the company was founded."""
    words = [w.strip(".,;:") for w in str(name).lower().split()]
    return value_name(name) and any(
        w in MONTHS or w in ("century", "centuries", "decade", "bc", "bce", "ad", "ce") or _YEAR.match(w) for w in words
    )


def count_of(name: str, counted: frozenset[str]) -> bool:
    """A number of the thing a "how many" question counts (``counted``, lemmas: see
    :func:`~kg_rag.query.relation_match.counted_words`): "4 congressional districts" for "how many congressional
    districts", "5,000 employees" for "how many employees". It answers the question as "4" would, though it is
    no bare value. A name with a capitalised word after the number is a title ("2 Broke Girls"), not a count."""
    words = str(name).split()
    if len(words) < 2 or not counted or _NUMBER.match(words[0].lower()) is None:
        return False
    rest = [w.strip(".,;:") for w in words[1:]]
    return not any(w[:1].isupper() and w[1:].islower() for w in rest) and lemma(rest[-1].lower()) in counted


def are_values(view: QueryBackend, entity_ids: np.ndarray) -> np.ndarray:
    """Which of the entities are values (see :func:`value_name`), as a mask."""
    ids = np.asarray(entity_ids, dtype=I64)
    if ids.size == 0:
        return np.zeros(0, dtype=bool)
    return np.fromiter((n is not None and value_name(n) for n in view.names(ids)), dtype=bool, count=ids.size)


Joins = Callable[[int, int, int], bool]
"""``joins(i, j, node)``: whether relations ``i`` and ``j`` (positions) may meet at entity handle ``node``."""


def same_thing(view: QueryBackend, relation_ids: np.ndarray, src: np.ndarray, dst: np.ndarray) -> Joins:
    """Whether two of the given relations (by position; ``src``/``dst`` their end handles) are about the same
    thing at an entity they share. They are not when

    - the passages stating them are titled as about different things of that name (``Rochester, New York`` /
      ``Rochester, Iowa``; ``Madonna (book)`` / ``Madonna (entertainer)``): the titles say so; or
    - the entity is a common noun ("clock tower", "the city", see :func:`common_noun`) and no passage states
      both: a common noun picks out one thing only within one passage. (When none of the names involved has a
      capital, the extraction does not write case and this says nothing.) A value (a date or number, see
      :func:`value_name`) likewise: two passages share it by coincidence.

    A passage that does not say which thing it means is taken at its word: the name joins."""
    ids = np.asarray(relation_ids, dtype=I64)
    if ids.size == 0:
        return lambda i, j, node: True
    evidence = view.relation_chunks(ids)
    position: dict[int, list[int]] = {}
    for i, e in enumerate(ids.tolist()):
        position.setdefault(e, []).append(i)
    chunks_of: dict[int, set[int]] = {}
    for e, c in zip(evidence.left.tolist(), evidence.right.tolist()):
        for i in position.get(e, ()):
            chunks_of.setdefault(i, set()).add(c)
    handles = sorted({c for cs in chunks_of.values() for c in cs})
    records = view.chunks(np.asarray(handles, dtype=I64)) if handles else []
    senses = {h: title_sense((r.metadata or {}).get("title")) for h, r in zip(handles, records) if r is not None}
    nodes = sorted(set(np.asarray(src, dtype=I64).tolist()) | set(np.asarray(dst, dtype=I64).tolist()))
    labels = dict(zip(nodes, view.labels(np.asarray(nodes, dtype=I64))))
    keys = {h: label[0] for h, label in labels.items() if label is not None}
    common = {h for h, label in labels.items() if label is not None and common_noun(label[1])}
    if len(common) == len(keys):  # no name here is capitalised: the extraction does not write case, so case
        common = set()  # says nothing (as for a query typed in lower case)
    common |= {h for h, label in labels.items() if label is not None and value_name(label[1])}

    def qualifiers(i: int, node: int) -> set[str]:
        key = keys.get(node)
        return {sense[1] for c in chunks_of.get(i, ()) if (sense := senses.get(c)) is not None and sense[0] == key}

    def joins(i: int, j: int, node: int) -> bool:
        if node in common:
            return bool(chunks_of.get(i, set()) & chunks_of.get(j, set()))
        qi, qj = qualifiers(i, node), qualifiers(j, node)
        return not (qi and qj and not qi & qj)

    return joins
