"""The names a document defines: ``NVIDIA Corporation (the "Company")``, ``Apple Inc. and its subsidiaries
(collectively "Apple" or the "Company")``.

A defined term names one thing within its document only. Read as a name of its own, the "Company" of every filing
would be one entity joining Apple's, Intel's and NVIDIA's facts; read as what the document defines it as, each
filing's "Company" is its own filer, in every chunk of the document (the definition is written once, on its first
page). :func:`annotate` stores each document's definitions on its chunks (``metadata["defined"]``: term key ->
name), where the NLP extractor reads them and the grounding check counts a name as mentioned where its term is. The
table is read from the raw text with one regular expression; a definition gives up to three entries (the term, the
short name written beside it, the name without its legal form).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kg_rag.model.names import canonical_key, legal_form, short_form

DEFINED = "defined"
"""Chunk metadata key: the document's defined terms (term key -> the name it stands for)."""

_QUOTE = "[\u201c\u2018\"']"
_UNQUOTE = "[\u201d\u2019\"']"
_WORD = r"[A-Z][\w.'\u2019-]*"
MAX_WORDS = 8
"""Most words of a name before a definition (a longer run of capitals is a heading or a table, and a bound keeps
the expression linear)."""
_DEFINITION = re.compile(
    # a run of capitalised words on one line: "NVIDIA Corporation", "Amazon.com, Inc.", "Procter & Gamble Company"
    rf"(?P<name>{_WORD}(?:(?:,?[ \t]+|[ \t]*&[ \t]*){_WORD}){{0,{MAX_WORDS - 1}}})"
    r"(?:[ \t]+and[ \t]+(?:its|their)?[ \t]*(?:[a-z-]+[ \t]+){0,3}(?:subsidiaries|entities|affiliates))?"
    r",?[ \t]*\([ \t]*(?:collectively,?[ \t]+)?"
    rf"(?:{_QUOTE}(?P<short>[A-Z][^\u201c\u201d\"'()]{{0,40}}){_UNQUOTE}[ \t]+or[ \t]+)?"
    rf"(?:the[ \t]+)?{_QUOTE}(?P<term>[A-Z][^\u201c\u201d\"'()]{{0,40}}){_UNQUOTE}[ \t]*\)"
)
"""``NAME (the "TERM")``, ``NAME and its subsidiaries (collectively "SHORT" or the "TERM")``."""
_OPENERS = frozenset({"the", "this", "a", "an"})
"""A capitalised determiner opening a sentence is no part of the name after it."""
_CUT = re.compile(r"(?:[\w&*]|\b[A-Z][\w.'-]*[ \t]+(?:of|and|for|de|du)[ \t]*)\Z")
"""What, written right before a run of capitals, shows the run is the end of a longer name: a letter, ``&`` or
``*`` (*E*TRADE*), or a capitalised word and ``of`` (*Bank of America Corporation*, *Officer of NVIDIA
Corporation*: which of the two is the name the text cannot say)."""


def definitions(text: str) -> dict[str, str]:
    """The terms one text defines as a company's name: term key -> the name (also the short form written beside the
    term, ``(collectively "Apple" or the "Company")``, and the name without its legal form). Only a name with a
    legal form defines (*NVIDIA Corporation*): a run of capitals before a bracket is as often a heading or a title.
    A name that may be the end of a longer one defines nothing: no definition is better than a wrong one, which
    would stand for "the Company" in every chunk of the document."""
    out: dict[str, str] = {}
    for m in _DEFINITION.finditer(text):
        name = _name(m.group("name"))
        if not name or not legal_form(name) or _CUT.search(text[: m.start("name")]):
            continue
        for term in (m.group("term"), m.group("short"), short_form(name)):
            if term and not term.rstrip().endswith(("'s", "\u2019s")) and canonical_key(term) != canonical_key(name):
                out.setdefault(canonical_key(term), name)
    return out


def _name(run: str) -> str:
    """The name a run of capitals before a definition writes: from its last comma that no legal form follows
    ("WHEREAS, Acme Corp." is *Acme Corp.*; "Amazon.com, Inc." keeps its comma), without an opening article."""
    parts = run.split(",")
    keep = 0
    for k in range(1, len(parts)):
        if not all(legal_form("X " + w) for w in parts[k].split()):
            keep = k
    words = ",".join(parts[keep:]).split()
    if words and words[0].casefold() in _OPENERS:
        words = words[1:]
    return " ".join(words)


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
