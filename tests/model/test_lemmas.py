"""Lemmas come from simplemma, its dictionary read from a trie cached on disk (a one-off query no longer decodes
the whole dictionary), or from the dictionary itself where no cache can be written: the lemmas are the same."""

from __future__ import annotations

from pathlib import Path

import pytest
import simplemma

from kg_rag.model import lemmas as rt

WORDS = ["married", "wrote", "born", "founded", "superseded", "running", "children", "unknownword"]


@pytest.fixture
def fresh():
    rt._lemmatizer.cache_clear()
    rt.lemma.cache_clear()
    yield
    rt._lemmatizer.cache_clear()
    rt.lemma.cache_clear()


def test_the_trie_gives_simplemmas_lemmas(fresh, tmp_path, monkeypatch):
    pytest.importorskip("marisa_trie")
    import platformdirs

    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda name: str(tmp_path / name))
    assert [rt.lemma(w) for w in WORDS] == [simplemma.lemmatize(w, lang="en") for w in WORDS]
    assert list((tmp_path / "simplemma").rglob("en.dic"))  # cached for the next process
    assert rt.lemma("married") == "marry" and rt.lemma("wrote") == "write"


def test_without_a_writable_cache_the_dictionary_is_used(fresh, tmp_path, monkeypatch):
    pytest.importorskip("marisa_trie")
    import platformdirs

    missing = tmp_path / "read-only" / "cache"
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda name: str(missing))
    monkeypatch.setattr(rt, "_writable", lambda directory: False)
    lemmatize = rt._lemmatizer()
    assert getattr(lemmatize, "func", None) is simplemma.lemmatize  # not a trie rebuilt in memory each run
    assert [rt.lemma(w) for w in WORDS] == [simplemma.lemmatize(w, lang="en") for w in WORDS]
    assert not Path(missing).exists()
