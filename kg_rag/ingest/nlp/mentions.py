"""Names in a parsed passage: what the NLP extractor takes for entities, and how one thing gets one name.

Ranking needs the entity set more than the relations (a passage is found through the names it shares with the
question and with other passages), so mentions come from four sources, widest first:

* the passage's **topic**: its title as written in the text (``Hello Love (song)`` is written ``Hello Love``;
  ``Johnnycake, West Virginia`` is written ``Johnnycake``), or the title itself when the text never writes it;
* **quoted titles** (``"Life After Beth"``), which a small NER model misses for works, events and products;
* **named entities** from the pipeline's recogniser, typed from its labels;
* **proper-noun phrases** read off the parse: a proper noun with its compound modifiers and an ``of``/``for``
  complement (``Red River of the North``, ``U.S. Route 219``, ``1924 Winter Olympics``), where the recogniser cut
  or split the name (where such a name begins and ends: :mod:`kg_rag.ingest.nlp.spans`).

A name is stored as written, without a leading article unless the article is part of it (capitalised
mid-sentence, or in the title); within a passage, a surname or given name alone (``Snow`` after ``Hank Snow``)
and an acronym introduced in brackets (``American Institute of Physics (AIP)``) name the full entity
(:class:`~kg_rag.ingest.nlp.aliases.NameTable`), and a definite description of the topic's kind (``the song`` in a
passage whose topic "is a 1974 single") names the topic. Direction is not decided here;
:mod:`kg_rag.ingest.nlp.clauses` reads it from the grammar.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kg_rag.ingest.nlp.kinds import DOCUMENT_HEADS, OFFICES, ORGANISATION_HEADS, kind_of, person_like, title_word
from kg_rag.ingest.nlp.parse import Parse
from kg_rag.ingest.nlp.spans import CASE_LINKS, NOMINAL, PROPER, case_name, proper_phrases, text_of, trim
from kg_rag.model.names import MONTHS, canonical_key, legal_form_word

LABELS = {
    "PERSON": "PERSON",
    "ORG": "ORGANIZATION",
    "GPE": "LOCATION",
    "LOC": "LOCATION",
    "FAC": "LOCATION",
    "NORP": "GROUP",
    "EVENT": "EVENT",
    "WORK_OF_ART": "WORK",
    "LAW": "LAW",
    "PRODUCT": "PRODUCT",
    "LANGUAGE": "LANGUAGE",
    "DATE": "DATE",
    "TIME": "TIME",
    "MONEY": "MONEY",
    "PERCENT": "PERCENT",
    "QUANTITY": "QUANTITY",
    "CARDINAL": "NUMBER",
}
"""spaCy (OntoNotes) labels -> kg-rag entity types. ``ORDINAL`` ("second") names nothing and is dropped."""
VALUES = frozenset({"DATE", "TIME", "MONEY", "PERCENT", "QUANTITY", "NUMBER"})
"""Types of specific values: kept as the object of a relation ("born on 9 August 1957"), never as a subject."""
PASSAGE_VALUES = frozenset({"DATE", "MONEY", "PERCENT"})
"""Values also kept as entities of the passage on their own (a date or an amount is looked up by itself)."""
SPLIT_AT_AND = frozenset({"PERSON", "LOCATION"})
"""Types whose recognised spans are split at a coordination the parse sees (``Oswego and Pulaski``)."""
SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv", "v", "junior", "senior"})
OPEN_QUOTES = frozenset({"``", '"', "“", "‘"})
CLOSE_QUOTES = frozenset({"''", '"', "”", "’"})
MAX_QUOTED = 12
"""Longest quoted phrase taken for a title (tokens): longer quotes are speech, not names."""
_QUALIFIER = re.compile(r"\s*\([^()]*\)\s*$")


@dataclass(slots=True)
class Mention:
    """A span of the passage taken for an entity: tokens ``[start, end)``, the name it is stored under, its type,
    and where it came from (``topic``, ``quote``, ``ner``, ``name``, ``value``)."""

    start: int
    end: int
    name: str
    label: str
    kind: str

    @property
    def key(self) -> str:
        return canonical_key(self.name)

    @property
    def is_value(self) -> bool:
        return self.label in VALUES


@dataclass
class Topic:
    """What a passage is about: its title as written (``name``) and the kinds its text says it is (``single``,
    ``journal``), which a definite description (``the single``) refers back to."""

    name: str
    label: str | None = None
    kinds: set[str] = field(default_factory=set)
    personal: bool = True
    """Whether *he* or *she* may refer to it when no recogniser typed it a person: a corpus passage's title names
    its subject, a document's heading may name anything ("Installation Guide")."""


