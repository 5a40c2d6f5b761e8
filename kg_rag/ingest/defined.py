"""The names a document defines: ``NVIDIA Corporation (the "Company")``, ``Apple Inc. and its subsidiaries
(collectively "Apple" or the "Company")``.

A defined term names one thing within its document only. Read as a name of its own, the "Company" of every filing
would be one entity joining Apple's, Intel's and NVIDIA's facts; read as what the document defines it as, each
filing's "Company" is its own filer, in every chunk of the document (the definition is written once, on its first
page). :func:`annotate` stores each document's definitions on its chunks (``metadata["defined"]``: term key ->
name), where the NLP extractor reads them and the grounding check counts a name as mentioned where its term is. The
table is read from the raw text with one regular expression, and holds one entry per definition.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kg_rag.model.names import canonical_key, legal_form, short_form

DEFINED = "defined"
"""Chunk metadata key: the document's defined terms (term key -> the name it stands for)."""

_QUOTE = "[\u201c\"']"
_UNQUOTE = "[\u201d\"']"
_WORD = r"[A-Z][\w.&'\u2019-]*"
_DEFINITION = re.compile(
    rf"(?P<name>{_WORD}(?:,?\s+{_WORD})*)"  # a run of capitalised words: "Amazon.com, Inc.", "NVIDIA Corporation"
    r"(?:\s+and\s+(?:its|their)?\s*(?:[a-z-]+\s+){0,3}(?:subsidiaries|entities|affiliates))?"
    r",?\s*\(\s*(?:collectively,?\s+)?"
    rf"(?:{_QUOTE}(?P<short>[^\u201c\u201d\"'()]{{1,40}}){_UNQUOTE}\s+or\s+)?"
    rf"(?:the\s+)?{_QUOTE}(?P<term>[A-Z][^\u201c\u201d\"'()]{{0,40}}){_UNQUOTE}\s*\)"
)
"""``NAME (the "TERM")``, ``NAME and its subsidiaries (collectively "SHORT" or the "TERM")``."""
_OPENERS = frozenset({"the", "this", "a", "an"})
"""A capitalised determiner opening a sentence is no part of the name after it."""


def definitions(text: str) -> dict[str, str]:
    """The terms one text defines as a company's name: term key -> the name (also the short form written beside the
    term, ``(collectively "Apple" or the "Company")``, and the name without its legal form). Only a name with a
    legal form defines (*NVIDIA Corporation*): a run of capitals before a bracket is as often a heading or a title."""
    out: dict[str, str] = {}
    for m in _DEFINITION.finditer(text):
        name = " ".join(m.group("name").split())
        if name.split()[0].casefold() in _OPENERS:
            name = name.split(maxsplit=1)[1] if " " in name else ""
        if not legal_form(name):
            continue
        for term in (m.group("term"), m.group("short"), short_form(name)):
            if term and canonical_key(term) != canonical_key(name):
                out.setdefault(canonical_key(term), name)
    return out


def document_terms(texts: Iterable[str]) -> dict[str, str]:
    """What one document's defined terms stand for, from all its chunks' texts. A term defined as two different
    names (an agreement quoted in a filing that defines its own "Company") stands for neither."""
    found: dict[str, set[str]] = {}
    for text in texts:
        for term, name in definitions(text).items():
            found.setdefault(term, set()).add(name)
    return {term: next(iter(names)) for term, names in found.items() if len(names) == 1}


def terms_by_document(doc_ids: Sequence[str], texts: Sequence[str]) -> dict[str, Mapping[str, str]]:
    """:func:`document_terms` for every document of a run (``doc_ids[i]`` wrote ``texts[i]``)."""
    grouped: dict[str, list[str]] = {}
    for doc_id, text in zip(doc_ids, texts):
        grouped.setdefault(doc_id, []).append(text)
    return {doc_id: document_terms(chunk_texts) for doc_id, chunk_texts in grouped.items()}


def annotate(chunks: Sequence[Any]) -> None:
    """Store each document's definitions (:func:`terms_by_document`) on its chunks that have none yet
    (``chunk.metadata["defined"]``; nothing when the document defines nothing)."""
    todo = [c for c in chunks if DEFINED not in (c.metadata or {})]
    if not todo:
        return
    terms = terms_by_document([c.doc_id for c in todo], [c.text for c in todo])
    for chunk in todo:
        if terms[chunk.doc_id]:
            chunk.metadata = {**(chunk.metadata or {}), DEFINED: dict(terms[chunk.doc_id])}


def defined_terms(chunk: Any) -> Mapping[str, str]:
    """The definitions stored on a chunk (:func:`annotate`), or none."""
    found = (chunk.metadata or {}).get(DEFINED)
    return found if isinstance(found, Mapping) else {}
