"""Where a proper-noun name begins and ends in a parse: the capitalised words, numbers and codes it holds (``21st
Century Fox``, ``3G Capital``, ``Institute of Physics``), the common noun that may close it (``the Data Platform
team``), and the place written before a place noun that says whose place it is rather than naming it (``the U.S.
state of Michigan``, ``the Orange County city of Irvine``). :mod:`kg_rag.ingest.nlp.mentions` turns the spans into
mentions.
"""

from __future__ import annotations

import re

from kg_rag.ingest.nlp.kinds import OFFICES, PEERAGE, RANKS
from kg_rag.ingest.nlp.parse import Parse

PROPER = frozenset({"NNP", "NNPS"})
NOMINAL = frozenset({"nsubj", "nsubjpass", "dobj", "pobj", "attr", "appos", "conj", "dative", "oprd", "ROOT"})
"""Dependencies a noun phrase fills: a capitalised word in one of them is a name, wherever the sentence starts."""
CASE_LINKS = frozenset({"v."})
"""The word between the parties of a court case's name (``Plessy v. Ferguson``): one name, two parties. Not
*vs.* or *v*, which match teams and fighters as often ("the Lakers vs. Celtics game", "England v Australia")."""
NAME_LINKS = frozenset(
    {"of", "for", "de", "del", "della", "der", "des", "du", "da", "di", "van", "von", "la", "le", *CASE_LINKS}
)
"""Lower-case words a proper name may hold between capitalised parts (``University of Copenhagen``)."""
ARTICLES = frozenset({"the", "a", "an"})


def trim(doc: Parse, start: int, end: int) -> tuple[int, int]:
    """Drop a leading article (kept when capitalised mid-sentence: ``by The Beatles``), leading and trailing
    punctuation, a trailing conjunction or preposition and a trailing possessive."""
    while start < end and doc.punct[start]:
        start += 1
    if start < end and doc.lower[start] in ARTICLES and not (doc.text[start] == "The" and not doc.is_sent_start(start)):
        start += 1
    while end > start and (doc.tag[end - 1] in ("POS", "CC", "IN") or _trailing_punct(doc, end - 1)):
        end -= 1
    return start, end


def _trailing_punct(doc: Parse, i: int) -> bool:
    return (doc.punct[i] and doc.text[i] not in (".", "!", "?")) or doc.text[i] in (",", ";", ":")


def proper_phrases(doc: Parse) -> list[tuple[int, int, str]]:
    """Proper-noun phrases: each proper noun that heads its compound chain, with the capitalised words and
    numbers attached to it on its left, and an ``of``/``for`` complement that is itself a proper noun."""
    out = []
    tag, head, dep = doc.tag, doc.head, doc.dep
    for i in range(doc.n):
        if tag[i] not in PROPER or (dep[i] == "compound" and head[i] > i and _continues(doc, i)):
            continue  # not the last word of its name
        start, end = trim(doc, _left_edge(doc, i), _right_extension(doc, i))
        if end <= start or not any(doc.text[k][:1].isupper() or doc.masked[k] for k in range(start, end)):
            continue
        if start == i and end == i + 1 and doc.is_sent_start(i) and not doc.ent[i] and doc.dep[i] not in NOMINAL:
            continue  # a lone capitalised first word that is no noun phrase ("Via the river, ..."): capital only
        out.append((start, end, text_of(doc, start, end)))
    return out


def _continues(doc: Parse, i: int) -> bool:
    """Whether the proper noun after compound ``i`` carries its name on: its head (``Jan`` -> ``Solovej``) or a
    sibling compound of the same head (``Project`` and ``Atlas`` in "Project Atlas pilot")."""
    nxt = i + 1
    if nxt >= doc.n or doc.tag[nxt] not in PROPER:
        return False
    return doc.head[i] == nxt or (doc.dep[nxt] == "compound" and doc.head[nxt] == doc.head[i])


def _left_edge(doc: Parse, i: int) -> int:
    start = i
    first = doc.sent_start(i)
    while start > first:
        prev = start - 1
        inside = prev < doc.head[prev] <= i or (  # a left part of a name attaches to its right, inside it
            doc.dep[prev] == "compound" and doc.dep[i] == "compound" and doc.head[prev] == doc.head[i]
        )
        if (
            _ORDINAL.fullmatch(doc.text[prev])
            and doc.tag[start] in PROPER
            and not _counts_holders(doc, start, prev, first)
        ):
            start -= 1  # "21st Century Fox", "the 3rd Infantry Division": an ordinal opening a name (the parse may
            continue  # hang it on the verb)
        if not inside:  # attached outside the name: not a part of it
            break
        if _glued_code(doc, prev) and prev - 1 >= first:
            start -= 2  # "3G Capital": one written word the tokeniser cut in two
        elif doc.tag[prev] in PROPER or (doc.num[prev] and doc.dep[prev] in ("nummod", "compound")):
            start -= 1
        elif doc.tag[prev] == "HYPH" and prev - 1 >= first and doc.tag[prev - 1] in PROPER:
            start -= 1
        elif doc.tag[prev] == "JJ" and doc.title[prev] and not doc.is_sent_start(prev) and doc.dep[prev] == "amod":
            start -= 1  # "American Institute": a capitalised adjective inside a name
        elif doc.title[prev] and doc.dep[prev] == "compound" and doc.is_sent_start(prev):
            start -= 1  # "Directive 2019-03", "Storage Policy v1": a capitalised first word of the name, tagged a noun
        else:
            break
    return start


_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")