def title_name(title: str, text: str) -> str | None:
    """The name a passage's title has in its text: the title without a bracketed qualifier, cut at its first
    comma when only that part is written (``Johnnycake, West Virginia`` -> ``Johnnycake``); ``None`` when the text
    never writes it (a heading such as "Organisation chart: engineering" names no entity)."""
    bare = bare_title(title)
    candidates = [bare]
    if "," in bare:
        candidates.append(bare.split(",", 1)[0].strip())
    for candidate in candidates:
        if candidate and _title_pattern(candidate).search(text):
            return candidate
    return None


def bare_title(title: str) -> str:
    """A title without its bracketed qualifier (``Hello Love (song)`` -> ``Hello Love``)."""
    return _QUALIFIER.sub("", " ".join(str(title).split())) or " ".join(str(title).split())


def _title_pattern(name: str) -> re.Pattern[str]:
    """A name as it may be written in tokenised text: case-insensitive, any spacing around hyphens, apostrophes
    and commas (MuSiQue writes ``Person - centered therapy``), and a word of it may be quoted, as a nickname is
    (``Lillian "Lil" Hardin Armstrong`` writes *Lil Hardin Armstrong*)."""
    parts = re.split(r"(\s+|-|,|'|’)", name)
    pattern = ""
    for part in parts:
        if not part:
            continue
        if part.isspace():
            pattern += r"[\"“”]?\s+[\"“”]?"
        elif part in "-,'’":
            pattern += r"\s*" + re.escape(part) + r"\s*"
        else:
            pattern += re.escape(part)
    return re.compile(r"(?<!\w)" + pattern + r"(?!\w)", re.IGNORECASE)


def find_mentions(doc: Parse, topic: Topic | None) -> tuple[list[Mention], list[Mention]]:
    """Every mention in ``doc``, non-overlapping, in text order (see the module docstring for the sources); and the
    names written inside them (:func:`_inside`)."""
    found: list[Mention] = []
    if topic is not None:
        found += _topic_mentions(doc, topic)
    found += _quoted(doc)
    names = [Mention(start, end, text, "", "name") for start, end, text in proper_phrases(doc)]
    found += [_with_article(doc, m) for m in (*_entities(doc), *names)]
    found += _cases(doc, found)
    found = _full_names(doc, [m for m in found if not _a_kind(doc, m) and not _time_zone(doc, m)], topic)
    kept = _shared_heads(doc, _legal_forms(doc, _joined_values(doc, _non_overlapping(doc, found))))
    again = _named_again(doc, kept)
    if again:
        kept = sorted([*kept, *again], key=lambda m: m.start)
    return kept, _inside(doc, found, kept)


def _cases(doc: Parse, found: Sequence[Mention]) -> list[Mention]:
    """A case name the tagger split into its parties: "Plessy v. Ferguson", with *Plessy* read as a common noun
    and each party a person of its own."""
    starts = {m.start: m for m in found if m.kind in ("ner", "name") and not m.is_value}
    out = []
    for a in found:
        b = starts.get(a.end + 1)
        if b is None or a.kind not in ("ner", "name") or a.is_value or doc.lower[a.end] not in CASE_LINKS:
            continue
        if doc.sent_of[a.start] == doc.sent_of[b.end - 1]:
            out.append(Mention(a.start, b.end, text_of(doc, a.start, b.end), "LAW", "name"))
    return out


NUMERALS = frozenset("I One Two Three Four Five Six Seven Eight Nine Ten Eleven Twelve".split())
"""Masked words that, after a name's first word, leave the name the recogniser's
(:func:`~kg_rag.ingest.nlp.parse.mask_codes`): "Henry I" is a person, "World War Two" an event, as it reads them."""


