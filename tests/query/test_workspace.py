"""The per-query working set: each handle's pairs are fetched once from a database, and come back by handle,
whatever was fetched before — positions in the query's chunk space, and so tie-breaks, follow what was asked,
never the history of fetches, so an in-process backend that keeps nothing gives the same answers."""

from __future__ import annotations

import numpy as np
import pytest

from kg_rag.query.params import QueryParams
from kg_rag.query.workspace import HandleSpace, Workspace, _PairCache
from kg_rag.store.base import EdgeFilter, Pairs

I64 = np.int64
TABLE = {1: [10, 11], 2: [20], 3: [], 5: [50, 51, 52], 7: [70]}


def fetcher(calls: list[list[int]]):
    def fetch(handles: np.ndarray) -> Pairs:
        asked = handles.tolist()
        calls.append(asked)
        left = [h for h in asked for _ in TABLE.get(h, [])]
        right = [c for h in asked for c in TABLE.get(h, [])]
        return Pairs(np.asarray(left, I64), np.asarray(right, I64))

    return fetch


def test_each_handle_is_fetched_once_and_pairs_come_back_by_handle():
    calls: list[list[int]] = []
    cache = _PairCache(fetcher(calls))
    first = cache.get(np.asarray([5, 2, 5], I64))
    assert calls == [[2, 5]]  # sorted, distinct
    assert first.left.tolist() == [2, 5, 5, 5] and first.right.tolist() == [20, 50, 51, 52]
    mixed = cache.get(np.asarray([7, 1, 5, 3], I64))
    assert calls == [[2, 5], [1, 3, 7]]  # only the new ones
    # by handle, though 5 was fetched first (1, 3 has none, 5, 7)
    assert mixed.left.tolist() == [1, 1, 5, 5, 5, 7] and mixed.right.tolist() == [10, 11, 50, 51, 52, 70]
    cached = cache.get(np.asarray([3, 2], I64))
    assert calls == [[2, 5], [1, 3, 7]]
    assert cached.left.tolist() == [2] and cached.right.tolist() == [20]
    assert len(cache.get(np.asarray([3], I64))) == 0 and len(cache.get(np.zeros(0, I64))) == 0
    assert cache.get(np.asarray([2], I64)).left.dtype == I64


def test_handle_space_positions_follow_first_sight():
    space = HandleSpace()
    assert space.add(np.asarray([9, 4, 9], I64)).tolist() == [0, 1, 0]
    assert space.add([4, 12]).tolist() == [1, 2]
    assert space.positions(np.asarray([12, 5], I64)).tolist() == [2, -1]


def test_large_requests_and_a_cache_that_keeps_nothing_give_the_same_pairs_in_the_same_order():
    """ppr asks for thousands of handles at once: those are filtered from everything fetched rather than looked
    up one by one, with the same result and order as the per-handle path; and over an in-process backend the
    cache keeps nothing and asks again, with the same answers."""
    small, large = _PairCache(fetcher([])), _PairCache(fetcher([]))
    large.SMALL = 1  # every request of two or more handles takes the filtering path
    calls: list[list[int]] = []
    kept_nothing = _PairCache(fetcher(calls), keep=False)  # an in-process backend: asked again each time
    for asked in ([5, 2], [7, 1, 5, 3], [3, 2], [1, 2, 3, 5, 7], [9, 7]):
        a, b = small.get(np.asarray(asked, I64)), large.get(np.asarray(asked, I64))
        c = kept_nothing.get(np.asarray(asked, I64))
        assert a.left.tolist() == b.left.tolist() == c.left.tolist(), asked
        assert a.right.tolist() == b.right.tolist() == c.right.tolist(), asked
    assert calls == [[2, 5], [1, 3, 5, 7], [2, 3], [1, 2, 3, 5, 7], [7, 9]]  # every request, sorted and distinct


class _Counting:
    """A backend's incidence and counts, counting the calls that reach it."""

    def __init__(self, in_process: bool) -> None:
        self.in_process = in_process
        self.calls = 0

    def chunk_entities(self, handles: np.ndarray) -> Pairs:
        self.calls += 1
        return fetcher([])(handles)

    entity_chunks = chunk_entities

    def mention_counts(self, handles: np.ndarray) -> np.ndarray:
        self.calls += 1
        return np.ones(np.asarray(handles).size, np.float32)


@pytest.mark.parametrize(("in_process", "calls"), [(True, 6), (False, 3)])
def test_a_query_keeps_what_it_fetched_only_from_a_database(in_process, calls):
    """Over a database a query asks for each handle once; over in-process arrays it asks again (cheaper than
    keeping a copy), with the same answers."""
    view = _Counting(in_process)
    ws = Workspace(view, np.zeros(2, np.float32), "q", QueryParams(), EdgeFilter())  # type: ignore[arg-type]
    for _ in range(2):
        assert ws.chunk_entities(np.asarray([5, 1], I64)).right.tolist() == [10, 11, 50, 51, 52]
        assert ws.entity_chunks(np.asarray([2], I64)).right.tolist() == [20]
        assert ws.mention_counts(np.asarray([7, 7], I64)).tolist() == [1.0, 1.0]
    assert view.calls == calls


