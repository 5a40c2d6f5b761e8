"""Within one passage, what other names stand for: a surname or given name for the person it belongs to, an acronym
for the name it abbreviates, a short form for the coded name it ends (one thing, one name; the mentions themselves
are found in :mod:`kg_rag.ingest.nlp.mentions`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kg_rag.ingest.nlp.kinds import HONORIFICS, person_like
from kg_rag.ingest.nlp.mentions import Mention, Topic, name_words
from kg_rag.ingest.nlp.parse import Parse
from kg_rag.model.names import canonical_key, short_form


@dataclass
class NameTable:
    """Within one passage, what other names stand for: a surname or given name for the person it belongs to, an
    acronym for the name it abbreviates. Only unambiguous parts are kept."""

    aliases: dict[str, str] = field(default_factory=dict)
    surnamed: dict[int, str] = field(default_factory=dict)
    """Token -> topic name: where a passage titled with a person's name writes the surname alone as a subject
    (``Snow moved to Nashville`` in a passage titled *Hank Snow*)."""
    tails: dict[str, str] = field(default_factory=dict)
    """Short form -> the coded name it ends (:func:`_coded_tails`): *Policy v3* -> *Data Retention Policy v3*."""
    companies: dict[str, str] = field(default_factory=dict)
    """What a company's name stands for without its legal form (*Meridian* -> *Meridian Holdings*), and what the
    document's defined terms stand for (*Company* -> *NVIDIA Corporation*: :mod:`kg_rag.ingest.defined`)."""

    @classmethod
    def of(
        cls,
        doc: Parse,
        mentions: Sequence[Mention],
        topic: Topic | None = None,
        defined: Mapping[str, str] | None = None,
    ) -> NameTable:
        parts: dict[str, set[str]] = {}
        for m in mentions:
            words = name_words(m.name)
            if m.label == "PERSON" and len(words) >= 2:
                for part in (words[0], words[-1]):
                    if part[:1].isupper() and len(part) > 2:
                        parts.setdefault(canonical_key(part), set()).add(m.name)
        aliases = {k: next(iter(v)) for k, v in parts.items() if len(v) == 1}
        for m in mentions:  # "American Institute of Physics (AIP)"
            if m.end + 2 < doc.n and doc.text[m.end] == "(" and doc.text[m.end + 2] == ")":
                short = doc.text[m.end + 1]
                if short.isupper() and len(short) >= 2 and short == _initials(m.name)[: len(short)]:
                    aliases[canonical_key(short)] = m.name
        surnamed: dict[int, str] = {}
        if topic is not None and topic.label in (None, "", "PERSON") and person_like(topic.name):
            words = name_words(topic.name)
            key = canonical_key(words[-1])
            if key not in parts and key not in aliases:
                surnamed = {m.start: topic.name for m in mentions if _surname_subject(doc, m, key)}
        people = set(parts)
        if topic is not None and topic.label in (None, "", "PERSON") and person_like(topic.name):
            people.update(canonical_key(w) for w in name_words(topic.name))
        companies = _companies(mentions, defined or {}, people)
        return cls(aliases, surnamed, _coded_tails(mentions, topic), companies)

    def resolve(self, m: Mention) -> str:
        if m.start in self.surnamed:  # "Blokker was born in Amsterdam" in a passage about Jaap Blokker
            return self.surnamed[m.start]
        if m.kind in ("ner", "name", "quote") and m.label not in ("PERSON", "LOCATION") and m.key in self.companies:
            return self.companies[m.key]  # never a person or a place: "Boston Holdings Inc. is based in Boston"
        if m.kind in ("ner", "name") and " " not in m.name.strip():
            return self.aliases.get(m.key, m.name)
        if m.kind in ("ner", "name") and not m.is_value:
            return self.tails.get(m.key, m.name)
        return m.name


def _coded_tails(mentions: Sequence[Mention], topic: Topic | None) -> dict[str, str]:
    """Short forms of a name that ends in a code or version: *Policy v3* for *Data Retention Policy v3*,
    *Directive 2019-03* for *Security Directive 2019-03*. The code tells one thing from another; the words before
    it only repeat the kind, so a tail of two to four words stands for the one name in the passage that ends that
    way (two such names: neither). A "name" of more than eight words is no name (a PDF's run of capitals)."""
    names = [m.name for m in mentions if m.kind in ("ner", "name") and not m.is_value]
    if topic is not None:
        names.append(topic.name)
    longer: dict[str, set[str]] = {}
    for name in dict.fromkeys(names):
        words = name.split()
        if any(w.casefold() in ("and", "or", "&") for w in words):
            continue  # "Statute 2021 and Regulation 2020" (a heading) names two things: its tail is the second
        if 3 <= len(words) <= 8 and any(ch.isdigit() for ch in words[-1]):
            for k in range(max(1, len(words) - 4), len(words) - 1):
                longer.setdefault(canonical_key(" ".join(words[k:])), set()).add(name)
    return {short: next(iter(v)) for short, v in longer.items() if len(v) == 1}


def _companies(mentions: Sequence[Mention], defined: Mapping[str, str], people: set[str]) -> dict[str, str]:
    """Short name -> the company's name the passage writes in full (:func:`~kg_rag.model.names.short_form`;
    two companies with one short name: neither; nor a word of a person's name in the passage: "Blokker was born in
    Amsterdam" in a passage about Jaap Blokker, director of Blokker Holding), then the document's defined terms,
    which say so outright."""
    longer: dict[str, set[str]] = {}
    for m in mentions:
        short = short_form(m.name) if m.label == "ORGANIZATION" and m.kind in ("ner", "name") else None
        if short is not None:
            longer.setdefault(canonical_key(short), set()).add(m.name)
    out = {short: next(iter(v)) for short, v in longer.items() if len(v) == 1 and short not in people}
    out.update(defined)
    return out


def _surname_subject(doc: Parse, m: Mention, key: str) -> bool:
    """A mention that is the titled person's surname as a sentence's subject ("Glisson was born ..."), not after
    an honorific or a title ("Mrs. Glisson", "President Kennedy": a relative, or another holder), and not an object
    ("She married Clinton")."""
    if m.key != key or m.label not in ("", "PERSON") or m.kind not in ("ner", "name"):
        return False
    head = doc.span_head(m.start, m.end)
    before = doc.lower[m.start - 1].strip(".") if m.start > 0 else ""
    return doc.dep[head] in ("nsubj", "nsubjpass") and before not in HONORIFICS


def _initials(name: str) -> str:
    return "".join(w[0] for w in re.findall(r"[A-Za-z][\w'-]*", name) if w[0].isupper())