PARTED = frozenset({"TIME", "QUANTITY"})
"""Types of a value that may be written in parts: "2 hours and 14 minutes", "3 metres and 20 centimetres"."""


def _joined_values(doc: Parse, kept: list[Mention]) -> list[Mention]:
    """A duration or measure written in parts joined by *and* is one value: "returned errors for 2 hours and 14
    minutes" lasted neither 2 hours nor 14 minutes."""
    out: list[Mention] = []
    for m in kept:
        last = out[-1] if out else None
        if (
            last is not None
            and last.label == m.label
            and m.label in PARTED
            and m.start == last.end + 1
            and doc.lower[last.end] == "and"
            and doc.num[last.start]
            and doc.num[m.start]
            and doc.lower[last.end - 1] != doc.lower[m.end - 1]  # a smaller unit: "5 tonnes and 3 tonnes" are two
        ):
            out[-1] = Mention(last.start, m.end, text_of(doc, last.start, m.end), m.label, m.kind)
        else:
            out.append(m)
    return out


CONNECTORS = frozenset({"and", "&"})


def _shared_heads(doc: Parse, kept: list[Mention]) -> list[Mention]:
    """One name of a body or a document whose capitalised words are joined by *and* before its head noun: "the
    Travel and Expense Policy", "the Audit and Risk Committee" (the parse reads "Travel" and "Expense Policy" as two
    things). Only after *the*, and only with a head that names a document or a body (:data:`DOCUMENT_HEADS`,
    :data:`ORGANISATION_HEADS`): "Oswego and Pulaski" stay two places."""
    heads = DOCUMENT_HEADS | ORGANISATION_HEADS
    merged: list[Mention] = []
    for i in range(doc.n - 3):
        if doc.lower[i] != "the":
            continue
        j = i + 1
        while j < doc.sent_end(i) and (doc.title[j] or (doc.lower[j] in CONNECTORS and j > i + 1)):
            j += 1
        end = j
        while end > i + 1 and doc.lower[end - 1] not in heads:
            end -= 1
        run = range(i + 1, end)
        if end - i < 4 or not any(doc.lower[k] in CONNECTORS for k in run) or doc.lower[end - 2] in CONNECTORS:
            continue
        last = max(k for k in run if doc.lower[k] in CONNECTORS)
        if any(doc.lower[k] in heads or doc.lower[k] in OFFICES for k in range(i + 1, last)):
            continue  # "the British Film Institute and American Film Institute", "the Controller and Finance
            # Committee": two names, each with its head
        if any(m.is_value and m.start < end and i < m.end for m in kept) or not doc.title[end - 1]:
            continue
        if any(m.start < i + 1 < m.end or m.start < end < m.end for m in kept):
            continue  # a longer name runs across either end
        merged.append(Mention(i + 1, end, text_of(doc, i + 1, end), kind_of(text_of(doc, i + 1, end), ""), "name"))
    if not merged:
        return kept
    inside = [m for m in kept if not any(g.start <= m.start and m.end <= g.end for g in merged)]
    return sorted([*inside, *merged], key=lambda m: m.start)


def _legal_forms(doc: Parse, kept: list[Mention]) -> list[Mention]:
    """A company's legal form written after its name is part of that name, also after a comma or an ampersand's
    *Co.*: "Quillon Software, Inc.", "Goldman Sachs & Co. LLC". Alone, *Inc.* or *LLC* would be one entity for
    every company so written. The form makes the name a company's, whatever the recogniser took it for ("Harborline,
    LLC" read as a place), but after a person's or a place's name only a form no title or state shares ("Pam Bondi,
    AG" is the attorney general; "Norway, AS" may be American Samoa)."""
    out: list[Mention] = []
    for m in kept:
        last = out[-1] if out else None
        gap = range(last.end, m.start) if last is not None else range(0)
        if (
            last is not None
            and m.kind in ("ner", "name")
            and all(legal_form_word(w) for w in doc.text[m.start : m.end])
            and (last.label not in ("PERSON", "LOCATION") or len(doc.text[m.start].replace(".", "")) > 2)
            and last.kind in ("ner", "name", "topic", "quote")
            and not last.is_value
            and all(doc.text[i] == "," for i in gap)
            and len(gap) <= 1
            and (doc.sent_of[last.start] == doc.sent_of[m.start] or doc.text[last.end - 1].endswith("."))
        ):  # (the splitter may end a sentence at "Co.")
            label = last.label if last.label == "LAW" else "ORGANIZATION"  # a case: "Acme, Inc. v. Veltrix, LLC"
            out[-1] = Mention(last.start, m.end, text_of(doc, last.start, m.end), label, last.kind)
        else:
            out.append(m)
    return out


