"""PostgreSQL scores every part of a question from its words' postings, read once
(:mod:`kg_rag.store.postgres.lexical`): to the bit what one statement per text gives, and with one statement."""

from __future__ import annotations

import numpy as np
import pytest

from kg_rag.index.lexical import tokenize
from kg_rag.store.base import TermScorer
from kg_rag.store.postgres.lexical import PostingsScorer
from kg_rag.testing.compliance import reference_index
from kg_rag.testing.embeddings import BagOfWordsEmbeddings


@pytest.fixture
def store(pg_schema_uri):
    from kg_rag.store.postgres import PostgresStore

    store = PostgresStore(pg_schema_uri)
    store.save(reference_index(BagOfWordsEmbeddings()))
    return store


def _count_statements(view) -> list[str]:
    seen: list[str] = []
    fetch = view._fetch

    def counting(sql, params=None):
        seen.append(sql)
        return fetch(sql, params)

    view._fetch = counting
    return seen


def test_every_part_of_a_question_scores_as_its_own_statement_would(store):
    backend = store.backend()
    try:
        with backend.reader() as view:
            texts = [c.text for c in view.chunks(np.arange(3, dtype=np.int64)) if c is not None]
            chunks = view.info().chunks
        words = tokenize(" ".join(texts[0].split()[:12]) + " the the zzznotaword")
        handles = np.arange(chunks + 1, dtype=np.int64) - 1  # -1 and one past the end are unknown
        rests = [[w for w in words if w not in gone] for gone in ({"directive"}, {"the", "2023"}, set(words))]
        parts = [words, words[::2], words[3:], *rests, ["zzznotaword"], []]
        with backend.reader() as view:
            statements = _count_statements(view)
            scorer = view.term_scorer(words)
            assert isinstance(scorer, PostingsScorer) and len(statements) == 1
            got = {}
            for part in parts:
                text = " ".join(part)
                got[text] = (scorer.scores(text, handles), scorer.best(text), scorer.search(text, 1000))
            assert len(statements) == 1  # the parts were scored from the postings read once
            asked = set(words)
            words_in = {h: scorer.words_in(h) for h in range(chunks)}
        for text, (scores, best, top) in got.items():
            with backend.reader() as alone:  # no postings read: one statement for the text
                expected = alone.lexical_scores(text, handles)
                want = alone.lexical_search(text, 1000)
                assert scores.tobytes() == expected.tobytes(), text
                assert top.ids.tolist() == want.ids.tolist() and top.scores.tobytes() == want.scores.tobytes()
                assert best == (float(want.scores[0]) if len(want) else 0.0)
        with backend.reader() as alone:
            default = TermScorer(alone)
            for handle, found in words_in.items():
                assert found == default.words_in(handle) & asked
    finally:
        backend.close()


def test_a_text_with_another_word_is_asked_of_the_database(store):
    backend = store.backend()
    try:
        with backend.reader() as view:
            scorer = view.term_scorer(tokenize("directive superseded"))
            statements = _count_statements(view)
            text = "directive storage policy"  # "storage", "policy": not the question's
            scores = scorer.scores(text, np.arange(5, dtype=np.int64))
            assert len(statements) == 1 and "sum(" in statements[0]
        with backend.reader() as alone:
            assert scores.tobytes() == alone.lexical_scores(text, np.arange(5, dtype=np.int64)).tobytes()
    finally:
        backend.close()


def test_too_many_postings_are_not_read_each_text_is_one_statement(store, monkeypatch):
    """Common words of a large corpus have many times more postings than chunks: past ``MAX_POSTINGS`` the
    question's BM25 (run ahead with the searches) and each part of it are asked of the database, as before."""
    from kg_rag.store.postgres import view as pg_view

    words = tokenize("which directive superseded the directive")
    text = " ".join(words)
    backend = store.backend()
    try:
        with backend.reader() as alone:
            expected = alone.lexical_search(text, 1000)
        monkeypatch.setattr(pg_view, "MAX_POSTINGS", 3)
        with backend.reader() as view:
            view.search_ahead(np.asarray(BagOfWordsEmbeddings().embed_query(text), np.float32), [("chunks", 2)], text)
            assert view._postings == {frozenset(words): None} and text in view._lexical
            scorer = view.term_scorer(words)
            assert type(scorer) is TermScorer
            got = scorer.search(text, 1000)
            assert got.ids.tolist() == expected.ids.tolist() and got.scores.tobytes() == expected.scores.tobytes()
    finally:
        backend.close()