def test_handle_space_agrees_with_a_dictionary_of_first_sights():
    """Positions are first-sight order, whatever mix of new, known and repeated handles each call brings."""
    rng = np.random.default_rng(7)
    for _ in range(50):
        space, first_seen = HandleSpace(), {}
        space.array("relevance", np.nan)
        for n in [int(rng.integers(0, 300))] + [int(rng.integers(0, 40)) for _ in range(8)]:
            handles = rng.integers(0, 500, n)
            for h in handles.tolist():
                first_seen.setdefault(h, len(first_seen))
            assert space.add(handles).tolist() == [first_seen[h] for h in handles.tolist()]
            assert space.ids.tolist() == list(first_seen) and space.array("relevance").size == len(first_seen)
        asked = rng.integers(0, 600, 40)
        assert space.positions(asked).tolist() == [first_seen.get(h, -1) for h in asked.tolist()]


TYPES = ["SPOUSE_OF", "COMPOSED_BY", "PERFORMED_BY", "BORN_IN", "SUPERSEDES", "FOUNDED_BY", "LOCATED_IN", "CAPITAL_OF"]
TYPES += ["PART_OF", "RELATED", "INDEPENDENT_FROM", "CONTAINS", "MEMBER_OF", "PERFORMER_OF"]


class _Vocabulary(_Counting):
    """A backend that knows its relation types."""

    def __init__(self, types: list[str]) -> None:
        from kg_rag.store.base import BackendInfo

        super().__init__(True)
        self._info = BackendInfo(0, 0, 0, 0, 2, "test", relation_types=dict.fromkeys(types, 1), version="vocabulary")

    def info(self):
        return self._info


@pytest.mark.parametrize(
    "question",
    [
        "Who was the spouse of the composer of Brand?",
        "Where was the performer of Brother born?",
        "Which company replaced the founder's firm?",
        "When did the country containing Nugegoda leave the British Empire?",
        "what is the capital of the state where alpha is located",
    ],
)
def test_asks_for_agrees_with_matching_each_type_alone(question):
    """The index's types are found through its word index once a query; a type it does not have (the synonym
    links) is matched alone. Either way the answer is :func:`matches` of the question's relation words."""
    from kg_rag.query.relation_match import matches, question_relation_words

    types = TYPES
    ws = Workspace(_Vocabulary(types), np.zeros(2, np.float32), question, QueryParams(), EdgeFilter())  # type: ignore
    ws.relation_words = question_relation_words(question)
    asked = ws.asks_for([*types, "SYNONYM_OF", "NOT_IN_THE_INDEX_BORN"])
    assert asked == {t: matches(ws.relation_words, t) for t in [*types, "SYNONYM_OF", "NOT_IN_THE_INDEX_BORN"]}
    assert any(asked.values()) or question.startswith("When")


def test_the_word_index_finds_the_types_that_matches_finds_word_by_word():
    """Each word a type's word could be related to — equal, one to four letters longer or shorter, five letters
    in common and more apart, or sharing fewer — finds through the index exactly the types ``matches`` finds."""
    from kg_rag.query.relation_match import TypeIndex, _type_words, matches

    index = TypeIndex(TYPES)
    stems = {w for t in TYPES for w in _type_words(t)}
    words = set(stems)
    for w in stems:
        words |= {w[:n] for n in range(3, len(w))} | {w + "x" * n for n in range(1, 7)} | {w[:4] + "zzzz"}
    for q in sorted(words):
        assert index.types_for(frozenset([q])) == {t for t in TYPES if matches(frozenset([q]), t)}, q
    assert index.types_for(frozenset(words)) == {t for t in TYPES if matches(frozenset(words), t)}


def test_a_query_reads_whether_an_entity_is_a_value_once():
    """The value rows a "when" question asks for and the bridges between passages ask about the same ends: their
    names are read once a query, and the answer is by handle."""

    class Names:
        in_process = False
        asked: list[list[int]] = []

        def chunk_entities(self, handles):  # the workspace builds its pair caches from these
            return Pairs.empty()

        entity_chunks = chunk_entities

        def names(self, handles: np.ndarray) -> list[str | None]:
            self.asked.append(np.asarray(handles).tolist())
            return [{1: "1899", 2: "Finlandia", 3: "March 3, 1974"}.get(int(h)) for h in handles]

    view = Names()
    ws = Workspace(view, np.zeros(2, np.float32), "q", QueryParams(), EdgeFilter())  # type: ignore[arg-type]
    assert ws.are_values(np.asarray([2, 1], I64)).tolist() == [False, True]
    assert ws.are_values(np.asarray([3, 1, 2, 9], I64)).tolist() == [True, True, False, False]
    assert view.asked == [[2, 1], [3, 9]]