def _named_again(doc: Parse, kept: Sequence[Mention]) -> list[Mention]:
    """A one-word name the passage writes elsewhere, where the tagger read it as a common noun: "Veltrix became a
    wholly owned subsidiary of Meridian" opens a sentence, where a capital says nothing, and the tagger guessed a
    noun. The passage's own use decides, not a dictionary."""
    names = {m.key: m for m in kept if m.end - m.start == 1 and m.kind in ("ner", "name") and not m.is_value}
    if not names:
        return []
    taken = {i for m in kept for i in range(m.start, m.end)}
    out = []
    for i in range(doc.n):
        if i in taken or doc.pos[i] != "NOUN" or not doc.title[i] or doc.dep[i] not in NOMINAL or len(doc.text[i]) < 3:
            continue  # (a capital letter alone is a unit or an initial: "28 °C")
        m = names.get(canonical_key(doc.text[i]))
        if m is not None:
            out.append(Mention(i, i + 1, m.name, m.label, m.kind))
    return out


TIME_ZONES = frozenset(
    "utc gmt z cet cest eet eest wet west bst ist jst kst aest aedt est edt cst cdt mst mdt pst pdt".split()
)
"""Time zones written after a clock time."""


def _time_zone(doc: Parse, m: Mention) -> bool:
    """A time zone after a clock time ("09:12 UTC: the release was deployed") belongs to the time: no entity."""
    return (
        m.end - m.start == 1
        and doc.lower[m.start] in TIME_ZONES
        and m.start > 0
        and doc.text[m.start - 1][:1].isdigit()
    )


INNER = frozenset({"PERSON", "ORGANIZATION", "LOCATION", "EVENT", "WORK", "LAW", "PRODUCT"})
"""Types of a recognised name that is also linked to its passage when written inside a longer one."""


def _inside(doc: Parse, found: Sequence[Mention], kept: Sequence[Mention]) -> list[Mention]:
    """Names written inside a longer mention, linked to the passage as entities too (no relation is read off them):
    a recognised name (``Tokyo`` in "Tokyo International Airport", ``United States`` in "United States Senate") and
    the proper name a common noun was added to (``Brahmaputra`` in "Brahmaputra valley"). Another passage that
    names only the shorter thing is then linked to this one."""
    taken = {(m.start, m.end) for m in kept}
    out = [
        m
        for m in found
        if m.kind == "ner"
        and m.label in INNER
        and not all(legal_form_word(w) for w in doc.text[m.start : m.end])  # "LLC" in "Goldman Sachs & Co. LLC"
        and (m.start, m.end) not in taken
        and any(k.start <= m.start and m.end <= k.end for k in kept)
    ]
    for k in kept:
        last = k.end - 1
        if k.kind == "name" and doc.tag[last] in ("NN", "NNS") and k.end - k.start > 1 and doc.tag[last - 1] in PROPER:
            out.append(Mention(k.start, last, text_of(doc, k.start, last), k.label, "name"))
    return out


def _with_article(doc: Parse, m: Mention) -> Mention:
    """``by The Beatles``: a capitalised *The* mid-sentence right before a name is part of it."""
    before = m.start - 1
    if m.kind in ("ner", "name") and before >= 0 and doc.text[before] == "The" and not doc.is_sent_start(before):
        return Mention(before, m.end, text_of(doc, before, m.end), m.label, m.kind)
    return m


def _topic_mentions(doc: Parse, topic: Topic) -> list[Mention]:
    out = []
    for match in _title_pattern(topic.name).finditer(doc.source):
        span = doc.doc.char_span(match.start(), match.end(), alignment_mode="expand")
        if span is not None:
            out.append(Mention(span.start, span.end, topic.name, topic.label or "", "topic"))
    return out


