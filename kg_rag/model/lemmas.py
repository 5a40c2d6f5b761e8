"""English lemmas (simplemma), for relation typing, the question's relation words and the NLP extractor."""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache, partial
from pathlib import Path


@lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """The English lemma of a lower-case word (``simplemma``; the word itself when it is unknown)."""
    return _lemmatizer()(word)


@lru_cache(maxsize=1)
def _lemmatizer() -> Callable[[str], str]:
    """simplemma's English lemmatizer, reading its dictionary from a MARISA trie cached on disk (``marisa-trie``):
    decoding the shipped dictionary into a ``dict`` was the largest cost of a one-off query's start-up, loading the
    cached trie is not (measured: evaluation/benchmarks.md). Without the trie package, or where neither a cached trie
    nor a writable cache exists (a trie rebuilt in memory each run is slower than the ``dict``), simplemma's default
    dictionary; without simplemma, the word itself."""
    try:
        import simplemma
    except ImportError:  # pragma: no cover - simplemma is a dependency; degrade to the surface form
        return lambda word: word
    default = partial(simplemma.lemmatize, lang="en")
    try:
        from platformdirs import user_cache_dir
        from simplemma.strategies import DefaultStrategy
        from simplemma.strategies.dictionaries.trie_dictionary_factory import TrieDictionaryFactory
    except ImportError:  # without marisa-trie, or a simplemma without tries
        return default
    cache = Path(user_cache_dir("simplemma")) / "marisa_trie" / str(getattr(simplemma, "__version__", "unknown"))
    if not ((cache / "en.dic").exists() or _writable(cache)):
        return default
    factory = TrieDictionaryFactory(disk_cache_dir=str(cache))
    lemmatizer = simplemma.Lemmatizer(lemmatization_strategy=DefaultStrategy(dictionary_factory=factory))
    return partial(lemmatizer.lemmatize, lang="en")


def _writable(directory: Path) -> bool:
    """Whether ``directory`` exists or can be made, and files can be written in it."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(directory, os.W_OK)


@lru_cache(maxsize=65536)
def known_word(word: str) -> bool:
    """Whether a lower-case word is in simplemma's English dictionary: a common word ("chairman", "deputy"), not a
    name of its own ("tomasz"). Loads the dictionary on first use (the NLP extractor's, not a query's, cost)."""
    try:
        import simplemma
    except ImportError:  # pragma: no cover - simplemma is a dependency
        return True
    return bool(simplemma.is_known(word, lang="en"))