def _counts_holders(doc: Parse, start: int, ordinal: int, first: int) -> bool:
    """Whether an ordinal counts the holders of a role rather than opening a name: "the 16th President of the United
    States" (a role, read as such elsewhere), or stands inside a phrase ("finished 2nd")."""
    if ordinal != first and doc.lower[ordinal - 1] != "the":
        return True
    return doc.lower[start] in RANKS or doc.lower[start] in OFFICES


def _glued_code(doc: Parse, i: int) -> bool:
    """Whether capitals ``i`` are written onto the number before them, one word the tokeniser cut (``3G``, ``4K``)."""
    k = i - 1
    return (
        k >= 0
        and doc.text[i].isalpha()
        and doc.text[i].isupper()
        and doc.text[k].isdigit()
        and doc.idx[k] + len(doc.text[k]) == doc.idx[i]
    )


def _right_extension(doc: Parse, i: int) -> int:
    """``Institute`` + ``of Physics``, ``Route`` + ``219``, ``Strauss`` + ``II``, ``Harz`` + ``mountains``: the parts
    a name continues with (a common noun only when the name is definite: not "a Harvard professor")."""
    sent_end = doc.sent_end(i)
    end = i + 1
    if end < sent_end and doc.head[i] == end and doc.dep[i] == "compound" and doc.tag[end] in ("NN", "NNS"):
        det = doc.kid(end, "det")
        if (det is None or doc.lower[det] in ("the", "this")) and not _attributive(doc, i):
            return end + 1  # a name with the kind of thing it names: "Ecker valley", "the Data Platform team"
    while end < sent_end:
        if doc.num[end] and doc.head[end] == end - 1:
            end += 1
            continue
        if doc.lower[end] in NAME_LINKS and i <= doc.head[end] < end and not _separate(doc, end):
            k = end + 1
            if k < sent_end and doc.lower[k] == "the":
                k += 1
            if k < sent_end and doc.tag[k] in PROPER:
                h = k
                while doc.dep[h] == "compound" and doc.head[h] > h and doc.tag[doc.head[h]] in PROPER:
                    h = doc.head[h]
                if doc.head[h] == end:
                    end = h + 1
                    continue
        break
    return end


DIVISIONS = frozenset(
    "region province district county state department oblast prefecture municipality governorate territory "
    "canton parish borough emirate voivodeship raion".split()
)
"""Nouns of administrative divisions: ``the Hiran region of Somalia`` names a place even untyped."""
PLACE_NOUNS = frozenset(
    """state city town county province region village country island republic kingdom borough district
    municipality township parish commune prefecture territory""".split()
)
"""Nouns whose ``of`` complement is the place itself: "the city of Rome" is Rome, "the U.S. state of Michigan" is
Michigan (an appositive genitive)."""


SETTLEMENTS = frozenset("city town village township commune hamlet".split())
"""Place nouns no place's own name writes in lower case after it: "the Yorkshire town of Hebden Bridge" is a town
in Yorkshire (a region's name does: "the Hiran region of Somalia" is a region named Hiran; and so does a borough's:
"the Westminster borough of London")."""


def _attributive(doc: Parse, i: int) -> bool:
    """A place written before a place noun with "of" (an appositive genitive, :data:`PLACE_NOUNS`) that says whose
    place it is, as a nationality does, rather than naming it: "the U.S. state of Michigan" is the American state of
    Michigan, not a thing named *U.S. state* (which the "of" would then put inside Michigan). The place before is
    whose when it is an abbreviated country, when the noun is a settlement (:data:`SETTLEMENTS`: "the Yorkshire
    town of Hebden Bridge"), or when the place is itself named as a place ("the New York City borough of
    Brooklyn": a borough is not named *New York City*). Any other noun stays part of the name: "the UK unit of GE
    Capital" is a unit, not GE Capital; "the Hiran region of Somalia" is a region named Hiran."""
    after = i + 2
    if after >= doc.n or doc.lower[after] != "of" or doc.lemma(i + 1) not in PLACE_NOUNS:
        return False
    if doc.ent[i] not in ("GPE", "LOC"):
        return False
    letters = [ch for ch in doc.text[i] if ch.isalpha()]
    abbreviated = len(letters) >= 2 and all(ch.isupper() for ch in letters)
    named_place = doc.title[i] and doc.lower[i] in PLACE_NOUNS
    return abbreviated or named_place or doc.lemma(i + 1) in SETTLEMENTS


def case_name(doc: Parse, start: int, end: int) -> bool:
    """Whether a span is a court case's name, two parties either side of *v.* (``Plessy v. Ferguson``)."""
    return any(doc.lower[k] in CASE_LINKS and doc.text[k - 1][:1].isupper() for k in range(start + 1, end - 1))


def _separate(doc: Parse, link: int) -> bool:
    """Whether the recogniser reads the two sides of ``of`` as two entities (``Guiana Highlands of Venezuela``), not
    one (``University of Copenhagen``, where ``of`` is inside the entity)."""
    if doc.ent[link] or (doc.lower[link] == "of" and doc.lower[link - 1] in PEERAGE) or doc.lower[link] in CASE_LINKS:
        return False  # "the Duke of Wellington": a peer is named by the place of his title; "Plessy v. Ferguson"
    return any(doc.ent[k] for k in range(link + 1, min(doc.n, link + 3)))


def text_of(doc: Parse, start: int, end: int) -> str:
    """A span's words as written, with the tokeniser's spacing around hyphens undone (``Person - centered``)."""
    text = " ".join(doc.span_text(start, end).split())
    return re.sub(r"(?<=\w) ?- ?(?=\w)", "-", text)