def _a_kind(doc: Parse, m: Mention) -> bool:
    """A capitalised phrase after *a* / *an* as a complement that describes the subject (of a copula, or of a
    passive: "was made an Officer of the Order") is a kind, not a name: "is an ALA Notable Children's Book written
    by Judith Viorst" describes the sentence's subject (a recognised name keeps its reading: "a Democrat";
    elsewhere "a Boeing 747" or the band "A Perfect Circle" stay names)."""
    if m.kind != "name":
        return False
    head = doc.span_head(m.start, m.end)
    det = doc.kid(head, "det")
    return det is not None and doc.lower[det] in ("a", "an") and doc.dep[head] in ("attr", "oprd")


def _full_names(doc: Parse, found: list[Mention], topic: Topic | None) -> list[Mention]:
    """A person's full name is the topic when the title is its short form and the text never writes the title
    itself: with middle names (``Kevin Wayne Durant`` in a passage titled *Kevin Durant*, ``George Walker Bush``
    for *George W. Bush*) or a quoted nickname (``Karl "Edvard" Johanson`` for *Edvard Johanson*). Only the first
    such name is: an article names its subject first, and a later one is a relative (*George Herbert Walker
    Bush*). Elsewhere a nickname's quote marks are no part of the name."""
    spans = [(m.start, m.end) for m in found if m.kind == "topic"]
    person = topic is not None and person_like(topic.name)
    taken = False
    out = []
    for m in sorted(found, key=lambda x: x.start):
        if m.kind in ("ner", "name") and not m.is_value:
            words = [doc.text[i] for i in range(m.start, m.end) if not (_opens(doc, i) or _closes(doc, i))]
            nickname = m.label == "PERSON" and has_nickname(doc, m.start, m.end)
            inside = any(m.start <= a and b <= m.end and (a, b) != (m.start, m.end) for a, b in spans)
            longer = person and not spans and not taken and longer_form(words, topic.name if topic else "")
            if topic is not None and ((nickname and inside) or longer):
                m = Mention(m.start, m.end, topic.name, "PERSON", "topic")
                taken = taken or longer
            elif nickname:
                m = Mention(m.start, m.end, " ".join(words), m.label, m.kind)
        out.append(m)
    return out


def name_words(name: str) -> list[str]:
    """A person's name's words without a suffix (``Jr.``, ``III``) or commas: ``Martin Luther King, Jr.`` ends in
    *King*."""
    return [w for w in name.replace(",", " ").split() if w.casefold().strip(".") not in SUFFIXES]


def longer_form(words: list[str], title: str) -> bool:
    """Whether a name is the title's person written with middle names: the same first and last word, and each of
    the title's middle words (or initials) among its middle words in order (*Hyman Bernard Samuels* for *Hyman B.
    Samuels*, *George Walker Bush* for *George W. Bush*)."""
    short = [canonical_key(w) for w in name_words(title)]
    long_ = [canonical_key(w) for w in name_words(" ".join(words))]
    if len(short) < 2 or len(long_) < len(short) or long_ == short or (short[0], short[-1]) != (long_[0], long_[-1]):
        return False
    middle = iter(long_[1:-1])
    return all(
        any(m == w or (len(w.strip(".")) == 1 and m.startswith(w.strip("."))) for m in middle) for w in short[1:-1]
    )


def _opens(doc: Parse, i: int) -> bool:
    return doc.tag[i] == "``" or (doc.text[i] in OPEN_QUOTES and doc.tag[i] != "''")


def _closes(doc: Parse, i: int) -> bool:
    return doc.tag[i] == "''" or doc.text[i] in CLOSE_QUOTES


def _quoted(doc: Parse) -> list[Mention]:
    """Quoted titles: a capitalised phrase of at most :data:`MAX_QUOTED` tokens between quotes in one sentence."""
    out = []
    n = doc.n
    i = 0
    while i < n:
        if not _opens(doc, i):
            i += 1
            continue
        limit = min(n, i + MAX_QUOTED + 2, doc.sent_end(i))
        j = next((k for k in range(i + 1, limit) if _closes(doc, k)), None)
        if j is None:
            i += 1
            continue
        start, end = i + 1, j
        while start < end and doc.punct[start]:
            start += 1
        while end > start and doc.punct[end - 1] and doc.text[end - 1] not in "!?":
            end -= 1
        if end > start and _title_like(doc, start, end) and not _nickname(doc, i, j):
            out.append(Mention(start, end, text_of(doc, start, end), "WORK", "quote"))
        i = j + 1
    return out


