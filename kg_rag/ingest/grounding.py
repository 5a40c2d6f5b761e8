"""Whether a name an extractor returned is mentioned in the chunk it was extracted from.

A model reads one chunk and may still name things the chunk does not: an entity from its training data, a guess,
an injected instruction's invention (``Zorblax Unseen -[SUPERSEDES]-> Quux Phantom``). Such a name would be stored
and served as if the document said it. A name counts as mentioned when, compared as entity keys are
(:func:`~kg_rag.model.names.canonical_key`: case, width and punctuation folded):

* the whole name occurs in the chunk (this also covers scripts written without spaces); or
* every word of it holding a digit (``2023-07``, ``Q3``: what tells ``Directive 2023-07`` from ``Directive
  2019-03``) is a word of the chunk, and so is at least half of its other words — function words, company
  suffixes and titles aside, a final ``s`` ignored — so a name the model completed or normalised (``Apple
  Inc.`` for "Apple", ``The Board of Directors`` for "the board") stays; or
* it is the acronym of consecutive words of the chunk (``SEC`` for "Securities and Exchange Commission"), or
  the chunk holds its acronym; or
* the document defines a term the chunk writes as that name (``NVIDIA Corporation (the "Company")`` on its first
  page: *NVIDIA Corporation* is mentioned wherever "the Company" is).

Anything else was not in the text the model was given. (A name one of whose two words is a word of the chunk
passes: the rule catches inventions, not every liberty a model takes.)
"""

from __future__ import annotations

from collections.abc import Mapping

from kg_rag.model.names import canonical_key

_FUNCTION_WORDS = frozenset(
    "a an the of in on at to for and or nor but by with from as into onto upon over under about after before "
    "between through during without within than then this that these those its it is was are were be been "
    "has have had do does did not no".split()
)
_IGNORED = _FUNCTION_WORDS | frozenset(
    "inc incorporated corp corporation co company ltd limited llc plc gmbh ag sa nv group holdings "
    "mr mrs ms dr prof sir".split()
)
"""Words a model adds to a name without the chunk saying them."""
MAX_ACRONYM = 8
"""Longest acronym matched against the initials of consecutive words."""


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _content(words: list[str], ignored: frozenset[str] = _FUNCTION_WORDS) -> list[str]:
    return [w for w in words if w not in ignored]


class ChunkText:
    """A chunk's text prepared for :meth:`mentions` (built once per chunk). ``defined``: the document's defined terms
    (term key -> name, :mod:`kg_rag.ingest.defined`): a name is mentioned where a term defined as it is ("the
    Company" for *NVIDIA Corporation*)."""

    def __init__(self, text: str, defined: Mapping[str, str] | None = None) -> None:
        self.terms: dict[str, list[str]] = {}
        for term, name in (defined or {}).items():
            self.terms.setdefault(canonical_key(name), []).append(term)
        self.key = canonical_key(text)
        words = self.key.split()
        self.words = {_stem(w) for w in words}
        content = [w for w in _content(words) if w[:1].isalpha()]
        self.initials = {
            "".join(w[0] for w in content[i : i + n])
            for n in range(2, MAX_ACRONYM + 1)
            for i in range(len(content) - n + 1)
        }

    def mentions(self, name: str) -> bool:
        """Whether ``name`` is mentioned in the chunk (see the module docstring), itself or by a defined term."""
        return self._mentions(name) or any(self._mentions(t) for t in self.terms.get(canonical_key(name), ()))

    def _mentions(self, name: str) -> bool:
        key = canonical_key(name)
        if not key or key in self.key:
            return True
        content = _content(key.split(), _IGNORED) or key.split()
        found = [_stem(w) in self.words for w in content]
        numbered = [seen for w, seen in zip(content, found) if any(ch.isdigit() for ch in w)]
        if all(numbered) and 2 * sum(found) >= len(found):
            return True
        if len(content) == 1 and content[0].isalpha() and 2 <= len(content[0]) <= MAX_ACRONYM:
            return content[0] in self.initials
        acronym = "".join(w[0] for w in content if w[:1].isalpha())
        return len(acronym) >= 2 and acronym in self.words