def _nickname(doc: Parse, opening: int, closing: int) -> bool:
    """A quoted word between two names is a nickname inside a person's name (``Karl "Edvard" Johanson``,
    ``Lillian "Lil" Hardin``), not a work's title."""
    before, after = opening - 1, closing + 1
    return (
        before >= 0
        and after < doc.n
        and closing == opening + 2
        and doc.title[before]
        and not doc.stop[before]
        and doc.tag[after] in PROPER
        and doc.title[after]
    )


def has_nickname(doc: Parse, start: int, end: int) -> bool:
    """Whether a span (or the word before it) holds a quoted nickname: the recogniser takes such a name for a
    work's title (``Lil" Hardin Armstrong``: WORK_OF_ART)."""
    return any(_opens(doc, k) and _nickname(doc, k, k + 2) for k in range(max(start - 1, 0), min(end, doc.n - 2)))


def _title_like(doc: Parse, start: int, end: int) -> bool:
    words = [i for i in range(start, end) if doc.alpha[i] or doc.num[i]]
    if not words or not (doc.title[words[0]] or doc.upper[words[0]] or doc.num[words[0]]):
        return False
    content = [i for i in words if not doc.stop[i]]
    capitalised = sum(1 for i in content if doc.title[i] or doc.upper[i] or doc.num[i])
    return not content or capitalised * 2 >= len(content)


def _entities(doc: Parse) -> list[Mention]:
    out = []
    ents = list(doc.doc.ents)
    joined = set()
    for n, ent in enumerate(ents):
        label = LABELS.get(ent.label_)
        if label is None or n in joined:
            continue
        start, end = ent.start, ent.end
        after = LABELS.get(ents[n + 1].label_) if n + 1 < len(ents) else None
        joins = after is not None and after not in VALUES and label not in VALUES
        if joins and doc.lower[end - 1] == "of" and ents[n + 1].start == end:
            end = ents[n + 1].end  # the recogniser cut "National Physical Laboratory of | India" in two
            joined.add(n + 1)
        start, end = trim(doc, start, end)
        if end <= start or any(
            doc.masked[i] and (doc.text[i] not in NUMERALS or i == start) for i in range(start, end)
        ):
            continue  # a masked code: named from the parse (its type is not the recogniser's guess)
        if label == "PERSON":  # "succeeded Elizabeth I as King of England" read as one person: no name holds "as"
            end = next((i for i in range(start + 1, end) if doc.lower[i] == "as"), end)
        verb = next((i for i in range(start, end) if doc.dep[i] == "ROOT" and doc.pos[i] in ("VERB", "AUX")), None)
        if verb is not None and label not in VALUES and doc.text[start] not in OPEN_QUOTES:  # "Oracle sued Rimini
            for a, b in ((start, verb), (verb + 1, end)):  # Street": the sentence's verb is in no name
                a, b = trim(doc, a, b)
                if b > a and any(doc.title[i] for i in range(a, b)):
                    out.append(Mention(a, b, text_of(doc, a, b), label, "ner"))
            continue
        if label in VALUES:
            if label == "DATE" and not any(doc.num[i] or doc.lower[i] in MONTHS for i in range(start, end)):
                continue  # "monthly", "summer", "the next year": no date written
            if label == "NUMBER" and not any(doc.num[i] for i in range(start, end)):
                continue
            out.append(Mention(start, end, text_of(doc, start, end), label, "value"))
        else:
            for a, b in _coordinated(doc, start, end, label):
                a, b = trim(doc, a, b)
                if b > a and any(ch.isalpha() for ch in doc.span_text(a, b)):
                    out.append(Mention(a, b, text_of(doc, a, b), label, "ner"))
    return out


def _coordinated(doc: Parse, start: int, end: int, label: str) -> list[tuple[int, int]]:
    """A recognised span cut at each ``and``/``or`` the parse reads as coordinating two names (``Oswego and
    Pulaski``); people and places only (``Procter and Gamble`` is one company)."""
    if label not in SPLIT_AT_AND:
        return [(start, end)]
    cuts = [
        i
        for i in range(start + 1, end - 1)
        if doc.tag[i] == "CC" and any(doc.dep[c] == "conj" and start <= c < end for c in doc.children[doc.head[i]])
    ]
    bounds = [start, *[x for c in cuts for x in (c, c + 1)], end]
    return list(zip(bounds[::2], bounds[1::2]))


_PRIORITY = {"topic": 0, "quote": 1, "ner": 2, "name": 3, "value": 4}


def _non_overlapping(doc: Parse, found: Iterable[Mention]) -> list[Mention]:
    """One mention per token, the longest first; a proper-noun phrase takes the
    recogniser's type of its head word, and one the recogniser read as a value ("January 1960") stays a value."""
    found = list(found)
    labels: dict[int, str] = {}
    values = {(m.start, m.end): m for m in found if m.kind == "value"}
    for m in found:
        if m.kind in ("ner", "value"):
            for i in range(m.start, m.end):
                labels.setdefault(i, m.label)
    people = [(m.start, m.end) for m in found if m.kind == "ner" and m.label == "PERSON"]
    names = [(m.start, m.end) for m in found if m.kind == "ner"]

    def run_on(m: Mention) -> bool:
        """A proper-noun phrase that is several recognised names run together (a table flattened into text, "Metzler
        Bank Frankfurt Germany"), or a person's name with a rank ("Colonel Paul Tibbets" is Paul Tibbets) — not
        one with the given name the recogniser left out ("Tomasz Nowak", read as "Nowak")."""
        inside = [(a, b) for a, b in names if m.start <= a and b <= m.end]
        if case_name(doc, m.start, m.end):
            return False  # "Epic Games v. Apple": one case between two parties
        if kind_of(m.name, "PERSON") != "PERSON":
            return len(inside) >= 2  # "the Engineering department": a person's name never heads a department
        return len(inside) >= 2 or any(
            span in people and not _given_name(doc, m, span) and not _described(doc, m, span) for span in inside
        )

    found = [m for m in found if not (m.kind == "name" and run_on(m))]
    # the longest first (the topic inside a longer name, "Sims Historical Society Museum", is that name); at equal
    # length the topic, then a quoted title, then the recogniser's reading
    ranked = sorted(found, key=lambda m: (-(m.end - m.start), _PRIORITY[m.kind], m.start))
    taken = [False] * doc.n
    kept: list[Mention] = []
    for m in ranked:
        if any(taken[m.start : m.end]):
            continue
        if m.kind == "name" and (m.start, m.end) in values:
            m = values[(m.start, m.end)]
        if not m.label:
            m.label = labels.get(m.end - 1, "")
        if m.kind in ("ner", "name"):
            m.label = "LAW" if case_name(doc, m.start, m.end) else kind_of(m.name, m.label)
        for i in range(m.start, m.end):
            taken[i] = True
        kept.append(m)
    return sorted(kept, key=lambda m: m.start)


def _described(doc: Parse, m: Mention, person: tuple[int, int]) -> bool:
    """Whether the words a proper-noun phrase holds before a recognised person are capitalised adjectives, which
    no rank is: "the Large Hadron Collider" is a name the recogniser misread, not a rank and a person."""
    return person[1] == m.end and person[0] > m.start and all(doc.tag[k] == "JJ" for k in range(m.start, person[0]))


def _given_name(doc: Parse, m: Mention, person: tuple[int, int]) -> bool:
    """Whether a proper-noun phrase is a recognised person's name with one more capitalised word before it that
    is no title (:func:`title_word`): a given name the recogniser cut off ("Tomasz Nowak" and "Ana Souza" read as
    "Nowak", "Souza"; not "Chairman Mao", "Deputy Nowak")."""
    if person != (m.start + 1, m.end) or person[1] - person[0] != 1:
        return False
    word = doc.text[m.start]
    return word.isalpha() and word[:1].isupper() and not title_word(word) and person_like(text_of(doc, m.start, m.end))
